// The pieces the tools' commands share (command_line.h). The selection options are declared
// once for pf-script and pf-collapse: the two spell them differently (perf script's names
// against pf-collapse's --pids and --tids, whose --pid and --tid name a stack's first frame),
// so the help texts are built from the style rather than written twice.

#include "app/command_line.h"

#include <vector>

#include "base/error.h"
#include "formats/massif.h"
#include "io/output.h"

namespace pf {

namespace po = cli::po;

void AddSelectionOptions(po::options_description& group, SelectionStyle style) {
  const bool fold = style == SelectionStyle::kFold;
  const std::string only = fold ? "fold only samples" : "only samples";
  // pf-collapse names perf script's option after each; pf-script's group says "as perf script".
  auto as = [fold](const char* option) {
    return fold ? std::string(" (perf script ") + option + ")" : std::string();
  };
  using List = std::vector<std::string>;
  group.add_options()
      (fold ? "comms" : "comms,c", po::value<List>()->value_name("COMMS"),
       (only + " of threads named one of COMM[,COMM...]" + as("--comms")).c_str())
      (fold ? "pids" : "pid", po::value<List>()->value_name("PIDS"),
       (only + " of these processes: PID[,PID...]" + as("--pid")).c_str())
      (fold ? "tids" : "tid", po::value<List>()->value_name("TIDS"),
       (only + " of these threads: TID[,TID...]" + as("--tid")).c_str())
      ("cpu,C", po::value<std::string>()->value_name("CPUS"),
       (only + " taken on these CPUs, as in 0,2-3").c_str())
      ("time", po::value<std::string>()->value_name("RANGES"),
       (only + " in START,END (seconds" +
        (fold ? "" : "; either may be empty; ranges separated by spaces") +
        "), or in slices such as 10%/2" + (fold ? "" : " (the second tenth)") +
        " or 0%-10%,30%-40%" + as("--time")).c_str());
}

SelectionOptions ReadSelection(const po::variables_map& vm, SelectionStyle style) {
  const bool fold = style == SelectionStyle::kFold;
  SelectionOptions s;
  s.comms = cli::JoinedList(vm, "comms");
  s.pids = cli::JoinedList(vm, fold ? "pids" : "pid");
  s.tids = cli::JoinedList(vm, fold ? "tids" : "tid");
  if (fold) {
    s.pid_option = "--pids";
    s.tid_option = "--tids";
  }
  s.cpus = cli::Value<std::string>(vm, "cpu");
  s.time = cli::Value<std::string>(vm, "time");
  return s;
}

void AddReadOptions(po::options_description& group, bool input_format) {
  if (input_format) cli::AddInputFormatOption(group);
  group.add_options()
      ("value", po::value<std::string>()->value_name("TYPE"),
       "of a profile with several values per stack (pprof, gperftools heap, callgrind), the "
       "one to use: a sample type's name (alloc_space, inuse_objects, cpu, Ir, ...) or index "
       "(pprof's -sample_index); default: the profile's default one")
      ("tag", po::value<std::vector<std::string>>()->value_name("KEY"),
       "turn the pprof label KEY into a frame above each stack that carries it, as KEY:VALUE "
       "(pprof's -tagroot); repeatable")
      ("snapshot", po::value<std::string>()->value_name("N|peak|last"),
       "the massif snapshot whose heap tree is read (default: peak)")
      ("symfs", po::value<std::string>()->value_name("DIR"),
       "look for the binaries a recording or a gperftools profile names under DIR (copies "
       "at the same paths), as perf script --symfs");
}

void ReadReadOptions(const po::variables_map& vm, CollapseOptions* read, const char* also) {
  read->format = cli::InputFormat(vm, also);
  read->value = cli::Value<std::string>(vm, "value");
  if (vm.count("value") && read->value.empty()) throw UsageError("--value: empty sample type");
  read->profile.tags = cli::List(vm, "tag");
  if (vm.count("symfs")) read->symbols.symfs = vm["symfs"].as<std::string>();
  if (vm.count("snapshot")) {
    read->profile.snapshot = vm["snapshot"].as<std::string>();
    CheckMassifSnapshot(read->profile.snapshot);  // before any input is read
  }
}

void Tell(const cli::Tool& tool, const ReadReport& report) {
  for (const std::string& n : report.notices) tool.Notice(n);
  for (const std::string& w : report.warnings) tool.Warn(w);
}

void RefuseImageForTerminal(const std::string& format, const std::string& output) {
  if ((format == "png" || format == "pdf") && OutputIsTerminal(output)) {
    throw UsageError("not writing " + format + " to a terminal; use -o FILE or a pipe");
  }
}

}  // namespace pf
