#pragma once
// pprof profile.proto into a stack tree (formats/pprof.h decodes it): one column per sample
// type, frames named as `pprof -traces` names them, labels as root frames on request.

#include <string>
#include <vector>

#include "formats/pprof.h"
#include "io/input.h"
#include "stacks/read_report.h"
#include "stacks/stack_tree.h"
#include "symbolize/symbolizer.h"

namespace pf {

/// Reads the whole of `source` (decompressed; at most kMaxPprofBytes) as a profile.proto and
/// builds its tree (PprofTree). Throws pf::Error naming the input.
StackTree ReadPprof(ByteSource& source, const std::vector<std::string>& tags,
                    const Symbolizer::Options& symbols, ReadReport* report,
                    bool inline_frames = true, bool srcline = false);

/// The whole of `source` as one buffer: a stable source's own bytes, else its chunks
/// gathered in *storage; more than `cap` bytes (decompressed) is a pf::Error that names the
/// cap (a gzip bomb ends there, not in the machine's memory).
std::string_view GatherPprofBytes(ByteSource& source, std::string* storage,
                                  uint64_t cap = kMaxPprofBytes);

/// The tree of a decoded profile:
/// - one column per sample type, named and with its unit (nanoseconds, bytes, objects for
///   "count" of *objects, samples for other counts; seconds, milliseconds and microseconds
///   are converted to nanoseconds; other units count events); pprof's default sample type
///   (default_sample_type when the profile names one, else the last) is the last column, so
///   OneValue(tree, "") picks what pprof shows by default;
/// - a sample's frames root first; a location's inlined functions are frames of their own;
///   a frame is its function's name, or for a location without functions the symbol pf's
///   symbolizer finds through the location's mapping (file, build-id, offsets) with, when
///   `inline_frames`, the functions DWARF says are inlined there after it (as pprof's own
///   symbolization gives them), else "[BINARY]" (the mapping's file's base name) or
///   "<unknown>", as pprof names them;
/// - for each key of `tags`, in order from the root, a frame "KEY:VALUE" (values joined by
///   commas, numbers with their unit) above the stacks of the samples with that label;
/// - negative values (pprof -diff_base profiles) are left out and counted in a warning.
/// `symbols` may be null (addresses are then not symbolized; else a Symbolizer is made the
/// first time a location needs one). `name` is for messages. With `srcline`, a function's
/// frame is "NAME:FILE:LINE" where the profile gives its file and line (as --srcline names
/// perf's frames).
StackTree PprofTree(const PprofProfile& profile, const std::string& name,
                    const std::vector<std::string>& tags, const Symbolizer::Options* symbols,
                    ReadReport* report, bool inline_frames = true, bool srcline = false);

}  // namespace pf
