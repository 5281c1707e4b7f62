// pf-record: sample a command, processes or CPUs and write the samples as a perf.data pipe
// stream (readable by pf-script, pf-collapse, and perf script -i -).
#include <charconv>
#include <cstdio>

#include "base/error.h"
#include "cli/cli.h"
#include "io/output.h"
#include "perf/cpu_list.h"
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
      "[OPTIONS] (-p PID[,PID...] | -t TID[,TID...] | -a | -C CPUS | -- COMMAND [ARGS...])",
      "Sample the CPU usage of a command, of running processes or threads, or of whole CPUs,\n"
      "with the kernel's perf events, and write the samples as a perf.data pipe stream to\n"
      "standard output or -o FILE. The stream is written as the samples arrive, so the next\n"
      "tool of a pipeline works while the recording runs; pf-script, pf-collapse and\n"
      "`perf script -i -` read it. Recording ends when the command exits, when every -p/-t\n"
      "target has exited, after -d SECONDS, or on Ctrl-C, always with a complete stream.",
      "  pf-record -g -- ./server --bench > run.pfs            # a command, with call graphs\n"
      "  pf-record -g -p 1234 -d 10 | pf-collapse | pf-flamegraph > cpu.svg\n"
      "  pf-record -a -g -d 5 -o all.pfs                        # every CPU (needs privileges)\n"
      "  pf-record -g -- make -j2 | perf script -i - | less\n"
      "  pf-record -F 999 --call-graph=dwarf -- ./prog | pf-collapse   # no frame pointers\n",
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
      (",g", "record call graphs (frame pointers): the same as --call-graph=fp")
      ("call-graph", po::value<std::string>()->value_name("MODE"),
       "fp: call chains from frame pointers; dwarf[,STACK_BYTES]: unwind a copy of each "
       "sample's user stack (8192 bytes by default) with the binaries' DWARF CFI, for code "
       "built without frame pointers")
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
    std::string mode = vm.count("call-graph") ? vm["call-graph"].as<std::string>() : "";
    if (mode == "dwarf" || mode.rfind("dwarf,", 0) == 0) {
      o.call_graph = pf::CallGraph::kDwarf;
      if (mode.size() > 6) {
        std::string size = mode.substr(6);
        uint64_t v = 0;
        auto r = std::from_chars(size.data(), size.data() + size.size(), v);
        if (r.ec != std::errc() || r.ptr != size.data() + size.size() || v == 0 ||
            v % 8 != 0 || v > pf::kMaxStackBytes) {
          throw pf::UsageError("--call-graph=dwarf,STACK_BYTES: '" + size +
                               "' is not a multiple of 8 from 8 to " +
                               std::to_string(pf::kMaxStackBytes));
        }
        o.stack_bytes = static_cast<uint32_t>(v);
      }
    } else if (!mode.empty() && mode != "fp") {
      throw pf::UsageError("--call-graph must be fp or dwarf[,STACK_BYTES], not '" + mode + "'");
    } else if (vm.count("-g") || mode == "fp") {
      o.call_graph = pf::CallGraph::kFramePointer;
    }
    if (vm.count("-g") && o.call_graph == pf::CallGraph::kDwarf) {
      throw pf::UsageError("-g means --call-graph=fp: give one of them");
    }
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
    if (pf::OutputIsTerminal(ctx.output)) {
      throw pf::UsageError("pf-record writes binary data; use -o FILE or a pipe");
    }
    o.command_stdout_to_stderr = ctx.output == "-";
    o.argv.assign(argv, argv + argc);
    o.notice = [&tool](const std::string& m) { tool.Notice(m); };

    pf::RecordReport report;
    pf::RunRecord(o, [&ctx] { return pf::OpenOutput(ctx.output); }, &report);
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
