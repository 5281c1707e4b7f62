#pragma once
// The collapse module (common/collapse/): reads every input format pf reads (recordings, perf
// script text, folded stacks, in any mix, compressed or not) into one stack tree and filters
// it. The app layer's file entry points (app/collapse_files.h) open the inputs and hand
// them here; pf-collapse, pf-flamegraph, pf-dot and pf-diff all read through it.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collapse/time_order.h"
#include "collapse/profiles.h"
#include "formats/perf_script.h"
#include "io/input.h"
#include "io/output.h"
#include "pfstream/sample_selection.h"
#include "stacks/read_report.h"
#include "stacks/stack_filter.h"
#include "symbolize/symbolizer.h"

namespace pf {

class StackList;

struct CollapseOptions {
  PerfScriptOptions perf;
  StackFilterOptions filter;
  /// Which samples of a recording are folded (perf script's --comms, --pid, --tid, --cpu,
  /// --time); text inputs cannot be selected from (CollapseFiles refuses them then).
  SelectionOptions select;
  unsigned threads = 0;         // parsing threads; 0: one per CPU
  // Perf script text: the first this many bytes are folded on one thread, the rest (if any)
  // on `threads`. pf-dot sets it: its frames keep their addresses, so a second thread names
  // most of them again and the merge interns them again, which costs more CPU than a small
  // input's fold.
  uint64_t one_thread_text_bytes = 0;
  // A perf.data file whose samples carry stack copies (--call-graph dwarf), this large or
  // larger, is read and unwound on one thread while another names and folds its samples
  // (when threads allow two); a smaller one is folded on one.
  uint64_t two_stage_bytes = 8 << 20;
  // The same for a file whose samples carry no stack copies (frame-pointer call chains, or
  // none): by default never. There the reading thread has little to do but parse, the
  // folding thread does the rest, and the split costs more CPU (both replay the maps, the
  // batches are copied across) than the wall time it saves (a 61 MB recording: 20-30% more
  // CPU for 10% less wall time).
  uint64_t two_stage_fp_bytes = UINT64_MAX;
  std::string format = "auto";  // auto, or a canonical name of base/input_formats.h
  ProfileOptions profile;       // for other profilers' formats
  // The sample type kept (--value, pprof's -sample_index: a name or an index); "" keeps all
  // (the one-value views then show the default one, OneValueView).
  std::string value;
  // Where a recording's binaries and kernel symbols are looked for (the fuzz target keeps
  // away from the live kernel's: reading /proc/kallsyms costs its kernel milliseconds).
  Symbolizer::Options symbols;
};

/// Reads inputs of any format pf reads into one stack tree: Add each input in order, then
/// TakeTree once. Throws pf::Error for unreadable or unusable input (Add), pf::UsageError
/// for a bad filter pattern (the constructor, before any input is read).
class Collapser {
 public:
  Collapser(const CollapseOptions& options, ReadReport* report);
  ~Collapser();
  void Add(ByteSource& source);
  /// The folded result, filtered; notices added to the report.
  StackTree TakeTree();
  /// With options.perf.keep_times (--time-order), instead of TakeTree: the recording's tree,
  /// unfiltered, and its samples (leaves of that tree) in the order folded.
  StackTree TakeTimeline(std::vector<TimedSample>* samples);
  /// Instead of Add and TakeTree: folds `source`, `perf script` text, on this thread into
  /// `list` (one column), with the notes TakeTree would give, and returns the unit of its
  /// weights; for a writer of sorted folded text, which needs no tree. Only as the one input,
  /// without the options that read or change a tree (filters, --value, a selection, modules).
  WeightUnit AddPerfScriptToList(ByteSource& source, StackList* list);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes `tree` to `out` as sorted folded text and commits it; a saturated sum is warned
/// of in `report`.
void WriteCollapsed(const StackTree& tree, ByteSink& out, ReadReport* report);

/// Folds `sources` (opened by the caller; tests and fuzzers pass memory) and writes sorted
/// folded text to `out`.
void CollapseSources(std::vector<std::unique_ptr<ByteSource>> sources,
                     const CollapseOptions& options, ByteSink& out, ReadReport* report);

}  // namespace pf
