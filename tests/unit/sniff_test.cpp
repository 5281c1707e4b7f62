// Input formats: other profilers' outputs (made by hand from their documented shapes, in
// tests/data/foreign) are recognised and refused with an error naming what pf reads, while
// perf script text and folded stacks (spaces in names, decimal counts, comments first, a
// few malformed lines) keep working; -f/--input-format forces a reader; the output format
// follows -o's suffix, and a suffix a tool cannot write is refused.
#include "formats/sniff.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "cli/cli.h"
#include "test_util.h"

namespace pf {
namespace {

std::string Foreign(const std::string& name) {
  return test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/data/foreign/" + name);
}

TEST(Sniff, OtherProfilersOutputsAreNamed) {
  struct Case {
    const char* file;
    const char* says;
  } cases[] = {
      {"macos-sample.txt", "macOS `sample`"},
      {"callgrind.out.4242", "callgrind"},  {"profile.json", "JSON"},
      {"perf-report.txt", "`perf report`"},
  };
  for (const Case& c : cases) {
    std::string text = Foreign(c.file);
    ASSERT_FALSE(text.empty()) << c.file;
    std::string what;
    EXPECT_EQ(SniffFormat(text, &what), InputFormat::kForeign) << c.file;
    EXPECT_NE(what.find(c.says), std::string::npos) << c.file << ": " << what;
  }
  EXPECT_EQ(SniffFormat(Foreign("random.bin")), InputFormat::kBinary);
  // DTrace aggregations are read now (formats/trace_stacks.h).
  EXPECT_EQ(SniffFormat(Foreign("dtrace-ustack.txt")), InputFormat::kDtrace);
}

TEST(Sniff, PfsOwnFormatsAreNotForeign) {
  EXPECT_EQ(SniffFormat("a;b 1\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("# pf-diff: before=a after=b\nmain;f 1 2\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("[unknown];main 3\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("[[vdso]];main 3\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("{{closure}};main 3\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("my prog;operator new(unsigned long) 1.5\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("prog 100 1.000000: 1 cpu-clock:\n"
                        "\t 401000 main+0x1 (/bin/prog)\n\n"),
            InputFormat::kPerfScript);
  // perf script --header, and a comm that starts like a DTrace header.
  EXPECT_EQ(SniffFormat("# ========\n# captured on    : Thu\n# ========\n#\n"
                        "CPU 0/KVM 100 1.0: 1 cpu-clock:\n"
                        "\t 401000 kvm`odd+0x1 (/bin/qemu)\n"
                        "\t 401001 kvm`odd2+0x1 (/bin/qemu)\n\n"),
            InputFormat::kPerfScript);
  EXPECT_EQ(SniffFormat(""), InputFormat::kEmpty);
}

TEST(Sniff, CollapsingAForeignFormatIsAnError) {
  for (const char* file : {"macos-sample.txt", "callgrind.out.4242",
                           "profile.json", "perf-report.txt", "random.bin"}) {
    try {
      test::Collapse(Foreign(file));
      ADD_FAILURE() << file << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("pf reads perf script text, folded stacks"),
                std::string::npos)
          << file << ": " << e.what();
    }
  }
}

TEST(Sniff, TextThatParsesAsNothingIsAnError) {
  // Neither a known format nor perf script: nothing parsed.
  EXPECT_THROW(test::Collapse("hello world\nthis is a README\n"), Error);
  // Read as folded by force: nothing parsed either.
  CollapseOptions folded;
  folded.format = "folded";
  EXPECT_THROW(
      test::Collapse("prog 100 1.0: 1 cpu-clock:\n\t 401000 main+0x1 (/bin/p)\n\n", folded), Error);
  // Only comments or nothing: empty output, no error.
  EXPECT_EQ(test::Collapse("# nothing yet\n\n"), "");
}

TEST(Sniff, MalformedLinesInFoldedInputAreCountedNotFatal) {
  ReadReport report;
  EXPECT_EQ(test::Collapse("a;b 2\nnot a stack\na;c 1\n", {}, &report), "a;b 2\na;c 1\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("1 line"), std::string::npos) << report.warnings[0];
}

TEST(Sniff, ForcedFormatsReadAsThatFormat) {
  // A folded-looking line read as perf script text is not a sample.
  CollapseOptions perf;
  perf.format = "perf-script";
  EXPECT_THROW(test::Collapse("main;f 1\n", perf), Error);
  // A DTrace aggregation forced to perf script text: read as such, with a warning.
  ReadReport report;
  test::Collapse(Foreign("dtrace-ustack.txt"), perf, &report);
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_NE(report.warnings[0].find("looks like DTrace stack aggregations"), std::string::npos)
      << report.warnings[0];
  CollapseOptions folded;
  folded.format = "folded";
  EXPECT_EQ(test::Collapse("main;f 1\n", folded), "main;f 1\n");
}

cli::po::variables_map Parse(std::vector<std::string> args, bool with_format) {
  cli::po::options_description d;
  cli::AddInputFormatOption(d);
  if (with_format) d.add_options()("format", cli::po::value<std::string>());
  std::vector<const char*> argv = {"pf-test"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  cli::po::variables_map vm;
  cli::po::store(cli::po::parse_command_line(static_cast<int>(argv.size()), argv.data(), d), vm);
  return vm;
}

TEST(Sniff, InputFormatOption) {
  EXPECT_EQ(cli::InputFormat(Parse({}, false)), "auto");
  EXPECT_EQ(cli::InputFormat(Parse({"-f", "perf"}, false)), "perf-script");
  EXPECT_EQ(cli::InputFormat(Parse({"--input-format=collapse"}, false)), "folded");
  EXPECT_EQ(cli::InputFormat(Parse({"-ffolded"}, false)), "folded");
  EXPECT_EQ(cli::InputFormat(Parse({"--format=perf-script"}, true), "format"), "perf-script");
  EXPECT_EQ(cli::InputFormat(Parse({"-f", "callgrind"}, false)), "callgrind");
  EXPECT_EQ(cli::InputFormat(Parse({"-f", "proto"}, false)), "pprof");
  EXPECT_EQ(cli::InputFormat(Parse({"-f", "systemtap"}, false)), "stap");
  try {
    cli::InputFormat(Parse({"-f", "prof"}, false));
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("does not read prof input"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("perf script text, folded stacks"), std::string::npos);
  }
  EXPECT_THROW(cli::InputFormat(Parse({"-f", "pstats"}, false)), UsageError);
  EXPECT_THROW(cli::InputFormat(Parse({"-f", "bogus"}, false)), UsageError);
  EXPECT_THROW(cli::InputFormat(Parse({"-f", "perf", "--format=folded"}, true), "format"),
               UsageError);
  EXPECT_EQ(cli::InputFormat(Parse({"-f", "perf", "--format=perf-script"}, true), "format"),
            "perf-script");
}

TEST(Sniff, FormatFromSuffix) {
  std::vector<cli::OutputSuffix> dot = {
      {".dot", "dot"}, {".gv", "dot"}, {".svg", "svg"}, {".png", "png"}, {".pdf", "pdf"}};
  EXPECT_EQ(cli::FormatFromSuffix("-", dot, "dot"), "dot");
  EXPECT_EQ(cli::FormatFromSuffix("g.svg", dot, "dot"), "svg");
  EXPECT_EQ(cli::FormatFromSuffix("out/G.PNG", dot, "dot"), "png");
  EXPECT_EQ(cli::FormatFromSuffix("g.gv", dot, "svg"), "dot");
  EXPECT_EQ(cli::FormatFromSuffix("graph", dot, "dot"), "dot");
  EXPECT_EQ(cli::FormatFromSuffix("run.d/graph", dot, "dot"), "dot");
  EXPECT_EQ(cli::FormatFromSuffix("graph.txt", dot, "dot"), "dot");
  EXPECT_THROW(cli::FormatFromSuffix("g.gif", dot, "dot"), UsageError);
  EXPECT_THROW(cli::FormatFromSuffix("g.jpg", dot, "dot"), UsageError);
  std::vector<cli::OutputSuffix> flame = {{".svg", "svg"}, {".png", "png"}, {".pdf", "pdf"}};
  EXPECT_THROW(cli::FormatFromSuffix("flame.dot", flame, "svg"), UsageError);
  EXPECT_EQ(cli::FormatFromSuffix("flame.html", flame, "svg"), "svg");
}

}  // namespace
}  // namespace pf
