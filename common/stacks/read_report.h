#pragma once
// What reading found, said alike by every tool (stacks/read_report.cpp).
//
// The readers (pf-collapse's engine, the flame graph's streaming reader, pf-diff's merge)
// count as they read what tells an empty or suspicious result apart: inputs, empty inputs,
// recordings, samples, folded lines, samples of other events, the filters given. The tools
// print its warnings and notices, and explain an empty result with EmptyResultReason.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stacks/stack_tree.h"

namespace pf {

struct ReadReport {
  std::vector<std::string> warnings;  // for "pf-collapse: warning: ..."
  std::vector<std::string> notices;   // for "pf-collapse: notice: ..."
  uint64_t samples = 0;               // perf script samples folded
  uint64_t perf_samples = 0;          // of them, perf's (text, recordings): rooted at the comm
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
std::string EmptyResultReason(const ReadReport& report, std::string_view dropped_by);

/// Notes in `report` that the result is empty, with what `read` (the stacks before the
/// filter that left nothing) held. The collapse does it for its own filters; a tool whose
/// own filter leaves nothing calls it with the tree it filtered.
void NoteEmptyResult(const StackTree& read, ReadReport* report);

}  // namespace pf
