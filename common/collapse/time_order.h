#pragma once
// pf-collapse --time-order: a recording's samples as a timeline instead of a sum. A fold
// keeps each sample's leaf and time (RecordFold with PerfScriptOptions::keep_times); they are
// written thread by thread (the threads in the order of their first sample), each thread's in
// time order, consecutive samples of the same stack merged into one line. What
// `pf-flamegraph --flamechart` draws as a flame chart: time runs left to right, one stretch
// per thread (with --per-thread, each under its own comm-PID/TID root frame), or per CPU
// with --per-cpu.

#include <cstdint>
#include <vector>

#include "io/output.h"
#include "stacks/stack_filter.h"
#include "stacks/stack_tree.h"

namespace pf {

/// A sample as --time-order keeps it: its lane (a thread; with --per-cpu a CPU, pid
/// kCpuLane and tid the CPU), time, leaf (of the fold's tree) and weight.
inline constexpr uint32_t kCpuLane = UINT32_MAX;
struct TimedSample {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  NodeId leaf;
  uint64_t weight = 0;
};

/// Writes `samples` (leaves of `tree`) as folded lines in time order, thread by thread,
/// merging consecutive equal stacks; --include, --exclude and --hide apply to each stack as
/// they do to a sum. The unit line first, when the unit is known.
void WriteTimeOrdered(const StackTree& tree, const std::vector<TimedSample>& samples,
                      const StackFilterOptions& filter, BufferedWriter& out);

}  // namespace pf
