// pf-record: sample a command, processes or CPUs and write the samples as a perf.data pipe
// stream (readable by pf-script, pf-collapse, and perf script -i -).
// The options, their checks and the work are in the library (app/record_command.h).
#include "app/record_command.h"

int main(int argc, char** argv) {
  pf::cli::Tool tool = pf::RecordTool();
  int status = 0;  // the recorded command's
  int rc = tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::RecordCommand command = pf::ParseRecordOptions(ctx);
    status = pf::RunRecordCommand(command, tool);
  });
  return rc != 0 ? rc : status;
}
