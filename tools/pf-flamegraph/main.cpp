// pf-flamegraph: draw folded stacks as an interactive SVG flame graph, or PNG/PDF.
// The options, their checks and the work are in the library (app/flamegraph_command.h).
#include "app/flamegraph_command.h"

int main(int argc, char** argv) {
  pf::cli::Tool tool = pf::FlamegraphTool();
  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::FlamegraphCommand command = pf::ParseFlamegraphOptions(ctx);
    pf::RunFlamegraphCommand(command, tool);
  });
}
