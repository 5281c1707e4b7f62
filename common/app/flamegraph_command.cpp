// pf-flamegraph's command line: flamegraph.pl's options, in its groups (text, geometry,
// colours, output), with the output format from --format or -o's suffix. The run reads the
// inputs into a layout (a graph, or a chart with --flamechart) and hands it to the SVG writer
// or to Cairo.

#include "app/flamegraph_command.h"

#include <cstdlib>

#include "app/command_line.h"
#include "app/files.h"
#include "base/error.h"
#include "base/heap.h"
#include "render/cairo_render.h"
#include "render/html_page.h"
#include "render/palette.h"
#include "render/svg_writer.h"

namespace pf {

namespace po = cli::po;

namespace {

void AddTextAndGeometry(cli::Tool& tool) {
  tool.AddGroup("Text").add_options()
      ("title", po::value<std::string>()->value_name("TEXT"),
       "title (default \"Flame Graph\", \"Icicle Graph\", \"Flame Chart\")")
      ("subtitle", po::value<std::string>()->value_name("TEXT"), "second title line")
      ("countname", po::value<std::string>()->value_name("TEXT"),
       "what the counts are (default: the profile's unit, samples for folded text)")
      ("nametype", po::value<std::string>()->value_name("TEXT"),
       "what the names are, in the details line (default Function:)")
      ("notes", po::value<std::string>()->value_name("TEXT"),
       "notes kept in the SVG (in the HTML page: its description)")
      ("fonttype", po::value<std::string>()->value_name("FONT"), "font family (default Verdana)")
      ("fontsize", po::value<double>()->value_name("N"), "font size (default 12)")
      ("fontwidth", po::value<double>()->value_name("N"),
       "accepted for flamegraph.pl scripts; text is measured with the font's metrics");
  tool.AddGroup("Geometry").add_options()
      ("width", po::value<double>()->value_name("PX"), "image width (default 1200)")
      ("height", po::value<double>()->value_name("PX"), "frame height (default 16)")
      ("minwidth", po::value<std::string>()->value_name("PX|PCT%"),
       "omit frames narrower than PX pixels (default 0.1) or PCT percent of the total")
      ("inverted,i", "icicle graph: the root at the top")
      ("reverse", "reverse each stack (leaf first) before merging")
      ("flamechart", "keep the input order (time on the x axis), merge only neighbours")
      ("base", po::value<std::vector<std::string>>()->value_name("FUNC"),
       "draw only stacks through FUNC, re-rooted at its innermost occurrence; repeatable")
      ("factor", po::value<double>()->value_name("X"), "multiply the counts shown by X")
      ("total", po::value<uint64_t>()->value_name("N"),
       "the count that is 100% (when larger than the real total)");
}

void AddColoursAndOutput(cli::Tool& tool) {
  tool.AddGroup("Colours").add_options()
      ("colors,c", po::value<std::string>()->value_name("PALETTE"),
       "hot (default), mem, io, wakeup, chain, java, js, perl, python, rust, red, green, blue, "
       "aqua, yellow, purple, orange")
      ("bgcolors", po::value<std::string>()->value_name("COLOR"),
       "background: yellow, blue, green, grey or #rrggbb")
      ("hash", "colour by a hash of the name (similar names, similar colours)")
      ("random", "random colours (not reproducible)")
      ("cp", "consistent palette: reuse and update colours in ./palette.map")
      ("palette-file", po::value<std::string>()->value_name("FILE"),
       "like --cp, with the palette kept in FILE")
      ("negate", "swap red and blue in a differential graph")
      ("search-color", po::value<std::string>()->value_name("COLOR"),
       "colour of search matches (default rgb(230,0,230))");
  tool.AddGroup("Output").add_options()
      ("format", po::value<std::string>()->value_name("FORMAT"),
       "svg (default), png, pdf or html (a page with a function table, callers and callees); "
       "also taken from -o NAME.png / NAME.pdf / NAME.html")
      ("nameattr", po::value<std::string>()->value_name("FILE"),
       "SVG attributes per function (links, ids, classes, titles), as flamegraph.pl reads them")
      ("encoding", po::value<std::string>()->value_name("NAME"),
       "the encoding named in the SVG's XML declaration (the bytes are UTF-8)");
}

double PositiveNumber(const po::variables_map& vm, const char* name, double def) {
  if (!vm.count(name)) return def;
  double v = vm[name].as<double>();
  // (an upper bound too: 1e300 pixels would print coordinates no SVG reader takes)
  if (!(v > 0) || v > 1e6) {
    throw UsageError(std::string("--") + name + " must be a positive number up to 1000000");
  }
  return v;
}

std::string Str(const po::variables_map& vm, const char* name, const char* def) {
  return cli::Value<std::string>(vm, name, def);
}

/// The text options, the sizes and the stack shaping (--minwidth to --total).
void ReadTextAndGeometry(const po::variables_map& vm, FlameOptions& o) {
  o.title = Str(vm, "title", "");
  o.subtitle = Str(vm, "subtitle", "");
  o.countname = Str(vm, "countname", "");
  o.nametype = Str(vm, "nametype", "Function:");
  o.notes = Str(vm, "notes", "");
  o.fonttype = Str(vm, "fonttype", "Verdana");
  o.fontsize = PositiveNumber(vm, "fontsize", 12);
  o.fontwidth = PositiveNumber(vm, "fontwidth", 0.59);
  o.width = PositiveNumber(vm, "width", 1200);
  o.frameheight = PositiveNumber(vm, "height", 16);
  if (o.width < 40) throw UsageError("--width must be at least 40");
  std::string mw = Str(vm, "minwidth", "0.1");
  o.minwidth_percent = !mw.empty() && mw.back() == '%';
  if (o.minwidth_percent) mw.pop_back();
  char* end = nullptr;
  o.minwidth = std::strtod(mw.c_str(), &end);
  if (mw.empty() || *end != '\0' || !(o.minwidth >= 0)) {
    throw UsageError("--minwidth must be a number of pixels or a percentage, like 0.1 or 0.01%");
  }
  o.inverted = vm.count("inverted");
  o.reverse = vm.count("reverse");
  o.flamechart = vm.count("flamechart");
  if (o.flamechart && o.reverse) throw UsageError("--flamechart and --reverse do not combine");
  o.base = cli::List(vm, "base");
  if (o.flamechart && !o.base.empty()) throw UsageError("--flamechart and --base do not combine");
  o.factor = PositiveNumber(vm, "factor", 1);
  if (vm.count("total")) o.total = vm["total"].as<uint64_t>();
}

/// The colours, and what the SVG carries besides the frames.
void ReadColoursAndOutput(const po::variables_map& vm, FlameOptions& o) {
  o.palette = Str(vm, "colors", "hot");
  if (!IsKnownPalette(o.palette)) throw UsageError("--colors: unknown palette '" + o.palette + "'");
  o.bgcolors = Str(vm, "bgcolors", "");
  if (vm.count("hash") && vm.count("random")) {
    throw UsageError("--hash and --random exclude each other");
  }
  o.color_mode = vm.count("hash") ? 1 : vm.count("random") ? 2 : 0;
  if (vm.count("cp")) o.palette_file = "palette.map";
  if (vm.count("palette-file")) o.palette_file = vm["palette-file"].as<std::string>();
  o.negate = vm.count("negate");
  o.search_color = Str(vm, "search-color", "rgb(230,0,230)");
  o.nameattr_file = Str(vm, "nameattr", "");
  o.encoding = Str(vm, "encoding", "");
  if (vm.count("encoding") && !IsXmlEncodingName(o.encoding)) {
    throw UsageError("--encoding: '" + o.encoding + "' is not an encoding name (like UTF-8)");
  }
}

/// The options of the SVG that the HTML page has no use for: a usage error, not a silent no.
void RefuseForHtml(const po::variables_map& vm) {
  static const char* const kWhy[][2] = {
      {"flamechart", "draws a flame graph, not a chart in input order"},
      {"nameattr", "has no SVG attributes to add"},
      {"encoding", "is UTF-8 and has no XML declaration"},
  };
  for (const auto& [option, why] : kWhy) {
    if (vm.count(option)) {
      throw UsageError(std::string("--") + option + " does not apply to --format=html (the page " +
                       why + ")");
    }
  }
}

}  // namespace

cli::Tool FlamegraphTool() {
  cli::Tool tool({
      "pf-flamegraph",
      "[OPTIONS] [FILE...]",
      "Draw folded stacks (`a;b;c COUNT`, as pf-collapse and stackcollapse-*.pl write them) as\n"
      "an interactive SVG flame graph: hover for details, click to zoom, Ctrl-F to search\n"
      "with a regular expression. Several inputs are merged; two count columns (as pf-diff\n"
      "and difffolded.pl write) make a differential graph. PNG and PDF are drawn with Cairo.\n"
      "--format=html writes one page to explore the whole profile: the flame graph, a sortable\n"
      "table of every function's self and total, and the callers and callees of the one\n"
      "selected. The options are flamegraph.pl's.",
      "  perf script | pf-collapse | pf-flamegraph > cpu.svg\n"
      "  pf-flamegraph --title='Build' --colors=java --hash in.folded -o out.svg\n"
      "  pf-flamegraph --inverted in.folded > icicle.svg\n"
      "  pf-flamegraph -o cpu.png in.folded                 # PNG (from the name)\n"
      "  pf-flamegraph -o cpu.html in.folded                # the page (from the name)\n"
      "  pf-diff before.folded after.folded | pf-flamegraph > diff.svg\n",
  });
  AddTextAndGeometry(tool);
  AddColoursAndOutput(tool);
  AddReadOptions(tool.AddGroup("Input"));
  return tool;
}

FlamegraphCommand ParseFlamegraphOptions(cli::Context& ctx) {
  FlamegraphCommand c{ctx.inputs, ctx.output, "", {}, {}};
  ReadTextAndGeometry(ctx.vm, c.options);
  ReadColoursAndOutput(ctx.vm, c.options);
  ReadReadOptions(ctx.vm, &c.read);
  std::string given = Str(ctx.vm, "format", "");  // --format= is no choice: the suffix decides
  c.format = cli::OutputFormat(given.empty() ? std::nullopt : std::optional(given), c.output,
                               {{".svg", "svg"},
                                {".png", "png"},
                                {".pdf", "pdf"},
                                {".html", "html"},
                                {".htm", "html"}},
                               "svg");
  RefuseImageForTerminal(c.format, c.output);
  if (c.format == "html") RefuseForHtml(ctx.vm);
  return c;
}

namespace {

// --format=html: the page needs every stack (its totals are exact), so the inputs always
// become a stack tree, never the pruned frames of a streamed graph.
void RunHtml(const FlamegraphCommand& command, const cli::Tool& tool) {
  ReadReport report;
  StackTree profile = CollapseFilesToTree(command.inputs, command.read, &report);
  Tell(tool, report);
  FlameOptions o = command.options;
  o.diff_names = DiffNames(report.pf_comments);
  StackTree view, storage;
  const StackTree& tree = FlameTree(profile, o, &view, &storage, &report);
  std::vector<std::string> warnings;
  HtmlPage page = BuildHtmlPage(tree, o, &warnings);
  for (const std::string& w : warnings) tool.Warn(w);
  std::unique_ptr<ByteSink> out = OpenOutput(command.output);
  BufferedWriter w(*out);
  WriteHtmlPage(page, w);
  w.Flush();
  out->Commit();
}

}  // namespace

void RunFlamegraphCommand(const FlamegraphCommand& command, const cli::Tool& tool) {
  TuneHeap();
  const FlameOptions& o = command.options;
  // Read and lay out everything before writing a byte: a failure leaves no output.
  std::vector<std::string> warnings;
  if (command.format == "html") {
    RunHtml(command, tool);
    return;
  }
  FlameLayout layout;
  if (o.flamechart) {
    layout = BuildFlameChartFromFiles(command.inputs, o, &warnings, command.read);
  } else {
    ReadReport report;
    layout = BuildFlameGraphFromFiles(command.inputs, o, &warnings, &report, command.read);
    Tell(tool, report);
  }
  for (const std::string& w : warnings) tool.Warn(w);

  std::unique_ptr<ByteSink> out = OpenOutput(command.output);
  if (command.format == "svg") {
    BufferedWriter w(*out);
    WriteSvg(layout, o, w);
    w.Flush();
  } else {
    RenderImage(layout, command.format == "png" ? ImageFormat::kPng : ImageFormat::kPdf, *out);
  }
  out->Commit();
}

}  // namespace pf
