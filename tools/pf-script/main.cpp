// pf-script: print a recording (pf-record stream or perf.data) as `perf script` text.
#include <charconv>

#include "base/error.h"
#include "cli/cli.h"
#include "app/files.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  pf::cli::Tool tool({
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
  tool.AddGroup("Selection (as perf script)").add_options()
      ("comms,c", po::value<std::vector<std::string>>()->value_name("COMMS"),
       "only samples of threads named one of COMM[,COMM...]")
      ("pid", po::value<std::vector<std::string>>()->value_name("PIDS"),
       "only samples of these processes: PID[,PID...]")
      ("tid", po::value<std::vector<std::string>>()->value_name("TIDS"),
       "only samples of these threads: TID[,TID...]")
      ("cpu,C", po::value<std::string>()->value_name("CPUS"),
       "only samples taken on these CPUs, as in 0,2-3")
      ("time", po::value<std::string>()->value_name("RANGES"),
       "only samples in START,END (seconds; either may be empty; ranges separated by spaces), "
       "or in slices such as 10%/2 (the second tenth) or 0%-10%,30%-40%")
      ("symbols,S", po::value<std::vector<std::string>>()->value_name("SYMS"),
       "only samples in these functions: SYM[,SYM...] (or 0xADDR of a function or sample)");
  tool.AddGroup("DWARF call graphs (--call-graph dwarf recordings)").add_options()
      ("inline", "show functions inlined at each unwound frame, from DWARF (the default)")
      ("no-inline", "do not show inlined functions (faster on large programs)")
      ("unwinder", po::value<std::string>()->value_name("U"),
       "table (default): pf's compiled CFI tables, libdw where they cannot express a rule; "
       "libdw: elfutils' unwinder alone (slower)");

  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::cli::DefaultToPerfData(ctx);  // no FILE, stdin a terminal: ./perf.data, as perf
    const po::variables_map& vm = ctx.vm;
    pf::ScriptOptions o;
    if (vm.count("fields")) {
      o.fields = pf::cli::SplitList(vm["fields"].as<std::vector<std::string>>());
      pf::CheckFieldNames(o.fields);
    }
    o.select.comms = pf::cli::JoinedList(vm, "comms");
    o.select.pids = pf::cli::JoinedList(vm, "pid");
    o.select.tids = pf::cli::JoinedList(vm, "tid");
    if (vm.count("cpu")) o.select.cpus = vm["cpu"].as<std::string>();
    if (vm.count("time")) o.select.time = vm["time"].as<std::string>();
    o.select.reltime = vm.count("reltime");
    pf::SampleSelection check(o.select);  // a bad list fails before the recording is read
    if (vm.count("symbols")) {
      o.symbols = pf::cli::SplitList(vm["symbols"].as<std::vector<std::string>>());
    }
    if (vm.count("max-stack")) {
      // Digits only: Boost reads "-1" as an unsigned 4294967295; perf refuses it.
      const std::string& n = vm["max-stack"].as<std::string>();
      auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), o.max_stack);
      if (n.empty() || ec != std::errc() || end != n.data() + n.size()) {
        throw pf::UsageError("--max-stack expects a number of frames, not '" + n + "'");
      }
    }
    o.ns = vm.count("ns");
    o.demangle = !vm.count("no-demangle");
    o.hide_call_graph = vm.count("hide-call-graph");
    o.show_mmap_events = vm.count("show-mmap-events");
    o.show_task_events = vm.count("show-task-events");
    o.header = vm.count("header");
    if (vm.count("symfs")) o.symfs = vm["symfs"].as<std::string>();
    if (vm.count("inline") && vm.count("no-inline")) {
      throw pf::UsageError("--inline and --no-inline exclude each other");
    }
    o.inline_frames = !vm.count("no-inline");
    if (vm.count("unwinder")) {
      std::string u = vm["unwinder"].as<std::string>();
      if (u != "table" && u != "libdw") {
        throw pf::UsageError("--unwinder must be table or libdw, not '" + u + "'");
      }
      o.unwind_method = u == "libdw" ? pf::UnwindMethod::kLibdw : pf::UnwindMethod::kTable;
    }
    std::string path = vm.count("input") ? vm["input"].as<std::string>() : "-";
    if (!ctx.inputs.empty()) {
      if (ctx.inputs.size() > 1 || vm.count("input")) {
        throw pf::UsageError("one recording at a time");
      }
      path = ctx.inputs[0];
    }
    std::unique_ptr<pf::ByteSink> out = pf::OpenOutput(ctx.output);
    pf::ScriptReport report;
    pf::RunScript(path, o, *out, &report);
    if (report.truncated) {
      tool.Warn(report.truncated_warning);
    }
    if (!report.skipped.empty()) tool.Warn(report.skipped);
    for (const std::string& w : report.warnings) tool.Warn(w);
  });
}
