#pragma once
// What the tools' commands (app/*_command.h) share that needs more than the command line:
// the sample selection options of the tools that read recordings, the report line that copies
// what a read noticed to the tool's stderr, and the refusal to write an image to a terminal.
// The pieces that need only the command line are in cli/cli.h.

#include <string>

#include "cli/cli.h"
#include "pfstream/sample_selection.h"
#include "stacks/read_report.h"

namespace pf {

/// How a tool spells the selection options (perf script's --comms, --pid, --tid, -C/--cpu,
/// --time). kPerfScript is pf-script's: perf script's own names, -c for --comms, its help
/// texts. kFold is pf-collapse's: --pids and --tids (--pid and --tid name the first frame
/// there), each help text starting "fold only" and naming perf script's option.
enum class SelectionStyle { kPerfScript, kFold };

/// Adds the selection options to `group`, in perf script's order.
void AddSelectionOptions(cli::po::options_description& group, SelectionStyle style);

/// The selection the options ask for (reltime is left to the tool).
SelectionOptions ReadSelection(const cli::po::variables_map& vm, SelectionStyle style);

/// The report line: a read's notices, then its warnings, on the tool's stderr (one
/// `pf-x: notice: ...` or `pf-x: warning: ...` each), as every tool says them.
void Tell(const cli::Tool& tool, const ReadReport& report);

/// A UsageError when `format` is a binary one (png, pdf) and `output` a terminal.
void RefuseImageForTerminal(const std::string& format, const std::string& output);

}  // namespace pf
