// Demangling as perf does it (demangle.h). libiberty's cplus_demangle is called with no
// options, exactly as perf's build calls it, since any option changes what it prints; around
// it, the passes perf adds for Rust (the legacy hash and $-escapes, undone here as perf's own
// Rust pass undoes them) and, for names libiberty leaves alone, OCaml's mangling. Symbol
// versions (`@GLIBCXX_3.4`) are cut first, as perf cuts them.

#include "symbolize/demangle.h"

#include <cctype>
#include <cstdlib>
#include <memory>

// libiberty's declarations; the library is C.
#include <libiberty/demangle.h>

#include "base/hex.h"

namespace pf {

namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Rust legacy escapes, as perf's own Rust pass knows them.
struct RustEscape {
  std::string_view code;
  char value;
};
constexpr RustEscape kRustEscapes[] = {
    {"$C$", ','},   {"$SP$", '@'},  {"$BP$", '*'},  {"$RF$", '&'},  {"$LT$", '<'},   {"$GT$", '>'},
    {"$LP$", '('},  {"$RP$", ')'},  {"$u7e$", '~'}, {"$u20$", ' '}, {"$u27$", '\''}, {"$u5b$", '['},
    {"$u5d$", ']'}, {"$u7b$", '{'}, {"$u7d$", '}'}, {"$u3b$", ';'}, {"$u2b$", '+'},  {"$u22$", '"'},
};

bool IsRustWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

// perf's rust_is_mangled on an already demangled name: "path::h" + 16 hex digits (at least 5
// distinct), the path made of identifier characters, dots and known escapes.
bool LooksLikeRustWithHash(std::string_view s) {
  constexpr size_t kHashLen = 16;
  if (s.size() <= 3 + kHashLen) return false;
  std::string_view path = s.substr(0, s.size() - 3 - kHashLen);
  std::string_view hash = s.substr(s.size() - 3 - kHashLen);
  if (hash.substr(0, 3) != "::h") return false;
  bool seen[16] = {};
  for (char c : hash.substr(3)) {
    if (!IsHex(c)) return false;
    seen[HexDigit(c)] = true;
  }
  int distinct = 0;
  for (bool b : seen) distinct += b;
  if (distinct < 5) return false;
  for (size_t i = 0; i < path.size();) {
    char c = path[i];
    if (c == '$') {
      bool known = false;
      for (const RustEscape& e : kRustEscapes) {
        if (path.substr(i, e.code.size()) == e.code) {
          i += e.code.size();
          known = true;
          break;
        }
      }
      if (!known) return false;
    } else if (c == '.') {
      if (path.substr(i, 3) == "...") return false;
      ++i;
    } else if (IsRustWordChar(c)) {
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

// perf's in-place Rust pass: drop the hash, undo the escapes, ".." -> "::", "." -> "-".
std::string RustUnescape(std::string_view s) {
  std::string_view in = s.substr(0, s.size() - 3 - 16);
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size();) {
    char c = in[i];
    if (c == '$') {
      bool known = false;
      for (const RustEscape& e : kRustEscapes) {
        if (in.substr(i, e.code.size()) == e.code) {
          out += e.value;
          i += e.code.size();
          known = true;
          break;
        }
      }
      if (!known) {  // copy the rest of the path segment as it is
        while (i < in.size() && in[i] != ':') out += in[i++];
      }
    } else if (c == '_') {
      // The mangler puts '_' before a segment that starts with an escape.
      if ((i == 0 || in[i - 1] == ':') && i + 1 < in.size() && in[i + 1] == '$')
        ++i;
      else
        out += in[i++];
    } else if (c == '.') {
      if (i + 1 < in.size() && in[i + 1] == '.') {
        out += "::";
        i += 2;
      } else {
        out += '-';
        ++i;
      }
    } else if (IsRustWordChar(c)) {
      out += in[i++];
    } else {
      out += '?';
      break;
    }
  }
  return out;
}

// perf's OCaml names: "caml" + an upper-case letter; "__" -> ".", "$xx" -> the byte xx.
bool DemangleOcaml(std::string_view s, std::string* out) {
  if (s.size() < 5 || s.substr(0, 4) != "caml" || !(s[4] >= 'A' && s[4] <= 'Z')) return false;
  out->clear();
  for (size_t i = 4; i < s.size();) {
    if (s[i] == '_' && i + 1 < s.size() && s[i + 1] == '_') {
      *out += '.';
      i += 2;
    } else if (s[i] == '$' && i + 2 < s.size() &&
               std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      *out += static_cast<char>(HexDigit(s[i + 1]) << 4 | HexDigit(s[i + 2]));
      i += 3;
    } else {
      *out += s[i++];
    }
  }
  return true;
}

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};

}  // namespace

std::string Demangle(std::string_view mangled) {
  // cplus_demangle needs a NUL-terminated string; names with an embedded NUL cannot be.
  if (mangled.empty() || mangled.find('\0') != std::string_view::npos) return std::string(mangled);
  // In its default (auto) style cplus_demangle takes only the Itanium ABI's names (`_Z`,
  // `_GLOBAL_`) and Rust v0's (`_R`); the rest (most of a C library's) skip the call.
  if (!MayDemangle(mangled)) return std::string(mangled);
  if (mangled.starts_with("caml")) {  // (libiberty takes none of OCaml's names)
    std::string ocaml;
    if (DemangleOcaml(mangled, &ocaml)) return ocaml;
    return std::string(mangled);
  }
  std::string name(mangled);
  std::unique_ptr<char, FreeDeleter> out(cplus_demangle(name.c_str(), DMGL_NO_OPTS));
  if (out == nullptr) return name;
  std::string result(out.get());
  if (LooksLikeRustWithHash(result)) return RustUnescape(result);
  return result;
}

}  // namespace pf
