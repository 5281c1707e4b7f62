// pf-script: print a recording (pf-record stream or perf.data) as `perf script` text.
// The options, their checks and the work are in the library (app/script_command.h).
#include "app/script_command.h"

int main(int argc, char** argv) {
  pf::cli::Tool tool = pf::ScriptTool();
  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::ScriptCommand command = pf::ParseScriptOptions(ctx);
    pf::RunScriptCommand(command, tool);
  });
}
