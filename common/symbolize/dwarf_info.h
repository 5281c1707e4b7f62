#pragma once
// Inline frames and source lines from a binary's DWARF (.debug_info, .debug_line), for
// `perf script`'s inline frames and -F +srcline.
//
// For an address, the function holding it is found, and the inlined subroutines of its
// inline tree that hold the address are taken from the innermost out: each is a function
// inlined there, named from its abstract origin (the linkage name, demangled as perf names
// symbols, else DW_AT_name). That is what binutils' addr2line gets wrong (2.40 repeats the
// outer function's name for the inlined one), so perf's inline frames are wrong where pf's
// are right. The source line is the line table's row for the address: the file's base name
// and the line, as perf prints it.
//
// Asking libdw for the scopes of each address (dwarf_addrdie, dwarf_getscopes) walks a CU's
// whole DIE tree every time: hundreds of microseconds on a large C++ CU (perf's addr2line pays
// the like per address). Instead each CU is indexed once, the first time one of its addresses
// is asked for: its functions (with their address ranges, sorted) and, under each, its
// inlined subroutines in tree order with their depths. An address then costs a binary search
// for its function and a pass over that function's inline tree (as gimli's addr2line does).
// Answers are cached per address.
//
// The walk reads .debug_info itself (each DIE's abbreviation decoded once, where libdw's
// dwarf_child/dwarf_siblingof decode it again per call), first without entering functions
// (their subtrees jumped over by DW_AT_sibling); a function's inline tree is read when one of
// its addresses is looked up. The CU of an address (.debug_aranges, else the CUs' own ranges),
// names and range lists are read here too. libdw remains for the line tables, for what the
// walk leaves to it (split and type units, links to other units, forms it does not read), and
// as the oracle the tests compare the walk with. Folding a recording of a large C++ program
// took 0.14 s instead of 0.36. A file whose debug sections are compressed is handed to libdw
// decompressed by pf (libdeflate; zstd too, which libdw 0.188 cannot read), without the
// sections never read here; the inflated image, the CU indexes and (for the tools) the
// answers are kept in the cache on disk (dwarf_cache.h) for later runs.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/typed_id.h"

namespace pf {

/// True for a DW_AT_language (DW_LANG_*) whose plain DW_AT_name binutils takes for a linkage
/// name, as it does for C; else a function without DW_AT_linkage_name is named from the
/// symbol table where a symbol starts at its entry.
bool BinutilsTakesPlainNames(int dw_lang);

struct PcAttrs;  // (dwarf_info_internal.h)

/// Where a unit (its header) starts in .debug_info. Its CU's DIE, an offset in the same
/// section, follows the header: the two are different offsets, and only DIE offsets are
/// libdw's (Dwarf_Off) and the index's keys.
using DwarfUnitOffset = TypedId<struct DwarfUnitOffsetTag, uint64_t>;

class DwarfInfo {
 public:
  /// What an address holds.
  struct Location {
    std::vector<std::string> inlined;  ///< functions inlined at the address, innermost first
    std::string srcline;               ///< "file.c:12", or "" when the line table has none
    /// Where each inlined function was called: call_sites[i] is the line, in the function
    /// around inlined[i], of that call ("" when unknown). So the frame of inlined[0] is at
    /// `srcline`, that of inlined[i] at call_sites[i - 1], the real function's at the last.
    std::vector<std::string> call_sites;
    /// The DWARF name of the function holding the address ("" when none does), whether
    /// binutils takes it for a linkage name (it is one, demangled; or the language does not
    /// mangle names), and the start of the function's first range.
    std::string function;
    bool function_linkage = false;
    uint64_t function_entry = 0;
  };

  struct Options {
    bool demangle = true;     ///< C++ and Rust names as perf prints them
    bool lines = true;        ///< read line tables (else srcline and call_sites stay empty)
    /// Write a new cache entry on a thread of its own (StoreCachedImageLater) rather than
    /// before returning: a first run need not wait for the disk.
    bool store_later = false;
    /// Keep the answers (Locations) in the cache on disk, and take a later run's from there
    /// (see "The answers kept on disk" in dwarf_saved.cpp): what the tools do. Off by
    /// default, so that a test of the walk tests the walk.
    bool keep_locations = false;
  };
  /// Opens the DWARF of the ELF file at `path` (the binary, or its separate debug file).
  /// Returns null when it has no usable .debug_info.
  static std::unique_ptr<DwarfInfo> Open(const std::string& path, const Options& options);
  static std::unique_ptr<DwarfInfo> Open(const std::string& path) { return Open(path, {}); }
  ~DwarfInfo();

  /// Reads the index every Lookup needs first (.debug_aranges), ahead of the first Lookup:
  /// for a helper thread that hands the DwarfInfo on (a DwarfInfo is not thread-safe).
  void Prepare();

  /// The inline chain and line of ELF address `vaddr` (cached).
  const Location& Lookup(uint64_t vaddr);

  /// The CU indexes made or restored so far, as the cache on disk keeps them (see "The CU
  /// indexes kept on disk" in dwarf_saved.cpp), with those restored but not asked for.
  std::string SavedIndex() const;
  /// Takes the CU indexes of `bytes` (from SavedIndex on the same file; kept alive by
  /// `owner`), each checked against the DWARF when its CU is first asked for. False, and
  /// none taken, when `bytes` is not a whole saved index.
  bool RestoreIndex(std::shared_ptr<const char> owner, std::string_view bytes);

  /// The answers of this run and of the saved ones not asked for, as the cache on disk keeps
  /// them: what a later run's Lookup takes instead of reading the DWARF.
  std::string SavedLocations() const;
  /// Takes the answers of `bytes` (from SavedLocations on the same file; kept alive by
  /// `owner`), each read when its address is first asked for. False, and none taken, when
  /// `bytes` is not a whole saved set.
  bool RestoreLocations(std::shared_ptr<const char> owner, std::string_view bytes);

 public:
  struct Unit;      // (internal: one CU's index)
  struct Sections;  // (internal: the sections the fast walk reads)

 private:
  DwarfInfo() = default;
  // What only tests choose (through DwarfInfoTestPeer, tests/unit/dwarf_info_test.cpp, which
  // also reads the counters below): CUs indexed through libdw's DIE functions, the oracle
  // the fast walk is compared with; and the size from which the largest compressed section
  // is inflated on a thread of its own while the others are (tests lower it).
  struct TestChoices {
    bool libdw_walk = false;
    uint64_t inflate_aside_bytes = uint64_t{1} << 20;
  };
  static std::unique_ptr<DwarfInfo> Open(const std::string& path, const Options& options,
                                         const TestChoices& choices);
  friend struct DwarfInfoTestPeer;
  // The offset of the DIE of the CU whose .debug_aranges entry holds `vaddr` (what libdw's
  // dwarf_addrdie finds), or -1; libdw's answer when the DWARF was opened for libdw's DIE
  // walk. (Compared by the tests.)
  int64_t ArangesUnitAt(uint64_t vaddr);
  // Writes the CU indexes to the cache now when this run made new ones (else at exit).
  void StoreIndex();
  struct Handle;
  struct CuRef;  // a CU's DIE: its offset, and libdw's handle when one was needed
  void* DieOf(CuRef& cu);
  Unit& UnitFor(CuRef& cu);
  enum class ScanMode { kIndex, kFunction, kFull };
  bool ReadUnitHeader(Unit& u, CuRef& cu);
  bool ScanDies(Unit& u, uint64_t start, ScanMode mode, int32_t function_index);
  struct Code;  // a DIE's address ranges, and the buffer they are read through
  void CodeOf(const Unit& u, const PcAttrs& pc, uint64_t offset, Code* code);
  void LoadInlines(Unit& u, int32_t index);
  bool WalkDies(Unit& u, void* start_die, ScanMode mode, int32_t function_index);
  void WalkAgain(Unit& u, CuRef& cu);
  static void SortFunctions(Unit& u);
  struct Name {
    std::string name;
    bool linkage = false;  // from DW_AT_linkage_name (or DW_AT_MIPS_linkage_name)
  };
  const Name& NameOf(Unit& u, uint64_t die_offset);
  bool ReadName(const Unit& u, uint64_t die_offset, Name* out) const;
  bool ReadRanges(const Unit& u, uint64_t form, uint64_t offset, std::vector<uint64_t>* out) const;
  // The CU indexes kept on disk.
  struct SavedUnit {
    uint64_t cu;  // the CU DIE's offset
    size_t head;  // where its header is in saved_bytes_
    size_t data;  // where its functions and ranges are
    uint32_t functions, ranges;
  };
  bool RestoreUnit(Unit& u, CuRef& cu);
  void LoadSavedIndex();
  void IndexChanged();
  void Register();    // for StoreChangedIndexes, once
  bool WriteIndex();  // the entries that changed, untrimmed; true when one was written
  std::string index_dir_, index_key_;  // "" when not cached
  bool index_loaded_ = false, index_changed_ = false, index_registered_ = false;
  // The answers kept on disk.
  void Locate(uint64_t vaddr, Location& loc);
  bool RestoreLocation(uint64_t vaddr, Location* loc) const;
  void LoadSavedLocations();
  std::string locations_key_;  // "" when not kept
  bool locations_loaded_ = false, locations_changed_ = false;
  std::shared_ptr<const char> saved_locations_owner_;
  std::string_view saved_locations_;  // a whole saved set, or empty
  size_t saved_location_count_ = 0;
  size_t locations_restored_ = 0;  // Lookups answered from saved answers
  std::shared_ptr<const char> saved_owner_;
  std::string_view saved_bytes_;
  std::vector<SavedUnit> saved_;  // by CU offset
  size_t units_restored_ = 0;  // CUs (of units_) whose index was restored
  friend void StoreChangedIndexes();

  std::unique_ptr<Handle> h_;
  bool demangle_ = true;
  bool lines_ = true;
  bool libdw_walk_ = false;
  bool from_cache_ = false;  // the sections came inflated from the cache on disk
  size_t libdw_walks_ = 0;   // CUs indexed through libdw's DIE functions
  // Names and range lists read through libdw in CUs the fast walk reads (forms it leaves to
  // libdw).
  size_t libdw_reads_ = 0;
  std::unique_ptr<Sections> sections_;
  std::unordered_map<uint64_t, Location> cache_;
  std::unordered_map<uint64_t, std::unique_ptr<Unit>> units_;  // by CU offset
  std::unordered_map<uint64_t, Name> names_;                   // by DIE offset
  struct UnitRange {
    uint64_t lo, hi, die;
    DwarfUnitOffset unit;
  };
  std::vector<UnitRange> unit_ranges_;  // CU DIEs by address (without .debug_aranges)
  bool unit_ranges_built_ = false;
  bool UnitByRanges(uint64_t vaddr, CuRef* cu);
  bool ReadUnitRanges(DwarfUnitOffset unit, uint64_t die, std::vector<uint64_t>* out);
  // .debug_aranges read here: libdw's dwarf_getaranges reads the header of every CU it
  // lists (4,126 for glibc, 2-3 ms), where a lookup needs only its own CU's.
  struct Arange {
    uint64_t addr, length;
    DwarfUnitOffset unit;
  };
  // The DIE of the unit at `unit` (after its header); false for a header libdw would not
  // read as a compile or partial unit.
  bool UnitDie(DwarfUnitOffset unit, uint64_t* die) const;
  std::vector<Arange> aranges_;  // sorted by address
  enum class ArangesState { kUnread, kRead, kUnusable } aranges_state_ = ArangesState::kUnread;
  void ReadAranges();
  bool UnitByAranges(uint64_t vaddr, CuRef* cu);
};

}  // namespace pf
