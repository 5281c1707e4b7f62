// pf-diff's command line: difffolded.pl's -n and -s, the change report's options, and the
// input format of both profiles.

#include "app/diff_command.h"

#include "app/command_line.h"
#include "app/files.h"
#include "base/error.h"

namespace pf {

namespace po = cli::po;

cli::Tool DiffTool() {
  cli::Tool tool({
      "pf-diff",
      "[OPTIONS] BEFORE AFTER",
      "Compare two profiles (folded stacks, perf script text, perf.data or pf-record streams:\n"
      "anything pf-collapse reads) and write a differential profile, `stack BEFORE AFTER` per\n"
      "line, sorted, for pf-flamegraph: widths from AFTER, red where it grew, blue where it\n"
      "shrank. With --report, a table of the functions that changed most instead.",
      "  pf-diff before.folded after.folded | pf-flamegraph > diff.svg\n"
      "  pf-diff -n old.perf.data new.perf.data | pf-flamegraph > diff.svg\n"
      "  pf-diff --report --threshold=1 before.folded after.folded    # for a CI log\n",
  });
  tool.AddGroup("Comparison").add_options()
      ("normalize,n", "scale BEFORE's counts to AFTER's total first (as difffolded.pl -n)")
      ("strip-hex,s", "replace hex addresses (0x1234...) by 0x... so different builds compare")
      ("report", "print the functions whose total changed most, instead of folded stacks")
      ("threshold", po::value<double>()->value_name("PCT"),
       "report only changes of at least PCT percent of all samples (default 0)")
      ("top", po::value<size_t>()->value_name("N"), "report at most N functions")
      ("mixed-units", "compare profiles that weigh different things (samples against bytes, "
       "...) instead of refusing: the comparison is then of numbers only");
  AddReadOptions(tool.AddGroup("Input"));
  return tool;
}

DiffCommand ParseDiffOptions(cli::Context& ctx) {
  const po::variables_map& vm = ctx.vm;
  if (ctx.inputs.size() != 2) throw UsageError("need two profiles: BEFORE AFTER");
  DiffCommand c{ctx.inputs[0], ctx.inputs[1], ctx.output, {}, {}};
  DiffOptions& o = c.options;
  o.normalize = vm.count("normalize");
  o.strip_hex = vm.count("strip-hex");
  o.report = vm.count("report");
  o.threshold = cli::Percent(vm, "threshold", 0, /*capped=*/false);
  o.limit = cli::Value<size_t>(vm, "top", 0);
  o.mixed_units = vm.count("mixed-units");
  ReadReadOptions(vm, &c.read);
  return c;
}

void RunDiffCommand(const DiffCommand& command, const cli::Tool& tool) {
  ReadReport report;
  std::unique_ptr<ByteSink> out = OpenOutput(command.output);
  DiffFiles(command.before, command.after, command.options, *out, &report, command.read);
  Tell(tool, report);
}

}  // namespace pf
