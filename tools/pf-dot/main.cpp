// pf-dot: draw profiles as a Graphviz call graph of functions (exact totals), like gprof2dot.
#include <string>
#include <vector>

#include "base/error.h"
#include "callgraph/call_graph.h"
#include "callgraph/graphviz.h"
#include "cli/cli.h"
#include "app/files.h"

namespace po = boost::program_options;

namespace {

std::vector<std::string> List(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? vm[name].as<std::vector<std::string>>() : std::vector<std::string>{};
}

double Percentage(const po::variables_map& vm, const char* name, double def) {
  if (!vm.count(name)) return def;
  double v = vm[name].as<double>();
  if (!(v >= 0 && v <= 100))
    throw pf::UsageError(std::string("--") + name + " must be a percentage (0 to 100)");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  pf::cli::Tool tool({
      "pf-dot",
      "[OPTIONS] [FILE...]",
      "Draw profiles (anything pf-collapse reads: perf script text, folded stacks, recordings)\n"
      "as a Graphviz DOT call graph of functions, to pipe into `dot -Tsvg`. A node shows a\n"
      "function's total (the share of samples whose stack contains it, counted once per sample)\n"
      "and, in parentheses, its self share; an edge shows the share of samples that made that\n"
      "call. The totals are exact (gprof2dot's --total=callstacks), never estimated from call\n"
      "ratios. Options follow gprof2dot's names, the filters pprof's.",
      "  pf-collapse perf.txt | pf-dot | dot -Tsvg > graph.svg\n"
      "  perf script | pf-dot -n 1 -e 0.5 --strip | dot -Tpng -o graph.png\n"
      "  pf-dot --focus='^parse' --hide='^std::' in.folded | dot -Tsvg > parse.svg\n"
      "  pf-dot -z main --depth 3 in.folded | dot -Tsvg > top.svg\n"
      "  pf-dot perf.txt -o graph.svg\n",
  });
  tool.AddGroup("Pruning").add_options()(
      "node-thres,n", po::value<double>()->value_name("PCT"),
      "drop nodes whose total is below PCT percent (default 0.5)")(
      "edge-thres,e", po::value<double>()->value_name("PCT"),
      "drop edges below PCT percent (default 0.1)")(
      "nodecount", po::value<size_t>()->value_name("N"),
      "keep at most the N nodes with the largest totals (default 80; 0: no limit); dotted "
      "residual edges bridge the removed nodes")(
      "root,z", po::value<std::vector<std::string>>()->value_name("FUNC"),
      "keep only what FUNC (a glob) calls, directly or not; repeatable")(
      "leaf,l", po::value<std::vector<std::string>>()->value_name("FUNC"),
      "keep only what leads to FUNC (a glob); repeatable")(
      "depth", po::value<int>()->value_name("N"),
      "with -z/-l: at most N edges away (default: no limit)");
  tool.AddGroup("Filters (re2 regular expressions, matched anywhere in a frame name)")
      .add_options()("focus", po::value<std::vector<std::string>>()->value_name("RE"),
                     "keep only the samples with a frame matching RE")(
          "ignore", po::value<std::vector<std::string>>()->value_name("RE"),
          "drop the samples with a frame matching RE")(
          "hide", po::value<std::vector<std::string>>()->value_name("RE"),
          "remove the frames matching RE (their weight stays with the caller)")(
          "show-from", po::value<std::vector<std::string>>()->value_name("RE"),
          "drop the callers of the outermost frame matching RE (samples without a match too)");
  tool.AddGroup("Drawing").add_options()("colormap,c", po::value<std::string>()->value_name("MAP"),
                                         "color (default), pink, gray, bw or print")(
      "skew", po::value<double>()->value_name("F"),
      "skew the colour scale (default 1; below 1 gives low percentages more colour variety)")(
      "strip,s", "strip C++ argument lists and template arguments from names")(
      "wrap,w", "wrap names longer than 32 characters")(
      "color-nodes-by-selftime", "colour nodes by their self time instead of their total")(
      "show-samples", "add the raw sample counts (weights) to the labels")(
      "node-label", po::value<std::vector<std::string>>()->value_name("MEASURE"),
      "what a box shows under the name, in order (repeatable): total-time-percentage, "
      "self-time-percentage, total-time, self-time (raw weights); default: the two "
      "percentages")(
      "total", po::value<std::string>()->value_name("MODE"),
      "callstacks (the only mode: totals are exact); callratios is refused")(
      "format", po::value<std::string>()->value_name("FORMAT"),
      "dot (default), or svg, png or pdf laid out by Graphviz's library (default from the -o "
      "suffix); without libgvc, pipe DOT into `dot -Tsvg`. gprof2dot's --format=perf or "
      "collapse is taken as -f")(
      "processes",
      "for perf input: keep each process (comm) as the root node of its stacks; by default "
      "they are left out, as gprof2dot does")(
      "merge-unknown",
      "for perf input: draw all unresolved frames of a module as one node [module]; by default "
      "each address is its own node [module <address>], as gprof2dot does")(
      "weight", po::value<std::string>()->value_name("W"),
      "for perf input: period (default) weighs samples by their period, samples counts 1 "
      "each (as gprof2dot's perf reader does)");
  pf::cli::AddInputFormatOption(tool.AddGroup("Input"));

  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::cli::DefaultToPerfData(ctx);  // no FILE, stdin a terminal: ./perf.data, as perf
    const po::variables_map& vm = ctx.vm;
    if (vm.count("total")) {
      std::string total = vm["total"].as<std::string>();
      if (total == "callratios") {
        throw pf::UsageError(
            "--total=callratios is not supported: pf-dot's totals are exact, computed from the "
            "call stacks (each sample counted once per function, as gprof2dot --total=callstacks "
            "and pprof do); gprof's call-ratio estimate can attribute time to callers that never "
            "spent it");
      }
      if (total != "callstacks")
        throw pf::UsageError("--total must be callstacks, not '" + total + "'");
    }
    // --format, else the suffix of -o (graph.svg), else DOT. gprof2dot's --format=perf names
    // the input format: taken as -f.
    bool input_named =
        vm.count("format") && pf::cli::IsInputFormatName(vm["format"].as<std::string>());
    std::string input_format = pf::cli::InputFormat(vm, input_named ? "format" : nullptr);
    const std::vector<pf::cli::OutputSuffix> suffixes = {
        {".dot", "dot"}, {".gv", "dot"}, {".svg", "svg"}, {".png", "png"}, {".pdf", "pdf"}};
    std::string format = vm.count("format") && !input_named
                             ? vm["format"].as<std::string>()
                             : pf::cli::FormatFromSuffix(ctx.output, suffixes, "dot");
    if (format != "dot" && format != "svg" && format != "png" && format != "pdf")
      throw pf::UsageError("--format must be dot, svg, png or pdf, not '" + format + "'");
    if ((format == "png" || format == "pdf") && pf::OutputIsTerminal(ctx.output))
      throw pf::UsageError("not writing " + format + " to a terminal; use -o FILE or a pipe");
    if (format != "dot" && !pf::GraphvizAvailable()) {
      throw pf::UsageError("--format=" + format +
                           " needs Graphviz's library (libgvc), which this pf-dot was built "
                           "without; write DOT and pipe it: pf-dot ... | dot -T" +
                           format + " > graph." + format);
    }
    pf::CallGraphOptions o;
    o.node_thres = Percentage(vm, "node-thres", 0.5);
    o.edge_thres = Percentage(vm, "edge-thres", 0.1);
    if (vm.count("nodecount")) o.nodecount = vm["nodecount"].as<size_t>();
    o.root = List(vm, "root");
    o.leaf = List(vm, "leaf");
    if (vm.count("depth")) {
      o.depth = vm["depth"].as<int>();
      if (o.depth < 0) throw pf::UsageError("--depth must be 0 or more");
      if (o.root.empty() && o.leaf.empty())
        throw pf::UsageError("--depth needs -z/--root or -l/--leaf");
    }
    o.focus = List(vm, "focus");
    o.ignore = List(vm, "ignore");
    o.hide = List(vm, "hide");
    o.show_from = List(vm, "show-from");
    if (vm.count("colormap")) o.colormap = vm["colormap"].as<std::string>();
    if (vm.count("skew")) o.skew = vm["skew"].as<double>();
    o.strip = vm.count("strip");
    o.wrap = vm.count("wrap");
    o.color_nodes_by_selftime = vm.count("color-nodes-by-selftime");
    o.show_samples = vm.count("show-samples");
    o.node_labels = List(vm, "node-label");

    // Read and build everything before writing a byte: a failure leaves no output.
    pf::ReadReport report;
    pf::CollapseOptions copt;
    std::string weight = vm.count("weight") ? vm["weight"].as<std::string>() : "period";
    if (weight != "period" && weight != "samples") {
      throw pf::UsageError("--weight must be period or samples, not '" + weight + "'");
    }
    copt.perf.weight_samples = weight == "samples";
    copt.perf.include_addrs = !vm.count("merge-unknown");
    copt.perf.note_modules = true;
    copt.perf.keep_cxx_names = true;  // operator() and {lambda(int)#1} stay whole
    copt.format = input_format;
    pf::StackTree tree = pf::CollapseFilesToTree(ctx.inputs, copt, &report);
    for (const std::string& n : report.notices) tool.Notice(n);
    for (const std::string& w : report.warnings) tool.Warn(w);
    // Stacks folded from perf samples start with the process name; gprof2dot's call graph
    // has no process nodes. Folded input keeps its first frame: it may be a real function.
    o.skip_process = report.samples > 0 && report.folded_lines == 0 && !vm.count("processes");
    pf::CallGraph graph = pf::BuildCallGraph(tree, o);
    if (graph.total == 0) tool.Warn(pf::EmptyResultReason(report, ""));
    if (graph.saturated) tool.Warn(pf::SaturationWarning(graph.saturated));
    if (graph.total > 0 && graph.kept_weight == 0) {  // as -z/-l that match nothing: an error
      std::string filters;
      for (const char* f : {"focus", "ignore", "show-from", "hide"}) {
        for (const std::string& re : List(vm, f)) {
          filters += (filters.empty() ? "--" : ", --") + std::string(f) + "=" + re;
        }
      }
      pf::NoteEmptyResult(tree, &report);
      throw pf::Error(pf::EmptyResultReason(report, filters));
    }

    std::unique_ptr<pf::ByteSink> out = pf::OpenOutput(ctx.output);
    if (format == "dot") {
      pf::BufferedWriter w(*out);
      pf::WriteDot(graph, o, w);
      w.Flush();
    } else {
      pf::StringSink dot;
      pf::BufferedWriter w(dot);
      pf::WriteDot(graph, o, w);
      w.Flush();
      out->WriteAll(pf::RenderDot(dot.data(), format));
    }
    out->Commit();
  });
}
