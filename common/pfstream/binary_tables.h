#pragma once
// What each mapped binary gives the Session beyond its symbols (a part of the Session,
// session.h): its unwind table (for stack copies), its DWARF (inline frames, source lines)
// and the names addr2line would give from its symbol table. Each is made once per file and
// remembered in the maps that use it; Prefetch starts a thread that loads them ahead for the
// binaries the recording lists, in the order the first samples need them, and each is taken
// from that thread when first needed (waited for if begun, else made here: see Claim).

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/claim.h"
#include "pfstream/perf_data.h"
#include "pfstream/process_maps.h"
#include "symbolize/symbolizer.h"

namespace pf {

class BinaryTables {
 public:
  BinaryTables(ProcessMaps& maps, Symbolizer& symbolizer);
  ~BinaryTables();
  BinaryTables(const BinaryTables&) = delete;
  BinaryTables& operator=(const BinaryTables&) = delete;

  /// DWARF is opened with line tables (for source lines) or without; call before Prefetch.
  void SetSrcline(bool on) { srcline_ = on; }

  /// Starts loading, on other threads (DWARF on one of its own), the kernel's symbols (when samples hit the kernel:
  /// KernelSampled) and what the binaries of the recording's build-id table (perf lists the
  /// ones samples hit) will need: their unwind tables (for a recording with stack copies),
  /// symbols, and DWARF and addr2line's names (when `inline_frames` of stack copies or
  /// `srclines` will be read: inflating and indexing a large debug file).
  void Prefetch(const PerfDataReader& reader, bool inline_frames, bool srclines);
  /// A binary to load ahead: its path, its build-id ("" when unknown), and the file offsets
  /// of addresses the DWARF thread looks up as soon as the DWARF is open (so the thread that
  /// names them finds the answers made: a profile that lists its addresses up front).
  struct Binary {
    std::string path;
    std::string build_id;
    std::vector<uint64_t> lookups;
  };
  /// The same for the binaries of a profile that lists no build-id table (gperftools), in
  /// the order they will first be needed: their unwind tables when `unwind_tables`, their
  /// symbols, and their DWARF (with its lookups) and addr2line's names when `dwarf`. Once per
  /// BinaryTables (a second Prefetch does nothing).
  void PrefetchBinaries(std::vector<Binary> binaries, bool unwind_tables, bool dwarf);
  /// Ends Prefetch's thread (what it has not begun is made when first needed).
  void StopPrefetch();

  /// True while a prefetch thread loads something of map `m`'s binary: asking for it now
  /// would wait (a caller with other work may do that first).
  bool Busy(uint32_t pid, const MapEntry& m);

  /// The unwind table of map `m` of process `pid` (null: none, or JIT code).
  CfiTable* CfiFor(uint32_t pid, MapEntry& m);
  /// The DWARF of the map's binary (its debug file's), or null.
  DwarfInfo* DwarfFor(uint32_t pid, MapEntry& m);
  /// addr2line's names for the map's binary: from its debug file when there is one (as perf
  /// hands addr2line the file it read symbols from), else from the binary. Null for [vdso]
  /// and other bracketed maps, which perf does not hand addr2line.
  Addr2lineNames* NamesFor(uint32_t pid, MapEntry& m);

 private:
  struct NamesEntry {
    std::shared_ptr<const elf::ElfImage> image;
    std::unique_ptr<Addr2lineNames> names;
  };
  // What Prefetch's thread loads for a binary, by path + '\0' + build-id: for the processes of
  // this file system; not changed once the thread starts. The session's part (unwind tables,
  // DWARF, addr2line's names) is here; the symbolizer's (symbols, runtime image, debug file)
  // is its own BinaryPrefetch.
  struct BinaryPrefetch {
    Symbolizer::BinaryPrefetch* from_symbolizer = nullptr;
    struct Cfi {
      std::shared_ptr<const elf::ElfImage> image;
      std::unique_ptr<CfiTable> table;
    };
    struct Dwarf {
      std::string path;  // the debug file
      std::unique_ptr<DwarfInfo> info;
    };
    std::vector<uint64_t> lookups;  // file offsets the DWARF thread looks up (Binary::lookups)
    struct Names {
      std::string path;
      NamesEntry entry;
    };
    Claim<Cfi> cfi;
    Claim<Dwarf> dwarf;
    Claim<Names> names;
  };
  // What Prefetch's thread was given to load (tests read it through SessionTestPeer).
  struct PrefetchPlan {
    size_t binaries = 0;
    bool kernel = false, unwind_tables = false, dwarf = false;
  };
  friend struct SessionTestPeer;  // tests/unit/unwind_test.cpp

  void RunPrefetch(const std::vector<BinaryPrefetch*>& jobs, PrefetchPlan plan);
  void RunDwarfPrefetch(const std::vector<BinaryPrefetch*>& jobs);
  BinaryPrefetch* FindBinaryPrefetch(uint32_t pid, const MapEntry& m);
  static BinaryPrefetch::Cfi MakeCfi(BinaryPrefetch& p);
  BinaryPrefetch::Dwarf MakeDwarf(BinaryPrefetch& p, bool lookups) const;
  template <typename RuntimeImage>
  static BinaryPrefetch::Names NamesFile(std::string debug_path, RuntimeImage runtime_image);
  static void BuildNames(BinaryPrefetch::Names& n);
  static BinaryPrefetch::Names MakeNames(BinaryPrefetch& p);

  ProcessMaps& maps_;
  Symbolizer& sym_;
  bool srcline_ = false;
  std::unordered_map<const void*, std::unique_ptr<CfiTable>> cfi_tables_;  // by ElfImage
  std::unordered_map<std::string, std::unique_ptr<DwarfInfo>> dwarf_;      // by debug file path
  std::unordered_map<std::string, NamesEntry> names_;                      // by file path
  std::unordered_map<std::string, std::unique_ptr<BinaryPrefetch>> binary_prefetches_;
  std::string binary_prefetch_key_;  // FindBinaryPrefetch's key, reused
  PrefetchPlan prefetch_plan_;
  std::thread prefetch_worker_;
  std::thread dwarf_worker_;  // DWARF, beside prefetch_worker_
  std::atomic<bool> stop_prefetch_{false};
};

}  // namespace pf
