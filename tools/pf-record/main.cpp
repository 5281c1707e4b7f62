// pf-record: sample a command, processes or CPUs and write the samples as a perf.data pipe
// stream (readable by pf-script, pf-collapse, and perf script -i -).
#include <charconv>
#include <cstdio>

#include "base/error.h"
#include "cli/cli.h"
#include "io/output.h"
#include "perf/call_graph_option.h"
#include "base/cpu_list.h"
#include "perf/recorder.h"

namespace po = boost::program_options;

namespace {

std::vector<int> Ids(const po::variables_map& vm, const char* name, const char* what) {
  std::vector<int> ids;
  if (!vm.count(name)) return ids;
  for (const std::string& s : pf::cli::SplitList(vm[name].as<std::vector<std::string>>())) {
    int v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v <= 0) {
      throw pf::UsageError(std::string("-") + name[0] + ": '" + s + "' is not a " + what);
    }
    ids.push_back(v);
  }
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  pf::cli::Tool tool({
      "pf-record",
      "[OPTIONS] (-p PID[,PID...] | -t TID[,TID...] | -a | -C CPUS) [-- COMMAND [ARGS...]]",
      "Sample the CPU usage of a command, of running processes or threads, or of whole CPUs,\n"
      "with the kernel's perf events and their call graphs (frame pointers by default), and\n"
      "write the samples as a perf.data pipe stream to standard output, -o FILE, or, when\n"
      "standard output is a terminal, ./perf.data (as perf record does). The stream is written as the samples arrive, so the next\n"
      "tool of a pipeline works while the recording runs; pf-script, pf-collapse and\n"
      "`perf script -i -` read it. Recording ends when the command exits, when every -p/-t\n"
      "target has exited, after -d SECONDS, or on Ctrl-C, always with a complete stream.\n"
      "With -p/-t and a command, the targets are recorded while the command runs.",
      "  pf-record -- ./server --bench > run.pfs               # a command, with call graphs\n"
      "  pf-record -p 1234 -d 10 | pf-collapse | pf-flamegraph > cpu.svg\n"
      "  pf-record -g -p 1234 -- sleep 10                       # ./perf.data, 1234 for 10 s\n"
      "  pf-record -a -d 5 -o all.pfs                           # every CPU (needs privileges)\n"
      "  pf-record -- make -j2 | perf script -i - | less\n"
      "  pf-record -F 99 -g --call-graph dwarf -- ./prog | pf-collapse   # no frame pointers\n",
  });
  tool.AddGroup("Targets (one kind; the command follows --)").add_options()
      ("pid,p", po::value<std::vector<std::string>>()->value_name("PID[,PID...]"),
       "processes: all their threads, and the threads and children they create")
      ("tid,t", po::value<std::vector<std::string>>()->value_name("TID[,TID...]"),
       "threads, and the threads and children they create")
      ("all-cpus,a", "every process on every CPU (with a command: while it runs)")
      ("cpu,C", po::value<std::string>()->value_name("CPUS"),
       "only these CPUs, as in 0,2-3 (alone: every process on them)");
  tool.AddGroup("Sampling").add_options()
      ("freq,F", po::value<uint64_t>()->value_name("HZ"),
       "samples per second (default 99)")
      ("count,c", po::value<uint64_t>()->value_name("PERIOD"),
       "a sample every PERIOD events instead of a frequency")
      ("event,e", po::value<std::vector<std::string>>()->value_name("EVENT"),
       "cpu-clock (default), task-clock, page-faults, context-switches, cycles, instructions, "
       "...; modifiers :u :k :p; repeatable")
      (",g", "record call graphs: frame pointers unless --call-graph chose a mode (call "
       "graphs are recorded by default; -g is accepted as perf record has it)")
      ("call-graph", po::value<std::string>()->value_name("MODE"),
       "fp (the default): call chains from frame pointers; dwarf[,STACK_BYTES]: unwind a copy "
       "of each sample's user stack (8192 bytes by default) with the binaries' DWARF CFI, for "
       "code built without frame pointers; none: the sampled function only")
      ("no-call-graph", "the same as --call-graph=none")
      ("raw-stacks", "with --call-graph=dwarf: write the registers and stack copies (as perf "
       "record does) instead of unwinding while recording")
      ("user-only", "sample user space only")
      ("kernel-only", "sample the kernel only")
      ("duration,d", po::value<double>()->value_name("SECONDS"),
       "stop after SECONDS (a command still running is then sent SIGTERM)");
  tool.AddGroup("Output").add_options()
      ("no-symbols", "do not add the symbol records at the end of the stream");

  int status = 0;
  int rc = tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    const po::variables_map& vm = ctx.vm;
    pf::RecordOptions o;
    o.command = ctx.inputs;
    o.pids = Ids(vm, "pid", "process id");
    o.tids = Ids(vm, "tid", "thread id");
    o.system_wide = vm.count("all-cpus");
    if (vm.count("cpu")) o.cpus = pf::ParseCpuList(vm["cpu"].as<std::string>());
    if (vm.count("freq")) o.frequency = vm["freq"].as<uint64_t>();
    if (vm.count("count")) {
      o.period = vm["count"].as<uint64_t>();
      if (o.period == 0) throw pf::UsageError("-c must be at least 1");
      if (vm.count("freq")) throw pf::UsageError("-F and -c exclude each other");
    }
    if (vm.count("event")) o.events = pf::cli::SplitList(vm["event"].as<std::vector<std::string>>());
    std::vector<pf::CallGraphOption> call_graph;
    for (const po::option& opt : ctx.parsed->options) {
      if (opt.string_key == "-g") call_graph.push_back({pf::CallGraphOption::kG, ""});
      if (opt.string_key == "no-call-graph") call_graph.push_back({pf::CallGraphOption::kNone, ""});
      if (opt.string_key == "call-graph" && !opt.value.empty()) {
        call_graph.push_back({pf::CallGraphOption::kMode, opt.value.back()});
      }
    }
    pf::ApplyCallGraphOptions(call_graph, &o);
    o.raw_stacks = vm.count("raw-stacks");
    if (o.raw_stacks && o.call_graph != pf::CallGraph::kDwarf) {
      throw pf::UsageError("--raw-stacks goes with --call-graph=dwarf");
    }
    o.user_only = vm.count("user-only");
    o.kernel_only = vm.count("kernel-only");
    if (vm.count("duration")) {
      o.duration = vm["duration"].as<double>();
      if (!(o.duration > 0)) throw pf::UsageError("-d must be a positive number of seconds");
    }
    o.symbols = !vm.count("no-symbols");
    // perf record's default: no -o and standard output a terminal writes ./perf.data.
    const bool default_file = !vm.count("output") && pf::OutputIsTerminal("-");
    const std::string output = default_file ? "perf.data" : ctx.output;
    if (pf::OutputIsTerminal(output)) {
      throw pf::UsageError("pf-record writes binary data; use -o FILE or a pipe");
    }
    o.command_stdout_to_stderr = output == "-";
    o.argv.assign(argv, argv + argc);
    o.notice = [&tool](const std::string& m) { tool.Notice(m); };

    pf::RecordReport report;
    // Opened once the options are checked, so a mistake leaves perf.data where it is. A new
    // file is written in place: a recording cut short is readable up to its last record.
    pf::RunRecord(
        o,
        [&] {
          if (default_file) {
            tool.Notice(pf::KeepAsOld(output)
                            ? "writing perf.data; the previous one is now perf.data.old"
                            : "writing perf.data");
          }
          return pf::OpenOutput(output, {.new_file_in_place = true});
        },
        &report);
    if (report.corrupt) tool.Warn("a ring buffer held a malformed record; the rest of it was skipped");
    if (!ctx.quiet) std::fprintf(stderr, "pf-record: %s\n", report.Summary().c_str());
    if (report.truncated > 0 && report.unwound > 0) {
      tool.Notice(std::to_string(report.truncated) + " of " + std::to_string(report.unwound) +
                  " stacks were deeper than the " + std::to_string(o.stack_bytes) +
                  "-byte copy (their root is [unknown]); a larger copy, as in "
                  "--call-graph=dwarf," + std::to_string(std::min<uint64_t>(
                                              2 * o.stack_bytes, pf::kMaxStackBytes)) +
                  ", reaches further");
    }
    if (report.command_ran) status = report.exit_status;
  });
  return rc != 0 ? rc : status;
}
