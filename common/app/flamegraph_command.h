#pragma once
// pf-flamegraph's command: its options, read from the command line, and its run.

#include <string>
#include <vector>

#include "cli/cli.h"
#include "collapse/collapse.h"
#include "render/flame.h"

namespace pf {

/// What pf-flamegraph's command line asks for.
struct FlamegraphCommand {
  std::vector<std::string> inputs;  // none: standard input
  std::string output;               // "-": standard output
  std::string format;               // svg, png, pdf or html (--format, else -o's suffix)
  FlameOptions options;
  CollapseOptions read;             // how the inputs are read (-f, --value, ...)
};

/// The tool, with pf-flamegraph's --help text and options (flamegraph.pl's).
cli::Tool FlamegraphTool();

/// Reads the parsed command line; throws pf::UsageError for values out of range, options
/// that do not combine, or an image format for a terminal.
FlamegraphCommand ParseFlamegraphOptions(cli::Context& ctx);

/// Reads and lays out everything, then writes the SVG (or renders the PNG or PDF, or writes
/// the HTML page): a failure leaves no output. Notices and warnings go through `tool`.
void RunFlamegraphCommand(const FlamegraphCommand& command, const cli::Tool& tool);

}  // namespace pf
