// The symbol table a pf-record stream carries (embedded.h gives the layout). Lookups are
// binary searches over per-binary ranges sorted by start. The table is written as KSYMBOL
// notes perf ignores, one per symbol, and AddNote rebuilds it from them one note at a time, so
// a stream cut short keeps the symbols of the notes it holds; Encode and Decode give a compact
// form with every read bounds-checked.

#include "symbolize/embedded.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/byte_cursor.h"

namespace pf {

namespace {

constexpr uint32_t kMagic = 0x59534650;  // "PFSY"

void Widen(std::map<uint64_t, EmbeddedSymbols::Range>& m, uint64_t start, uint64_t size,
           std::string_view name, std::string_view module) {
  auto [it, added] = m.try_emplace(start, EmbeddedSymbols::Range{size, std::string(name),
                                                                  std::string(module)});
  if (!added && size > it->second.size) it->second.size = size;
}

template <typename M>
const EmbeddedSymbols::Range* FindIn(const M& m, uint64_t at, uint64_t* start) {
  auto it = m.upper_bound(at);
  if (it == m.begin()) return nullptr;
  --it;
  if (at - it->first >= it->second.size) return nullptr;
  *start = it->first;
  return &it->second;
}

}  // namespace

void EmbeddedSymbols::Add(const std::string& path, const std::string& build_id, uint64_t start,
                          uint64_t size, std::string_view name) {
  Binary& b = binaries[path];
  if (b.build_id.empty()) b.build_id = build_id;
  Widen(b.symbols, start, size, name, "");
}

void EmbeddedSymbols::AddKernel(uint64_t start, uint64_t size, std::string_view name,
                                std::string_view module) {
  Widen(kernel, start, size, name, module);
}

const EmbeddedSymbols::Range* EmbeddedSymbols::Find(const std::string& path, uint64_t offset,
                                                    uint64_t* start) const {
  auto b = binaries.find(path);
  return b == binaries.end() ? nullptr : FindIn(b->second.symbols, offset, start);
}

const EmbeddedSymbols::Range* EmbeddedSymbols::FindKernel(uint64_t ip, uint64_t* start) const {
  return FindIn(kernel, ip, start);
}

namespace {
constexpr uint64_t kTopBit = 1ULL << 63;
constexpr size_t kMaxName = 4000;  // records hold 64 KiB; no real symbol comes close
}  // namespace

std::vector<EmbeddedSymbols::Note> EmbeddedSymbols::ToNotes() const {
  std::vector<Note> out;
  uint64_t index = 0;
  for (const auto& [path, b] : binaries) {
    out.push_back({0, 0, "pf-dso " + std::to_string(index) + " " +
                             (b.build_id.empty() ? "-" : b.build_id) + " " + path});
    for (const auto& [start, r] : b.symbols) {
      out.push_back({start, static_cast<uint32_t>(std::min<uint64_t>(r.size, UINT32_MAX)),
                     "pf-sym " + std::to_string(index) + " " + r.name.substr(0, kMaxName)});
    }
    ++index;
  }
  for (const auto& [start, r] : kernel) {
    out.push_back({start & ~kTopBit, static_cast<uint32_t>(std::min<uint64_t>(r.size, UINT32_MAX)),
                   "pf-ksym " + (r.module.empty() ? std::string("-") : r.module) + " " +
                       r.name.substr(0, kMaxName)});
  }
  return out;
}

bool EmbeddedSymbols::AddNote(uint64_t addr, uint32_t len, std::string_view name) {
  auto word = [&](std::string_view* rest) {
    size_t sp = rest->find(' ');
    std::string_view w = rest->substr(0, sp);
    rest->remove_prefix(sp == std::string_view::npos ? rest->size() : sp + 1);
    return w;
  };
  std::string_view rest = name;
  std::string_view kind = word(&rest);
  if (kind == "pf-dso") {
    std::string index(word(&rest));
    std::string_view id = word(&rest);
    if (rest.empty()) return false;
    uint64_t i = std::strtoull(index.c_str(), nullptr, 10);
    note_dsos[i] = std::string(rest);
    Binary& b = binaries[std::string(rest)];
    if (b.build_id.empty() && id != "-") b.build_id = std::string(id);
    return true;
  }
  if (kind == "pf-sym") {
    std::string index(word(&rest));
    auto it = note_dsos.find(std::strtoull(index.c_str(), nullptr, 10));
    if (it == note_dsos.end() || rest.empty()) return false;
    Add(it->second, "", addr, len ? len : 1, rest);
    return true;
  }
  if (kind == "pf-ksym") {
    std::string_view module = word(&rest);
    if (rest.empty()) return false;
    AddKernel(addr | kTopBit, len ? len : 1, rest, module == "-" ? "" : module);
    return true;
  }
  return false;
}

std::string EmbeddedSymbols::Encode() const {
  std::string out;
  PutRaw<uint32_t>(&out, kMagic);
  PutRaw<uint32_t>(&out, 1);
  PutRaw<uint32_t>(&out, static_cast<uint32_t>(binaries.size()));
  for (const auto& [path, b] : binaries) {
    PutStr(&out, path);
    PutStr(&out, b.build_id);
    PutRaw<uint32_t>(&out, static_cast<uint32_t>(b.symbols.size()));
    for (const auto& [start, r] : b.symbols) {
      PutRaw<uint64_t>(&out, start);
      PutRaw<uint64_t>(&out, r.size);
      PutStr(&out, r.name);
    }
  }
  PutRaw<uint32_t>(&out, static_cast<uint32_t>(kernel.size()));
  for (const auto& [start, r] : kernel) {
    PutRaw<uint64_t>(&out, start);
    PutRaw<uint64_t>(&out, r.size);
    PutStr(&out, r.name);
    PutStr(&out, r.module);
  }
  return out;
}

bool EmbeddedSymbols::Decode(std::span<const uint8_t> data) {
  Cursor in(data);
  EmbeddedSymbols e;
  uint32_t magic, version, n;
  if (!in.U32(&magic) || magic != kMagic || !in.U32(&version) || version != 1 || !in.U32(&n)) {
    return false;
  }
  for (uint32_t i = 0; i < n; ++i) {
    std::string path, id;
    uint32_t count;
    if (!in.Str(&path) || !in.Str(&id) || !in.U32(&count)) return false;
    for (uint32_t k = 0; k < count; ++k) {
      uint64_t start, size;
      std::string name;
      if (!in.U64(&start) || !in.U64(&size) || !in.Str(&name)) return false;
      e.Add(path, id, start, size, name);
    }
  }
  if (!in.U32(&n)) return false;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t start, size;
    std::string name, module;
    if (!in.U64(&start) || !in.U64(&size) || !in.Str(&name) || !in.Str(&module)) return false;
    e.AddKernel(start, size, name, module);
  }
  for (auto& [path, b] : e.binaries) {
    Binary& mine = binaries[path];
    if (mine.build_id.empty()) mine.build_id = b.build_id;
    for (auto& [start, r] : b.symbols) Widen(mine.symbols, start, r.size, r.name, "");
  }
  for (auto& [start, r] : e.kernel) Widen(kernel, start, r.size, r.name, r.module);
  return true;
}

}  // namespace pf
