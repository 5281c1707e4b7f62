// pf-collapse's command line. The naming options are stackcollapse-perf.pl's; the weight,
// filter and input options are pf's (inferno-collapse-perf's --nthreads taken as --threads);
// the recording options are perf script's sample selection (command_line.h), spelled with
// --pids and --tids because --pid and --tid name each stack's first frame here.

#include "app/collapse_command.h"

#include <cctype>
#include <optional>

#include "app/command_line.h"
#include "app/files.h"
#include "base/error.h"
#include "base/heap.h"
#include "io/output.h"

namespace pf {

namespace po = cli::po;

cli::Tool CollapseTool() {
  cli::Tool tool({
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
      "  pf-collapse --exclude='^swapper' --hide='^__libc_start' perf.txt\n"
      "  pf-collapse -o cpu.pb.gz run.pfs && pprof -top cpu.pb.gz   # pprof, Pyroscope, Parca\n"
      "  pf-collapse --format=callgrind -o callgrind.out.1 run.pfs   # kcachegrind\n",
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
       "-F +srcline prints, from DWARF for recordings, from a pprof profile's lines")
      ("event-filter", po::value<std::string>()->value_name("EVENT"),
       "keep only samples of EVENT (default: the first event type seen); EVENT,EVENT... keeps "
       "several: cpu-clock,offcpu-time is a wall-clock profile, its waits ending in [off-cpu]")
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
  po::options_description& recordings = tool.AddGroup("Recordings (perf.data, pf-record streams)");
  recordings.add_options()
      ("no-inline", "do not add the functions inlined at unwound frames (as perf script "
       "--no-inline)")
      ("time-order", "keep the samples in time order, thread by thread, merging only "
       "consecutive equal stacks, instead of summing them: a timeline that pf-flamegraph "
       "--flamechart draws as a flame chart")
      ("per-thread", "start each stack with its thread, comm-PID/TID (the same as --tid): "
       "per-thread flame graphs, one lane per thread in a flame chart")
      ("per-cpu", "start each stack with its CPU, [cpu 003] (perf script's [003]): per-CPU "
       "flame graphs, one lane per CPU in a flame chart; the samples must carry their CPU "
       "(recorded with -a, or perf script -F +cpu)");
  AddSelectionOptions(recordings, SelectionStyle::kFold);
  po::options_description& input = tool.AddGroup("Input");
  input.add_options()
      ("format", po::value<std::string>()->value_name("FORMAT"),
       "output format: pprof (gzipped profile.proto; the default for -o NAME.pb.gz or "
       "NAME.pb) or callgrind (the default for -o callgrind.out.*) instead of folded text; "
       "folded (output and input); any other name is the input format, as -f")
      ("threads,j", po::value<unsigned>()->value_name("N"),
       "parsing threads (default: one per CPU)")
      ("nthreads,n", po::value<unsigned>()->value_name("N"),
       "the same as --threads (inferno-collapse-perf's name)");
  AddReadOptions(input);
  return tool;
}

namespace {

/// --format=pprof|callgrind|folded, else -o's name (NAME.pb.gz, NAME.pb, callgrind.out.*),
/// else folded text. Any other --format names the input format, as it did before
/// pf-collapse wrote other formats; --format=folded names both, folded input as before.
void ReadFormats(const po::variables_map& vm, CollapseCommand& c) {
  std::optional<std::string> given;
  if (vm.count("format")) {
    const std::string& f = vm["format"].as<std::string>();
    if (f == "pprof" || f == "callgrind" || f == "folded") given = f;
  }
  // The input format (-f, or --format naming one), --value, --tag, --snapshot.
  ReadReadOptions(vm, &c.options, given && *given != "folded" ? nullptr : "format");
  std::string name = c.output.substr(c.output.rfind('/') + 1);
  if (!given && c.output != "-" && name.rfind("callgrind.out", 0) == 0) given = "callgrind";
  c.format = cli::OutputFormat(
      given, c.output,
      {{".folded", "folded"}, {".pb.gz", "pprof"}, {".pb", "pprof"}, {".callgrind", "callgrind"}},
      "folded");
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  c.gzip = !name.ends_with(".pb");  // pprof reads both; NAME.pb says not compressed
  if (c.format == "pprof" && OutputIsTerminal(c.output)) {
    throw UsageError("not writing pprof's binary profile to a terminal; use -o cpu.pb.gz or "
                     "a pipe");
  }
  // pprof's mappings and callgrind's ob= lines name each function's binary.
  if (c.format != "folded") c.options.perf.note_modules = true;
}

}  // namespace

CollapseCommand ParseCollapseOptions(cli::Context& ctx) {
  cli::DefaultToPerfData(ctx);  // no FILE, stdin a terminal: ./perf.data, as perf
  const po::variables_map& vm = ctx.vm;
  CollapseCommand c{ctx.inputs, ctx.output, {}};
  CollapseOptions& opt = c.options;
  opt.perf.include_pid = vm.count("pid");
  opt.perf.include_tid = vm.count("tid") || vm.count("per-thread");
  opt.perf.include_cpu = vm.count("per-cpu");
  opt.perf.keep_times = vm.count("time-order");
  opt.perf.annotate_kernel = vm.count("kernel") || vm.count("all");
  opt.perf.annotate_jit = vm.count("jit") || vm.count("all");
  opt.perf.include_addrs = vm.count("addrs");
  opt.perf.annotate_inline = vm.count("inline");
  opt.perf.srcline = vm.count("srcline");
  opt.perf.inline_frames = cli::InlineFrames(vm);
  if (vm.count("event-filter")) opt.perf.event_filter = vm["event-filter"].as<std::string>();
  opt.perf.skip_after = cli::List(vm, "skip-after");
  opt.perf.weight_samples = cli::Choice(vm, "weight", {"period", "samples"}, "period") == "samples";
  opt.filter.include = cli::List(vm, "include");
  opt.filter.exclude = cli::List(vm, "exclude");
  opt.filter.hide = cli::List(vm, "hide");
  ReadFormats(vm, c);
  if (opt.perf.keep_times && c.format != "folded") {
    throw UsageError("--time-order writes folded stacks in time order; drop --format " + c.format);
  }
  opt.threads = cli::Value<unsigned>(vm, "threads", 0);
  opt.select = ReadSelection(vm, SelectionStyle::kFold);
  if (vm.count("nthreads")) {
    if (vm.count("threads")) throw UsageError("--threads and --nthreads are the same option");
    opt.threads = vm["nthreads"].as<unsigned>();
  }
  return c;
}

void RunCollapseCommand(const CollapseCommand& command, const cli::Tool& tool) {
  TuneHeap();
  ReadReport report;
  std::unique_ptr<ByteSink> out = OpenOutput(command.output);
  if (command.format == "folded") {
    CollapseFiles(command.inputs, command.options, *out, &report);
  } else {
    CollapseFilesAs(command.format, command.gzip, command.inputs, command.options, *out,
                    &report);
  }
  Tell(tool, report);
  if (report.empty) tool.Warn(EmptyResultReason(report, ""));
}

}  // namespace pf
