#pragma once
// The cli module (common/cli/): what the tools share at their boundary, from option parsing
// to exit statuses, so that every tool behaves alike.
//
// What every pf tool shares at its boundary: Boost.ProgramOptions parsing with --help,
// --version, -o/--output and -q/--quiet; the messages `pf-x: error: ...` and
// `pf-x: warning: ...`; exit status 0 (success), 1 (runtime or data error) and 2 (usage).
// A closed pipe downstream ends the tool quietly with status 0.

#include <boost/program_options.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pf::cli {

namespace po = boost::program_options;

struct ToolInfo {
  const char* name;      // "pf-collapse"
  const char* synopsis;  // "[OPTIONS] [FILE...]"
  const char* purpose;   // one paragraph, for --help
  const char* examples;  // lines for --help
};

/// What a tool's body receives.
struct Context {
  const po::variables_map& vm;
  std::vector<std::string> inputs;  // positional arguments; empty means stdin
  std::string output;               // -o; "-" means stdout
  bool quiet = false;
  /// The options in the order given (a variables_map loses it: `-g --call-graph=dwarf`).
  const po::parsed_options* parsed = nullptr;
  std::vector<std::string> argv;  // the whole command line, the tool's name first
};

class Tool {
 public:
  explicit Tool(ToolInfo info);
  /// The tool's own option groups (shown in --help in the order added).
  po::options_description& AddGroup(const std::string& caption);
  /// Parses, handles --help/--version, runs `body`, maps errors to exit codes.
  int Run(int argc, char** argv, const std::function<void(Context&)>& body);

  /// Messages on stderr, prefixed with the tool name.
  void Warn(const std::string& msg) const;
  void Notice(const std::string& msg) const;
  /// A line of the tool's own on stderr, `pf-x: msg`, unless --quiet.
  void Say(const std::string& msg) const;

 private:
  ToolInfo info_;
  std::vector<po::options_description> groups_;
  bool quiet_ = false;
};

/// perf's default input, for the tools that read recordings: with no FILE and standard input
/// a terminal, ./perf.data when it exists, else a usage error (nothing to read).
void DefaultToPerfData(Context& ctx);
/// Throws pf::Error when -o names a regular file that is also an input (the same inode, as
/// cp refuses it): the output is truncated or replaced while the input is read. Standard
/// input counts when it is read ("-" or no FILE). Run by Tool::Run and DefaultToPerfData.
void RefuseOutputAmongInputs(const Context& ctx);
/// The decision itself: the inputs to read.
std::vector<std::string> InputsOrPerfData(std::vector<std::string> inputs, bool stdin_is_terminal,
                                          bool perf_data_exists);

/// A repeatable, comma-separated option's values joined with commas ("" when not given).
std::string JoinedList(const po::variables_map& vm, const char* name);

/// A comma-separated or repeated option value, split.
std::vector<std::string> SplitList(const std::vector<std::string>& values);

/// The value of option `name`, or `def` when it was not given.
template <class T>
T Value(const po::variables_map& vm, const char* name, T def = T()) {
  return vm.count(name) ? vm[name].as<T>() : def;
}

/// A repeatable option's values as given (empty when not given).
inline std::vector<std::string> List(const po::variables_map& vm, const char* name) {
  return Value<std::vector<std::string>>(vm, name);
}

/// A choice option's value: one of `allowed`, `def` when not given. Any other value is a
/// UsageError saying which are allowed: "--weight must be period or samples, not 'x'".
std::string Choice(const po::variables_map& vm, const char* name,
                   const std::vector<std::string>& allowed, const char* def);
/// The check of a choice, for a value that may come from elsewhere (OutputFormat).
void CheckChoice(const char* name, const std::string& value,
                 const std::vector<std::string>& allowed);

/// A percentage option's value, `def` when not given: 0 to 100, or with `capped` false any
/// value from 0; else a UsageError ("--node-thres must be a percentage (0 to 100)").
double Percent(const po::variables_map& vm, const char* name, double def, bool capped = true);

/// The --inline/--no-inline pair of the tools that read recordings: whether to add the
/// functions inlined at unwound frames (yes unless --no-inline). Both is a UsageError.
bool InlineFrames(const po::variables_map& vm);

/// Adds -f/--input-format FORMAT (gprof2dot's -f) to `group`.
void AddInputFormatOption(po::options_description& group);

/// The input format -f/--input-format names (or `also`, a tool's own older option for it),
/// spelled as pf's readers take it: "auto", "perf-script" or "folded". gprof2dot's names are
/// accepted (perf, collapse); a format pf does not read yet (callgrind, prof, pstats, ...)
/// is a UsageError naming what it reads.
std::string InputFormat(const po::variables_map& vm, const char* also = nullptr);

/// Whether `name` names an input format (one pf reads, or one of gprof2dot's it does not
/// read yet): a tool whose --format is its output format takes gprof2dot's `--format=perf`.
bool IsInputFormatName(const std::string& name);

/// An output format and the file name suffix that asks for it: {".svg", "svg"}.
struct OutputSuffix {
  const char* suffix;
  const char* format;
};

/// The format `output`'s suffix asks for among `known` (a suffix of two parts, ".pb.gz",
/// matches the end of the name), or `fallback` when it has none of them. A suffix that
/// names an image or document format the tool cannot write (".gif", ".jpg", ".ps", ...) is
/// a UsageError listing the ones it can.
std::string FormatFromSuffix(const std::string& output, const std::vector<OutputSuffix>& known,
                             const char* fallback);

/// The output format a tool writes: `given` (its --format) when there is one, else the one
/// `output`'s suffix asks for (FormatFromSuffix), else `fallback`. It must be one of `known`'s
/// formats: "--format must be svg, png or pdf, not 'gif'".
std::string OutputFormat(const std::optional<std::string>& given, const std::string& output,
                         const std::vector<OutputSuffix>& known, const char* fallback);

}  // namespace pf::cli
