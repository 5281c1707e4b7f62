// stackcollapse-perf.pl's names for a frame (frame_names.h), as functions over its fields: the
// Perl script's per-frame rules (drop process-name frames, split perf's inline chains "a->b",
// $tidy_generic, Java's 'L', the --kernel/--jit/--inline marks, --addrs' "[dso <addr>]" and
// --srcline's ":file:line") with pf's documented additions (perf_script.h: template brackets,
// "(anonymous namespace)", half-demangled Rust symbols). Both of the folder's readers name
// frames here, so a recording and its perf script text fold to the same names by
// construction; the folder caches each frame's names, so this runs once per distinct frame.

#include "formats/frame_names.h"

#include <algorithm>
#include <array>

#include "formats/perf_script.h"

namespace pf {

namespace {

using perl::IsDigit;
using perl::IsHex;
using perl::IsLowerHex;
using perl::IsWord;

// inferno's repair of half-demangled Rust legacy symbols ("foo..bar$LT$T$GT$::h0123...").
bool FixRustSymbol(std::string_view sym, std::string* out) {
  constexpr size_t kHashLen = 17;  // 'h' and 16 hex digits
  if (sym.size() < kHashLen) return false;
  std::string_view hash = sym.substr(sym.size() - kHashLen);
  if (hash[0] != 'h') return false;
  for (size_t i = 1; i < hash.size(); ++i) {
    if (!IsHex(hash[i])) return false;
  }
  std::string_view rest = sym.substr(0, sym.size() - kHashLen);
  if (rest.size() >= 2 && rest.substr(rest.size() - 2) == "::") rest.remove_suffix(2);
  if (rest.size() >= 2 && rest.substr(0, 2) == "_$") rest.remove_prefix(1);
  static constexpr std::pair<std::string_view, std::string_view> kEscapes[] = {
      {"$SP$", "@"},   {"$BP$", "*"},   {"$RF$", "&"},   {"$LT$", "<"},   {"$GT$", ">"},
      {"$LP$", "("},   {"$RP$", ")"},   {"$C$", ","},    {"$u7e$", "~"},  {"$u20$", " "},
      {"$u27$", "'"},  {"$u3d$", "="},  {"$u5b$", "["},  {"$u5d$", "]"},  {"$u7b$", "{"},
      {"$u7d$", "}"},  {"$u3b$", ";"},  {"$u2b$", "+"},  {"$u21$", "!"},  {"$u22$", "\""},
  };
  out->clear();
  while (!rest.empty()) {
    if (rest[0] == '.') {
      if (rest.size() > 1 && rest[1] == '.') {
        out->append("::");
        rest.remove_prefix(2);
      } else {
        out->push_back('.');
        rest.remove_prefix(1);
      }
    } else if (rest[0] == '$') {
      bool found = false;
      for (const auto& [pat, rep] : kEscapes) {
        if (rest.substr(0, pat.size()) == pat) {
          out->append(rep);
          rest.remove_prefix(pat.size());
          found = true;
          break;
        }
      }
      if (!found) {
        out->append(rest);
        break;
      }
    } else {
      size_t i = 0;
      while (i < rest.size() && rest[i] != '$' && rest[i] != '.') ++i;
      out->append(rest.substr(0, i));
      rest.remove_prefix(i);
    }
  }
  return true;
}

// Perl: split /->/, $rawfunc (trailing empty fields dropped; an empty string gives none).
void SplitArrows(std::string_view s, std::vector<std::string_view>* parts) {
  parts->clear();
  if (s.empty()) return;
  for (;;) {
    size_t p = s.find("->");
    parts->push_back(s.substr(0, p));
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 2);
  }
  while (!parts->empty() && parts->back().empty()) parts->pop_back();
}

// Length of a C++ operator token at `i` in `s` that contains '<' or '>' ("operator<<",
// "operator<=>", ...), so template depth counting can step over it; 0 when there is none.
size_t OperatorTokenLen(std::string_view s, size_t i) {
  static constexpr std::string_view kWord = "operator";
  if (i < kWord.size() || s.substr(i - kWord.size(), kWord.size()) != kWord) return 0;
  static constexpr std::string_view kOps[] = {"<=>", "<<=", ">>=", "<<", ">>", "<=", ">=",
                                              "<",   ">"};
  for (std::string_view op : kOps) {
    if (s.substr(i, op.size()) == op) return op.size();
  }
  return 0;
}

// A quote at `i` that starts a Rust lifetime: after '<', '&' or ", ", then an identifier
// ending at '>', ',', ' ' or the end.
bool IsRustLifetime(std::string_view s, size_t i) {
  bool after = i > 0 && (s[i - 1] == '<' || s[i - 1] == '&' ||
                         (i > 1 && s[i - 1] == ' ' && s[i - 2] == ','));
  if (!after) return false;
  size_t j = i + 1;
  if (j >= s.size() || !(IsWord(s[j]) && !IsDigit(s[j]))) return false;
  while (j < s.size() && IsWord(s[j])) ++j;
  return j == s.size() || s[j] == '>' || s[j] == ',' || s[j] == ' ';
}

// Perl's $tidy_generic, except that a '(' inside template brackets does not cut the name.
// With `keep_cxx` (pf-dot, which no Perl output binds), neither does the "()" of operator()
// nor a '(' inside braces ("{lambda(int)#1}"): the names stay distinguishable.
void TidyGeneric(std::string* func, bool keep_cxx) {
  // Only ';', '(' and quotes change a name: most names (and every "[dso <addr>]") have none.
  static constexpr auto kChanges = [] {
    std::array<bool, 256> t{};
    for (unsigned char c : {';', '(', '"', '\''}) t[c] = true;
    return t;
  }();
  if (std::none_of(func->begin(), func->end(),
                   [](char c) { return kChanges[static_cast<unsigned char>(c)]; })) {
    return;
  }
  for (char& c : *func) {
    if (c == ';') c = ':';
  }
  std::string_view f = *func;
  // A Go method name such as "net/http.(*Client).Do" is left whole (Perl: /\.\(.*\)\./).
  size_t go = f.find(".(");
  bool is_go = go != std::string_view::npos && f.rfind(").") != std::string_view::npos &&
               f.rfind(").") >= go + 2;
  if (!is_go) {
    // Only these bytes move the state below; the others are passed over at a table lookup
    // each (a synthetic capture's 19k names took 1,500 instructions each).
    static constexpr auto kMoves = [] {
      std::array<bool, 256> t{};
      for (unsigned char c : {'{', '}', '<', '>', '('}) t[c] = true;
      return t;
    }();
    int depth = 0, braces = 0;
    for (size_t i = 0; i < f.size(); ++i) {
      char c = f[i];
      if (!kMoves[static_cast<unsigned char>(c)]) continue;
      if (keep_cxx && (c == '{' || c == '}')) {
        braces += c == '{' ? 1 : (braces > 0 ? -1 : 0);
      } else if (keep_cxx && (braces > 0 || (c == '(' && i + 1 < f.size() && f[i + 1] == ')' &&
                                              i >= 8 && f.substr(i - 8, 8) == "operator"))) {
        if (braces == 0) ++i;  // the "()" of operator()
      } else if (c == '<' || c == '>') {
        if (size_t n = OperatorTokenLen(f, i)) {
          i += n - 1;
          continue;
        }
        depth += c == '<' ? 1 : (depth > 0 ? -1 : 0);
      } else if (c == '(' && depth == 0 &&
                 f.substr(i + 1, 20) != std::string_view("anonymous namespace)")) {
        func->resize(i);
        break;
      }
    }
  }
  // Perl deletes every quote; a Rust lifetime ("Split<'a, P>", "&'static str") keeps its
  // quote, as inferno does.
  std::string& s = *func;
  size_t out = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') continue;
    if (c == '\'' && !IsRustLifetime(s, i)) continue;
    s[out++] = c;
  }
  s.resize(out);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsVmlinux(std::string_view mod) {
  size_t p = mod.rfind("vmlinux");
  if (p == std::string_view::npos) return false;
  for (char c : mod.substr(p)) {
    if (!(IsWord(c) || c == '-' || c == '.')) return false;
  }
  return true;
}

// The Perl script's --srcline: `s/\[.*?\]//g`, trimmed, appended as ":LINE" unless empty.
void AppendSrcline(std::string_view srcline, std::string* func) {
  std::string clean;
  for (size_t i = 0; i < srcline.size(); ++i) {
    if (srcline[i] == '[') {
      size_t close = srcline.find(']', i + 1);
      if (close != std::string_view::npos) {
        i = close;
        continue;
      }
    }
    clean += srcline[i];
  }
  size_t b = clean.find_first_not_of(" \t\r");
  if (b == std::string::npos) return;
  size_t e = clean.find_last_not_of(" \t\r");
  *func += ':';
  func->append(clean, b, e - b + 1);
}

}  // namespace

bool IsKernelModule(std::string_view mod) {
  if (mod.find("unknown") != std::string_view::npos) return false;
  return (!mod.empty() && mod[0] == '[') || IsVmlinux(mod) || EndsWith(mod, ".ko");
}

bool IsJitModule(std::string_view mod) {
  // Perl: m:/tmp/perf-\d+\.map:
  for (size_t p = mod.find("/tmp/perf-"); p != std::string_view::npos;
       p = mod.find("/tmp/perf-", p + 1)) {
    size_t i = p + 10, j = i;
    while (j < mod.size() && IsDigit(mod[j])) ++j;
    if (j > i && mod.substr(j, 4) == ".map") return true;
  }
  return mod.find("/jitted-") != std::string_view::npos && EndsWith(mod, ".so");
}

std::string_view DsoFile(std::string_view dso) {
  if (size_t slash = dso.rfind('/'); slash != std::string_view::npos) dso.remove_prefix(slash + 1);
  return dso;
}

void NameFrame(const ScriptFrame& frame, const PerfScriptOptions& options, bool java,
               FrameNames* out) {
  out->count = 0;
  out->skip_after = false;
  std::string_view raw = frame.name;
  // Perl: next if $rawfunc =~ /^\(/ (a process name), but "(anonymous namespace)" is kept.
  if (!raw.empty() && raw[0] == '(' &&
      raw.substr(0, 21) != std::string_view("(anonymous namespace)")) {
    return;
  }
  if (FixRustSymbol(raw, &out->rust)) raw = out->rust;
  for (const std::string& s : options.skip_after) {
    if (raw == s) out->skip_after = true;
  }
  SplitArrows(raw, &out->parts);
  if (out->names.size() < out->parts.size()) out->names.resize(out->parts.size());
  for (size_t i = 0; i < out->parts.size(); ++i) {
    std::string& func = out->names[i];
    func.assign(out->parts[i]);
    const bool unknown = func == "[unknown]";
    if (unknown) {
      func = "[";
      func += frame.dso != "[unknown]" ? DsoFile(frame.dso) : std::string_view("unknown");
      if (options.include_addrs) {
        func += " <";
        func += frame.pc;
        func += ">";
      }
      func += "]";
    }
    TidyGeneric(&func, options.keep_cxx_names);
    if (java && !func.empty() && func[0] == 'L' && func.find('/') != std::string::npos) {
      func.erase(0, 1);
    }
    if (i > 0 || (options.annotate_inline && frame.dso == "inlined")) {
      if (func.find("_[i]") == std::string::npos) func += "_[i]";
    } else if (options.annotate_kernel && IsKernelModule(frame.dso)) {
      func += "_[k]";
    } else if (options.annotate_jit && IsJitModule(frame.dso)) {
      if (func.find("_[j]") == std::string::npos) func += "_[j]";
    }
    if (options.srcline && !unknown) AppendSrcline(frame.srcline, &func);
  }
  out->count = out->parts.size();
}

}  // namespace pf
