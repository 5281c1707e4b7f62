// pf-collapse: fold `perf script` text (and merge folded stacks) into folded stacks.
#include "cli/cli.h"
#include "app/files.h"
#include "base/error.h"

namespace po = boost::program_options;

int main(int argc, char** argv) {
  pf::cli::Tool tool({
      "pf-collapse",
      "[OPTIONS] [FILE...]",
      "Fold stack samples into folded stacks (`comm;caller;...;leaf COUNT`, sorted), the input\n"
      "of pf-flamegraph, pf-dot and pf-diff. Reads recordings (pf-record streams, perf.data\n"
      "files), `perf script` text (as stackcollapse-perf.pl does, with the same options and\n"
      "output) and folded stacks, which are summed with the other inputs. Inputs may be gzip\n"
      "or zstd compressed; with no FILE, or when FILE is -, standard input is read.",
      "  perf script | pf-collapse > out.folded\n"
      "  pf-collapse --all --pid perf.txt.gz | pf-flamegraph > out.svg\n"
      "  pf-collapse host1.folded host2.folded > fleet.folded      # merge profiles\n"
      "  pf-collapse --exclude='^swapper' --hide='^__libc_start' perf.txt\n",
  });
  tool.AddGroup("Naming (the options of stackcollapse-perf.pl)").add_options()
      ("pid", "start each stack with comm-PID")
      ("tid", "start each stack with comm-PID/TID")
      ("kernel", "mark kernel frames with _[k]")
      ("jit", "mark JIT frames (/tmp/perf-PID.map, jitted-*.so) with _[j]")
      ("all", "all annotations: --kernel --jit")
      ("addrs", "name unknown frames by their address: [dso <addr>]")
      ("inline", "mark inlined functions (perf's \"(inlined)\" frames) with _[i]")
      ("srcline", "add each frame's source line (:file.c:12), from the lines perf script "
       "-F +srcline prints, or from DWARF for recordings")
      ("event-filter", po::value<std::string>()->value_name("EVENT"),
       "keep only samples of EVENT (default: the first event type seen)")
      ("skip-after", po::value<std::vector<std::string>>()->value_name("FUNC"),
       "drop the frames below (callers of) FUNC, and the comm; repeatable");
  tool.AddGroup("Weights and filters").add_options()
      ("weight", po::value<std::string>()->value_name("W"),
       "period (default): weigh a sample by the period perf script prints; samples: 1 each")
      ("include", po::value<std::vector<std::string>>()->value_name("RE"),
       "keep only stacks whose folded text matches RE (re2 syntax); repeatable")
      ("exclude", po::value<std::vector<std::string>>()->value_name("RE"),
       "drop stacks whose folded text matches RE; repeatable")
      ("hide", po::value<std::vector<std::string>>()->value_name("RE"),
       "remove frames whose name matches RE, their weight going to the caller; repeatable");
  tool.AddGroup("Recordings (perf.data, pf-record streams)").add_options()
      ("no-inline", "do not add the functions inlined at unwound frames (as perf script "
       "--no-inline)")
      ("comms", po::value<std::vector<std::string>>()->value_name("COMMS"),
       "fold only samples of threads named one of COMM[,COMM...] (perf script --comms)")
      ("pids", po::value<std::vector<std::string>>()->value_name("PIDS"),
       "fold only samples of these processes: PID[,PID...] (perf script --pid)")
      ("tids", po::value<std::vector<std::string>>()->value_name("TIDS"),
       "fold only samples of these threads: TID[,TID...] (perf script --tid)")
      ("cpu,C", po::value<std::string>()->value_name("CPUS"),
       "fold only samples taken on these CPUs, as in 0,2-3")
      ("time", po::value<std::string>()->value_name("RANGES"),
       "fold only samples in START,END (seconds), or in slices such as 10%/2 or "
       "0%-10%,30%-40% (perf script --time)");
  po::options_description& input = tool.AddGroup("Input");
  input.add_options()
      ("format", po::value<std::string>()->value_name("FORMAT"),
       "input format: auto (default), perf-script or folded")
      ("threads,j", po::value<unsigned>()->value_name("N"),
       "parsing threads (default: one per CPU)")
      ("nthreads,n", po::value<unsigned>()->value_name("N"),
       "the same as --threads (inferno-collapse-perf's name)");
  pf::cli::AddInputFormatOption(input);

  return tool.Run(argc, argv, [&](pf::cli::Context& ctx) {
    pf::cli::DefaultToPerfData(ctx);  // no FILE, stdin a terminal: ./perf.data, as perf
    const po::variables_map& vm = ctx.vm;
    pf::CollapseOptions opt;
    opt.perf.include_pid = vm.count("pid");
    opt.perf.include_tid = vm.count("tid");
    opt.perf.annotate_kernel = vm.count("kernel") || vm.count("all");
    opt.perf.annotate_jit = vm.count("jit") || vm.count("all");
    opt.perf.include_addrs = vm.count("addrs");
    opt.perf.annotate_inline = vm.count("inline");
    opt.perf.srcline = vm.count("srcline");
    opt.perf.inline_frames = !vm.count("no-inline");
    if (vm.count("inline") && vm.count("no-inline")) {
      throw pf::UsageError("--inline and --no-inline exclude each other");
    }
    if (vm.count("event-filter")) opt.perf.event_filter = vm["event-filter"].as<std::string>();
    if (vm.count("skip-after")) opt.perf.skip_after = vm["skip-after"].as<std::vector<std::string>>();
    std::string weight = vm.count("weight") ? vm["weight"].as<std::string>() : "period";
    if (weight != "period" && weight != "samples") {
      throw pf::UsageError("--weight must be period or samples, not '" + weight + "'");
    }
    opt.perf.weight_samples = weight == "samples";
    if (vm.count("include")) opt.filter.include = vm["include"].as<std::vector<std::string>>();
    if (vm.count("exclude")) opt.filter.exclude = vm["exclude"].as<std::vector<std::string>>();
    if (vm.count("hide")) opt.filter.hide = vm["hide"].as<std::vector<std::string>>();
    opt.format = pf::cli::InputFormat(vm, "format");
    opt.threads = vm.count("threads") ? vm["threads"].as<unsigned>() : 0;
    opt.select.comms = pf::cli::JoinedList(vm, "comms");
    opt.select.pids = pf::cli::JoinedList(vm, "pids");
    opt.select.pid_option = "--pids";
    opt.select.tid_option = "--tids";
    opt.select.tids = pf::cli::JoinedList(vm, "tids");
    if (vm.count("cpu")) opt.select.cpus = vm["cpu"].as<std::string>();
    if (vm.count("time")) opt.select.time = vm["time"].as<std::string>();
    if (vm.count("nthreads")) {
      if (vm.count("threads")) throw pf::UsageError("--threads and --nthreads are the same option");
      opt.threads = vm["nthreads"].as<unsigned>();
    }

    pf::ReadReport report;
    std::unique_ptr<pf::ByteSink> out = pf::OpenOutput(ctx.output);
    pf::CollapseFiles(ctx.inputs, opt, *out, &report);
    for (const std::string& n : report.notices) tool.Notice(n);
    for (const std::string& w : report.warnings) tool.Warn(w);
    if (report.empty) tool.Warn(pf::EmptyResultReason(report, ""));
  });
}
