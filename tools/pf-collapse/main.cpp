// pf-collapse: fold `perf script` text (and merge folded stacks) into folded stacks.
// The options, their checks and the work are in the library (app/collapse_command.h).
#include "app/collapse_command.h"

int main(int argc, char** argv) {
  pf::cli::Tool tool = pf::CollapseTool();
  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::CollapseCommand command = pf::ParseCollapseOptions(ctx);
    pf::RunCollapseCommand(command, tool);
  });
}
