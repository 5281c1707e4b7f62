#pragma once
// A sample's call chain as perf resolves it (a part of the Session, session.h): the recorded
// chain, or for a sample that carries a copy of the user stack (--call-graph dwarf) the
// kernel part of the recorded chain, PERF_CONTEXT_USER, and the user frames unwound from the
// copy with the binaries' compiled CFI tables (unwind/), or with libdw where they cannot go.

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "pfstream/binary_tables.h"
#include "pfstream/perf_data.h"
#include "pfstream/process_maps.h"
#include "unwind/libdw_unwinder.h"
#include "unwind/unwinder.h"

namespace pf {

/// How user stacks copied with the samples are unwound.
enum class UnwindMethod {
  kTable,  // the compiled CFI tables, with libdw for the rows they cannot express
  kLibdw,  // libdw alone (slower; the tests' oracle)
};

class StackUnwinder {
 public:
  StackUnwinder(ProcessMaps& maps, BinaryTables& tables, Symbolizer& symbolizer);
  ~StackUnwinder();
  StackUnwinder(const StackUnwinder&) = delete;
  StackUnwinder& operator=(const StackUnwinder&) = delete;

  /// The address perf reports where an unwound stack was cut short by the end of the copy
  /// (libunwind's 0 return address, minus one): printed as `ffffffffffffffff [unknown]`.
  static constexpr uint64_t kTruncatedFrame = ~uint64_t{0};

  /// The sample's call chain (see the file's comment), ending in kTruncatedFrame when the
  /// copy was too small. `scratch` holds a chain built here.
  std::span<const uint64_t> Callchain(const Sample& s, std::vector<uint64_t>* scratch);
  /// Callchain for each of `samples`, with its own scratch vector; their stacks are unwound
  /// together (UnwindUserStacks), which waits on memory less than one at a time.
  void Callchains(std::span<const Sample* const> samples, std::vector<uint64_t>* scratch,
                  std::span<const uint64_t>* chains);

  void SetMethod(UnwindMethod m) { method_ = m; }
  /// Samples the tables handed to libdw.
  uint64_t libdw_fallbacks() const { return libdw_fallbacks_; }
  /// How the user stacks unwound so far ended (by UnwindEnd), for statistics.
  const std::vector<uint64_t>& unwind_ends() const { return unwind_ends_; }

 private:
  class Modules;
  // perf's limit of user frames: perf_event_max_stack's default, 127.
  static constexpr size_t kMaxUserFrames = 127;
  bool StartCallchain(const Sample& s, std::vector<uint64_t>* scratch, UserStack* stack,
                      std::span<const uint64_t>* chain);
  Modules ModulesOf(uint32_t pid);
  void FinishCallchain(const Sample& s, const UserStack& stack, Modules& modules, size_t user_at,
                       UnwindEnd end, std::vector<uint64_t>* scratch);
  UnwindEnd UnwindWithLibdw(const Sample& s, const UserStack& stack, size_t max,
                            std::vector<uint64_t>* ips);
  const std::vector<LibdwMap>& LibdwMapsOf(uint32_t pid, MapTable& maps,
                                          MapsGeneration generation);

  // The unwinder's answers by (maps generation, pc), direct-mapped: a slot holds the last
  // pc that hashed to it. Generations are serials shared by all processes, so a slot cannot
  // answer for maps that changed since.
  class RowCache {
   public:
    struct Entry {
      MapsGeneration generation;
      uint64_t pc = 0;
      UnwindModule module;
      CfiRow row;
    };
    Entry& At(MapsGeneration generation, uint64_t pc) {
      if (slots_.empty()) slots_.resize(kSlots);
      uint64_t h = (pc ^ generation.value * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
      return slots_[h >> (64 - kBits)];
    }

   private:
    static constexpr unsigned kBits = 11;
    static constexpr size_t kSlots = size_t{1} << kBits;
    std::vector<Entry> slots_;
  };

  // The maps of a process as libdw is given them, for its maps' generation.
  struct LibdwProcess {
    std::vector<LibdwMap> maps;
    bool built = false;
    MapsGeneration generation;  // that of `maps`
  };

  ProcessMaps& maps_;
  BinaryTables& tables_;
  Symbolizer& sym_;
  UnwindMethod method_ = UnwindMethod::kTable;
  MapTable no_maps_;  // the maps of a process never seen
  RowCache row_cache_;
  std::unique_ptr<LibdwUnwinder> libdw_;
  std::unordered_map<uint32_t, LibdwProcess> libdw_procs_;  // by pid
  std::unordered_map<const void*, int> memory_files_;       // image -> memfd, for libdw
  uint64_t libdw_fallbacks_ = 0;
  std::vector<uint64_t> unwind_ends_;
};

}  // namespace pf
