#pragma once
// The threads and memory maps of the recorded processes, rebuilt from COMM, FORK, EXIT and
// MMAP/MMAP2 records as perf rebuilds them (a part of the Session, session.h):
//   - a thread's comm is the last COMM before the sample; a new thread inherits its parent's;
//   - maps belong to a process (pid) and are inherited by a forked process; a new map
//     replaces the parts of older ones it overlaps; kernel maps (pid -1) are shared;
//   - each change of a process's maps gives it a new generation, so a reader may cache what
//     it found in them until the next.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <memory_resource>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/intern.h"
#include "base/typed_id.h"
#include "pfstream/perf_data.h"
#include "symbolize/symbolizer.h"

namespace pf {

class Addr2lineNames;
class CfiTable;
class DwarfInfo;

/// A map entry's serial: new for every map entered (and for each part left of one), so what
/// was found for a map is never taken for another that later took its addresses.
using MapSerial = TypedId<struct MapSerialTag, uint64_t>;
/// The state of a process's maps: changes whenever they change (serials shared by all
/// processes), so a cache keyed by (generation, address) needs no flushing.
using MapsGeneration = TypedId<struct MapsGenerationTag, uint64_t>;

struct MapEntry {
  uint64_t start = 0, end = 0, pgoff = 0;
  // Interned by ProcessMaps (a forked process copies its parent's maps: no string copies).
  std::string_view path;
  std::string_view build_id;
  MapSerial serial{};  // new for every map entered (and for each part left of one)
  // What the Session's parts found for the map on first use (BinaryTables, FrameNamer):
  // its unwind table, DWARF and addr2line's names (null: none).
  CfiTable* cfi = nullptr;
  bool cfi_loaded = false;
  DwarfInfo* dwarf = nullptr;
  bool dwarf_loaded = false;
  Addr2lineNames* names = nullptr;
  bool names_loaded = false;
  // Its binary's symbols, as the symbolizer found them on first use.
  Symbolizer::Binary* binary = nullptr;
  bool binary_loaded = false;
  // Its binary, path and build-id as a number of FrameNamer's (0: not yet numbered).
  uint32_t object = 0;
};

/// A process's maps by start address, non-overlapping. A tree, not a sorted vector: a JIT or
/// a sanitizer maps executable memory tens of thousands of times, and each new map must not
/// move all the others.
using MapTable = std::pmr::map<uint64_t, MapEntry>;

/// The map of `ip` in `maps`, or null.
inline MapEntry* FindMap(MapTable& maps, uint64_t ip) {
  auto it = maps.upper_bound(ip);
  if (it == maps.begin()) return nullptr;
  --it;
  return ip < it->second.end ? &it->second : nullptr;
}
inline const MapEntry* FindMap(const MapTable& maps, uint64_t ip) {
  return FindMap(const_cast<MapTable&>(maps), ip);
}

class ProcessMaps {
 public:
  ProcessMaps();
  ~ProcessMaps();
  ProcessMaps(const ProcessMaps&) = delete;
  ProcessMaps& operator=(const ProcessMaps&) = delete;

  /// Updates threads and maps from a non-sample record (COMM, FORK, EXIT, MMAP, MMAP2, and
  /// HEADER_BUILD_ID).
  void OnRecord(const PerfDataReader& reader, const Record& r);

  /// Adds a user map of process `pid` as an MMAP2 record would (for profiles that carry a
  /// process's maps as text: gperftools' /proc/self/maps).
  void AddUserMap(uint32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
                  std::string_view path, std::string_view build_id);

  /// The thread's comm, or ":TID" as perf shows a thread it never saw named.
  std::string_view Comm(uint32_t tid);
  /// Changes whenever the maps process `pid` sees change (its own or the kernel's).
  MapsGeneration Generation(uint32_t pid) const;
  /// The maps of process `pid` (null: none), and the generation of its own (a serial shared
  /// by all processes, never 0).
  const MapTable* MapsOf(uint32_t pid) const;
  MapTable* MapsOf(uint32_t pid, MapsGeneration* generation);
  /// The map of a user address of process `pid`, or null.
  MapEntry* FindUser(uint32_t pid, uint64_t ip) {
    MapTable* maps = Found(pid).maps;
    return maps == nullptr ? nullptr : FindMap(*maps, ip);
  }
  /// Changes whenever the kernel's maps change.
  uint64_t KernelGeneration() const { return kernel_generation_; }
  /// The kernel's map (the kernel image's, or a module's) of `ip`, or null.
  const MapEntry* FindKernel(uint64_t ip) const { return FindMap(kernel_maps_, ip); }

  /// The build-id perf recorded for a file (the BUILD_ID feature or HEADER_BUILD_ID records),
  /// as hex ("" when none).
  std::string BuildIdOf(const PerfDataReader& reader, const std::string& path);

  /// Forgets a process once all its threads have exited (EXIT records), after kExitedKept
  /// more processes have (samples of its exit may follow its last EXIT), or when its pid is
  /// used again; by default every process's maps are kept.
  void ForgetExited(bool on) { forget_exited_ = on; }
  static constexpr size_t kExitedKept = 256;

 private:
  struct Process;
  class NodePool;
  Process& Proc(uint32_t pid);
  void AddMap(MapTable& maps, MapEntry m);
  void OnComm(const Record& r);
  void OnFork(const Record& r);
  void OnExit(const Record& r);
  void OnMmap(const PerfDataReader& reader, const Record& r);
  // What the processes looked up lately have (a system-wide recording's samples alternate
  // between its CPUs' processes, and each sample asks for its process's maps and generation
  // and its thread's comm): by pid, forgotten by every record that may change a process's
  // table or generation, or which processes there are (ForgetProcesses).
  struct FoundProcess {
    uint32_t pid = 0;
    bool valid = false;
    MapTable* maps = nullptr;  // null: no such process
    MapsGeneration generation;
  };
  static constexpr size_t kFound = 8;
  const FoundProcess& Found(uint32_t pid) const {
    const FoundProcess& f = found_[pid % kFound];
    return f.valid && f.pid == pid ? f : LookUp(pid);
  }
  const FoundProcess& LookUp(uint32_t pid) const;
  void ForgetProcesses() {
    for (FoundProcess& f : found_) f.valid = false;
  }

  // The processes' map tables take their nodes from here: a script's thousands of processes
  // each copy and drop dozens of maps.
  std::unique_ptr<NodePool> map_nodes_;
  std::unordered_map<uint32_t, std::unique_ptr<Process>> procs_;
  MapTable kernel_maps_;
  uint64_t kernel_generation_ = 0;
  MapSerial map_serial_;
  MapsGeneration generation_serial_;
  bool forget_exited_ = false;
  std::deque<uint32_t> exited_;  // processes whose threads have all exited, the latest last
  mutable FoundProcess found_[kFound];
  std::unordered_map<uint32_t, std::string> comms_;  // by tid (never erased)
  // The threads Comm answered for lately, and their names in comms_ (an element of an
  // unordered_map stays where it is, and comms_ are changed in place).
  struct FoundComm {
    uint32_t tid = 0;
    const std::string* comm = nullptr;
  };
  FoundComm found_comms_[kFound];
  std::unordered_map<std::string, std::string> build_id_by_path_;
  size_t build_ids_seen_ = 0;
  Interner strings_;  // the maps' paths and build-ids
};

}  // namespace pf
