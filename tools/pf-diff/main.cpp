// pf-diff: compare two profiles into a differential profile (or a report of what changed).
// The options, their checks and the work are in the library (app/diff_command.h).
#include "app/diff_command.h"

int main(int argc, char** argv) {
  pf::cli::Tool tool = pf::DiffTool();
  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::DiffCommand command = pf::ParseDiffOptions(ctx);
    pf::RunDiffCommand(command, tool);
  });
}
