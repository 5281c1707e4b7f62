#pragma once
// pf-collapse's command: its options, read from the command line, and its run.

#include <string>
#include <vector>

#include "cli/cli.h"
#include "collapse/collapse.h"

namespace pf {

/// What pf-collapse's command line asks for.
struct CollapseCommand {
  std::vector<std::string> inputs;  // none: standard input
  std::string output;               // "-": standard output
  CollapseOptions options;
  std::string format = "folded";    // the output: folded, pprof or callgrind
  bool gzip = true;                 // pprof: gzipped (not for -o NAME.pb)
};

/// The tool, with pf-collapse's --help text and options.
cli::Tool CollapseTool();

/// Reads the parsed command line (./perf.data when no FILE and stdin is a terminal); throws
/// pf::UsageError for options that do not go together or values that are not allowed.
CollapseCommand ParseCollapseOptions(cli::Context& ctx);

/// Folds the inputs and writes the folded stacks; notices and warnings go through `tool`.
void RunCollapseCommand(const CollapseCommand& command, const cli::Tool& tool);

}  // namespace pf
