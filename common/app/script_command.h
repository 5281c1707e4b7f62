#pragma once
// pf-script's command: its options, read from the command line, and its run.

#include <string>

#include "cli/cli.h"
#include "pfstream/script_output.h"

namespace pf {

/// What pf-script's command line asks for.
struct ScriptCommand {
  std::string recording;  // FILE or -i FILE; "-": standard input
  std::string output;     // "-": standard output
  ScriptOptions options;
};

/// The tool, with pf-script's --help text and options.
cli::Tool ScriptTool();

/// Reads the parsed command line (./perf.data when no FILE and stdin is a terminal); throws
/// pf::UsageError for bad fields, selections or values, before the recording is read.
ScriptCommand ParseScriptOptions(cli::Context& ctx);

/// Prints the recording as perf script text; warnings go through `tool`.
void RunScriptCommand(const ScriptCommand& command, const cli::Tool& tool);

}  // namespace pf
