// pf-dot's command line and run. The options follow gprof2dot's names (-n, -e, -z, -l,
// --colormap, --total, -f and its --format=perf) and pprof's filters (--focus, --ignore,
// --hide, --show-from). The run is: fold the inputs into a stack tree (perf samples named as
// gprof2dot names them: unknown frames by address, C++ names whole), or take folded files
// as they are, build the call graph, and write DOT, or hand it to Graphviz's library for
// svg, png or pdf.

#include "app/dot_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "app/command_line.h"
#include "app/files.h"
#include "base/error.h"
#include "base/heap.h"
#include "callgraph/graphviz.h"
#include "formats/callgrind.h"
#include "formats/sniff.h"
#include "io/input.h"

namespace pf {

namespace po = cli::po;

namespace {

void AddPruningAndFilters(cli::Tool& tool) {
  tool.AddGroup("Pruning").add_options()
      ("node-thres,n", po::value<double>()->value_name("PCT"),
       "drop nodes whose total is below PCT percent (default 0.5)")
      ("edge-thres,e", po::value<double>()->value_name("PCT"),
       "drop edges below PCT percent (default 0.1)")
      ("nodecount", po::value<size_t>()->value_name("N"),
       "keep at most the N nodes with the largest totals (default 80; 0: no limit); dotted "
       "residual edges bridge the removed nodes")
      ("root,z", po::value<std::vector<std::string>>()->value_name("FUNC"),
       "keep only what FUNC (a glob) calls, directly or not; repeatable")
      ("leaf,l", po::value<std::vector<std::string>>()->value_name("FUNC"),
       "keep only what leads to FUNC (a glob); repeatable")
      ("depth", po::value<int>()->value_name("N"),
       "with -z/-l: at most N edges away (default: no limit)");
  tool.AddGroup("Filters (re2 regular expressions, matched anywhere in a frame name)")
      .add_options()
      ("focus", po::value<std::vector<std::string>>()->value_name("RE"),
       "keep only the samples with a frame matching RE")
      ("ignore", po::value<std::vector<std::string>>()->value_name("RE"),
       "drop the samples with a frame matching RE")
      ("hide", po::value<std::vector<std::string>>()->value_name("RE"),
       "remove the frames matching RE (their weight stays with the caller)")
      ("show-from", po::value<std::vector<std::string>>()->value_name("RE"),
       "drop the callers of the outermost frame matching RE (samples without a match too)");
}

void AddDrawing(cli::Tool& tool) {
  tool.AddGroup("Drawing").add_options()
      ("colormap,c", po::value<std::string>()->value_name("MAP"),
       "color (default), pink, gray, bw or print")
      ("skew", po::value<double>()->value_name("F"),
       "skew the colour scale (default 1; below 1 gives low percentages more colour variety)")
      ("strip,s", "strip C++ argument lists and template arguments from names")
      ("wrap,w", "wrap names longer than 32 characters")
      ("color-nodes-by-selftime", "colour nodes by their self time instead of their total")
      ("show-samples", "add the raw sample counts (weights) to the labels")
      ("node-label", po::value<std::vector<std::string>>()->value_name("MEASURE"),
       "what a box shows under the name, in order (repeatable): total-time-percentage, "
       "self-time-percentage, total-time, self-time (raw weights); default: the two "
       "percentages")
      ("total", po::value<std::string>()->value_name("MODE"),
       "callstacks (the only mode: totals are exact); callratios is refused")
      ("format", po::value<std::string>()->value_name("FORMAT"),
       "dot (default), or svg, png or pdf laid out by Graphviz's library (default from the -o "
       "suffix); without libgvc, pipe DOT into `dot -Tsvg`. top, tree or peek: pprof's text "
       "reports (see Reports). gprof2dot's --format=perf or collapse is taken as -f")
      ("processes",
       "for perf input: keep each process (comm) as the root node of its stacks; by default "
       "they are left out, as gprof2dot does")
      ("merge-unknown",
       "for perf input: draw all unresolved frames of a module as one node [module]; by default "
       "each address is its own node [module <address>], as gprof2dot does")
      ("weight", po::value<std::string>()->value_name("W"),
       "for perf input: period (default) weighs samples by their period, samples counts 1 "
       "each (as gprof2dot's perf reader does)");
}

void AddReports(cli::Tool& tool) {
  tool.AddGroup("Reports (pprof's -top, -tree, -peek)").add_options()
      ("top", "the same as --format=top: functions by self weight (flat) with their totals "
       "(cum), as pprof -top")
      ("tree", "the same as --format=tree: each function with its callers above and callees "
       "below, as pprof -tree")
      ("peek", po::value<std::string>()->value_name("RE"),
       "--format=peek: the tree of the functions matching RE only, nothing pruned, as pprof "
       "-peek")
      ("list", po::value<std::string>()->value_name("RE"),
       "--format=list: the source of the functions matching RE, each line's flat and cum, as "
       "pprof -list (needs source lines: recordings' DWARF, perf script -F +srcline, pprof "
       "profiles)")
      ("source-path", po::value<std::vector<std::string>>()->value_name("DIR"),
       "--list: look for source files under DIR (repeatable, or DIR:DIR; default: here)")
      ("trim-path", po::value<std::vector<std::string>>()->value_name("PREFIX"),
       "--list: take PREFIX off recorded source paths before looking under --source-path")
      ("cum", "sort the report by cum (total) instead of flat (self)")
      ("csv", "--format=top as CSV: exact values in the profile's unit (also -o NAME.csv)")
      ("tsv", "--format=top as tab-separated values (also -o NAME.tsv)");
}

void CheckTotal(const po::variables_map& vm) {
  if (!vm.count("total")) return;
  std::string total = vm["total"].as<std::string>();
  if (total == "callratios") {
    throw UsageError(
        "--total=callratios is not supported: pf-dot's totals are exact, computed from the "
        "call stacks (each sample counted once per function, as gprof2dot --total=callstacks "
        "and pprof do); gprof's call-ratio estimate can attribute time to callers that never "
        "spent it");
  }
  cli::CheckChoice("total", total, {"callstacks"});
}

/// The text reports' options, and pprof's pruning for each: -top keeps every node above the
/// threshold, -tree the 80 largest, -peek prunes nothing (options given still apply).
void ReadReportOptions(const po::variables_map& vm, DotCommand& c) {
  TextReportOptions& r = c.report;
  r.kind = c.format == "top"    ? TextReportOptions::Kind::kTop
           : c.format == "tree" ? TextReportOptions::Kind::kTree
                                : TextReportOptions::Kind::kPeek;
  r.cum = vm.count("cum");
  if (c.format == "peek") {
    if (!vm.count("peek")) throw UsageError("--format=peek needs --peek=RE");
    r.peek = vm["peek"].as<std::string>();
  }
  if (c.format == "list") {
    if (!vm.count("list")) throw UsageError("--format=list needs --list=RE");
    c.list.regex = vm["list"].as<std::string>();
    auto dirs = [&](const char* option) {
      std::vector<std::string> all;
      for (const std::string& v : cli::List(vm, option)) {
        for (size_t at = 0, end; at <= v.size(); at = end + 1) {
          end = std::min(v.find(':', at), v.size());
          if (end > at) all.push_back(v.substr(at, end - at));
        }
      }
      return all;
    };
    c.list.source_path = dirs("source-path");
    c.list.trim_path = dirs("trim-path");
    c.read.perf.srcline = true;  // each frame with its source line
  } else if (vm.count("source-path") || vm.count("trim-path")) {
    throw UsageError("--source-path and --trim-path are for --list");
  }
  if (r.cum && c.format == "list") throw UsageError("--cum sorts --top, --tree and --peek");
  std::string name = c.output.substr(c.output.rfind('/') + 1);
  if (vm.count("csv") || name.ends_with(".csv")) r.separator = ',';
  if (vm.count("tsv") || name.ends_with(".tsv")) r.separator = '\t';
  if (vm.count("csv") && vm.count("tsv")) throw UsageError("--csv and --tsv: choose one");
  if (r.separator && c.format != "top") {
    throw UsageError("--csv and --tsv write the top table: use them with --format=top");
  }
}

/// --format, else the suffix of -o (graph.svg), else DOT. gprof2dot's --format=perf names
/// the input format: taken as -f (read.format).
void ReadFormats(const po::variables_map& vm, DotCommand& c) {
  bool input_named = vm.count("format") && cli::IsInputFormatName(vm["format"].as<std::string>());
  ReadReadOptions(vm, &c.read, input_named ? "format" : nullptr);
  std::optional<std::string> given;
  if (vm.count("format") && !input_named) given = vm["format"].as<std::string>();
  for (const char* report : {"top", "tree", "peek", "list"}) {
    if (vm.count(report) && given && *given != report) {
      throw UsageError(std::string("--") + report + " and --format=" + *given + " disagree");
    }
    if (vm.count(report)) given = report;
  }
  if (!given && (vm.count("csv") || vm.count("tsv"))) given = "top";
  if (given && (*given == "tree" || *given == "peek" || *given == "list")) {
    c.format = *given;
  } else {
    c.format = cli::OutputFormat(given, c.output,
                                 {{".dot", "dot"}, {".gv", "dot"}, {".svg", "svg"},
                                  {".png", "png"}, {".pdf", "pdf"}, {".txt", "top"},
                                  {".csv", "top"}, {".tsv", "top"}},
                                 "dot");
  }
  if (c.IsReport()) return ReadReportOptions(vm, c);
  for (const char* o : {"cum", "csv", "tsv", "source-path", "trim-path"}) {
    if (vm.count(o)) {
      throw UsageError(std::string("--") + o + " is for --format=top, tree, peek or list");
    }
  }
  RefuseImageForTerminal(c.format, c.output);
  if (c.format != "dot" && !GraphvizAvailable()) {
    throw UsageError("--format=" + c.format +
                     " needs Graphviz's library (libgvc), which this pf-dot was built "
                     "without; write DOT and pipe it: pf-dot ... | dot -T" +
                     c.format + " > graph." + c.format);
  }
}

/// The sample filters given, "focus=RE" each: by pf's option names, or (`pprof`) in the order
/// and with the names of pprof's "Active filters" (show_from last).
std::vector<std::string> FilterList(const CallGraphOptions& o, bool pprof) {
  using Filter = std::pair<const char*, const std::vector<std::string>*>;
  const Filter show_from{pprof ? "show_from" : "show-from", &o.show_from}, hide{"hide", &o.hide};
  std::vector<std::string> filters;
  for (auto [name, res] : {Filter{"focus", &o.focus}, Filter{"ignore", &o.ignore},
                           pprof ? hide : show_from, pprof ? show_from : hide}) {
    for (const std::string& re : *res) filters.push_back(std::string(name) + "=" + re);
  }
  return filters;
}

/// pprof's pruning of each text report, where no option says otherwise.
void ReportDefaults(const po::variables_map& vm, DotCommand& c) {
  CallGraphOptions& o = c.graph;
  o.pprof_selection = true;
  o.cum_order = c.report.cum;
  if (!vm.count("nodecount")) o.nodecount = c.format == "tree" ? 80 : 0;
  if (c.format == "peek") {
    if (!vm.count("node-thres")) o.node_thres = 0;
    if (!vm.count("edge-thres")) o.edge_thres = 0;
  }
  c.report.filters = FilterList(o, true);
}

void ReadGraphOptions(const po::variables_map& vm, CallGraphOptions& o) {
  o.node_thres = cli::Percent(vm, "node-thres", 0.5);
  o.edge_thres = cli::Percent(vm, "edge-thres", 0.1);
  if (vm.count("nodecount")) o.nodecount = vm["nodecount"].as<size_t>();
  o.root = cli::List(vm, "root");
  o.leaf = cli::List(vm, "leaf");
  if (vm.count("depth")) {
    o.depth = vm["depth"].as<int>();
    if (o.depth < 0) throw UsageError("--depth must be 0 or more");
    if (o.root.empty() && o.leaf.empty()) throw UsageError("--depth needs -z/--root or -l/--leaf");
  }
  o.focus = cli::List(vm, "focus");
  o.ignore = cli::List(vm, "ignore");
  o.hide = cli::List(vm, "hide");
  o.show_from = cli::List(vm, "show-from");
  if (vm.count("colormap")) o.colormap = vm["colormap"].as<std::string>();
  if (vm.count("skew")) o.skew = vm["skew"].as<double>();
  o.strip = vm.count("strip");
  o.wrap = vm.count("wrap");
  o.color_nodes_by_selftime = vm.count("color-nodes-by-selftime");
  o.show_samples = vm.count("show-samples");
  o.node_labels = cli::List(vm, "node-label");
}

/// The sample filters as given, for the error when they leave nothing: "--focus=x, --hide=y".
std::string FiltersGiven(const CallGraphOptions& o) {
  std::string filters;
  for (const std::string& f : FilterList(o, false)) {
    filters += (filters.empty() ? "--" : ", --") + f;
  }
  return filters;
}

void WriteGraph(const CallGraph& graph, const CallGraphOptions& o, const DotCommand& command) {
  std::unique_ptr<ByteSink> out = OpenOutput(command.output);
  if (command.IsReport()) {
    BufferedWriter w(*out);
    WriteTextReport(graph, command.report, w);
    w.Flush();
  } else if (command.format == "dot") {
    BufferedWriter w(*out);
    WriteDot(graph, o, w);
    w.Flush();
  } else {
    StringSink dot;
    BufferedWriter w(dot);
    WriteDot(graph, o, w);
    w.Flush();
    out->WriteAll(RenderDot(dot.data(), command.format));
  }
  out->Commit();
}

/// --list: the source listing, its files' times compared with the newest input's.
void WriteList(const StackTree& tree, const CallGraphOptions& o, const DotCommand& command) {
  SourceListOptions list = command.list;
  for (const std::string& in : command.inputs) {
    struct stat st;
    if (in != "-" && stat(in.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      list.profile_mtime = std::max<int64_t>(list.profile_mtime, st.st_mtime);
    }
  }
  std::unique_ptr<ByteSink> out = OpenOutput(command.output);
  BufferedWriter w(*out);
  WriteSourceList(tree, o, list, w);
  w.Flush();
  out->Commit();
}

/// The inputs' call graph when they are callgrind files (sniffed, or -f callgrind), summed
/// (contexts of --separate-callers merged into their functions); nullopt when they are not.
/// Callgrind files and stack inputs do not mix.
std::optional<FunctionGraph> ReadCallEdges(std::vector<std::unique_ptr<ByteSource>>& sources,
                                           const std::string& format, ReadReport* report) {
  const bool forced = FormatFromName(format) == InputFormat::kCallgrind;
  size_t callgrind = 0;
  for (const auto& src : sources) {
    callgrind += forced || SniffFormat(src->Peek()) == InputFormat::kCallgrind;
  }
  if (callgrind == 0) return std::nullopt;
  if (callgrind != sources.size()) {
    throw Error("callgrind files (call edges) and stack inputs cannot be drawn together");
  }
  std::optional<FunctionGraph> all;
  for (auto& src : sources) {
    FunctionGraph one = MergeCallerContexts(ReadCallgrind(*src, report));
    ++report->inputs;
    if (!all) {
      all.emplace(std::move(one));
    } else if (all->sample_types() != one.sample_types()) {
      throw Error(src->name(), "has other events than the callgrind files before it");
    } else {
      all->Merge(one);
    }
    src.reset();
  }
  return all;
}

}  // namespace

cli::Tool DotTool() {
  cli::Tool tool({
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
      "  pf-dot perf.txt -o graph.svg\n"
      "  pf-dot --top perf.data            # which functions cost most (pprof -top)\n"
      "  pf-dot --peek='^malloc$' cpu.pb.gz  # its callers and callees (pprof -peek)\n",
  });
  AddPruningAndFilters(tool);
  AddReports(tool);
  AddDrawing(tool);
  AddReadOptions(tool.AddGroup("Input"));
  return tool;
}

DotCommand ParseDotOptions(cli::Context& ctx) {
  cli::DefaultToPerfData(ctx);  // no FILE, stdin a terminal: ./perf.data, as perf
  const po::variables_map& vm = ctx.vm;
  DotCommand c;
  c.inputs = ctx.inputs;
  c.output = ctx.output;
  CheckTotal(vm);
  ReadFormats(vm, c);
  ReadGraphOptions(vm, c.graph);
  if (c.IsReport()) {
    ReportDefaults(vm, c);
    if (OutputIsTerminal(c.output)) c.report.width = TerminalColumns();
  }
  c.read.perf.weight_samples =
      cli::Choice(vm, "weight", {"period", "samples"}, "period") == "samples";
  c.read.perf.include_addrs = !vm.count("merge-unknown");
  c.read.perf.note_modules = true;
  // Its frames keep their addresses: a second thread would name most of them again (a tenth
  // more CPU on a 19 MB capture), for text this small (CollapseOptions).
  c.read.one_thread_text_bytes = 32 << 20;
  c.read.perf.keep_cxx_names = true;  // operator() and {lambda(int)#1} stay whole
  c.processes = vm.count("processes");
  return c;
}

// The graph of folded files drawn from their text, read once for the names and once for
// each pass (BuildCallGraph of texts), as gprof2dot reads them: a stack tree, a node for
// every prefix, made pf-dot of table.sh's 300k stacks in random order take 307 MB and 1.6 s;
// a list of the distinct stacks (StackList) 63 MB and 0.65 s; the text 30 MB and 1.1 s
// (gprof2dot -f collapse: 132 MB, 70 s). False, having written nothing, where the tree path
// has more to say: other input or options (--list, --value, a filter of pf-collapse's),
// decimals, a malformed line, a differential profile, units that disagree, nothing to draw,
// sums that saturate.
bool GraphWithoutTree(const DotCommand& command) {
  const CollapseOptions& read = command.read;
  if (command.inputs.empty() || command.format == "list" || !read.value.empty() ||
      !read.filter.empty() || (read.format != "auto" && read.format != "folded")) {
    return false;
  }
  std::vector<std::unique_ptr<ByteSource>> sources;
  std::vector<std::string_view> texts;
  bool release = true;
  for (const std::string& path : command.inputs) {
    if (path == "-") return false;
    sources.push_back(OpenInput(path));
    if (!IsMappedFolded(*sources.back())) return false;
    texts.push_back(sources.back()->Next());
    release = release && sources.back()->releasable();
  }
  Interner names;
  WeightUnit unit = WeightUnit::kUnspecified;
  if (!NameFoldedTexts(texts, release, &names, &unit)) return false;
  CallGraphOptions o = command.graph;
  o.skip_process = false;  // (as the tree path for folded text)
  CallGraph graph = BuildCallGraph(texts, names, unit, release, o);
  if (graph.total == 0 || graph.kept_weight == 0 || graph.saturated) return false;
  WriteGraph(graph, o, command);
  return true;
}

void RunDotCommand(const DotCommand& command, const cli::Tool& tool) {
  TuneHeap();  // the stack tree, the call graph's tables and their scratch grow and are freed
  // Read and build everything before writing a byte: a failure leaves no output.
  if (GraphWithoutTree(command)) return;
  ReadReport report;
  std::vector<std::unique_ptr<ByteSource>> sources;
  for (const std::string& p : command.inputs.empty() ? std::vector<std::string>{"-"}
                                                     : command.inputs) {
    sources.push_back(OpenInput(p));
  }
  // callgrind's call edges are drawn as they are (no stacks to fold).
  if (std::optional<FunctionGraph> edges = ReadCallEdges(sources, command.read.format, &report)) {
    if (command.format == "list") {
      throw UsageError("--list needs stacks with source lines; a callgrind file has call edges "
                       "(callgrind_annotate lists its source)");
    }
    Tell(tool, report);
    CallGraph graph = BuildFunctionCallGraph(*edges, command.graph, command.read.value);
    if (graph.total == 0) tool.Warn("the callgrind input holds no cost");
    if (graph.saturated) tool.Warn(SaturationWarning(graph.saturated));
    WriteGraph(graph, command.graph, command);
    return;
  }
  StackTree tree = CollapseSourcesToTree(sources, command.read, &report);
  Tell(tool, report);
  // Stacks folded from perf samples start with the process name; gprof2dot's call graph
  // has no process nodes. Folded input keeps its first frame: it may be a real function;
  // so do pprof's and the other profilers' stacks, which start at a function.
  CallGraphOptions o = command.graph;
  o.skip_process = report.perf_samples > 0 && report.perf_samples == report.samples &&
                   report.folded_lines == 0 && !command.processes;
  if (command.format == "list") return WriteList(tree, o, command);
  CallGraph graph = BuildCallGraph(tree, o);
  if (graph.total == 0) tool.Warn(EmptyResultReason(report, ""));
  if (graph.saturated) tool.Warn(SaturationWarning(graph.saturated));
  if (graph.total > 0 && graph.kept_weight == 0) {  // as -z/-l that match nothing: an error
    NoteEmptyResult(tree, &report);
    throw Error(EmptyResultReason(report, FiltersGiven(o)));
  }
  WriteGraph(graph, o, command);
}

}  // namespace pf
