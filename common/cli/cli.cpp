// The boundary every tool shares (cli.h). Tool::Run adds the common options to the tool's
// groups, parses with Boost.ProgramOptions (negative values for unsigned options refused: Boost
// would wrap them), answers --help, --version and the hidden --pf-options (the option table the
// shell completions are generated from), then runs the tool's body inside the one catch that
// maps pf::UsageError to status 2, pf::Error and any other exception to status 1, and a closed
// pipe to a quiet 0. The helpers below it (input formats by gprof2dot's names, the output format
// from -o's suffix, perf's ./perf.data default) are here so that every tool says them alike.

#include "cli/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <typeinfo>

#include "base/error.h"
#include "base/input_formats.h"
#include "base/teardown.h"
#include "base/version.h"

namespace pf::cli {

namespace {

/// Boost converts "-5" to an unsigned option as 2^64 - 5: refuse a negative value for every
/// option whose type is unsigned, whichever tool declares it.
void RejectNegativeUnsigned(const po::parsed_options& parsed) {
  static const std::type_info* const kUnsigned[] = {
      &typeid(unsigned char), &typeid(unsigned short), &typeid(unsigned),
      &typeid(unsigned long), &typeid(unsigned long long)};
  for (const po::option& opt : parsed.options) {
    if (opt.unregistered || !parsed.description) continue;
    const po::option_description* d = parsed.description->find_nothrow(opt.string_key, false);
    if (!d) continue;
    auto* typed = dynamic_cast<const po::typed_value_base*>(d->semantic().get());
    if (!typed) continue;
    bool is_unsigned = false;
    for (const std::type_info* t : kUnsigned) is_unsigned |= typed->value_type() == *t;
    if (!is_unsigned) continue;
    for (const std::string& v : opt.value) {
      size_t first = v.find_first_not_of(" \t");
      if (first != std::string::npos && v[first] == '-') {
        throw po::error("the argument ('" + v + "') for option '" +
                        d->canonical_display_name(po::command_line_style::allow_long) +
                        "' is invalid: it must not be negative");
      }
    }
  }
}

}  // namespace

Tool::Tool(ToolInfo info) : info_(info) {}

namespace {

// `pf-x --pf-options`, hidden, for the build: the options of --help as a table the shell
// completions are generated from (share/completions/generate.sh), so they never fall behind.
// A first line "pf-options|1|TOOL|SYNOPSIS", then one line per option,
// "LONG|SHORT|VALUE|REPEAT|HELP": LONG as --name or empty, SHORT as -x or empty, VALUE the
// value's name (empty for a flag, "=NAME" for a value that must be joined), REPEAT "*" for a
// repeatable option, HELP the description on one line.
void PrintOptionTable(const ToolInfo& info, const po::options_description& all) {
  std::printf("pf-options|1|%s|%s\n", info.name, info.synopsis);
  for (const auto& opt : all.options()) {
    if (opt->long_name() == "pf-positional") continue;
    std::string lng = opt->long_name().empty() ? "" : "--" + opt->long_name();
    std::string shrt = opt->canonical_display_name(po::command_line_style::allow_dash_for_short);
    if (shrt.size() != 2 || shrt[0] != '-') shrt.clear();
    const po::value_semantic& v = *opt->semantic();
    std::string value;  // Boost's name() is "N (=DEFAULT)", or "[=N(=IMPLICIT)]"
    if (v.max_tokens() > 0) {
      std::string name = v.name();
      size_t start = name.rfind("[=", 0) == 0 ? 2 : 0;
      size_t end = name.find(start ? "(=" : " (=");
      if (end == std::string::npos) end = name.size();
      value.append(v.min_tokens() == 0 ? "=" : "").append(name, start, end - start);
    }
    bool repeat = dynamic_cast<const po::typed_value<std::vector<std::string>>*>(&v) != nullptr;
    std::string help = opt->description();
    for (char& c : help) c = c == '\n' || c == '\t' ? ' ' : c;
    std::printf("%s|%s|%s|%s|%s\n", lng.c_str(), shrt.c_str(), value.c_str(), repeat ? "*" : "",
                help.c_str());
  }
}

}  // namespace

po::options_description& Tool::AddGroup(const std::string& caption) {
  groups_.emplace_back(caption, 100, 50);
  return groups_.back();
}

void Tool::Warn(const std::string& msg) const {
  if (!quiet_) std::fprintf(stderr, "%s: warning: %s\n", info_.name, msg.c_str());
}

void Tool::Notice(const std::string& msg) const {
  if (!quiet_) std::fprintf(stderr, "%s: notice: %s\n", info_.name, msg.c_str());
}

void Tool::Say(const std::string& msg) const {
  if (!quiet_) std::fprintf(stderr, "%s: %s\n", info_.name, msg.c_str());
}

int Tool::Run(int argc, char** argv, const std::function<void(Context&)>& body) {
  std::signal(SIGPIPE, SIG_IGN);  // writes report EPIPE instead, which ends us quietly
  po::options_description common("Common options", 100, 50);
  common.add_options()
      ("output,o", po::value<std::string>()->value_name("FILE"),
       "write to FILE instead of standard output")
      ("quiet,q", "print no warnings or notices")
      ("help,h", "print this help and exit")
      ("version,V", "print the version and exit");
  po::options_description hidden;
  hidden.add_options()("pf-positional", po::value<std::vector<std::string>>(), "input files");
  po::options_description all;
  for (auto& g : groups_) all.add(g);
  all.add(common).add(hidden);
  po::positional_options_description positional;
  positional.add("pf-positional", -1);
  if (argc == 2 && argv[1] == std::string("--pf-options")) {
    PrintOptionTable(info_, all);
    return 0;
  }

  po::variables_map vm;
  po::parsed_options parsed(&all);
  try {
    parsed = po::command_line_parser(argc, argv).options(all).positional(positional).run();
    RejectNegativeUnsigned(parsed);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "%s: error: %s\nTry '%s --help' for more information.\n", info_.name,
                 e.what(), info_.name);
    return 2;
  }
  if (vm.count("help")) {
    std::cout << "Usage: " << info_.name << " " << info_.synopsis << "\n\n"
              << info_.purpose << "\n\n";
    for (auto& g : groups_) std::cout << g << "\n";
    std::cout << common << "\nExamples:\n" << info_.examples << "\nSee " << info_.name
              << "(1) for details.\n";
    std::cout.flush();
    return 0;
  }
  if (vm.count("version")) {
    std::printf("%s (pf) %s\n", info_.name, kVersion);
    return 0;
  }
  quiet_ = vm.count("quiet") > 0;
  Context ctx{vm, {}, vm.count("output") ? vm["output"].as<std::string>() : "-", quiet_,
              &parsed, std::vector<std::string>(argv, argv + argc)};
  if (vm.count("pf-positional")) ctx.inputs = vm["pf-positional"].as<std::vector<std::string>>();
  SetProcessEndsAfterWork(true);  // what the work builds need not be torn down (teardown.h)
  try {
    RefuseOutputAmongInputs(ctx);
    body(ctx);
  } catch (const PipeClosed&) {
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\nTry '%s --help' for more information.\n", info_.name,
                 e.what(), info_.name);
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", info_.name, e.Describe().c_str());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", info_.name);
    return 1;
  } catch (const std::exception& e) {  // a bug or an unexpected failure: say it, never abort
    std::fprintf(stderr, "%s: error: internal error: %s\n", info_.name, e.what());
    return 1;
  }
  return 0;
}

std::vector<std::string> InputsOrPerfData(std::vector<std::string> inputs, bool stdin_is_terminal,
                                          bool perf_data_exists) {
  if (!inputs.empty() || !stdin_is_terminal) return inputs;
  if (!perf_data_exists) {
    throw UsageError("no input: name a FILE or pipe one in (standard input is a terminal and "
                     "there is no ./perf.data)");
  }
  return {"perf.data"};
}

void DefaultToPerfData(Context& ctx) {
  if (!ctx.inputs.empty() || !isatty(0)) return;
  struct stat st;
  ctx.inputs = InputsOrPerfData({}, true, stat("perf.data", &st) == 0 && !S_ISDIR(st.st_mode));
  RefuseOutputAmongInputs(ctx);
}

void RefuseOutputAmongInputs(const Context& ctx) {
  struct stat out;
  if (ctx.output == "-" || stat(ctx.output.c_str(), &out) != 0 || !S_ISREG(out.st_mode)) return;
  auto same = [&out](const struct stat& in) {
    return in.st_dev == out.st_dev && in.st_ino == out.st_ino;
  };
  bool reads_stdin = ctx.inputs.empty();
  for (const std::string& in : ctx.inputs) {
    struct stat st;
    if (in == "-") {
      reads_stdin = true;
    } else if (stat(in.c_str(), &st) == 0 && same(st)) {
      throw Error(ctx.output, "is also an input" +
                                  (in == ctx.output ? std::string() : " (the same file as " + in + ")") +
                                  ": writing it would destroy what is read; write elsewhere");
    }
  }
  struct stat st;
  if (reads_stdin && fstat(0, &st) == 0 && S_ISREG(st.st_mode) && same(st)) {
    throw Error(ctx.output, "is also the standard input: writing it would destroy what is "
                            "read; write elsewhere");
  }
}

std::string JoinedList(const po::variables_map& vm, const char* name) {
  std::string joined;
  if (!vm.count(name)) return joined;
  for (const std::string& v : SplitList(vm[name].as<std::vector<std::string>>())) {
    joined += (joined.empty() ? "" : ",") + v;
  }
  return joined;
}

std::vector<std::string> SplitList(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& v : values) {
    size_t start = 0;
    for (;;) {
      size_t comma = v.find(',', start);
      out.push_back(v.substr(start, comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

namespace {

/// "a", "a or b", "a, b or c".
std::string Alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return out;
}

}  // namespace

void CheckChoice(const char* name, const std::string& value,
                 const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (value == a) return;
  }
  throw UsageError(std::string("--") + name + " must be " + Alternatives(allowed) + ", not '" +
                   value + "'");
}

std::string Choice(const po::variables_map& vm, const char* name,
                   const std::vector<std::string>& allowed, const char* def) {
  std::string value = Value<std::string>(vm, name, def);
  CheckChoice(name, value, allowed);
  return value;
}

double Percent(const po::variables_map& vm, const char* name, double def, bool capped) {
  if (!vm.count(name)) return def;
  double v = vm[name].as<double>();
  if (capped && !(v >= 0 && v <= 100)) {
    throw UsageError(std::string("--") + name + " must be a percentage (0 to 100)");
  }
  if (!(v >= 0)) throw UsageError(std::string("--") + name + " must be a percentage >= 0");
  return v;
}

bool InlineFrames(const po::variables_map& vm) {
  if (vm.count("inline") && vm.count("no-inline")) {
    throw UsageError("--inline and --no-inline exclude each other");
  }
  return !vm.count("no-inline");
}

void AddInputFormatOption(po::options_description& group) {
  std::string names;
  for (const InputFormatName& f : kInputFormatNames) names += std::string(names.empty() ? "" : ", ") + f.name;
  group.add_options()("input-format,f", po::value<std::string>()->value_name("FORMAT"),
                      ("read the input as FORMAT (gprof2dot's -f) instead of recognising it: " +
                       names + " (see pf-collapse(1), INPUT FORMATS)").c_str());
}

namespace {

// gprof2dot's other formats, and what users of other profilers may try.
constexpr const char* kNotRead[] = {"prof",   "gprof",   "pstats",   "axe",        "hprof",
                                    "json",   "sleepy",  "sysprof",  "xperf",      "oprofile",
                                    "speedscope", "sample"};

/// A format name as pf's readers spell it; `option` names the option in errors.
std::string CanonicalInputFormat(const std::string& name, const std::string& option) {
  if (name == "auto") return "auto";
  if (std::string_view canonical = CanonicalFormatName(name); !canonical.empty()) {
    return std::string(canonical);
  }
  for (const char* f : kNotRead) {
    if (name == f) {
      throw UsageError("--" + option + "=" + name + ": pf does not read " + name +
                       " input; it reads " + FormatsPfReads());
    }
  }
  throw UsageError("--" + option + ": unknown input format '" + name + "'; pf reads " +
                   FormatsPfReads() + " (see pf-collapse(1))");
}

}  // namespace

std::string InputFormat(const po::variables_map& vm, const char* also) {
  std::string format = "auto";
  if (vm.count("input-format")) {
    format = CanonicalInputFormat(vm["input-format"].as<std::string>(), "input-format");
  }
  if (also && vm.count(also)) {
    std::string other = CanonicalInputFormat(vm[also].as<std::string>(), also);
    if (vm.count("input-format") && other != format) {
      throw UsageError(std::string("--input-format and --") + also + " name different formats");
    }
    format = other;
  }
  return format;
}

bool IsInputFormatName(const std::string& name) {
  if (!CanonicalFormatName(name).empty()) return true;
  for (const char* f : kNotRead) {
    if (name == f) return true;
  }
  return false;
}

std::string FormatFromSuffix(const std::string& output, const std::vector<OutputSuffix>& known,
                             const char* fallback) {
  size_t slash = output.rfind('/');
  size_t dot = output.rfind('.');
  if (output == "-" || dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return fallback;
  }
  std::string suffix = output.substr(dot);
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // A known suffix may have two parts (".pb.gz"): matched at the end of the file's name.
  std::string name = output.substr(slash == std::string::npos ? 0 : slash + 1);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const OutputSuffix& k : known) {
    std::string_view s = k.suffix;
    if (name.size() >= s.size() && std::string_view(name).substr(name.size() - s.size()) == s) {
      return k.format;
    }
  }
  // Suffixes that promise an image or document format: writing another format under such
  // a name would only mislead.
  static const char* const kPromising[] = {
      ".svg", ".svgz", ".png", ".pdf", ".gif", ".jpg", ".jpeg", ".jpe", ".bmp", ".ico",
      ".tif", ".tiff", ".webp", ".ps",  ".eps", ".dot", ".gv",  ".xdot", ".json"};
  for (const char* p : kPromising) {
    if (suffix == p) {
      std::string list;
      for (const OutputSuffix& k : known)
        list += (list.empty() ? "" : ", ") + std::string(k.suffix);
      throw UsageError("cannot write " + suffix.substr(1) + " (-o " + output +
                       "): the output formats are " + list + " (or choose one with --format)");
    }
  }
  return fallback;
}

std::string OutputFormat(const std::optional<std::string>& given, const std::string& output,
                         const std::vector<OutputSuffix>& known, const char* fallback) {
  std::string format = given ? *given : FormatFromSuffix(output, known, fallback);
  std::vector<std::string> formats;
  for (const OutputSuffix& k : known) {
    if (std::find(formats.begin(), formats.end(), k.format) == formats.end()) {
      formats.push_back(k.format);
    }
  }
  CheckChoice("format", format, formats);
  return format;
}

}  // namespace pf::cli
