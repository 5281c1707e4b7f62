#include "cli/cli.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/teardown.h"

namespace pf::cli {
namespace {

int RunWith(std::vector<std::string> args, const std::function<void(Context&)>& body) {
  Tool tool({"pf-test", "[FILE...]", "Purpose.", "  pf-test x\n"});
  tool.AddGroup("Test").add_options()("flag", "a flag");
  std::vector<char*> argv;
  args.insert(args.begin(), "pf-test");
  for (auto& a : args) argv.push_back(a.data());
  return tool.Run(static_cast<int>(argv.size()), argv.data(), body);
}

TEST(Cli, ExitCodes) {
  bool ran = false;
  EXPECT_EQ(RunWith({"--flag", "a", "b"}, [&](Context& c) {
              ran = true;
              EXPECT_EQ(c.inputs, (std::vector<std::string>{"a", "b"}));
              EXPECT_EQ(c.output, "-");
              EXPECT_TRUE(c.vm.count("flag"));
            }),
            0);
  EXPECT_TRUE(ran);
  EXPECT_EQ(RunWith({"--nope"}, [](Context&) { FAIL(); }), 2);
  EXPECT_EQ(RunWith({"-o"}, [](Context&) { FAIL(); }), 2);
  EXPECT_EQ(RunWith({}, [](Context&) { throw UsageError("bad"); }), 2);
  EXPECT_EQ(RunWith({}, [](Context&) { throw Error("f.txt:3", "broken"); }), 1);
  EXPECT_EQ(RunWith({}, [](Context&) { throw PipeClosed(); }), 0);
  EXPECT_EQ(RunWith({"-o", "x", "-q"}, [](Context& c) {
              EXPECT_EQ(c.output, "x");
              EXPECT_TRUE(c.quiet);
            }),
            0);
}

// The hidden table the shell completions are generated from (share/completions/generate.sh):
// every option of --help, with its names, its value and whether it repeats; nothing hidden.
TEST(Cli, OptionTableListsEveryOptionOfHelp) {
  Tool tool({"pf-test", "[FILE...] | x", "Purpose.", "  pf-test x\n"});
  tool.AddGroup("Test").add_options()
      ("flag", "a flag")
      ("size,s", po::value<int>()->default_value(5)->value_name("N"), "a size\nover two lines")
      (",g", "short only")
      ("list", po::value<std::vector<std::string>>()->value_name("RE"), "repeatable")
      ("maybe", po::value<std::string>()->implicit_value("x")->value_name("V"), "optional");
  std::vector<std::string> args = {"pf-test", "--pf-options"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  int rc = tool.Run(2, argv.data(), [](Context&) { FAIL(); });
  std::fflush(stdout);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(testing::internal::GetCapturedStdout(),
            "pf-options|1|pf-test|[FILE...] | x\n"
            "--flag||||a flag\n"
            "--size|-s|N||a size over two lines\n"
            "|-g|||short only\n"
            "--list||RE|*|repeatable\n"
            "--maybe||=V||optional\n"
            "--output|-o|FILE||write to FILE instead of standard output\n"
            "--quiet|-q|||print no warnings or notices\n"
            "--help|-h|||print this help and exit\n"
            "--version|-V|||print the version and exit\n");
}

TEST(Cli, StandardExceptionsAreReportedNotAborted) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith({}, [](Context&) { throw std::length_error("basic_string::_M_create"); }), 1);
  EXPECT_EQ(RunWith({}, [](Context&) {
              throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                                      "thread");
            }),
            1);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pf-test: error: internal error: basic_string::_M_create\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("pf-test: error: internal error: thread: "), std::string::npos) << err;
}

int RunWithNumbers(std::vector<std::string> args) {
  Tool tool({"pf-test", "[FILE...]", "Purpose.", "  pf-test x\n"});
  tool.AddGroup("Test").add_options()
      ("top", po::value<size_t>())("jobs,j", po::value<unsigned>())
      ("freq,F", po::value<uint64_t>())("depth", po::value<int>())("scale", po::value<double>());
  std::vector<char*> argv;
  args.insert(args.begin(), "pf-test");
  for (auto& a : args) argv.push_back(a.data());
  return tool.Run(static_cast<int>(argv.size()), argv.data(), [](Context&) {});
}

TEST(Cli, NegativeUnsignedValuesAreUsageErrors) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWithNumbers({"--top=-1"}), 2);
  EXPECT_EQ(RunWithNumbers({"-j", "-1"}), 2);
  EXPECT_EQ(RunWithNumbers({"-F", "-5"}), 2);
  EXPECT_EQ(RunWithNumbers({"-F-5"}), 2);
  EXPECT_EQ(RunWithNumbers({"--freq", " -5"}), 2);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pf-test: error: the argument ('-1') for option '--top' is invalid: it must "
                     "not be negative\nTry 'pf-test --help'"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("option '--freq'"), std::string::npos) << err;
  // Signed and floating-point options keep their own checks; positive values pass.
  EXPECT_EQ(RunWithNumbers({"--depth=-1", "--scale=-0.5", "--top=3", "-j", "2", "-F", "99"}), 0);
}

TEST(Cli, PerfDataIsTheDefaultInputOnATerminal) {
  using V = std::vector<std::string>;
  EXPECT_EQ(InputsOrPerfData({}, true, true), V{"perf.data"});
  EXPECT_EQ(InputsOrPerfData({}, false, true), V{});  // a pipe or a file: standard input
  EXPECT_EQ(InputsOrPerfData({"a"}, true, true), V{"a"});
  EXPECT_THROW(InputsOrPerfData({}, true, false), UsageError);
}

TEST(Cli, SplitList) {
  EXPECT_EQ(SplitList({"a,b", "c"}), (std::vector<std::string>{"a", "b", "c"}));
}

// Objects handed to KeepUntilExit: destroyed at once, in the order given, unless the process
// ends after its work (as a tool's main says); then a few groups are kept, and the rest
// destroyed at once. Under AddressSanitizer nothing is kept.
struct Logged {
  Logged(std::string* l, char n) : log(l), name(n) {}
  ~Logged() { *log += name; }
  std::string* log;
  char name;
};

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeeps = false;
#else
constexpr bool kKeeps = true;
#endif

// A variables_map of `args` against a few options of the kinds the helpers read.
po::variables_map Parse(std::vector<std::string> args) {
  po::options_description d;
  d.add_options()("weight", po::value<std::string>())("pct", po::value<double>())(
      "inline", "")("no-inline", "")("list", po::value<std::vector<std::string>>());
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(d).run(), vm);
  return vm;
}

std::string UsageMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Cli, ChoiceSaysWhichValuesAreAllowed) {
  EXPECT_EQ(Choice(Parse({}), "weight", {"period", "samples"}, "period"), "period");
  EXPECT_EQ(Choice(Parse({"--weight=samples"}), "weight", {"period", "samples"}, "period"),
            "samples");
  EXPECT_EQ(UsageMessage([] {
              Choice(Parse({"--weight=x"}), "weight", {"period", "samples"}, "period");
            }),
            "--weight must be period or samples, not 'x'");
  EXPECT_EQ(UsageMessage([] { CheckChoice("format", "gif", {"dot", "svg", "png", "pdf"}); }),
            "--format must be dot, svg, png or pdf, not 'gif'");
  EXPECT_EQ(UsageMessage([] { CheckChoice("total", "", {"callstacks"}); }),
            "--total must be callstacks, not ''");
}

TEST(Cli, PercentAndValues) {
  EXPECT_EQ(Percent(Parse({}), "pct", 0.5), 0.5);
  EXPECT_EQ(Percent(Parse({"--pct=100"}), "pct", 0.5), 100);
  EXPECT_EQ(UsageMessage([] { Percent(Parse({"--pct=101"}), "pct", 0.5); }),
            "--pct must be a percentage (0 to 100)");
  EXPECT_EQ(Percent(Parse({"--pct=200"}), "pct", 0, /*capped=*/false), 200);
  EXPECT_EQ(UsageMessage([] { Percent(Parse({"--pct=-1"}), "pct", 0, false); }),
            "--pct must be a percentage >= 0");
  EXPECT_EQ(UsageMessage([] { Percent(Parse({"--pct=nan"}), "pct", 0); }),
            "--pct must be a percentage (0 to 100)");
  EXPECT_EQ(Value<std::string>(Parse({}), "weight", "d"), "d");
  EXPECT_EQ(List(Parse({"--list=a", "--list=b"}), "list"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(List(Parse({}), "list").empty());
}

TEST(Cli, InlineAndNoInlineExcludeEachOther) {
  EXPECT_TRUE(InlineFrames(Parse({})));
  EXPECT_TRUE(InlineFrames(Parse({"--inline"})));
  EXPECT_FALSE(InlineFrames(Parse({"--no-inline"})));
  EXPECT_EQ(UsageMessage([] { InlineFrames(Parse({"--inline", "--no-inline"})); }),
            "--inline and --no-inline exclude each other");
}

TEST(Cli, OutputFormatFromTheOptionOrTheSuffix) {
  const std::vector<OutputSuffix> known = {
      {".dot", "dot"}, {".gv", "dot"}, {".svg", "svg"}, {".png", "png"}};
  EXPECT_EQ(OutputFormat(std::nullopt, "-", known, "dot"), "dot");
  EXPECT_EQ(OutputFormat(std::nullopt, "dir.svg/graph", known, "dot"), "dot");
  EXPECT_EQ(OutputFormat(std::nullopt, "g.GV", known, "dot"), "dot");
  EXPECT_EQ(OutputFormat(std::nullopt, "g.Png", known, "dot"), "png");
  EXPECT_EQ(OutputFormat(std::nullopt, "g.txt", known, "dot"), "dot");
  EXPECT_EQ(OutputFormat("svg", "g.png", known, "dot"), "svg");  // --format wins
  EXPECT_EQ(UsageMessage([&] { OutputFormat("", "g.png", known, "dot"); }),
            "--format must be dot, svg or png, not ''");
  EXPECT_EQ(UsageMessage([&] { OutputFormat(std::nullopt, "g.gif", known, "dot"); }),
            "cannot write gif (-o g.gif): the output formats are .dot, .gv, .svg, .png (or "
            "choose one with --format)");
}

TEST(Cli, OutputSuffixesOfTwoParts) {
  // pf-collapse's: a gzipped pprof profile is NAME.pb.gz; NAME.folded.gz is not one.
  const std::vector<OutputSuffix> known = {
      {".folded", "folded"}, {".pb.gz", "pprof"}, {".pb", "pprof"}};
  EXPECT_EQ(OutputFormat(std::nullopt, "cpu.pb.gz", known, "folded"), "pprof");
  EXPECT_EQ(OutputFormat(std::nullopt, "out/CPU.PB.GZ", known, "folded"), "pprof");
  EXPECT_EQ(OutputFormat(std::nullopt, "cpu.pb", known, "folded"), "pprof");
  EXPECT_EQ(OutputFormat(std::nullopt, "cpu.folded.gz", known, "folded"), "folded");
  EXPECT_EQ(OutputFormat(std::nullopt, "x.pb.gz/cpu", known, "folded"), "folded");
}

TEST(Teardown, KeptOnlyWhenTheProcessEndsAfterItsWork) {
  std::string log;
  SetProcessEndsAfterWork(false);
  KeepUntilExit(std::make_unique<Logged>(&log, 'a'),
                std::make_unique<Logged>(&log, 'b'));
  EXPECT_EQ(log, "ab");

  // In a child, which exits with the number of objects still alive plus 10 when nothing was
  // kept wrongly.
  EXPECT_EXIT(
      {
        static std::string child_log;
        RunWith({}, [](Context&) {});  // a tool's run says the process ends after its work
        for (int group = 0; group < 6; ++group) {
          KeepUntilExit(std::make_unique<Logged>(&child_log, 'x'),
                        std::make_unique<Logged>(&child_log, 'y'));
        }
        // Four groups kept, the last two destroyed in order; or, under ASan, all six.
        std::exit(child_log == (kKeeps ? "xyxy" : "xyxyxyxyxyxy") ? 10 : 1);
      },
      ::testing::ExitedWithCode(10), "");
  SetProcessEndsAfterWork(false);
}

// A mapping handed to UnmapWhenDone goes at once, unless the process ends after its work:
// then it is the exit's to take back (a few hundred at most).
TEST(Teardown, MappingsLeftToTheExitOnlyWhenTheProcessEndsAfterItsWork) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto mapped = [&](void* p) {
    unsigned char v;
    return mincore(p, page, &v) == 0;  // ENOMEM once unmapped
  };
  auto map = [&] {
    return mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  };
  SetProcessEndsAfterWork(false);
  void* p = map();
  ASSERT_NE(p, MAP_FAILED);
  UnmapWhenDone(p, page);
  EXPECT_FALSE(mapped(p));
  EXPECT_EXIT(
      {
        RunWith({}, [](Context&) {});
        std::vector<void*> maps;
        for (int i = 0; i < 300; ++i) maps.push_back(map());
        for (void* m : maps) UnmapWhenDone(m, page);
        size_t left = 0;
        for (void* m : maps) left += mapped(m);
        // The first ones left to the exit (256, less any this process left before), the rest
        // unmapped; under ASan, all unmapped.
        bool ok = kKeeps ? left > 200 && left <= 256 && mapped(maps[0]) && !mapped(maps[299])
                         : left == 0;
        std::exit(ok ? 10 : 1);
      },
      ::testing::ExitedWithCode(10), "");
  SetProcessEndsAfterWork(false);
}


// -o naming a file that is also an input (itself, a hard link or a symlink to it) would be
// truncated or replaced while it is read: refused, as cp refuses it, before the tool runs.
TEST(Cli, OutputThatIsAnInputIsRefused) {
  char dir_template[] = "/tmp/pf-cli-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  std::string a = dir + "/a", b = dir + "/b", l = dir + "/l", c = dir + "/c";
  { FILE* f = std::fopen(a.c_str(), "w"); ASSERT_NE(f, nullptr); std::fputs("x;y 1\n", f); std::fclose(f); }
  { FILE* f = std::fopen(c.c_str(), "w"); ASSERT_NE(f, nullptr); std::fclose(f); }
  ASSERT_EQ(link(a.c_str(), b.c_str()), 0);
  ASSERT_EQ(symlink(a.c_str(), l.c_str()), 0);
  bool ran = false;
  auto body = [&ran](Context&) { ran = true; };
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith({a, "-o", a}, body), 1);
  EXPECT_EQ(RunWith({a, "-o", b}, body), 1);
  EXPECT_EQ(RunWith({l, "-o", b}, body), 1);
  EXPECT_EQ(RunWith({c, a, "-o", l}, body), 1);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(ran);
  EXPECT_NE(err.find("pf-test: error: " + b + ": is also an input (the same file as " + a + ")"),
            std::string::npos)
      << err;
  EXPECT_EQ(RunWith({c, "-o", a}, body), 0);  // another file, or a new one: fine
  EXPECT_TRUE(ran);
  ran = false;
  EXPECT_EQ(RunWith({a, "-o", dir + "/new"}, body), 0);
  EXPECT_TRUE(ran);
  for (const std::string& p : {a, b, l, c, dir + "/new"}) unlink(p.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace pf::cli
