#pragma once
// The collapse module (common/collapse/): pf-collapse's engine, which reads every input format
// into one stack tree; pf-flamegraph, pf-dot and pf-diff read their inputs through it.
//
// pf-collapse's entry point: read every input (perf script text or folded stacks, in any
// mix, compressed or not), fold them into one stack tree, filter, write sorted folded text.

#include <memory>
#include <string>
#include <vector>

#include "formats/perf_script.h"
#include "io/input.h"
#include "io/output.h"
#include "pfstream/sample_selection.h"
#include "stacks/stack_filter.h"
#include "symbolize/symbolizer.h"

namespace pf {

struct CollapseOptions {
  PerfScriptOptions perf;
  StackFilterOptions filter;
  /// Which samples of a recording are folded (perf script's --comms, --pid, --tid, --cpu,
  /// --time); text inputs cannot be selected from (CollapseFiles refuses them then).
  SelectionOptions select;
  unsigned threads = 0;         // parsing threads; 0: one per CPU
  // A perf.data file this large or larger is read and unwound on one thread while another
  // names and folds its samples (when threads allow two); a smaller one is folded on one.
  uint64_t two_stage_bytes = 8 << 20;
  std::string format = "auto";  // auto, perf-script, folded
  // Where a recording's binaries and kernel symbols are looked for (the fuzz target keeps
  // away from the live kernel's: reading /proc/kallsyms costs its kernel milliseconds).
  Symbolizer::Options symbols;
};

struct CollapseReport {
  std::vector<std::string> warnings;  // for "pf-collapse: warning: ..."
  std::vector<std::string> notices;   // for "pf-collapse: notice: ..."
  uint64_t samples = 0;               // perf script samples folded
  // Samples of recordings named and folded from their frames (the others, as an earlier
  // sample that named the same frames was).
  uint64_t named_folds = 0;
  uint64_t folded_lines = 0;          // folded lines merged
  uint64_t two_stage_inputs = 0;      // recordings read on one thread, folded on another
  std::vector<std::string> pf_comments;  // "# pf-..." lines of folded inputs
  // What an empty result is explained with (EmptyResultReason).
  uint64_t inputs = 0;                // inputs read
  uint64_t empty_inputs = 0;          // of them, with no data at all
  uint64_t recordings = 0;            // of them, recordings (perf.data, pf-record streams)
  uint64_t skipped_lines = 0;         // lines that were neither stacks nor samples
  uint64_t other_event_samples = 0;   // samples left out as of another event
  std::string event;                  // the event whose samples were kept
  std::vector<std::string> filters;   // the filter options given (--include, ...)
  std::string selection;              // the selection of recordings' samples (--comms, ...)
  bool empty = false;                 // the result holds no stack with a weight
  // Set only when the result is empty: the stacks read, before the filters.
  uint64_t stacks_read = 0;           // distinct stacks
  uint64_t weight_read = 0;           // their weight
  uint32_t deepest_read = 0;          // frames in the deepest
};

/// Why a result holds no stacks, said alike by every tool: the input was empty, held no
/// samples or no stacks, its counts were all 0, or a filter left nothing. `dropped_by`
/// names the tool's own filter when it is the one that left nothing (e.g. "--base=main");
/// empty otherwise.
std::string EmptyResultReason(const CollapseReport& report, std::string_view dropped_by);

/// Notes in `report` that the result is empty, with what `read` (the stacks before the
/// filter that left nothing) held. The collapse does it for its own filters; a tool whose
/// own filter leaves nothing calls it with the tree it filtered.
void NoteEmptyResult(const StackTree& read, CollapseReport* report);

/// Folds `inputs` (opened in order; "-" is stdin) and writes the result to `out`.
/// Throws pf::Error for unreadable or unusable input.
void CollapseFiles(const std::vector<std::string>& inputs, const CollapseOptions& options,
                   ByteSink& out, CollapseReport* report);

/// Folds `inputs` into a stack tree instead of writing it (pf-flamegraph, pf-dot).
StackTree CollapseFilesToTree(const std::vector<std::string>& inputs,
                              const CollapseOptions& options, CollapseReport* report);

/// The same over sources the caller opened (tests and fuzzers pass memory).
void CollapseSources(std::vector<std::unique_ptr<ByteSource>> sources,
                     const CollapseOptions& options, ByteSink& out, CollapseReport* report);

}  // namespace pf
