#pragma once
// Chrome and V8 CPU profiles: the `.cpuprofile` JSON that `node --cpu-prof`, Chrome DevTools
// ("Save profile") and the DevTools protocol's Profiler.stop write (a Profiler.Profile:
// `nodes` with id, callFrame {functionName, url, lineNumber, columnNumber}, hitCount and
// children; `startTime`, `endTime`; `samples`, the node of each sample, and `timeDeltas`,
// microseconds since the sample before).
//
// The node tree becomes the stack tree, V8's "(root)" node dropped. Two values per stack:
// `samples` (the nodes' hitCount) and `wall` (nanoseconds, the default, last column: each
// sample weighs the time to the next sample, the last one the time to endTime, negative
// intervals counted as 0, as speedscope and DevTools' timeline draw them; a profile without
// samples or timeDeltas spreads endTime - startTime over the hits, as DevTools' tables do).
// Frames are named "FUNCTION URL:LINE:COLUMN" (1-based, as DevTools shows them), FUNCTION
// "(anonymous)" when V8 has no name, and the bare name when there is no URL (V8's
// "(program)", "(idle)", "(garbage collector)", native functions).

#include <string_view>

#include "io/input.h"
#include "stacks/read_report.h"
#include "stacks/stack_tree.h"

namespace pf {

/// Reads a .cpuprofile into a tree with the sample types {samples, samples} and
/// {wall, nanoseconds}. Throws pf::Error for text that is not such a profile (with the
/// line and column of a JSON error) or whose nodes do not form a tree.
StackTree ReadCpuProfile(ByteSource& source, ReadReport* report);

/// True when `head`, the first bytes of an input, starts a .cpuprofile: a JSON object with
/// a "nodes" array whose first element has a "callFrame", or with "nodes" and "samples" or
/// "startTime" among the members `head` holds whole.
bool LooksLikeCpuProfile(std::string_view head);

}  // namespace pf
