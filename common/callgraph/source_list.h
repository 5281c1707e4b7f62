#pragma once
// pf-dot --list: pprof's -list, the source of the functions matching a regex with each
// line's flat and cum weight. The stacks come with their frames' source lines
// ("func:file.c:12", as --srcline names them: from DWARF for recordings, perf script -F
// +srcline text, a pprof profile's lines); a line's flat weight is that of the samples whose
// leaf is on it, its cum that of the samples with a frame on it (once per sample), as pprof
// counts lines. The listing is pprof's: a routine a function and file, five lines of context
// around the lines sampled. The source is found as recorded, else under each --source-path
// directory (less a --trim-path prefix), and the listing says which file it read, or that
// none was found, and when the file is newer than the profile (its lines may have moved).

#include <string>
#include <vector>

#include "callgraph/call_graph.h"
#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {

struct SourceListOptions {
  std::string regex;                     ///< the functions to list (re2, anywhere in the name)
  std::vector<std::string> source_path;  ///< directories to look in (default: the current)
  std::vector<std::string> trim_path;    ///< prefixes taken off recorded paths first
  int64_t profile_mtime = 0;  ///< the profile's modification time (seconds; 0: unknown)
};

/// Splits a frame "func:file:line" (a --srcline frame) into its parts; false when `frame`
/// carries no line.
bool SplitSrclineFrame(std::string_view frame, std::string_view* func, std::string_view* file,
                       int64_t* line);

/// Writes the listing of `tree` (frames with source lines), filtered by `filters`' --focus,
/// --ignore, --hide and --show-from. Throws pf::Error when no function matches, UsageError
/// for a bad regex.
void WriteSourceList(const StackTree& tree, const CallGraphOptions& filters,
                     const SourceListOptions& options, BufferedWriter& out);

}  // namespace pf
