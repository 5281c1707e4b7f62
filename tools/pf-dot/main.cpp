// pf-dot: draw profiles as a Graphviz call graph of functions (exact totals), like gprof2dot.
// The options, their checks and the work are in the library (app/dot_command.h).
#include "app/dot_command.h"

int main(int argc, char** argv) {
  pf::cli::Tool tool = pf::DotTool();
  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::DotCommand command = pf::ParseDotOptions(ctx);
    pf::RunDotCommand(command, tool);
  });
}
