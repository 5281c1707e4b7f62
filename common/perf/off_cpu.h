#pragma once
// pf-record --off-cpu: where threads wait, and for how long, without BPF. Debian's perf has
// no --off-cpu (it needs a BPF skeleton perf was not built with); this gives the same
// recording from two things every kernel since 4.3 has:
//   - a context-switches event sampled at every switch (period 1): the kernel takes the
//     sample as the thread leaves the CPU, in its context, so it carries the thread's call
//     chain at that moment (kernel part: schedule() and what called it; then user space);
//   - context-switch records (attr.context_switch): one as each thread comes back on a CPU,
//     with its time.
// The tracker takes both out of the stream and writes, for each switch-out followed by the
// thread's return, one sample under the event perf's --off-cpu uses, `offcpu-time`: the
// switch-out's call chain, weighted by the nanoseconds until the thread ran again, stamped
// with the time it ran again (as perf stamps its own when it writes them as they happen). A
// wait still going on when the recording ends is not written (perf does the same).
//
// Records come through in ring order, not time order (one ring per CPU; a thread that
// waited on one CPU may resume on another), so the records of a pass are sorted by time
// before the intervals are matched. A switch-out that arrives only in the pass after its
// thread's return (its ring was read just before it was written) is matched with that
// return, which the tracker remembers.

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "pfstream/perf_writer.h"
#include "pfstream/record_decoder.h"

namespace pf {

/// The sample id of the offcpu-time event: no event the kernel opens has it (the kernel
/// numbers its events from 1, one by one).
inline constexpr uint64_t kOffCpuId = uint64_t{1} << 62;

class OffCpuTracker {
 public:
  /// The name perf's --off-cpu gives its event, which perf script prints (the readers know
  /// it as formats/perf_script.h's kOffCpuEvent).
  static constexpr const char* kEventName = "offcpu-time";

  /// Intervals are written under sample id `offcpu_id`.
  explicit OffCpuTracker(uint64_t offcpu_id);

  /// Every event as the stream lays its records out (the switch event included, which the
  /// stream does not declare); `switches`: that event is the context-switches one.
  void AddAttr(const perf_event_attr& attr, std::span<const uint64_t> ids, bool switches);
  /// The attribute to declare the off-CPU event with: `like`'s sample layout (every event
  /// of a stream lays its samples out alike), as a software event of period 1.
  static perf_event_attr EventAttr(const perf_event_attr& like);

  /// True when `record` is the tracker's (a switch-out sample, a context-switch record): it
  /// is kept here and not written.
  bool Take(std::span<const uint8_t> record);
  /// Writes the intervals ended among the records taken since the last call, in time order.
  void Flush(PerfStreamWriter& writer);

  /// Intervals written.
  uint64_t intervals() const { return intervals_; }

 private:
  struct Switch {
    uint64_t time = 0;
    uint32_t pid = 0, tid = 0, cpu = 0;
    bool out = false;
    uint16_t misc = 0;
    uint64_t ip = 0;
    size_t chain_at = 0, chain_size = 0;  // in chains_
  };
  static constexpr uint64_t kDone = UINT64_MAX;  // a slot whose wait was written
  struct Waiting {
    uint64_t time = kDone;  // off the CPU since
    uint32_t pid = 0, cpu = 0;
    uint16_t misc = 0;
    uint64_t ip = 0;
    std::vector<uint64_t> chain;
  };
  void Write(PerfStreamWriter& writer, const Waiting& w, uint32_t tid, uint64_t until);

  uint64_t offcpu_id_;
  uint64_t sample_type_ = 0;  // the offcpu-time event's (EventAttr of the first event)
  RecordDecoder decoder_;
  std::vector<uint64_t> switch_ids_;
  std::vector<Switch> pass_;            // this pass's records, in ring order
  std::vector<uint64_t> chains_;        // their call chains
  std::unordered_map<uint32_t, Waiting> waiting_;    // by thread: off the CPU since
  std::unordered_map<uint32_t, uint64_t> resumed_;   // by thread: last time back on a CPU
  SampleFields out_;
  uint64_t intervals_ = 0;
};

}  // namespace pf
