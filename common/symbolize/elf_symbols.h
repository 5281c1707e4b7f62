#pragma once
// The symbols of one ELF binary, named and bounded the way `perf script` (Debian's perf 6.1)
// names them, so pf-script's frames equal perf's. Every rule below was checked against
// `perf script` on this kind of machine, address by address (libc with libc6-dbg, libstdc++,
// libpython, Rust and C++ programs, stripped binaries, random symbol tables).
//
// Which files: perf looks for a symbol table in a fixed order — the .gnu_debuglink file
// (DIR/LINK, DIR/.debug/LINK, /usr/lib/debug/DIR/LINK), its build-id cache
// (~/.debug/.build-id/xx/rest/{elf,debug}), /usr/lib/debug/PATH.debug, /usr/lib/debug/PATH,
// /usr/lib/debug/.build-id/xx/rest.debug, the binary itself — and reads symbols from the first
// with a .symtab, PLT entries from the first with a .dynsym. A file whose build-id differs
// from the recorded one (or the binary's) is never used.
//
// Which symbols: that file's .symtab and then its .dynsym (both, one after the other): FUNC,
// GNU_IFUNC and OBJECT symbols (perf keeps code and data in one table), and NOTYPE labels
// that are not hidden in sections whose name holds "text" or "data"; only in allocated
// sections. Addresses become file offsets through the binary's PT_LOAD segment holding them
// (st_value - p_vaddr + p_offset), as perf keeps them, so a sample's file offset
// (ip - map start + pgoff, from an MMAP2 record) is looked up directly. Then one `name@plt`
// per .rela.plt entry, in .plt after its header entry (not .plt.sec/.plt.got: perf 6.1 has
// none for them).
//
// Which name wins, and how far a symbol reaches: after each table perf extends every
// zero-size symbol to the next symbol's start (the last one to the next page boundary plus a
// page), then keeps one symbol per address: the one with a size, else not weak, else global,
// else with fewer leading underscores, else the longer (demangled) name, else the first. perf
// keeps the symbols in a red-black tree searched for the one containing an address; when
// ranges overlap (nested symbols, a zero-size `_init` stretched over .plt) the answer depends
// on the tree's shape, so the tree is replayed exactly (SymbolRanges) and its answers are
// flattened into a sorted table of disjoint ranges.
//
// Every read of the file is bounds-checked: a truncated or corrupt ELF file gives fewer
// symbols, none, or pf::Error — never a crash.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/typed_id.h"

namespace pf {

/// A symbol while perf's table rules are applied (ELF files and kallsyms share them).
struct TableSymbol {
  uint64_t start = 0;
  uint64_t end = 0;     ///< exclusive; == start for a zero-size symbol
  uint32_t id = 0;      ///< the caller's index of the symbol (its name)
  uint8_t binding = 0;  ///< STB_LOCAL, STB_GLOBAL or STB_WEAK
  bool module = false;  ///< kallsyms: the symbol belongs to a module (`[name]`)
};

/// A symbol's name as perf compares it (demangled when demangling is on).
using TableNameFn = std::function<std::string_view(uint32_t id)>;

/// perf's choose_best_symbol: true when `a` is kept rather than `b` (same start address).
bool PreferFirstSymbol(const TableSymbol& a, std::string_view a_name, const TableSymbol& b,
                       std::string_view b_name);

/// perf's symbols__fixup_end over symbols sorted by start (stable): a zero-size symbol ends
/// where the next one starts; the last one at the next page boundary plus a page. With
/// `kallsyms`, a zero-size symbol followed by one of the other kind (module / core kernel)
/// ends a page after its rounded-up start instead.
void FixupSymbolEnds(std::vector<TableSymbol>& sorted, bool kallsyms);

/// perf's symbols__fixup_duplicate over symbols sorted by start (stable): keeps one symbol per
/// address and removes the others from `sorted`. Returns the ids of the dropped symbols, in
/// the order perf erases them from its tree.
std::vector<uint32_t> RemoveDuplicateSymbols(std::vector<TableSymbol>& sorted,
                                             const TableNameFn& name);

/// The symbol perf's tree search finds for each address. perf keeps symbols in a red-black
/// tree searched with "below start: left; past end, or at the end of a symbol with a size:
/// right; else found" (so a zero-size symbol matches its own address), so when ranges
/// overlap the answer depends on the tree's shape. The tree is then replayed (same insertions
/// and erasures; the kernel's rbtree balancing is the textbook one) and searched as perf
/// searches it; without overlaps the answers are disjoint ranges and the replay is skipped.
class EntryReader;
class EntryWriter;

class SymbolRanges {
 public:
  SymbolRanges() = default;
  SymbolRanges(const SymbolRanges&) = delete;  // its views may point into its own vectors
  SymbolRanges& operator=(const SymbolRanges&) = delete;
  SymbolRanges(SymbolRanges&&) = default;  // a vector moved keeps its elements where they are
  SymbolRanges& operator=(SymbolRanges&&) = default;

  /// Room for `n` insertions (and as many erasures).
  void Reserve(size_t n) {
    symbols_.reserve(n);
    index_.reserve(n);
    ops_.reserve(2 * n);
  }
  /// perf inserts `s` (equal starts go after the existing ones); ids are unique.
  void Insert(const TableSymbol& s);
  /// perf erases the symbol inserted with `id`.
  void Erase(uint32_t id);
  /// perf changes a symbol's end in place (its fixups); the tree's shape does not change.
  void SetEnd(uint32_t id, uint64_t end);
  /// Computes the table; Find works after this.
  void Finish();
  /// The id of the symbol covering `address`, false when none does.
  bool Find(uint64_t address, uint32_t* id) const;
  /// The finished table as bytes (the symbol cache on disk), its arrays at multiples of 8
  /// from the entry's start; and back, as views into the reader's bytes (which must outlive
  /// this, and start 8-aligned): false when the bytes are not such a table with ids below
  /// `id_limit`.
  void Save(EntryWriter& w) const;
  /// The bytes Save writes, at most.
  size_t SavedSize() const { return 16 + ranges_.size() * sizeof(Range) + nodes_.size() * sizeof(Node); }
  bool Restore(EntryReader& r, uint32_t id_limit);

 private:
  friend struct ElfSymbolsTestPeer;  // tests/unit/symbolize_test.cpp
  struct Range {  // [start, next range's start) belongs to `id` (UINT32_MAX: none)
    uint64_t start;
    uint32_t id;
    uint32_t zero;
  };
  // A node of the replayed tree, as the search reads it (-1: no child).
  struct Node {
    uint64_t start, end;
    uint32_t id;
    int32_t left, right;
    uint32_t zero;
  };
  // Read in place from the cache (Cursor::Array): no padding of the compiler's in them.
  static_assert(sizeof(Range) == 16 && sizeof(Node) == 32);
  std::vector<TableSymbol> symbols_;          // in insertion order
  std::vector<uint32_t> index_;               // id -> position in symbols_ (ids are indexes)
  std::vector<std::pair<bool, size_t>> ops_;  // (erase?, position)
  // Finished: built here, or restored as views into a cache entry.
  std::vector<Range> own_ranges_;
  std::vector<Node> own_nodes_;
  std::span<const Range> ranges_;
  std::span<const Node> nodes_;  // when ranges overlap: the replayed tree
  int32_t root_ = -1;
  bool tree_ = false;
};

/// Where to look for a binary's symbols.
struct ElfLoadOptions {
  /// Prefix of every path (perf script --symfs).
  std::string symfs;
  /// The recorded build-id in hex; empty: read it from the binary. Files with another
  /// build-id are not used.
  std::string build_id;
  /// perf's build-id cache (`~/.debug`); empty: not searched.
  std::string build_id_cache;
  /// Demangled names decide which alias wins (as perf compares them).
  bool demangle = true;
};

/// A symbol's position in an ElfSymbols table (what its other answers are asked with).
using SymbolIndex = TypedId<struct SymbolIndexTag>;

class ElfSymbols {
 public:
  /// Finds and reads the symbols of the binary at `path` as perf does (see the file comment).
  /// Throws pf::Error when neither the binary nor any debug file can be used.
  ///
  /// The result is kept in the cache on disk (dwarf_cache.h) and taken from it while the
  /// binary and every file the search looked at are as they were when it was stored (device,
  /// inode, size, modification and change times; a missing file still missing): reading
  /// glibc's 13,000 symbols by perf's rules takes about 3 ms; its entry is read in place (the
  /// table keeps views into the mapped entry), in 0.1 ms.
  static std::unique_ptr<ElfSymbols> Load(std::string_view path, const ElfLoadOptions& options);
  /// The table as bytes (the cache's entries hold them), and back from a copy of `bytes`:
  /// null when they are not such a table. Every count, offset, id, flag and padding byte is
  /// checked, and each tree node's children, and a tree search takes at most 128 steps, so
  /// no bytes make a lookup crash or loop.
  std::string Saved() const;
  /// The same, appended to `w` (at an offset that is a multiple of 8), with room reserved for
  /// `before` bytes more: one buffer for a cache entry of megabytes (libpython's).
  void SaveTo(EntryWriter& w, size_t before = 0) const;
  static std::unique_ptr<ElfSymbols> Restored(std::string_view bytes);
  /// Reads one ELF file only: no debug-file search, no build-id check.
  static std::unique_ptr<ElfSymbols> FromFile(const std::string& path, bool demangle = true);
  /// Reads an ELF image held in memory (the vdso). The bytes are copied.
  static std::unique_ptr<ElfSymbols> FromImage(std::string_view image, std::string name,
                                               bool demangle = true);

  ~ElfSymbols();
  ElfSymbols(const ElfSymbols&) = delete;
  ElfSymbols& operator=(const ElfSymbols&) = delete;

  /// The symbol containing `file_offset` (perf's map_ip: ip - map start + pgoff): its index
  /// and the offset from its start. False when no symbol covers it.
  bool Find(uint64_t file_offset, SymbolIndex* index, uint64_t* offset) const;
  /// The name perf prints: demangled when loaded with demangling, `@plt` for PLT stubs.
  std::string Name(SymbolIndex index) const;
  /// The name as stored in the symbol table.
  std::string_view RawName(SymbolIndex index) const;
  /// Start (file offset) of a symbol, and its end (exclusive, after perf's fixups).
  uint64_t Start(SymbolIndex index) const { return symbols_[index.index()].start; }
  uint64_t End(SymbolIndex index) const { return symbols_[index.index()].end; }
  /// Number of symbols kept.
  size_t size() const { return symbols_.size(); }

  /// The ELF virtual address of a file offset, through the PT_LOAD segment holding it.
  bool FileOffsetToVaddr(uint64_t file_offset, uint64_t* vaddr) const;
  /// The file offset of an ELF virtual address (the inverse of FileOffsetToVaddr).
  bool VaddrToFileOffset(uint64_t vaddr, uint64_t* file_offset) const;

  /// The binary's build-id in lowercase hex ("" when it has none).
  const std::string& build_id() const { return build_id_; }

 private:
  friend struct ElfSymbolsTestPeer;  // tests/unit/symbolize_test.cpp
  struct Sym {  // as the cache on disk holds it
    uint64_t start;
    uint64_t end;
    uint32_t name_offset;  // into names_
    uint32_t name_size;
    uint8_t plt;  // 0 or 1
    uint8_t zero[7];
  };
  static_assert(sizeof(Sym) == 32);  // read in place from the cache, as Range and Node
  struct Segment {
    uint64_t offset, vaddr, filesz, memsz;
  };
  class Builder;
  ElfSymbols() = default;
  // Load, noting in `probed` every path whose state decided which files were read.
  static std::unique_ptr<ElfSymbols> Search(std::string_view path, const ElfLoadOptions& options,
                                            std::vector<std::string>* probed);
  // Restores from `bytes` (8-aligned), keeping views into them; `owner` keeps them alive.
  static std::unique_ptr<ElfSymbols> RestoredIn(std::string_view bytes,
                                                std::shared_ptr<const void> owner);
  bool Restore(EntryReader& r);

  // Built here (the Builder fills own_*), or views into a cache entry held by image_.
  std::vector<Sym> own_symbols_;
  std::string own_names_;
  std::shared_ptr<const void> image_;
  std::span<const Sym> symbols_;
  std::string_view names_;
  SymbolRanges ranges_;
  std::vector<Segment> segments_;
  std::string build_id_;
  std::string debuglink_;     // the binary's .gnu_debuglink file name ("" when none)
  std::string symbols_path_;  // the file the table was read from (binary or debug file)
  bool demangle_ = true;
  bool from_cache_ = false;  // Load answered from the cache on disk
};

/// True when `path` names a regular file (or a link to one): a candidate worth opening (a
/// search asks about many files that are not there, and a failed open costs an exception).
bool IsRegularFile(const std::string& path);

/// The build-id (hex) and .gnu_debuglink of the ELF file at `path`; false when it is not a
/// readable ELF file.
bool ReadElfIdentity(const std::string& path, std::string* build_id, std::string* debuglink);

}  // namespace pf
