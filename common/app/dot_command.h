#pragma once
// pf-dot's command: its options, read from the command line, and its run.

#include <string>
#include <vector>

#include "callgraph/call_graph.h"
#include "callgraph/source_list.h"
#include "callgraph/text_report.h"
#include "cli/cli.h"
#include "collapse/collapse.h"

namespace pf {

/// What pf-dot's command line asks for.
struct DotCommand {
  std::vector<std::string> inputs;  // none: standard input
  std::string output;               // "-": standard output
  std::string format;  // dot, or svg, png or pdf laid out by Graphviz's library; top, tree, peek
  bool processes = false;           // --processes: keep perf stacks' comm as their root
  CollapseOptions read;             // how the inputs are read
  CallGraphOptions graph;           // what the graph keeps and how it is drawn
  TextReportOptions report;         // top, tree, peek: what the report shows
  SourceListOptions list;           // list: the functions and where their source is
  bool IsReport() const {
    return format == "top" || format == "tree" || format == "peek" || format == "list";
  }
};

/// The tool, with pf-dot's --help text and options (gprof2dot's names, pprof's filters).
cli::Tool DotTool();

/// Reads the parsed command line (./perf.data when no FILE and stdin is a terminal); throws
/// pf::UsageError for values out of range, options that do not go together, or a format
/// this build cannot write.
DotCommand ParseDotOptions(cli::Context& ctx);

/// Reads the inputs into a stack tree, builds the call graph and writes it (DOT, or rendered
/// by Graphviz): a failure leaves no output. Notices and warnings go through `tool`.
void RunDotCommand(const DotCommand& command, const cli::Tool& tool);

}  // namespace pf
