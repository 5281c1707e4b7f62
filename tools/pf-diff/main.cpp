// pf-diff: compare two profiles into a differential profile (or a report of what changed).
#include "base/error.h"
#include "cli/cli.h"
#include "app/files.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  pf::cli::Tool tool({
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
      ("top", po::value<size_t>()->value_name("N"), "report at most N functions");
  pf::cli::AddInputFormatOption(tool.AddGroup("Input"));
  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    const po::variables_map& vm = ctx.vm;
    if (ctx.inputs.size() != 2) throw pf::UsageError("need two profiles: BEFORE AFTER");
    pf::DiffOptions o;
    o.normalize = vm.count("normalize");
    o.strip_hex = vm.count("strip-hex");
    o.report = vm.count("report");
    if (vm.count("threshold")) {
      o.threshold = vm["threshold"].as<double>();
      if (!(o.threshold >= 0)) throw pf::UsageError("--threshold must be a percentage >= 0");
    }
    if (vm.count("top")) o.limit = vm["top"].as<size_t>();
    o.input_format = pf::cli::InputFormat(vm);
    pf::ReadReport report;
    std::unique_ptr<pf::ByteSink> out = pf::OpenOutput(ctx.output);
    pf::DiffFiles(ctx.inputs[0], ctx.inputs[1], o, *out, &report);
    for (const std::string& n : report.notices) tool.Notice(n);
    for (const std::string& w : report.warnings) tool.Warn(w);
  });
}
