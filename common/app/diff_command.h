#pragma once
// pf-diff's command: its options, read from the command line, and its run.

#include <string>

#include "cli/cli.h"
#include "collapse/collapse.h"
#include "diff/diff.h"

namespace pf {

/// What pf-diff's command line asks for.
struct DiffCommand {
  std::string before, after;  // the two profiles; "-": standard input
  std::string output;         // "-": standard output
  DiffOptions options;
  CollapseOptions read;       // how the two are read (-f, --value, ...)
};

/// The tool, with pf-diff's --help text and options.
cli::Tool DiffTool();

/// Reads the parsed command line; throws pf::UsageError unless it names two profiles.
DiffCommand ParseDiffOptions(cli::Context& ctx);

/// Writes the differential profile (or the report); notices and warnings go through `tool`.
void RunDiffCommand(const DiffCommand& command, const cli::Tool& tool);

}  // namespace pf
