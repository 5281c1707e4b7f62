// Weights: decimal counts kept exact (fixed point), sums that saturate instead of wrapping
// (and say so), units, and per-stack passes that stay linear in the stack's depth.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "app/files.h"
#include "base/error.h"
#include "callgraph/call_graph.h"
#include "collapse/collapse.h"
#include "diff/diff.h"
#include "render/flame.h"
#include "stacks/folded.h"
#include "stacks/weight.h"
#include "test_util.h"

namespace pf {
namespace {

std::string TempFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/pf-weight-" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

StackTree Read(const std::string& text, int columns = 1) {
  StackTree t = TreeForFolded(columns);
  FoldedReader r(t);
  r.AddBlock(text, 1, "test");
  return t;
}

std::string Folded(const StackTree& t) {
  StringSink sink;
  BufferedWriter w(sink);
  WriteFolded(t, w);
  w.Flush();
  return sink.data();
}

// ---------------------------------------------------------------------------------------------
// Formatting

TEST(Weight, FormatsExactDecimals) {
  EXPECT_EQ(FormatWeight(12, 0), "12");
  EXPECT_EQ(FormatWeight(15, 1), "1.5");
  EXPECT_EQ(FormatWeight(3000, 3), "3");
  EXPECT_EQ(FormatWeight(3050, 3), "3.05");
  EXPECT_EQ(FormatWeight(5, 3), "0.005");
  EXPECT_EQ(FormatWeight(UINT64_MAX, 0), "18446744073709551615");
}

// The SVG's coordinates and shares: the digits printf's "%.*f" prints, ties and all.
TEST(Weight, FixedPrintsAsPrintf) {
  auto printf_fixed = [](double v, int d) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", d, v);
    return std::string(buf);
  };
  std::vector<double> values = {0,      -0.0,    0.05,  0.15,    0.25,  0.125, 2.675, 1e300,
                                -1e300, 1.0 / 3, 99.995, 100.0, -0.04, 1189.95, 5e-324};
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 20000; ++i) {  // xorshift: coordinates and shares of every size
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    values.push_back(static_cast<double>(x % 2000000) / 1000.0 - 10);
    values.push_back(static_cast<double>(x % 100000) / 8.0);
  }
  for (double v : values) {
    for (int d : {0, 1, 2, 6}) EXPECT_EQ(Fixed(v, d), printf_fixed(v, d)) << v << " " << d;
  }
  // Past the fast path's buffer: printf's own digits.
  EXPECT_EQ(Fixed(1e300, 200), printf_fixed(1e300, 200));
  std::string s = "x=";
  AppendFixed(&s, 2.5, 1);
  EXPECT_EQ(s, "x=2.5");
}

TEST(Weight, ShowsTheUnit) {
  EXPECT_EQ(HumanWeight(62, 0, WeightUnit::kSamples), "62 samples");
  EXPECT_EQ(HumanWeight(1234567, 0, WeightUnit::kUnspecified), "1,234,567 samples");
  EXPECT_EQ(HumanWeight(12345, 1, WeightUnit::kUnspecified), "1,234.5 samples");
  EXPECT_EQ(HumanWeight(4100, 0, WeightUnit::kEvents), "4,100 events");
  EXPECT_EQ(HumanWeight(12'345'678, 0, WeightUnit::kNanoseconds), "12.3 ms");
  EXPECT_EQ(HumanWeight(297'000'000, 0, WeightUnit::kNanoseconds), "297 ms");
  EXPECT_EQ(HumanWeight(2'500'000'000, 0, WeightUnit::kNanoseconds), "2.50 s");
  EXPECT_EQ(HumanWeight(999, 0, WeightUnit::kNanoseconds), "999 ns");
  EXPECT_EQ(CombineUnits(WeightUnit::kUnspecified, WeightUnit::kNanoseconds),
            WeightUnit::kNanoseconds);
  EXPECT_EQ(CombineUnits(WeightUnit::kEvents, WeightUnit::kNanoseconds), WeightUnit::kUnspecified);
}

TEST(Weight, UnitsOfTheNextProfiles) {
  EXPECT_EQ(HumanWeight(4096, 0, WeightUnit::kBytes), "4 kB");
  EXPECT_EQ(HumanWeight(512, 0, WeightUnit::kBytes), "512 B");
  EXPECT_EQ(HumanWeight(4'299'161, 0, WeightUnit::kBytes), "4.1 MB");
  EXPECT_EQ(HumanWeight(1'321'205'760, 0, WeightUnit::kBytes), "1.23 GB");
  EXPECT_EQ(HumanWeight(UINT64_MAX, 0, WeightUnit::kBytes), "16 EB");
  EXPECT_EQ(HumanWeight(7, 0, WeightUnit::kObjects), "7 objects");
  EXPECT_EQ(HumanWeight(1000000, 0, WeightUnit::kInstructions), "1,000,000 Ir");
  // The keywords of folded text's unit line and of pprof's ValueType.unit, both ways.
  for (WeightUnit u : {WeightUnit::kSamples, WeightUnit::kNanoseconds, WeightUnit::kEvents,
                       WeightUnit::kBytes, WeightUnit::kObjects, WeightUnit::kInstructions}) {
    WeightUnit back = WeightUnit::kUnspecified;
    ASSERT_TRUE(ParseUnitKeyword(UnitKeyword(u), &back)) << UnitKeyword(u);
    EXPECT_EQ(back, u);
  }
  EXPECT_EQ(UnitKeyword(WeightUnit::kNanoseconds), "nanoseconds");
  EXPECT_EQ(UnitKeyword(WeightUnit::kUnspecified), "");
  WeightUnit u;
  ASSERT_TRUE(ParseUnitKeyword("count", &u));  // pprof's name for samples
  EXPECT_EQ(u, WeightUnit::kSamples);
  EXPECT_FALSE(ParseUnitKeyword("ns", &u));
  EXPECT_FALSE(ParseUnitKeyword("", &u));
}

TEST(Weight, SampleTypesCombine) {
  EXPECT_EQ(DefaultSampleType(WeightUnit::kNanoseconds),
            (SampleType{"cpu", WeightUnit::kNanoseconds}));
  EXPECT_EQ(DefaultSampleType(WeightUnit::kUnspecified), SampleType{});
  const SampleType space{"alloc_space", WeightUnit::kBytes};
  EXPECT_EQ(CombineSampleTypes(space, space), space);
  EXPECT_EQ(CombineSampleTypes(SampleType{}, space), space);  // folded text without a unit
  EXPECT_EQ(CombineSampleTypes(space, SampleType{}), space);
  EXPECT_EQ(CombineSampleTypes(space, {"inuse_space", WeightUnit::kBytes}),
            (SampleType{"space", WeightUnit::kBytes}));
  EXPECT_EQ(CombineSampleTypes(space, {"cpu", WeightUnit::kNanoseconds}).unit,
            WeightUnit::kUnspecified);
}

TEST(Weight, SignedChangeIsClamped) {
  EXPECT_EQ(SignedChange(0, UINT64_MAX), INT64_MAX);
  EXPECT_EQ(SignedChange(UINT64_MAX, 0), -INT64_MAX);
  EXPECT_EQ(SignedChange(5, 3), -2);
}

// ---------------------------------------------------------------------------------------------
// Decimal counts

TEST(DecimalCounts, AreSummedExactly) {
  StackTree t = Read("a;b 1.5\na;b 1.25\na;c 3\nx 0.1\nx 0.2\n");
  EXPECT_EQ(t.decimals(), 2);
  EXPECT_EQ(Folded(t), "a;b 2.75\na;c 3\nx 0.3\n");
  EXPECT_EQ(t.Total(), 605u);  // 6.05
}

TEST(DecimalCounts, BelowOneAreKept) {
  StackTree t = Read("a 0.25\nb 0.5\n");
  EXPECT_EQ(Folded(t), "a 0.25\nb 0.5\n");
}

TEST(DecimalCounts, IntegerInputIsUnchanged) {
  StackTree t = Read("a;b 10\na;c 5.000\nx 7.\n");
  EXPECT_EQ(t.decimals(), 0);
  EXPECT_EQ(Folded(t), "a;b 10\na;c 5\nx 7\n");
}

TEST(DecimalCounts, MergeAlignsTheDecimals) {
  StackTree a = Read("a 1.5\n");
  StackTree b = Read("a 2.125\nb 3\n");
  StackTree c = Read("c 4\n");
  c.Merge(a);
  c.Merge(b);
  EXPECT_EQ(c.decimals(), 3);
  EXPECT_EQ(Folded(c), "a 3.625\nb 3\nc 4\n");
}

TEST(DecimalCounts, DifferentialColumns) {
  StackTree t = Read("a;b 1.5 2\na;c 0 0.75\n", 2);
  EXPECT_EQ(Folded(t), "a;b 1.5 2\na;c 0 0.75\n");
}

TEST(DecimalCounts, MoreThanNineDecimalsAreCutWithAWarning) {
  std::string path = TempFile("cut.folded", "a 1.1234567891234\nb 2\n");
  ReadReport report;
  StackTree t = CollapseFilesToTree({path}, {}, &report);
  EXPECT_EQ(Folded(t), "a 1.123456789\nb 2\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("more than 9 decimals"), std::string::npos);
}

TEST(DecimalCounts, PfCollapseMergesThem) {
  std::string a = TempFile("m1.folded", "main;f 1.5\nmain;g 0.25\n");
  std::string b = TempFile("m2.folded", "main;f 1.5\nmain;h 2\n");
  StringSink sink;
  ReadReport report;
  CollapseFiles({a, b}, {}, sink, &report);
  EXPECT_EQ(sink.data(), "main;f 3\nmain;g 0.25\nmain;h 2\n");
  EXPECT_TRUE(report.warnings.empty());
}

// flamegraph.pl's own output for its fractional-samples case, drawn with --reverse
// --minwidth 0: every tooltip and every box.
TEST(DecimalCounts, FlameGraphDrawsThemAsFlamegraphPl) {
  std::string input = test::kCorpus + "/tests/data/flamegraph/fractional-samples/fractional.txt";
  if (!test::FileExists(input)) GTEST_SKIP() << "peer corpus not found";
  FlameOptions o;
  o.reverse = true;
  o.minwidth = 0;
  std::vector<std::string> warnings;
  ReadReport report;
  FlameLayout l = BuildFlameGraphFromFiles({input}, o, &warnings, &report);
  std::vector<std::string> got;
  for (const FrameBox& b : l.frames) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s|%.1f|%g|%.1f", b.title.c_str(), b.x, b.y, b.w);
    got.push_back(buf);
  }
  std::sort(got.begin(), got.end());
  std::vector<std::string> want = {
      "[unknown] (3 samples, 0.90%)|10.0|181|9.1",
      "_IO_file_read (1 samples, 0.30%)|217.7|101|4.9",
      "_IO_file_xsgetn (1 samples, 0.30%)|217.7|85|4.9",
      "__GI___fread_unlocked (1 samples, 0.30%)|217.7|69|4.9",
      "__libc_start_main (31 samples, 9.26%)|40.6|149|110.1",
      "__vfs_read (1 samples, 0.30%)|217.7|165|4.9",
      "_start (31 samples, 9.26%)|40.6|133|110.1",
      "all (335 samples, 100%)|10.0|197|1180.0",
      "cksum (1 samples, 0.30%)|217.7|37|4.9",
      "cksum (1 samples, 0.30%)|217.7|53|4.9",
      "cksum (19 samples, 5.68%)|150.7|149|67.0",
      "cksum (31 samples, 9.26%)|40.6|117|110.1",
      "cksum (56 samples, 16.74%)|19.1|181|198.6",
      "cksum (6 samples, 1.79%)|19.1|165|21.5",
      "entry_SYSCALL_64_fastpath (1 samples, 0.30%)|217.7|117|4.9",
      "ext4_file_read_iter (1 samples, 0.30%)|217.7|181|4.9",
      "main (274 samples, 81.88%)|222.6|181|967.4",
      "main (50 samples, 14.94%)|40.6|165|177.1",
      "noploop (274 samples, 81.88%)|222.6|165|967.4",
      "noploop (3 samples, 0.90%)|10.0|165|9.1",
      "sys_read (1 samples, 0.30%)|217.7|133|4.9",
      "vfs_read (1 samples, 0.30%)|217.7|149|4.9",
  };
  EXPECT_EQ(got, want);
}

// A sorted file with a decimal count streams until that line, then is drawn from a tree.
TEST(DecimalCounts, SortedFileWithDecimalsIsNotTruncated) {
  std::string path = TempFile("sorted.folded", "a;b 1\na;c 0.5\na;d 0.5\n");
  FlameOptions o;
  std::vector<std::string> warnings;
  ReadReport report;
  FlameLayout l = BuildFlameGraphFromFiles({path}, o, &warnings, &report);
  ASSERT_EQ(l.frames.size(), 5u);
  EXPECT_EQ(l.frames[0].title, "all (2 samples, 100%)");
  double wc = 0, wb = 0;
  for (const FrameBox& b : l.frames) {
    if (b.name == "b") wb = b.w;
    if (b.name == "c") wc = b.w;
  }
  EXPECT_NEAR(wc * 2, wb, 0.01);
}

// The unit crosses folded text in its `# pf-unit:` line: pf-collapse writes it, and every
// reader of folded text takes it (the collapse, the flame graph's streaming reader and its
// chart, pf-diff's sorted merge).
TEST(Units, CrossFoldedText) {
  const std::string text = "prog 100 1.0: 250000 cpu-clock:\n\t401000 leaf+0x1 (/bin/p)\n\n";
  std::vector<std::unique_ptr<ByteSource>> in;
  in.push_back(MemoryInput(text, "t.txt"));
  StringSink sink;
  ReadReport report;
  CollapseSources(std::move(in), {}, sink, &report);
  EXPECT_EQ(sink.data(), "# pf-unit: nanoseconds\nprog;leaf 250000\n");
  CollapseOptions samples;
  samples.perf.weight_samples = true;  // --weight=samples: samples go unsaid
  in.clear();
  in.push_back(MemoryInput(text, "t.txt"));
  StringSink plain;
  CollapseSources(std::move(in), samples, plain, &report);
  EXPECT_EQ(plain.data(), "prog;leaf 1\n");

  std::string path = TempFile("ns.folded", sink.data());
  EXPECT_EQ(CollapseFilesToTree({path}, {}, &report).unit(), WeightUnit::kNanoseconds);
  // The flame graph's streaming reader (a sorted regular file) and its chart.
  FlameOptions fo;
  std::vector<std::string> warnings;
  FlameLayout l = BuildFlameGraphFromFiles({path}, fo, &warnings, &report);
  EXPECT_EQ(l.frames[0].title, "all (250 us, 100%)");
  fo.flamechart = true;
  l = BuildFlameChartFromFiles({path}, fo, &warnings);
  EXPECT_EQ(l.frames[0].title, "all (250 us, 100%)");
  EXPECT_TRUE(warnings.empty());
  // pf-diff: the unit's line after pf-diff's own, on the sorted merge and the tree path.
  StringSink diff, tree_diff;
  DiffFiles(path, path, {}, diff, &report);
  EXPECT_EQ(diff.data(), std::string(kPfDiffComment) + "before=" + path + " after=" + path +
                             "\n# pf-unit: nanoseconds\nprog;leaf 250000 250000\n");
  DiffOptions strip;
  strip.strip_hex = true;  // (takes the tree path)
  DiffFiles(path, path, strip, tree_diff, &report);
  EXPECT_EQ(tree_diff.data(), diff.data());
}

// A profile of several values per stack (pprof's heap profile) is drawn, graphed and
// compared by its default one (the last, as pprof's -sample_index).
TEST(Units, SeveralValuesAreShownByTheDefaultOne) {
  StackTree heap({{"alloc_space", WeightUnit::kBytes}, {"inuse_space", WeightUnit::kBytes}});
  std::vector<StrId> f = {heap.names().Intern("main"), heap.names().Intern("alloc")};
  NodeId leaf = heap.AddStack(f, 4096, 0);
  heap.AddSelf(leaf, 1024, 1);
  std::vector<std::string> warnings;
  FlameLayout l = BuildFlameGraph(heap, FlameOptions{}, &warnings);
  EXPECT_EQ(l.frames[0].title, "all (1 kB, 100%)");
  EXPECT_EQ(BuildCallGraph(heap, CallGraphOptions{}).total, 1024u);
  StackTree d = DiffTrees(heap, heap, "a", "b", DiffOptions{}, &warnings);
  EXPECT_TRUE(d.differential());
  EXPECT_EQ(d.sample_type(), (SampleType{"inuse_space", WeightUnit::kBytes}));
  EXPECT_EQ(d.Total(0), 1024u);
  EXPECT_TRUE(warnings.empty());
}

TEST(Units, FoldedInputsOfDifferentUnitsWarn) {
  std::string ns = TempFile("u-ns.folded", "# pf-unit: nanoseconds\na 5\n");
  std::string ev = TempFile("u-ev.folded", "# pf-unit: events\na 7\n");
  std::string none = TempFile("u-none.folded", "a 1\n");
  StringSink sink;
  ReadReport report;
  CollapseFiles({ns, none}, {}, sink, &report);  // no unit gives way
  EXPECT_EQ(sink.data(), "# pf-unit: nanoseconds\na 6\n");
  EXPECT_TRUE(report.warnings.empty());
  StringSink mixed;
  ReadReport mixed_report;
  CollapseFiles({ns, ev}, {}, mixed, &mixed_report);
  EXPECT_EQ(mixed.data(), "a 12\n");
  EXPECT_EQ(mixed_report.warnings,
            std::vector<std::string>{"the inputs weigh different things (" + ns + ": ns, " + ev +
                                     ": events): their sum is of numbers, not of like for like"});
  // pf-diff refuses to compare them, unless told (--mixed-units): then it warns, and writes
  // no unit.
  StringSink refused;
  ReadReport refused_report;
  try {
    DiffFiles(ns, ev, {}, refused, &refused_report);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weigh different things (" + ns + ": ns, " + ev +
                                         ": events): compare like with like"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(refused.data(), "");
  StringSink diff;
  ReadReport diff_report;
  DiffOptions mixed_units;
  mixed_units.mixed_units = true;
  DiffFiles(ns, ev, mixed_units, diff, &diff_report);
  EXPECT_EQ(diff.data(), std::string(kPfDiffComment) + "before=" + ns + " after=" + ev +
                             "\na 5 7\n");
  ASSERT_EQ(diff_report.warnings.size(), 1u);
  EXPECT_NE(diff_report.warnings[0].find("weigh different things"), std::string::npos);
}

TEST(DecimalCounts, DiffAndCallGraphAcceptThem) {
  std::string a = TempFile("d1.folded", "a;b 1.5\na;c 2\n");
  std::string b = TempFile("d2.folded", "a;b 1.25\na;c 2.75\n");
  StringSink sink;
  ReadReport report;
  DiffFiles(a, b, {}, sink, &report);
  EXPECT_EQ(sink.data(), std::string(kPfDiffComment) + "before=" + a + " after=" + b +
                             "\na;b 1.5 1.25\na;c 2 2.75\n");
  StringSink rep;
  DiffOptions o;
  o.report = true;
  DiffFiles(a, b, o, rep, &report);
  EXPECT_NE(rep.data().find("before: " + a + ", 3.5 samples"), std::string::npos) << rep.data();
  EXPECT_NE(rep.data().find("+0.75"), std::string::npos) << rep.data();

  StackTree t = Read("a;b 1.5\na;c 0.5\n");
  CallGraphOptions co;
  co.show_samples = true;
  CallGraph g = BuildCallGraph(t, co);
  StringSink dot;
  BufferedWriter w(dot);
  WriteDot(g, co, w);
  w.Flush();
  EXPECT_NE(dot.data().find("total weight 2 samples"), std::string::npos) << dot.data();
  EXPECT_NE(dot.data().find("75.00%\\n(75.00%)\\n1.5 (1.5)"), std::string::npos) << dot.data();
}

// ---------------------------------------------------------------------------------------------
// Saturation

constexpr const char* k2to63 = "9223372036854775808";

TEST(Saturation, StackTreeCountsIt) {
  StackTree t;
  t.AddStack(std::vector<StrId>{t.names().Intern("a")}, UINT64_MAX);
  t.AddStack(std::vector<StrId>{t.names().Intern("a")}, 1);
  EXPECT_EQ(t.self(NodeId{1}), UINT64_MAX);
  EXPECT_EQ(t.saturated(), 1u);
}

TEST(Saturation, FlameGraphDrawsEveryFrameAndNoPartAbove100) {
  StackTree t = Read(std::string("a;b ") + k2to63 + "\na;c " + k2to63 + "\n");
  std::vector<std::string> warnings;
  FlameLayout l = BuildFlameGraph(t, FlameOptions{}, &warnings);
  ASSERT_EQ(l.frames.size(), 4u);
  std::regex pct("([0-9.]+)%\\)");
  for (const FrameBox& b : l.frames) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(b.title, m, pct)) << b.title;
    EXPECT_LE(std::stod(m[1]), 100.0) << b.title;
    EXPECT_GT(b.w, 500) << b.title;
  }
  EXPECT_EQ(l.frames[0].title, "all (18,446,744,073,709,551,615 samples, 100%)");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("2^64-1"), std::string::npos);
}

TEST(Saturation, DifferentialGrowthIsPositive) {
  StackTree t = Read("a;b 0 18446744073709551615\n", 2);
  std::vector<std::string> warnings;
  FlameLayout l = BuildFlameGraph(t, FlameOptions{}, &warnings);
  ASSERT_EQ(l.frames.size(), 3u);
  EXPECT_EQ(l.frames[2].title, "b (18,446,744,073,709,551,615 samples, 100.00%; +100.00%)");
}

TEST(Saturation, DiffReportHasNoWrappedNumbers) {
  std::string a = TempFile("s1.folded", "a;b 0\na;c 1\n");
  std::string b = TempFile("s2.folded", "a;b 18446744073709551615\na;c 5\n");
  for (bool normalize : {false, true}) {
    DiffOptions o;
    o.report = true;
    o.normalize = normalize;
    StringSink sink;
    ReadReport report;
    DiffFiles(a, b, o, sink, &report);
    EXPECT_NE(sink.data().find("+18,446,744,073,709,551,615"), std::string::npos) << sink.data();
    EXPECT_EQ(sink.data().find("-9,"), std::string::npos) << sink.data();
    ASSERT_EQ(report.warnings.size(), 1u);
    EXPECT_NE(report.warnings[0].find("2^64-1"), std::string::npos);
  }
}

TEST(Saturation, CallGraphPercentagesStayWithin100) {
  StackTree t = Read(std::string("a;b ") + k2to63 + "\na;c " + k2to63 + "\n");
  CallGraphOptions o;
  CallGraph g = BuildCallGraph(t, o);
  EXPECT_EQ(g.total, UINT64_MAX);
  EXPECT_EQ(g.saturated, 1u);
  ASSERT_EQ(g.nodes.size(), 3u);
  StringSink dot;
  BufferedWriter w(dot);
  WriteDot(g, o, w);
  w.Flush();
  std::regex pct("([0-9.]+)%");
  for (std::sregex_iterator it(dot.data().begin(), dot.data().end(), pct), end; it != end; ++it) {
    EXPECT_LE(std::stod((*it)[1]), 100.0);
  }
}

TEST(Saturation, CollapseMergeWarnsOnce) {
  std::string path = TempFile("big.folded", std::string("a;b ") + k2to63 + "\n");
  StringSink sink;
  ReadReport report;
  CollapseFiles({path, path, path}, {}, sink, &report);
  EXPECT_EQ(sink.data(), "a;b 18446744073709551615\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("2^64-1"), std::string::npos);
}

// A single count too large to hold, as an integer or scaled to its decimals, is kept at the
// largest weight and said, as a sum that saturates is: never cut to a tenth, never silent.
TEST(Saturation, ACountTooLargeIsSaid) {
  FoldedLine fl;
  ASSERT_TRUE(ParseFoldedLine("a;b 99999999999999999999999", 1, &fl));
  EXPECT_TRUE(fl.too_large);
  EXPECT_TRUE(fl.Saturates(0));
  ASSERT_TRUE(ParseFoldedLine("a;b 18446744073709551615.5", 1, &fl));
  EXPECT_FALSE(fl.too_large);
  EXPECT_TRUE(fl.Saturates(1));
  ASSERT_TRUE(ParseFoldedLine("a;b 18446744073709551615", 1, &fl));
  EXPECT_FALSE(fl.Saturates(0));  // 2^64-1 itself fits
  for (const char* line : {"a;b 99999999999999999999999\n", "a;b 18446744073709551615.5\n"}) {
    std::string path = TempFile("huge.folded", line);
    StringSink sink;
    ReadReport report;
    CollapseFiles({path}, {}, sink, &report);
    ASSERT_EQ(report.warnings.size(), 1u) << line;
    EXPECT_NE(report.warnings[0].find("2^64-1"), std::string::npos) << line;
  }
}

// ---------------------------------------------------------------------------------------------
// Deep stacks: every per-stack pass is linear in the depth (the report searched the frames
// seen for each frame: 400,000 frames took minutes).

TEST(DeepStack, DiffReportIsLinear) {
  std::string stack;
  for (int i = 0; i < 400000; ++i) stack += (i ? ";f" : "f") + std::to_string(i);
  std::string a = TempFile("deep1.folded", stack + " 5\n");
  std::string b = TempFile("deep2.folded", stack + " 7\n");
  auto start = std::chrono::steady_clock::now();
  DiffOptions o;
  o.report = true;
  o.limit = 3;
  StringSink sink;
  ReadReport report;
  DiffFiles(a, b, o, sink, &report);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(sink.data().find("+2"), std::string::npos);
  EXPECT_LT(seconds, 8.0);
}

}  // namespace
}  // namespace pf
