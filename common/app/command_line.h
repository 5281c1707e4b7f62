#pragma once
// What the tools' commands (app/*_command.h) share that needs more than the command line:
// how the inputs are read, the sample selection options of the tools that read recordings, the report line that copies
// what a read noticed to the tool's stderr, and the refusal to write an image to a terminal.
// The pieces that need only the command line are in cli/cli.h.

#include <string>

#include "cli/cli.h"
#include "collapse/collapse.h"
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

/// Adds how the inputs are read, alike in every tool that reads profiles: -f/--input-format
/// (unless `input_format` is false: pf-collapse adds it with its older --format), --value
/// (pprof's -sample_index), --tag (pprof's -tagroot) and --snapshot (massif's).
void AddReadOptions(cli::po::options_description& group, bool input_format = true);

/// Fills `read` from those options; `also` is a tool's older name for -f (cli::InputFormat).
void ReadReadOptions(const cli::po::variables_map& vm, CollapseOptions* read,
                     const char* also = nullptr);

/// The report line: a read's notices, then its warnings, on the tool's stderr (one
/// `pf-x: notice: ...` or `pf-x: warning: ...` each), as every tool says them.
void Tell(const cli::Tool& tool, const ReadReport& report);

/// A UsageError when `format` is a binary one (png, pdf) and `output` a terminal.
void RefuseImageForTerminal(const std::string& format, const std::string& output);

}  // namespace pf
