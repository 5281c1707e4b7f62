// pf-record's command line: perf record's targets (-p, -t, -a, -C, a command after --), its
// sampling options (-F, -c, -e, -g and --call-graph in the order given) and the output,
// which defaults to ./perf.data when standard output is a terminal. The run records, then
// says what was recorded; the exit status is the recorded command's.

#include "app/record_command.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "base/cpu_list.h"
#include "base/error.h"
#include "io/output.h"
#include "perf/call_graph_option.h"
#include "perf/events.h"

namespace pf {

namespace po = cli::po;

namespace {

void AddTargetsAndSampling(cli::Tool& tool) {
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
       "...; modifiers :u :k :p; a tracepoint SYSTEM:NAME (sched:sched_switch), sampled at "
       "every hit with its fields; repeatable")
      ("list-events,l", "list the events that can be recorded here (hardware, software, "
       "tracepoints), as perf list, and exit")
      (",g", "record call graphs: frame pointers unless --call-graph chose a mode (call "
       "graphs are recorded by default; -g is accepted as perf record has it)")
      ("call-graph", po::value<std::string>()->value_name("MODE"),
       "fp (the default): call chains from frame pointers; dwarf[,STACK_BYTES]: unwind a copy "
       "of each sample's user stack (8192 bytes by default) with the binaries' DWARF CFI, for "
       "code built without frame pointers; none: the sampled function only")
      ("no-call-graph", "the same as --call-graph=none")
      ("raw-stacks", "with --call-graph=dwarf: write the registers and stack copies (as perf "
       "record does) instead of unwinding while recording")
      ("off-cpu", "also record where threads wait: each time a thread leaves the CPU, its call "
       "chain and the time until it runs again, as an offcpu-time sample weighted in "
       "nanoseconds (as perf record --off-cpu); see OFF-CPU in pf-record(1)")
      ("user-only", "sample user space only")
      ("kernel-only", "sample the kernel only")
      ("stat", "count instead of sampling, and print perf stat's table on standard error (or "
       "-o FILE) at the end: task-clock, context switches, CPU migrations, page faults and the "
       "hardware events, or -e's")
      ("interval-print,I", po::value<uint64_t>()->value_name("MS"),
       "with --stat: print the counts of each interval of MS milliseconds as it ends")
      ("field-separator,x", po::value<std::string>()->value_name("SEP"),
       "with --stat: perf stat's CSV, fields separated by SEP")
      ("duration,d", po::value<double>()->value_name("SECONDS"),
       "stop after SECONDS (a command still running is then sent SIGTERM)");
}

/// -p or -t: positive ids, comma-separated or repeated.
std::vector<int> Ids(const po::variables_map& vm, const char* name, const char* what) {
  std::vector<int> ids;
  for (const std::string& s : cli::SplitList(cli::List(vm, name))) {
    int v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v <= 0) {
      throw UsageError(std::string("-") + name[0] + ": '" + s + "' is not a " + what);
    }
    ids.push_back(v);
  }
  return ids;
}

/// -g, --call-graph and --no-call-graph, in the order given: the last one decides.
void ReadCallGraph(const cli::Context& ctx, RecordOptions& o) {
  std::vector<CallGraphOption> call_graph;
  for (const po::option& opt : ctx.parsed->options) {
    if (opt.string_key == "-g") call_graph.push_back({CallGraphOption::kG, ""});
    if (opt.string_key == "no-call-graph") call_graph.push_back({CallGraphOption::kNone, ""});
    if (opt.string_key == "call-graph" && !opt.value.empty()) {
      call_graph.push_back({CallGraphOption::kMode, opt.value.back()});
    }
  }
  ApplyCallGraphOptions(call_graph, &o);
  o.raw_stacks = ctx.vm.count("raw-stacks");
  if (o.raw_stacks && o.call_graph != CallChainMode::kDwarf) {
    throw UsageError("--raw-stacks goes with --call-graph=dwarf");
  }
}

}  // namespace

cli::Tool RecordTool() {
  cli::Tool tool({
      "pf-record",
      "[OPTIONS] (-p PID[,PID...] | -t TID[,TID...] | -a | -C CPUS) [-- COMMAND [ARGS...]]",
      "Sample the CPU usage of a command, of running processes or threads, or of whole CPUs,\n"
      "with the kernel's perf events and their call graphs (frame pointers by default), and\n"
      "write the samples as a perf.data pipe stream to standard output, -o FILE, or, when\n"
      "standard output is a terminal, ./perf.data (as perf record does). The stream is written "
      "as the samples arrive, so the next\n"
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
  AddTargetsAndSampling(tool);
  tool.AddGroup("Output").add_options()
      ("no-symbols", "do not add the symbol records at the end of the stream");
  return tool;
}

RecordCommand ParseRecordOptions(cli::Context& ctx) {
  const po::variables_map& vm = ctx.vm;
  RecordCommand c;
  RecordOptions& o = c.options;
  if (vm.count("list-events")) {
    c.list_events = true;
    return c;
  }
  o.command = ctx.inputs;
  o.pids = Ids(vm, "pid", "process id");
  o.tids = Ids(vm, "tid", "thread id");
  o.system_wide = vm.count("all-cpus");
  if (vm.count("cpu")) o.cpus = ParseCpuList(vm["cpu"].as<std::string>());
  if (vm.count("freq")) o.frequency = vm["freq"].as<uint64_t>();
  if (vm.count("count")) {
    o.period = vm["count"].as<uint64_t>();
    if (o.period == 0) throw UsageError("-c must be at least 1");
    if (vm.count("freq")) throw UsageError("-F and -c exclude each other");
  }
  o.events = cli::SplitList(cli::List(vm, "event"));
  ReadCallGraph(ctx, o);
  o.off_cpu = vm.count("off-cpu");
  o.user_only = vm.count("user-only");
  o.kernel_only = vm.count("kernel-only");
  if (vm.count("duration")) {
    o.duration = vm["duration"].as<double>();
    if (!(o.duration > 0)) throw UsageError("-d must be a positive number of seconds");
  }
  o.symbols = !vm.count("no-symbols");
  o.stat = vm.count("stat");
  if (vm.count("interval-print") || vm.count("field-separator")) {
    if (!o.stat) throw UsageError("-I and -x go with --stat");
    o.stat_interval_ms = cli::Value<uint64_t>(vm, "interval-print", 0);
    if (vm.count("interval-print") && o.stat_interval_ms < 10) {
      throw UsageError("-I must be at least 10 milliseconds");
    }
    if (vm.count("field-separator")) o.stat_csv_sep = vm["field-separator"].as<std::string>();
  }
  if (o.stat && (o.off_cpu || o.call_graph == CallChainMode::kDwarf || o.raw_stacks)) {
    throw UsageError("--stat counts: drop --off-cpu and --call-graph");
  }
  if (o.stat) {
    // The table goes to standard error, or to -o FILE.
    c.output = vm.count("output") ? ctx.output : "";
    o.command_stdout_to_stderr = false;
    o.argv = ctx.argv;
    return c;
  }
  // perf record's default: no -o and standard output a terminal writes ./perf.data.
  c.default_file = !vm.count("output") && OutputIsTerminal("-");
  c.output = c.default_file ? "perf.data" : ctx.output;
  if (OutputIsTerminal(c.output)) {
    throw UsageError("pf-record writes binary data; use -o FILE or a pipe");
  }
  o.command_stdout_to_stderr = c.output == "-";
  o.argv = ctx.argv;
  return c;
}

int RunRecordCommand(const RecordCommand& command, const cli::Tool& tool) {
  if (command.list_events) {
    std::unique_ptr<ByteSink> out = OpenOutput("-");
    out->WriteAll(ListEvents());
    out->Commit();
    return 0;
  }
  RecordOptions o = command.options;
  o.notice = [&tool](const std::string& m) { tool.Notice(m); };
  if (o.stat) {
    // perf stat's table on standard error, or in -o FILE (replaced at the end).
    std::unique_ptr<ByteSink> file = command.output.empty() ? nullptr : OpenOutput(command.output);
    o.stat_out = [&file](const std::string& text) {
      if (file) {
        file->WriteAll(text);
      } else {
        (void)!write(2, text.data(), text.size());
      }
    };
    RecordReport report;
    RunRecord(o, [] { return std::unique_ptr<ByteSink>(); }, &report);
    if (file) file->Commit();
    return report.exit_status;
  }
  RecordReport report;
  // Opened once the options are checked, so a mistake leaves perf.data where it is. A new
  // file is written in place: a recording cut short is readable up to its last record.
  RunRecord(
      o,
      [&] {
        if (command.default_file) {
          tool.Notice(KeepAsOld(command.output)
                          ? "writing perf.data; the previous one is now perf.data.old"
                          : "writing perf.data");
        }
        return OpenOutput(command.output, {.new_file_in_place = true});
      },
      &report);
  if (report.corrupt) {
    tool.Warn("a ring buffer held a malformed record; the rest of it was skipped");
  }
  tool.Say(report.Summary());
  if (report.truncated > 0 && report.unwound > 0) {
    tool.Notice(std::to_string(report.truncated) + " of " + std::to_string(report.unwound) +
                " stacks were deeper than the " + std::to_string(o.stack_bytes) +
                "-byte copy (their root is [unknown]); a larger copy, as in "
                "--call-graph=dwarf," +
                std::to_string(std::min<uint64_t>(2 * o.stack_bytes, kMaxStackBytes)) +
                ", reaches further");
  }
  return report.command_ran ? report.exit_status : 0;
}

}  // namespace pf
