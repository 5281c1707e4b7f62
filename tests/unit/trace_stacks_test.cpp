// The tracing tools' stack texts (formats/trace_stacks.h): bpftrace maps, bcc's profile and
// offcputime, DTrace and SystemTap aggregations are sniffed by their structure and folded as
// FlameGraph's collapsers (or bcc's -f) fold them. Real outputs are in tests/data/trace_stacks
// (README.md there); tests/e2e/trace_stacks_test.sh compares them with the Perl scripts.
#include "formats/trace_stacks.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "formats/sniff.h"
#include "test_util.h"

namespace pf {
namespace {

std::string Data(const std::string& name) {
  return test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/data/trace_stacks/" + name);
}

// Reads `text` as `format` and returns its folded stack lines.
std::string Fold(std::string_view text, const char* format, ReadReport* report = nullptr) {
  CollapseOptions opt;
  opt.format = format;
  return test::Collapse(text, opt, report);
}

TEST(TraceStacks, RealOutputsAreSniffed) {
  struct Case {
    const char* file;
    InputFormat format;
  } cases[] = {
      {"bpftrace-callpath-ukc.txt", InputFormat::kBpftrace},
      {"bpftrace-dd-perf.txt", InputFormat::kBpftrace},
      {"bpftrace-dd-maps.txt", InputFormat::kBpftrace},
      {"bpftrace-dd-cu.txt", InputFormat::kBpftrace},
      {"bpftrace-prog-uk.txt", InputFormat::kBpftrace},
      {"bpftrace-gzip-ukc-hist.txt", InputFormat::kBpftrace},
      {"bpftrace-xz-kuc.txt", InputFormat::kBpftrace},
      {"bpftrace-prog-cs-sum.txt", InputFormat::kBpftrace},
      {"bcc-profile-callpath.txt", InputFormat::kBcc},
      {"bcc-profile-d-dd.txt", InputFormat::kBcc},
      {"bcc-offcputime-doc.txt", InputFormat::kBcc},
      {"dtrace-example-head.txt", InputFormat::kDtrace},
      {"dtrace-inferno-stack-ustack.txt", InputFormat::kDtrace},
      {"dtrace-inferno-rust-names.txt", InputFormat::kDtrace},
      {"stap-doc.txt", InputFormat::kStap},
  };
  for (const Case& c : cases) {
    std::string text = Data(c.file);
    ASSERT_FALSE(text.empty()) << c.file;
    EXPECT_EQ(SniffFormat(text), c.format) << c.file;
  }
  // What pf read before keeps its format.
  EXPECT_EQ(SniffFormat("@[a];b 3\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("x]: 3\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("    - main 3\n"), InputFormat::kFolded);
}

TEST(TraceStacks, BpftraceKeysAreReversedWhole) {
  // @[ustack, kstack, comm] as bpftrace 0.17 prints it: an empty kstack prints nothing.
  const char* text =
      "Attaching 2 probes...\n\n\n"
      "@[\n    spin+40\n    main+165\n, , callpath]: 3\n"
      "@[\n    __GI___write+16\n, \n    vfs_write+154\n    entry_SYSCALL_64+118\n, dd]: 2\n";
  EXPECT_EQ(Fold(text, "auto"),
            "callpath;main+165;spin+40 3\n"
            "dd;entry_SYSCALL_64+118;vfs_write+154;__GI___write+16 2\n");
  // Inline values first, ustack(perf) frames kept as printed, a run of values one frame.
  EXPECT_EQ(Fold("@[9315, dd, \n\t7f1e __libc_read+13 (/lib/libc.so.6)\n]: 4\n", "bpftrace"),
            "7f1e __libc_read+13 (/lib/libc.so.6);9315, dd 4\n");
  // An empty key is skipped and said, as the Perl script drops it.
  ReadReport report;
  EXPECT_EQ(Fold("@[\n    f+1\n]: 1\n@[]: 74\n", "bpftrace", &report), "f+1 1\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("1 stack without frames skipped (weight 74)"),
            std::string::npos);
}

TEST(TraceStacks, BpftraceFirstEntryLongerThanTheSniffWindow) {
  // bpftrace's header, then one entry whose deep stack of long C++ names outlasts the lines
  // and bytes the sniffer looks at: still bpftrace, not perf script ("Attaching 1" junk).
  std::string frame = "    ";
  for (int i = 0; i < 60; ++i) frame += "std::vector<int>::f";
  std::string text = "Attaching 1 probe...\n\n\n@[\n";
  for (int i = 0; i < 300; ++i) text += frame + std::to_string(i) + "+12\n";
  text += "]: 7\n@[\n    a+1\n]: 2\n";
  EXPECT_EQ(SniffFormat(text), InputFormat::kBpftrace);
  std::string deep = "@[\n";
  for (int i = 0; i < 2000; ++i) deep += "    f" + std::to_string(i) + "+1\n";
  EXPECT_EQ(SniffFormat(deep + "]: 3\n"), InputFormat::kBpftrace);
  std::string folded = Fold(deep + "]: 3\n", "auto");
  EXPECT_EQ(folded.substr(0, 12), "f1999+1;f199");
  EXPECT_EQ(folded.substr(folded.size() - 8), ";f0+1 3\n");
  // An indented line alone after "@[" is not enough.
  EXPECT_NE(SniffFormat("@[\n    f+1\n"), InputFormat::kBpftrace);
}

TEST(TraceStacks, BpftraceCutShortOrEmpty) {
  // An entry cut short by the next one (two runs in one file) is skipped and counted, not
  // read as frames "@[" and the next entry's.
  ReadReport report;
  EXPECT_EQ(Fold("@[\n    f+1\n]: 3\n@[\n    g+1\nAttaching 2 probes...\n@[\n    h+1\n"
                 "    i+2\n]: 2\n@[\n    j+1\n@x[\n    k+1\n, 7]: 4\n",
                 "auto", &report),
            "@;f+1 3\n@;i+2;h+1 2\n@x;7;k+1 4\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("2 entries without a count skipped (the first at line 4)"),
            std::string::npos)
      << report.warnings[0];
  // A run whose maps stayed empty prints its header alone: an error that says so, not perf
  // script text of a comm "Attaching".
  EXPECT_EQ(SniffFormat("Attaching 2 probes...\n\n\n"), InputFormat::kBpftrace);
  EXPECT_EQ(SniffFormat("Attaching 1 probe...\n"), InputFormat::kBpftrace);
  try {
    Fold("Attaching 1 probe...\n\n\n@n: 0\n", "auto");
    ADD_FAILURE() << "an empty bpftrace output read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no stack with a count in this bpftrace"),
              std::string::npos)
        << e.what();
  }
}

TEST(TraceStacks, OnlyEmptyStacksSaySo) {
  // @[kstack] of a program that stayed in user space: the error gives what was there.
  try {
    Fold("Attaching 2 probes...\n\n\n@[]: 160\n", "auto");
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 entry without frames (weight 160)"), std::string::npos)
        << e.what();
  }
}

TEST(TraceStacks, BpftraceKeyWithNoFrameAndNoValue) {
  // @[ustack, kstack] whose stack ids bpftrace failed to look up: "@[, ]: 9". The Perl script
  // prints an empty stack (" 9"); pf skips it with a warning that gives its weight.
  ReadReport report;
  EXPECT_EQ(Fold("@[\n    f+1\n    main+2\n, ]: 1\n@[, ]: 9\n@[, ]: 2\n", "auto", &report),
            "main+2;f+1 1\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("2 stacks without frames skipped (weight 11)"),
            std::string::npos)
      << report.warnings[0];
}

TEST(TraceStacks, BpftraceJsonIsRefused) {
  // bpftrace -f json (the real output of one run): not read, said so, sniffed or forced.
  std::string text = Data("bpftrace-prog.json");
  ASSERT_FALSE(text.empty());
  std::string foreign;
  EXPECT_EQ(SniffFormat(text, &foreign), InputFormat::kForeign);
  EXPECT_NE(foreign.find("bpftrace's JSON output"), std::string::npos) << foreign;
  try {
    Fold(text, "bpftrace");
    ADD_FAILURE() << "read bpftrace's JSON output";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("run bpftrace without -f json"), std::string::npos)
        << e.what();
  }
}

TEST(TraceStacks, BpftraceMapsAreKeptApart) {
  const char* two = "@user[\n    main+1\n]: 2\n@kern[\n    vfs_read+3\n, 77]: 5\n@user[\n    f+2\n]: 1\n";
  EXPECT_EQ(Fold(two, "auto"), "@kern;77;vfs_read+3 5\n@user;f+2 1\n@user;main+1 2\n");
  EXPECT_EQ(Fold("@x[\n    main+1\n]: 2\n", "auto"), "main+1 2\n");
  // hist() values and entries cut short are skipped and counted; scalar maps passed over.
  ReadReport report;
  EXPECT_EQ(Fold("@n: 5\n@h[\n    f+1\n]: \n[1]  3 |@@|\n@[\n    g+1\n]: 7\n@[\n    cut+1\n",
                 "bpftrace", &report),
            "g+1 7\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("2 entries without a count skipped (the first at line 2)"),
            std::string::npos)
      << report.warnings[0];
}

TEST(TraceStacks, BccIsWhatItsFoldedOutputWouldBe) {
  // profile -d: kernel, "--", user, comm; -f writes comm;user;-;kernel.
  const char* text =
      "Sampling at 49 Hertz of PID [15076] by user + kernel stack for 2 secs.\n\n"
      "    vfs_read\n    ksys_read\n    --\n    __read\n    main\n"
      "    -                my prog (15076)\n        3\n\n";
  ReadReport report;
  CollapseOptions opt;
  EXPECT_EQ(Fold(text, "auto", &report), "my prog;main;__read;-;ksys_read;vfs_read 3\n");
  // offcputime counts microseconds: pf keeps nanoseconds.
  const char* off =
      "Tracing off-CPU time (us) of PID 7 by user + kernel stack for 2 secs.\n\n"
      "    schedule\n    do_nanosleep\n    -                sleep (7)\n        1500\n\n";
  std::vector<std::unique_ptr<ByteSource>> sources;
  sources.push_back(MemoryInput(off, "off.txt"));
  StringSink sink;
  ReadReport r2;
  CollapseSources(std::move(sources), {}, sink, &r2);
  EXPECT_EQ(sink.data(), "# pf-unit: nanoseconds\nsleep;do_nanosleep;schedule 1500000\n");
}

TEST(TraceStacks, DtraceFramesAsStackcollapsePl) {
  const char* text =
      "CPU     ID                    FUNCTION:NAME\n  0  64091          :tick-60s \n\n\n"
      "              libc.so.1`memcpy+0x14\n"
      "              a.out`ns::Klass<int>::run(int)+0x3c\n"
      "              a.out`outer->inner+0x10\n"
      "              Lfoo;bar\n"
      "               17\n\n";
  EXPECT_EQ(Fold(text, "auto"),
            "foo:bar;a.out`outer;inner_[i];a.out`ns::Klass<int>::run;libc.so.1`memcpy 17\n");
  // Without dtrace's header (dtrace -q), the first lines are frames.
  EXPECT_EQ(Fold("  a`f+0x1\n  a`main+0x2\n  3\n", "dtrace"), "a`main;a`f 3\n");
}

TEST(TraceStacks, StapFramesAsStackcollapseStapPl) {
  EXPECT_EQ(Fold(" 0xffffffff8103ce3b : native_safe_halt+0xb/0x10 [kernel]\n"
                 " 0xffffffff81aebbfe : start_kernel+0x3ba/0x3c5 [kernel]\n\t2404\n",
                 "auto"),
            "start_kernel;native_safe_halt 2404\n");
}

TEST(TraceStacks, BccFirstStackLongerThanTheSniffWindow) {
  // profile's header, then a first stack whose comm line and count lie past the window.
  std::string frame = "    ";
  for (int i = 0; i < 60; ++i) frame += "std::vector<int>::f";
  std::string text = "Sampling at 49 Hertz of PID [819] by user + kernel stack for 2 secs.\n\n";
  for (int i = 0; i < 300; ++i) text += frame + std::to_string(i) + "()\n";
  text += "    -                prog (819)\n        3\n\n    main\n    -                prog (819)\n"
          "        2\n";
  EXPECT_EQ(SniffFormat(text), InputFormat::kBcc);
  EXPECT_EQ(Fold(text, "auto").substr(0, 10), "prog;main ");
}

TEST(TraceStacks, StapCountsWithoutIndent) {
  // A script that prints its counts with printf("%d\n"): stackcollapse-stap.pl reads them.
  const char* text =
      " 0xffffffff8103ce3b : native_safe_halt+0xb/0x10 [kernel]\n"
      " 0xffffffff81aebbfe : start_kernel+0x3ba/0x3c5 [kernel]\n2404\n"
      " 0xffffffff8103ce3b : foo+0xb/0x10 [kernel]\n"
      " 0xffffffff81aebbfe : start_kernel+0x3ba/0x3c5 [kernel]\n17\n";
  EXPECT_EQ(SniffFormat(text), InputFormat::kStap);
  EXPECT_EQ(Fold(text, "auto"), "start_kernel;foo 17\nstart_kernel;native_safe_halt 2404\n");
}

TEST(TraceStacks, ForcedAndRefused) {
  // A tracing tool's text forced to folded: read as that, with a warning.
  ReadReport report;
  EXPECT_EQ(Fold("@[\n    f+1\n]: 3\nmain;g 2\n", "folded", &report), "]: 3\nmain;g 2\n");
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_NE(report.warnings[0].find("looks like bpftrace stack maps, read as folded"),
            std::string::npos)
      << report.warnings[0];
  // Text that holds no stack in the forced format is an error.
  EXPECT_THROW(Fold("hello\n", "bpftrace"), Error);
  EXPECT_THROW(Fold("CPU     ID                    FUNCTION:NAME\n  0  1  :tick-1s\n\n", "auto"),
               Error);
}

}  // namespace
}  // namespace pf
