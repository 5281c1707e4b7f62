// Why a result holds no stacks.
//
// An empty flame graph or call graph is a puzzle: was the input empty, did it hold samples of
// another event only, did every count weigh 0, or did a filter leave nothing? Every tool that
// reads stacks (pf-collapse, pf-flamegraph, pf-dot, pf-diff) says which, in the same words.
// The collapse counts as it reads what tells these apart (ReadReport: inputs, empty
// inputs, recordings, samples, folded lines, samples of other events); when the result is
// empty, NoteEmptyResult adds what the stacks held before the filter that left nothing
// (their number, weight and depth), and EmptyResultReason turns the report into one line,
// the first cause in that order. A filter on callers cannot match stacks of one frame, so a
// filter that left nothing of such stacks says to record call graphs.

#include <algorithm>
#include <string>
#include <vector>

#include "base/diagnostics.h"
#include "stacks/read_report.h"

namespace pf {

void NoteEmptyResult(const StackTree& read, ReadReport* report) {
  report->empty = true;
  report->stacks_read = report->weight_read = report->deepest_read = 0;
  std::vector<uint32_t> depth(read.size(), 0);
  for (NodeId n{1}; n.index() < read.size(); ++n) {
    depth[n.index()] = depth[read.parent(n).index()] + 1;
    if (!read.has_self(n)) continue;
    ++report->stacks_read;
    report->deepest_read = std::max(report->deepest_read, depth[n.index()]);
    for (int c = 0; c < read.columns(); ++c) {
      uint64_t w = read.self(n, c);
      report->weight_read = report->weight_read + w < w ? UINT64_MAX : report->weight_read + w;
    }
  }
}

std::string EmptyResultReason(const ReadReport& r, std::string_view dropped_by) {
  const bool one = r.inputs <= 1;
  if (r.inputs > 0 && r.empty_inputs == r.inputs) {
    return one ? "the input is empty" : "the inputs are empty";
  }
  if (r.samples == 0 && r.folded_lines == 0) {
    if (r.other_event_samples) {
      return "no samples of " + r.event + " (the input's " +
             Plural(r.other_event_samples, "sample is", "samples are") +
             " of other events; choose with --event-filter)";
    }
    if (r.recordings && !r.selection.empty()) {
      return r.selection + " left none of the " +
             (r.recordings == 1 ? "recording's samples" : "recordings' samples");
    }
    if (r.recordings && !r.skipped_lines) {
      return std::string(r.recordings == 1 ? "the recording holds" : "the recordings hold") +
             " no samples (was the target idle, or the recording too short?)";
    }
    return "no stack counts found in the input (is it folded stacks?)";
  }
  const std::string read = Plural(r.stacks_read, "stack", "distinct stacks") + " read" +
                           (r.samples ? " from " + Plural(r.samples, "sample", "samples") : "");
  if (r.weight_read == 0) {  // (a stack with a count of 0 makes no node)
    if (r.samples) {
      return r.samples == 1 ? "the one sample read weighs 0"
                            : "the " + Plural(r.samples, "sample", "samples") + " read all weigh 0";
    }
    return r.folded_lines == 1
               ? "the one stack read has a count of 0"
               : "the " + Plural(r.folded_lines, "stack", "stacks") + " read all have a count of 0";
  }
  std::string by;
  if (!dropped_by.empty()) {
    by = std::string(dropped_by);
  } else {
    for (const std::string& f : r.filters) by += (by.empty() ? "" : "/") + f;
    by = by.empty() ? std::string("the filters") : by;
  }
  std::string why = by + " left none of the " + read;
  // Samples without call chains fold to `comm;leaf`: a filter on callers cannot match.
  if (r.samples && r.deepest_read <= 2) {
    why += "; their stacks hold only the sampled function: record call graphs "
           "(perf record -g) to select by callers";
  }
  return why;
}

}  // namespace pf
