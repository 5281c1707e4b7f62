// pf-script's command line: perf script's options (-F fields, the event lines, --header,
// --symfs, --ns, --reltime, -G, --max-stack, --no-demangle), its sample selection
// (command_line.h) and the DWARF options of --call-graph=dwarf recordings. Every option is
// checked before the recording is opened, so a mistake costs no read.

#include "app/script_command.h"

#include <charconv>

#include "app/command_line.h"
#include "app/files.h"
#include "base/error.h"

namespace pf {

namespace po = cli::po;

cli::Tool ScriptTool() {
  cli::Tool tool({
      "pf-script",
      "[OPTIONS] [FILE]",
      "Print the samples of a recording as `perf script` prints them: a header line per\n"
      "sample (comm, tid, time, period, event), then its call chain, one frame a line\n"
      "(address, symbol+offset, dso). Reads pf-record streams and perf.data files written\n"
      "by `perf record` (file or pipe format), from FILE or standard input.",
      "  pf-record -g -- ./prog > run.pfs; pf-script run.pfs | less\n"
      "  perf record -g -o perf.data -- ./prog; pf-script perf.data\n"
      "  pf-script -F comm,pid,tid,time,ip,sym perf.data\n"
      "  pf-script perf.data | pf-collapse | pf-flamegraph > cpu.svg\n",
  });
  tool.AddGroup("Output").add_options()
      ("fields,F", po::value<std::vector<std::string>>()->value_name("FIELDS"),
       "fields to print, as perf script -F: comm,pid,tid,cpu,time,period,event,ip,sym,"
       "symoff,dso,srcline; +FIELD / -FIELD adjust the default")
      ("show-mmap-events", "also print MMAP/MMAP2 records")
      ("show-task-events", "also print COMM/FORK/EXIT records")
      ("header", "print the recording's header first")
      ("symfs", po::value<std::string>()->value_name("DIR"),
       "look for binaries and debug files under DIR (copied from the recording machine)")
      ("input,i", po::value<std::string>()->value_name("FILE"), "the recording (as perf's -i)")
      ("ns", "print times to the nanosecond")
      ("reltime", "print times from the first sample's (and read --time so)")
      ("hide-call-graph,G", "print each sample's own symbol on its line, without the call chain")
      ("max-stack", po::value<std::string>()->value_name("N"),
       "resolve at most N frames of each call chain (default 127, perf's)")
      ("no-demangle", "print C++ and Rust symbols as they are in the binary");
  po::options_description& selection = tool.AddGroup("Selection (as perf script)");
  AddSelectionOptions(selection, SelectionStyle::kPerfScript);
  selection.add_options()
      ("symbols,S", po::value<std::vector<std::string>>()->value_name("SYMS"),
       "only samples in these functions: SYM[,SYM...] (or 0xADDR of a function or sample)");
  tool.AddGroup("DWARF call graphs (--call-graph dwarf recordings)").add_options()
      ("inline", "show functions inlined at each unwound frame, from DWARF (the default)")
      ("no-inline", "do not show inlined functions (faster on large programs)")
      ("unwinder", po::value<std::string>()->value_name("U"),
       "table (default): pf's compiled CFI tables, libdw where they cannot express a rule; "
       "libdw: elfutils' unwinder alone (slower)");
  return tool;
}

namespace {

/// --max-stack: digits only (Boost reads "-1" as an unsigned 4294967295; perf refuses it).
size_t MaxStack(const std::string& n) {
  size_t v = 0;
  auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
  if (n.empty() || ec != std::errc() || end != n.data() + n.size()) {
    throw UsageError("--max-stack expects a number of frames, not '" + n + "'");
  }
  return v;
}

/// FILE, or -i FILE, or standard input; one recording at a time.
std::string Recording(const cli::Context& ctx) {
  std::string path = cli::Value<std::string>(ctx.vm, "input", "-");
  if (ctx.inputs.empty()) return path;
  if (ctx.inputs.size() > 1 || ctx.vm.count("input")) {
    throw UsageError("one recording at a time");
  }
  return ctx.inputs[0];
}

}  // namespace

ScriptCommand ParseScriptOptions(cli::Context& ctx) {
  cli::DefaultToPerfData(ctx);  // no FILE, stdin a terminal: ./perf.data, as perf
  const po::variables_map& vm = ctx.vm;
  ScriptCommand c{"-", ctx.output, {}};
  ScriptOptions& o = c.options;
  if (vm.count("fields")) {
    o.fields = cli::SplitList(vm["fields"].as<std::vector<std::string>>());
    CheckFieldNames(o.fields);
  }
  o.select = ReadSelection(vm, SelectionStyle::kPerfScript);
  o.select.reltime = vm.count("reltime");
  SampleSelection check(o.select);  // a bad list fails before the recording is read
  o.symbols = cli::SplitList(cli::List(vm, "symbols"));
  if (vm.count("max-stack")) o.max_stack = MaxStack(vm["max-stack"].as<std::string>());
  o.ns = vm.count("ns");
  o.demangle = !vm.count("no-demangle");
  o.hide_call_graph = vm.count("hide-call-graph");
  o.show_mmap_events = vm.count("show-mmap-events");
  o.show_task_events = vm.count("show-task-events");
  o.header = vm.count("header");
  if (vm.count("symfs")) o.symfs = vm["symfs"].as<std::string>();
  o.inline_frames = cli::InlineFrames(vm);
  if (vm.count("unwinder")) {
    bool libdw = cli::Choice(vm, "unwinder", {"table", "libdw"}, "table") == "libdw";
    o.unwind_method = libdw ? UnwindMethod::kLibdw : UnwindMethod::kTable;
  }
  c.recording = Recording(ctx);
  return c;
}

void RunScriptCommand(const ScriptCommand& command, const cli::Tool& tool) {
  std::unique_ptr<ByteSink> out = OpenOutput(command.output);
  ScriptReport report;
  RunScript(command.recording, command.options, *out, &report);
  if (report.truncated) tool.Warn(report.truncated_warning);
  if (!report.skipped.empty()) tool.Warn(report.skipped);
  for (const std::string& w : report.warnings) tool.Warn(w);
}

}  // namespace pf
