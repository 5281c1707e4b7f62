#pragma once
// Replaying a recording to name its samples as perf script names them. A Session is four
// parts, each readable alone and each owning its caches:
//   - ProcessMaps (process_maps.h): the threads and maps of the recorded processes, rebuilt
//     from COMM, FORK, EXIT and MMAP/MMAP2 records as perf does;
//   - BinaryTables (binary_tables.h): each binary's unwind table, DWARF and addr2line names,
//     made once per file, and loaded ahead on a helper thread (Prefetch);
//   - StackUnwinder (stack_unwinder.h): a sample's call chain, unwound from its stack copy
//     where it carries one;
//   - FrameNamer (frame_namer.h): each frame's symbol and dso, with inline frames and source
//     lines as perf gets them from addr2line.
// The Session feeds them the records and hands each question to the part that answers it.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "pfstream/binary_tables.h"
#include "pfstream/frame_namer.h"
#include "pfstream/perf_data.h"
#include "pfstream/process_maps.h"
#include "pfstream/stack_unwinder.h"
#include "symbolize/symbolizer.h"

namespace pf {

class Session {
 public:
  explicit Session(Symbolizer& symbolizer);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Updates threads and maps from a non-sample record (COMM, FORK, MMAP, MMAP2).
  void OnRecord(const PerfDataReader& reader, const Record& r) { maps_.OnRecord(reader, r); }

  /// The thread's comm, or ":TID" as perf shows a thread it never saw named.
  std::string_view Comm(uint32_t pid, uint32_t tid) {
    (void)pid;
    return maps_.Comm(tid);
  }
  /// Changes whenever the maps process `pid` sees change (its own or the kernel's), so a
  /// caller may cache what it resolved for the process until then.
  MapsGeneration Generation(uint32_t pid) const { return maps_.Generation(pid); }

  /// Resolves `ip` as seen by process `pid` in kernel or user mode (and gives its map).
  ResolvedFrame Resolve(uint32_t pid, uint64_t ip, bool kernel, MapEntry** map = nullptr) {
    return namer_.Resolve(pid, ip, kernel, map);
  }

  /// The sample's call chain as perf resolves it: the recorded chain; for a sample that
  /// carries a copy of the user stack (--call-graph dwarf), the kernel part of the recorded
  /// chain, then PERF_CONTEXT_USER and the user frames unwound from the copy (ending in
  /// kTruncatedFrame when the copy was too small). `scratch` holds a chain built here.
  std::span<const uint64_t> Callchain(const Sample& s, std::vector<uint64_t>* scratch) {
    return unwinder_.Callchain(s, scratch);
  }
  /// Callchain for each of `samples`, with its own scratch vector: chains[i] is
  /// Callchain(*samples[i], &scratch[i]). Their stacks are unwound together
  /// (UnwindUserStacks), which waits on memory less than one at a time.
  void Callchains(std::span<const Sample* const> samples, std::vector<uint64_t>* scratch,
                  std::span<const uint64_t>* chains) {
    unwinder_.Callchains(samples, scratch, chains);
  }

  /// The frames of a sample for the chain Callchain() gave, leaf first, as perf script lists
  /// them (context markers dropped; without a callchain, the sample ip alone).
  void Frames(const Sample& s, std::span<const uint64_t> chain, std::vector<ResolvedFrame>* out) {
    namer_.Frames(s, chain, out);
  }
  /// Frames, each as its id (FrameNamer::FrameIds): Frame(id) is the frame.
  void FrameIds(const Sample& s, std::span<const uint64_t> chain, std::vector<FrameId>* out) {
    namer_.FrameIds(s, chain, out);
  }
  const ResolvedFrame& Frame(FrameId id) const { return namer_.Frame(id); }
  /// Whether `id` stands for an address no map holds, valid until the next FrameIds
  /// (FrameNamer::Transient).
  static bool TransientFrame(FrameId id) { return FrameNamer::Transient(id); }
  /// What the frame prints but its address and offset, as an id (FrameNamer::NameId).
  NameId NameIdOf(FrameId id) const { return namer_.NameIdOf(id); }

  /// The address perf reports where an unwound stack was cut short by the end of the copy
  /// (libunwind's 0 return address, minus one): printed as `ffffffffffffffff [unknown]`.
  static constexpr uint64_t kTruncatedFrame = StackUnwinder::kTruncatedFrame;

  void SetUnwindMethod(UnwindMethod m) { unwinder_.SetMethod(m); }
  /// The maps of process `pid` as replayed so far (null: none): for benchmarks that unwind
  /// by other means.
  const MapTable* MapsOf(uint32_t pid) const { return maps_.MapsOf(pid); }
  /// Inline frames (from DWARF) before each user frame that has them, as perf script 6.1
  /// shows them: for frames unwound from stack copies; on by default.
  void SetInline(bool on) {
    inline_ = on;
    namer_.SetInline(on);
  }
  /// A source line for each frame, as perf script -F +srcline prints it.
  void SetSrcline(bool on) {
    srcline_ = on;
    namer_.SetSrcline(on);
    tables_.SetSrcline(on);
  }
  /// Forgets a process once all its threads have exited (EXIT records), for readers that
  /// resolve each sample as they read it; by default a Session keeps every process's maps.
  void ForgetExited(bool on) { maps_.ForgetExited(on); }
  /// Starts loading, on another thread, what the recording's binaries will need (see
  /// BinaryTables::Prefetch): each is taken from that thread when first needed, waited for
  /// if the thread has begun it, else made here, so the thread only ever saves time. Call
  /// after SetInline and SetSrcline.
  void Prefetch(const PerfDataReader& reader) { tables_.Prefetch(reader, inline_, srcline_); }
  /// Ends Prefetch's thread (what it has not begun is made when first needed).
  void StopPrefetch() { tables_.StopPrefetch(); }
  /// Samples the tables handed to libdw.
  uint64_t libdw_fallbacks() const { return unwinder_.libdw_fallbacks(); }
  /// How the user stacks unwound so far ended (by UnwindEnd), for statistics.
  const std::vector<uint64_t>& unwind_ends() const { return unwinder_.unwind_ends(); }

 private:
  friend struct SessionTestPeer;  // tests/unit/unwind_test.cpp
  bool inline_ = true;
  bool srcline_ = false;
  // In the order they depend on each other (and are destroyed in reverse).
  ProcessMaps maps_;
  BinaryTables tables_;
  StackUnwinder unwinder_;
  FrameNamer namer_;
};

}  // namespace pf
