// A binary's symbols as perf names them (elf_symbols.h gives the rules and their sources):
// the cache on disk and the lookups. Reading a large table (libc with its debug file) takes
// milliseconds (elf_symbols_read.cpp finds the files and reads them, elf_symbols_ranges.cpp
// applies perf's table rules and replays its tree), so the finished ranges and names are kept
// in the cache on disk and restored, bounds-checked, in place, when every file the search
// looked at is unchanged. A lookup is then a binary search of the ranges (or perf's search of
// its replayed tree, where symbols overlap).

#include "symbolize/elf_symbols.h"

#include <sys/stat.h>

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <span>

#include "base/byte_cursor.h"
#include "base/teardown.h"
#include "symbolize/cache_entry.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_cache.h"

namespace pf {

namespace {

constexpr uint32_t kNone = UINT32_MAX;  // a range no symbol covers
// perf formats PLT names into a 1024-byte buffer (snprintf), so longer ones are cut.
constexpr size_t kPltNameMax = 1023;

}  // namespace

void SymbolRanges::Save(EntryWriter& w) const {
  w.Put(static_cast<uint32_t>(ranges_.size()));
  w.Flag(tree_);
  w.Pad8();
  w.Array(ranges_);
  if (!tree_) return;
  w.Put(root_);
  w.Put(static_cast<uint32_t>(nodes_.size()));
  w.Array(nodes_);
}

bool SymbolRanges::Restore(EntryReader& r, uint32_t id_limit) {
  uint32_t count;
  bool tree;
  if (!r.Get(&count) || !r.Flag(&tree) || !r.Pad8() || !r.Array(count, &ranges_)) return false;
  for (size_t i = 0; i < ranges_.size(); ++i) {
    const Range& g = ranges_[i];
    if ((g.id >= id_limit && g.id != kNone) || g.zero != 0 ||
        (i > 0 && g.start < ranges_[i - 1].start)) {
      return false;
    }
  }
  tree_ = tree;
  nodes_ = {};
  root_ = -1;
  if (tree_) {
    uint32_t nodes;
    if (!r.Get(&root_) || !r.Get(&nodes) || !r.Array(nodes, &nodes_)) return false;
    auto valid = [nodes](int32_t v) { return v >= -1 && v < static_cast<int64_t>(nodes); };
    if (!valid(root_)) return false;
    // Children in range make every step of a search land on a node; Find bounds the number
    // of steps, so a corrupt shape (a cycle) cannot make it loop.
    for (const Node& n : nodes_)
      if (n.id >= id_limit || !valid(n.left) || !valid(n.right) || n.zero != 0) return false;
  }
  own_ranges_ = {};
  own_nodes_ = {};
  return true;
}

ElfSymbols::~ElfSymbols() = default;

namespace {

// The symbol cache's entries: a format of their own in the DWARF cache's directory.
constexpr uint64_t kSymbolsFormat = 2;

// What decides whether a file is still the one an entry was made from: its type, device,
// inode, size, modification and change times (all zero for a missing file).
std::array<uint64_t, 8> FileState(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {};
  return {static_cast<uint64_t>(st.st_mode & S_IFMT),   static_cast<uint64_t>(st.st_dev),
          static_cast<uint64_t>(st.st_ino),             static_cast<uint64_t>(st.st_size),
          static_cast<uint64_t>(st.st_mtim.tv_sec),     static_cast<uint64_t>(st.st_mtim.tv_nsec),
          static_cast<uint64_t>(st.st_ctim.tv_sec),     static_cast<uint64_t>(st.st_ctim.tv_nsec)};
}

// The entry's name: what was asked (the path and the options) and the binary's state; ""
// when the binary is not a regular file (nothing to key on).
std::string SymbolsCacheKey(std::string_view path, const ElfLoadOptions& options) {
  std::string real = options.symfs + std::string(path);
  std::array<uint64_t, 8> state = FileState(real);
  if (state[0] != S_IFREG) return "";
  std::string asked;
  PutRaw(&asked, kSymbolsFormat);
  for (std::string_view part : {std::string_view(options.symfs), path,
                                std::string_view(options.build_id),
                                std::string_view(options.build_id_cache)}) {
    PutStr(&asked, part);
  }
  PutRaw(&asked, static_cast<uint8_t>(options.demangle));
  PutRaw(&asked, state);
  char name[18];
  std::snprintf(name, sizeof name, "s%016" PRIx64, XXH3_64bits(asked.data(), asked.size()));
  return name;
}

}  // namespace

std::unique_ptr<ElfSymbols> ElfSymbols::Load(std::string_view path, const ElfLoadOptions& options) {
  const std::string dir = CacheDir();
  const std::string key = dir.empty() ? "" : SymbolsCacheKey(path, options);
  if (MappedEntry entry = MapCachedEntry(dir, key)) {
    // The files the search looked at, each as it was; then the symbols, 8-aligned. The table
    // is read in place (views into the mapped entry, which it keeps): glibc's 8,000 symbols
    // restored in 0.47 ms when they were copied out.
    EntryReader r(entry.bytes);
    uint32_t files = 0;
    bool same = r.Get(&files);
    for (uint32_t i = 0; same && i < files; ++i) {
      std::string file;
      std::array<uint64_t, 8> state;
      same = r.Str(&file) && r.Get(&state) && FileState(file) == state;
    }
    std::unique_ptr<ElfSymbols> restored;
    if (same && r.Pad8()) restored = RestoredIn(r.rest(), std::move(entry.owner));
    if (restored) {
      restored->from_cache_ = true;
      return restored;
    }
  }
  std::vector<std::string> probed;
  std::unique_ptr<ElfSymbols> out = Search(path, options, &probed);
  if (!key.empty()) {
    EntryWriter w;
    size_t header = 8;
    for (const std::string& file : probed) header += 4 + file.size() + sizeof(std::array<uint64_t, 8>);
    w.Reserve(header);  // (SaveTo reserves the rest)
    w.Put(static_cast<uint32_t>(probed.size()));
    for (const std::string& file : probed) {
      w.Str(file);
      w.Put(FileState(file));
    }
    w.Pad8();  // the table's arrays are read in place: 8-aligned in the mapped entry
    out->SaveTo(w, w.size());
    // Trimmed now and then, not after each of a run's tables (a trim stats every entry).
    if (StoreCachedImageUntrimmed(dir, key, w.Take())) TrimCacheNowAndThen(dir, kCacheBytes);
  }
  return out;
}

std::string ElfSymbols::Saved() const {
  EntryWriter w;
  SaveTo(w);
  return w.Take();
}

void ElfSymbols::SaveTo(EntryWriter& w, size_t before) const {
  w.Reserve(before + 64 + build_id_.size() + debuglink_.size() + symbols_path_.size() +
            names_.size() + segments_.size() * sizeof(Segment) + symbols_.size() * sizeof(Sym) +
            ranges_.SavedSize());
  for (std::string_view s : {std::string_view(build_id_), std::string_view(debuglink_),
                             std::string_view(symbols_path_), names_}) {
    w.Str(s);
  }
  w.Flag(demangle_);
  w.Put(static_cast<uint32_t>(segments_.size()));
  for (const Segment& g : segments_) {
    for (uint64_t v : {g.offset, g.vaddr, g.filesz, g.memsz}) w.Put(v);
  }
  w.Put(static_cast<uint32_t>(symbols_.size()));
  w.Pad8();
  w.Array(symbols_);
  ranges_.Save(w);
}

std::unique_ptr<ElfSymbols> ElfSymbols::Restored(std::string_view bytes) {
  // A copy, 8-aligned, that the table's views keep alive.
  std::shared_ptr<uint64_t[]> copy(new uint64_t[(bytes.size() + 7) / 8]);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  const char* at = reinterpret_cast<const char*>(copy.get());
  return RestoredIn(std::string_view(at, bytes.size()), std::move(copy));
}

std::unique_ptr<ElfSymbols> ElfSymbols::RestoredIn(std::string_view bytes,
                                                   std::shared_ptr<const void> owner) {
  auto out = std::unique_ptr<ElfSymbols>(new ElfSymbols);
  EntryReader r(bytes);
  if (!out->Restore(r) || !r.AtEnd()) return nullptr;
  out->image_ = std::move(owner);
  return out;
}

bool ElfSymbols::Restore(EntryReader& r) {
  uint32_t count = 0;
  if (!r.Str(&build_id_) || !r.Str(&debuglink_) || !r.Str(&symbols_path_) ||
      !r.View(&names_) || !r.Flag(&demangle_) || !r.Count(&count, sizeof(Segment))) {
    return false;
  }
  segments_.resize(count);
  for (Segment& g : segments_) {
    if (!r.Get(&g.offset) || !r.Get(&g.vaddr) || !r.Get(&g.filesz) || !r.Get(&g.memsz))
      return false;
  }
  if (!r.Get(&count) || !r.Pad8() || !r.Array(count, &symbols_)) return false;
  for (const Sym& y : symbols_) {
    if (y.plt > 1 || y.name_offset > names_.size() || y.name_size > names_.size() - y.name_offset) {
      return false;
    }
    for (uint8_t z : y.zero)
      if (z != 0) return false;
  }
  own_symbols_ = {};
  own_names_ = {};
  return ranges_.Restore(r, count);
}

bool ElfSymbols::Find(uint64_t file_offset, SymbolIndex* index, uint64_t* offset) const {
  uint32_t id;  // the builder's ids are the symbols' indexes
  if (!ranges_.Find(file_offset, &id)) return false;
  *index = SymbolIndex(id);
  *offset = file_offset - symbols_[id].start;
  return true;
}

// Beside ElfSymbols::Find, which it is inlined into (a lookup per sampled address).
bool SymbolRanges::Find(uint64_t address, uint32_t* id) const {
  if (tree_) {
    // perf's search. A red-black tree of n nodes is at most 2 log2(n + 1) deep: 64 steps for
    // any table; more only in a corrupt cache entry.
    int32_t n = root_;
    for (int step = 0; n >= 0 && step < 128; ++step) {
      const Node& s = nodes_[static_cast<size_t>(n)];
      if (address < s.start) {
        n = s.left;
      } else if (address > s.end || (address == s.end && address != s.start)) {
        n = s.right;
      } else {
        *id = s.id;  // a zero-size symbol matches its own address
        return true;
      }
    }
    return false;
  }
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](uint64_t v, const Range& r) { return v < r.start; });
  if (it == ranges_.begin()) return false;
  --it;
  if (it->id == kNone) return false;
  *id = it->id;
  return true;
}

std::string_view ElfSymbols::RawName(SymbolIndex index) const {
  const Sym& s = symbols_[index.index()];
  return names_.substr(s.name_offset, s.name_size);
}

std::string ElfSymbols::Name(SymbolIndex index) const {
  std::string name = demangle_ ? Demangle(RawName(index)) : std::string(RawName(index));
  if (symbols_[index.index()].plt) {
    name += "@plt";
    if (name.size() > kPltNameMax) name.resize(kPltNameMax);
  }
  return name;
}

bool ElfSymbols::FileOffsetToVaddr(uint64_t file_offset, uint64_t* vaddr) const {
  for (const Segment& s : segments_) {
    if (file_offset >= s.offset && file_offset - s.offset < std::max(s.filesz, s.memsz)) {
      *vaddr = file_offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

bool ElfSymbols::VaddrToFileOffset(uint64_t vaddr, uint64_t* file_offset) const {
  for (const Segment& s : segments_) {
    if (vaddr >= s.vaddr && vaddr - s.vaddr < std::max(s.filesz, s.memsz)) {
      *file_offset = vaddr - s.vaddr + s.offset;
      return true;
    }
  }
  return false;
}

}  // namespace pf
