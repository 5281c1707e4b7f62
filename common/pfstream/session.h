#pragma once
// Replaying a recording: the threads and memory maps of the recorded processes, rebuilt from
// COMM, FORK and MMAP/MMAP2 records as perf does, so each sample's addresses can be named.
//   - a thread's comm is the last COMM before the sample; a new thread inherits its parent's;
//   - maps belong to a process (pid) and are inherited by a forked process; a new map
//     replaces the parts of older ones it overlaps; kernel maps (pid -1) are shared;
//   - an address is resolved to its map, then to (dso, file offset), then to a symbol.
// Frames are resolved once per distinct (process maps, address) through the symbolizer's own
// caches; callers fold by address first where they can.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/claim.h"
#include "pfstream/perf_data.h"
#include "symbolize/symbolizer.h"
#include "unwind/unwinder.h"

namespace pf {

class Addr2lineNames;
class CfiTable;
class DwarfInfo;
class LibdwUnwinder;

/// How user stacks copied with the samples are unwound.
enum class UnwindMethod {
  kTable,  // the compiled CFI tables, with libdw for the rows they cannot express
  kLibdw,  // libdw alone (slower; the tests' oracle)
};

struct MapEntry {
  uint64_t start = 0, end = 0, pgoff = 0;
  // Interned by the Session (a forked process copies its parent's maps: no string copies).
  std::string_view path;
  std::string_view build_id;
  uint64_t serial = 0;  // new for every map Session enters (and for each part left of one)
  // The map's unwind table and DWARF, found on first use (null: none).
  CfiTable* cfi = nullptr;
  bool cfi_loaded = false;
  DwarfInfo* dwarf = nullptr;
  bool dwarf_loaded = false;
  // The names addr2line would give from its symbol table (for perf's inline frames).
  Addr2lineNames* names = nullptr;
  bool names_loaded = false;
  // Its binary's symbols, as the symbolizer found them on first use.
  Symbolizer::Binary* binary = nullptr;
  bool binary_loaded = false;
};

/// A process's maps by start address, non-overlapping. A tree, not a sorted vector: a JIT or
/// a sanitizer maps executable memory tens of thousands of times, and each new map must not
/// move all the others.
using MapTable = std::pmr::map<uint64_t, MapEntry>;

/// A frame as perf script prints it: the address column, the symbol (and offset) and dso.
struct ResolvedFrame {
  uint64_t addr = 0;            // what perf prints: the map-relative address, or the ip
  std::string_view sym;         // "[unknown]" when there is none
  uint64_t symoff = 0;
  bool has_sym = false;
  std::string_view dso;         // "[unknown]" when no map holds the address
  bool kernel = false;
  bool inlined = false;         // a function inlined at this address: printed "(inlined)"
  std::string_view srcline;     // "file.c:12" (with SetSrcline), or "" when none is printed
};

class Session {
 public:
  explicit Session(Symbolizer& symbolizer);
  ~Session();

  /// Updates threads and maps from a non-sample record (COMM, FORK, MMAP, MMAP2).
  void OnRecord(const PerfDataReader& reader, const Record& r);

  /// The thread's comm, or ":TID" as perf shows a thread it never saw named.
  std::string_view Comm(uint32_t pid, uint32_t tid);
  /// Changes whenever the maps process `pid` sees change (its own or the kernel's), so a
  /// caller may cache what it resolved for the process until then.
  uint64_t MapsGeneration(uint32_t pid) const;

  /// Resolves `ip` as seen by process `pid` in kernel or user mode (and gives its map).
  ResolvedFrame Resolve(uint32_t pid, uint64_t ip, bool kernel, MapEntry** map = nullptr);

  /// The sample's call chain as perf resolves it: the recorded chain; for a sample that
  /// carries a copy of the user stack (--call-graph dwarf), the kernel part of the recorded
  /// chain, then PERF_CONTEXT_USER and the user frames unwound from the copy (ending in
  /// kTruncatedFrame when the copy was too small). `scratch` holds a chain built here.
  std::span<const uint64_t> Callchain(const Sample& s, std::vector<uint64_t>* scratch);
  /// Callchain for each of `samples`, with its own scratch vector: chains[i] is
  /// Callchain(*samples[i], &scratch[i]). Their stacks are unwound together
  /// (UnwindUserStacks), which waits on memory less than one at a time.
  void Callchains(std::span<const Sample* const> samples, std::vector<uint64_t>* scratch,
                  std::span<const uint64_t>* chains);

  /// The frames of a sample for the chain Callchain() gave, leaf first, as perf script lists
  /// them (context markers dropped; without a callchain, the sample ip alone).
  void Frames(const Sample& s, std::span<const uint64_t> chain, std::vector<ResolvedFrame>* out);

  /// The address perf reports where an unwound stack was cut short by the end of the copy
  /// (libunwind's 0 return address, minus one): printed as `ffffffffffffffff [unknown]`.
  static constexpr uint64_t kTruncatedFrame = ~uint64_t{0};

  void SetUnwindMethod(UnwindMethod m) { unwind_method_ = m; }
  /// The maps of process `pid` as replayed so far (null: none): for benchmarks that unwind
  /// by other means.
  const MapTable* MapsOf(uint32_t pid) const;
  /// Inline frames (from DWARF) before each user frame that has them, as perf script 6.1
  /// shows them: for frames unwound from stack copies; on by default.
  void SetInline(bool on) { inline_ = on; }
  /// A source line for each frame, as perf script -F +srcline prints it.
  void SetSrcline(bool on) { srcline_ = on; }
  /// Forgets a process once all its threads have exited (EXIT records), for readers that
  /// resolve each sample as they read it; by default a Session keeps every process's maps.
  void ForgetExited(bool on) { forget_exited_ = on; }
  /// Starts loading, on another thread, the kernel's symbols (when samples hit the kernel:
  /// KernelSampled) and what the binaries of the recording's build-id table (perf lists the
  /// ones samples hit) will need: their unwind tables (for a recording with
  /// stack copies), symbols, and DWARF and addr2line's names (when inline frames or source
  /// lines will be read: inflating and indexing a large debug file), in the order the first
  /// samples need them. Each is taken from that thread when first needed: waited for if the
  /// thread has begun it, else made here (see Claim), so the thread only ever saves time.
  /// Call after SetInline and SetSrcline.
  void Prefetch(const PerfDataReader& reader);
  /// Ends Prefetch's thread (what it has not begun is made when first needed).
  void StopPrefetch();
  /// Samples the tables handed to libdw.
  uint64_t libdw_fallbacks() const { return libdw_fallbacks_; }

  /// How the user stacks unwound so far ended (by UnwindEnd), for statistics.
  const std::vector<uint64_t>& unwind_ends() const { return unwind_ends_; }

 private:
  struct Process;
  Process& Proc(uint32_t pid);
  void AddMap(MapTable& maps, MapEntry m);
  std::string BuildIdOf(const PerfDataReader& reader, const std::string& path);
  const MapEntry* FindMap(const MapTable& maps, uint64_t ip) const;

  class Modules;
  // perf's limit of user frames: perf_event_max_stack's default, 127.
  static constexpr size_t kMaxUserFrames = 127;
  bool StartCallchain(const Sample& s, std::vector<uint64_t>* scratch, UserStack* stack,
                      std::span<const uint64_t>* chain);
  Modules ModulesOf(uint32_t pid);
  void FinishCallchain(const Sample& s, const UserStack& stack, Modules& modules,
                       size_t user_at, UnwindEnd end, std::vector<uint64_t>* scratch);
  MapTable no_maps_;  // the maps of a process never seen
  // The unwinder's answers by (maps generation, pc), direct-mapped: a slot holds the last
  // pc that hashed to it. Generations are Session-wide serials, so a slot cannot answer for
  // maps that changed since.
  class RowCache {
   public:
    struct Entry {
      uint64_t generation = 0, pc = 0;
      UnwindModule module;
      CfiRow row;
    };
    Entry& At(uint64_t generation, uint64_t pc) {
      if (slots_.empty()) slots_.resize(kSlots);
      uint64_t h = (pc ^ generation * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
      return slots_[h >> (64 - kBits)];
    }

   private:
    static constexpr unsigned kBits = 11;
    static constexpr size_t kSlots = size_t{1} << kBits;
    std::vector<Entry> slots_;
  };
  RowCache row_cache_;
  CfiTable* CfiFor(uint32_t pid, MapEntry& m);
  // Appends the frame of a user address, after its inline frames (with SetInline): resolved
  // once per (process, map, address), as perf asks addr2line once per address.
  void AddUserFrame(uint32_t pid, uint64_t ip, bool expand, std::vector<ResolvedFrame>* out);
  void ResolveUserFrame(uint32_t pid, uint64_t ip, bool expand, std::vector<ResolvedFrame>* out);
  DwarfInfo* DwarfFor(uint32_t pid, MapEntry& m);
  Addr2lineNames* NamesFor(uint32_t pid, MapEntry& m);
  std::string_view UnknownSrcline(std::string_view dso, uint64_t addr);
  std::string_view Intern(const std::string& s) { return strings_.Name(strings_.Intern(s)); }

  Symbolizer& sym_;
  std::unordered_map<const void*, std::unique_ptr<CfiTable>> cfi_tables_;  // by ElfImage
  std::vector<uint64_t> unwind_ends_;
  UnwindMethod unwind_method_ = UnwindMethod::kTable;
  bool inline_ = true;
  bool srcline_ = false;
  std::unordered_map<std::string, std::unique_ptr<DwarfInfo>> dwarf_;  // by debug file path
  struct NamesEntry {
    std::shared_ptr<const elf::ElfImage> image;
    std::unique_ptr<Addr2lineNames> names;
  };
  std::unordered_map<std::string, NamesEntry> names_;  // by file path
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
    struct Names {
      std::string path;
      NamesEntry entry;
    };
    Claim<Cfi> cfi;
    Claim<Dwarf> dwarf;
    Claim<Names> names;
  };
  BinaryPrefetch* FindBinaryPrefetch(uint32_t pid, const MapEntry& m);
  static BinaryPrefetch::Cfi MakeCfi(BinaryPrefetch& p);
  BinaryPrefetch::Dwarf MakeDwarf(BinaryPrefetch& p) const;
  template <typename RuntimeImage>
  static BinaryPrefetch::Names NamesFile(std::string debug_path, RuntimeImage runtime_image);
  static void BuildNames(BinaryPrefetch::Names& n);
  static BinaryPrefetch::Names MakeNames(BinaryPrefetch& p);
  std::unordered_map<std::string, std::unique_ptr<BinaryPrefetch>> binary_prefetches_;
  std::string binary_prefetch_key_;  // FindBinaryPrefetch's key, reused
  // What Prefetch's thread was given to load (tests read it through SessionTestPeer).
  struct PrefetchPlan {
    size_t binaries = 0;
    bool kernel = false, unwind_tables = false, dwarf = false;
  };
  PrefetchPlan prefetch_plan_;
  friend struct SessionTestPeer;  // tests/unit/unwind_test.cpp
  std::thread prefetch_worker_;
  std::atomic<bool> stop_prefetch_{false};
  // binutils' addr2line, which perf runs once per binary and asks once per address, names a
  // function without a linkage name from the symbol table the first time it is asked about an
  // address of the function's own (in no inlined subroutine), and keeps that name for it
  // (the symbol's when it starts at the function's entry, else the DWARF name); until then,
  // as the caller of an inlined subroutine, the function has its DWARF name. The name given
  // to each (DWARF, address) the first time, and the name each (DWARF, function entry)
  // settled on.
  struct DwarfAddr {
    const DwarfInfo* dwarf;
    uint64_t addr;
    bool operator==(const DwarfAddr&) const = default;
  };
  struct DwarfAddrHash {
    size_t operator()(const DwarfAddr& k) const {
      return std::hash<uint64_t>()(k.addr ^ (reinterpret_cast<uintptr_t>(k.dwarf) << 16));
    }
  };
  std::unordered_map<DwarfAddr, std::string_view, DwarfAddrHash> function_name_at_;
  std::unordered_map<DwarfAddr, std::string_view, DwarfAddrHash> settled_name_;
  std::unique_ptr<LibdwUnwinder> libdw_;
  std::unordered_map<const void*, int> memory_files_;  // image -> memfd, for libdw
  uint64_t libdw_fallbacks_ = 0;
  UnwindEnd UnwindWithLibdw(const Sample& s, const UserStack& stack, size_t max,
                            std::vector<uint64_t>* ips);
  // AddUserFrame's answers: a range of user_frames_ by (pid, map serial, address, expand).
  // Their dso views point into the map, which lives as long as its serial is found.
  struct UserFrameKey {
    uint32_t pid;
    bool expand;
    uint64_t serial, ip;
    bool operator==(const UserFrameKey&) const = default;
  };
  struct UserFrameKeyHash {
    size_t operator()(const UserFrameKey& k) const {
      return std::hash<uint64_t>()(k.ip * 0x9e3779b97f4a7c15ull ^ k.serial << 20 ^
                                   uint64_t{k.pid} << 1 ^ k.expand);
    }
  };
  std::unordered_map<UserFrameKey, std::pair<uint32_t, uint32_t>, UserFrameKeyHash>
      user_frame_at_;
  std::vector<ResolvedFrame> user_frames_;
  uint64_t map_serial_ = 0;
  uint64_t generation_serial_ = 0;
  bool forget_exited_ = false;
  // The processes' map tables take their nodes from here: a script's thousands of processes
  // each copy and drop dozens of maps.
  class NodePool final : public std::pmr::memory_resource {
   public:
    NodePool() = default;
    NodePool(const NodePool&) = delete;
    NodePool& operator=(const NodePool&) = delete;

   private:
    void* do_allocate(size_t bytes, size_t align) override;
    void do_deallocate(void* p, size_t bytes, size_t align) override;
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
      return this == &other;
    }
    size_t node_ = 0;  // the one size kept on the free list (the first asked for)
    void* free_ = nullptr;
    char* next_ = nullptr;
    size_t left_ = 0;
    std::vector<std::unique_ptr<char[]>> blocks_;
  };
  NodePool map_nodes_;
  std::unordered_map<uint32_t, std::unique_ptr<Process>> procs_;
  std::unordered_map<uint32_t, std::string> comms_;  // by tid (never erased)
  // The last thread Comm answered for, and its name in comms_ (consecutive samples are
  // mostly one thread's; an element of an unordered_map stays where it is).
  uint32_t comm_tid_ = 0;
  const std::string* comm_ = nullptr;
  MapTable kernel_maps_;
  uint64_t kernel_generation_ = 0;
  std::unordered_map<std::string, std::string> build_id_by_path_;
  size_t build_ids_seen_ = 0;
  Interner strings_;
};

}  // namespace pf
