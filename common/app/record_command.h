#pragma once
// pf-record's command: its options, read from the command line, and its run.

#include <string>

#include "cli/cli.h"
#include "perf/recorder.h"

namespace pf {

/// What pf-record's command line asks for.
struct RecordCommand {
  std::string output;         // -o, "-" (standard output) or ./perf.data
  bool default_file = false;  // ./perf.data, as perf record writes with stdout a terminal
  RecordOptions options;      // (options.notice is set by RunRecordCommand)
  bool list_events = false;   // -l: print what can be recorded here, record nothing
};

/// The tool, with pf-record's --help text and options (perf record's).
cli::Tool RecordTool();

/// Reads the parsed command line; throws pf::UsageError for bad ids, options that exclude
/// each other or binary output to a terminal, before anything is recorded.
RecordCommand ParseRecordOptions(cli::Context& ctx);

/// Records, then says the summary through `tool`. Returns the command's exit status when a
/// command ran, else 0.
int RunRecordCommand(const RecordCommand& command, const cli::Tool& tool);

}  // namespace pf
