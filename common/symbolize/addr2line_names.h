#pragma once
// The symbolize module (common/symbolize/): addresses to names as perf prints them: the front
// door (symbolizer.h), ELF reading and symbol tables, DWARF inline frames and lines, kallsyms,
// JIT maps, demangling, symbols embedded in a stream, and the cache on disk they share.
//
// The function name binutils' addr2line gives an address from a binary's symbol table, where
// the binary has no DWARF function for it: perf script asks addr2line -i -f about every
// frame to print inline frames, and when that name differs from the symbol perf chose for
// the frame (another alias at the same address: glibc's __libc_free for perf's cfree, Rust's
// <u64 as Display>::fmt for <usize as Display>::fmt after identical code folding), perf
// prints it as an inlined frame in place of the real one. pf-script does the same, so that
// its text equals perf's.
//
// The choice follows BFD's elf_find_function: among the symbols of the address's section
// (.symtab, else .dynsym; not objects, TLS, sections or files) the nearest at or below the
// address; of several there, in symbol table order, one that reaches the address over one
// that does not, then a function over an untyped symbol, then the smallest. perf prints the
// file of that answer as the frame's source line ("FILE:0", or "??:0").

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_image.h"

namespace pf {

class EntryReader;

class Addr2lineNames {
 public:
  /// The symbol table of `image` (which must outlive this).
  explicit Addr2lineNames(const elf::ElfImage& image);
  /// The same for `image`, read from the file `path`, with its index kept in the cache on
  /// disk (dwarf_cache.h): sorting glibc's symbols took 0.75 ms a run, restoring them takes
  /// a copy.
  static std::unique_ptr<Addr2lineNames> Load(const elf::ElfImage& image,
                                              const std::string& path);
  /// The index as a cache entry keeps it, and back: null for bytes that are not a valid
  /// index for `image` (its checks: the size, each flag, each section, the order).
  std::string Saved() const;
  static std::unique_ptr<Addr2lineNames> Restored(const elf::ElfImage& image,
                                                  std::string_view entry);

  /// What addr2line prints for an address it has no line for: the function's raw (mangled)
  /// name, and the file: the name of the STT_FILE symbol before a local function's symbol
  /// (BFD names no file for a global one once a second file symbol was seen).
  struct Answer {
    std::string_view function;  ///< empty when it finds none ("??")
    std::string_view file;      ///< the STT_FILE symbol's name ("" when has_file is false)
    bool has_file = false;      ///< false: none ("??"); a file symbol may have an empty name
    uint64_t value = 0;         ///< the symbol's address
  };
  Answer At(uint64_t vaddr) const;
  /// At(vaddr).function.
  std::string_view NameAt(uint64_t vaddr) const { return At(vaddr).function; }

 private:
  friend struct Addr2lineNamesTestPeer;  // tests/unit/dwarf_info_test.cpp
  // The name of `path`'s entry in the cache ("" when it cannot have one).
  static std::string CacheKey(const std::string& path);
  struct Candidate {
    uint64_t value, size;  // size 1 for a symbol of size 0, as BFD counts it
    uint32_t order;        // index in the symbol table
    uint32_t name;         // offsets in the string table: read when asked
    uint32_t file;         // (the STT_FILE symbol's name, as BFD would report it)
    uint16_t section;
    bool function;
    bool has_file;
  };
  struct SectionRange {
    uint64_t lo, hi;
    uint16_t index;
  };
  struct Tables {};
  Addr2lineNames(const elf::ElfImage& image, Tables);  // sections and strings, no index
  void Index(const elf::ElfImage& image);
  bool Restore(std::string_view entry, const elf::ElfImage& image);
  static bool ReadCandidate(EntryReader& r, Candidate* d);

  std::string_view strings_;            // the symbol table's strings
  std::vector<Candidate> candidates_;  // by (section, value, order)
  std::vector<SectionRange> sections_;  // allocated sections, in section order
  bool from_cache_ = false;  // Load found the index in the cache
};

}  // namespace pf
