#pragma once
// Folding one recording (a perf.data file or pipe, a pf-record stream) into a stack tree: on
// one thread, or in two stages on two (recording.cpp says how and why). Collapse's own.

#include <functional>
#include <string>

#include "collapse/collapse.h"
#include "collapse/record_fold.h"
#include "io/input.h"
#include "pfstream/perf_data.h"
#include "pfstream/sample_selection.h"

namespace pf {

/// A recording folded: the fold (its folder's tree, its counts and the events it skipped),
/// the reader (truncation, skipped records), and whether it was folded in two stages. Valid
/// during the call only.
using RecordingFolded =
    std::function<void(RecordFold& fold, const PerfDataReader& reader, bool two_stage)>;

/// Folds the samples of the recording `source` that `select` keeps (its --time percentages
/// taken of this recording), on up to `threads` threads, and hands the result to `done`;
/// then leaves the Sessions and Symbolizers it built to the process's exit
/// (base/teardown.h). `event_filter`: the event whose samples are folded (empty: the first
/// seen). Throws pf::Error for an unusable recording.
void FoldRecording(ByteSource& source, const CollapseOptions& options, SampleSelection select,
                   unsigned threads, const std::string& event_filter,
                   const RecordingFolded& done);

}  // namespace pf
