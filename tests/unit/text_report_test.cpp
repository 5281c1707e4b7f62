// pf-dot's text reports (callgraph/text_report.h): pprof's value labels, units and
// percentages; the report's order and pruning; names elided to a terminal's width.

#include "callgraph/text_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "callgraph/source_list.h"
#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {
namespace {

StackTree Tree(const std::vector<std::pair<std::vector<std::string>, uint64_t>>& stacks,
               WeightUnit unit) {
  StackTree t;
  for (const auto& [frames, w] : stacks) {
    std::vector<StrId> path;
    for (const std::string& f : frames) path.push_back(t.names().Intern(f));
    t.AddStack(path, w);
  }
  t.set_unit(unit);
  return t;
}

std::string Report(const StackTree& tree, TextReportOptions r, CallGraphOptions o = {}) {
  o.pprof_selection = true;
  o.cum_order = r.cum;
  if (r.kind == TextReportOptions::Kind::kTop) o.nodecount = 0;
  CallGraph g = BuildCallGraph(tree, o);
  StringSink sink;
  BufferedWriter w(sink);
  WriteTextReport(g, r, w);
  w.Flush();
  return sink.data();
}

TEST(TextReport, ValuesAndPercentagesAsPprofPrintsThem) {
  EXPECT_EQ(FormatReportValue(1770000000, 0, "s"), "1.77s");
  EXPECT_EQ(FormatReportValue(10000000, 0, "s"), "0.01s");
  EXPECT_EQ(FormatReportValue(0, 0, "s"), "0");
  EXPECT_EQ(FormatReportValue(1000, 0, "s"), "0");  // below 0.005 s
  EXPECT_EQ(FormatReportValue(1536, 0, "kB"), "1.50kB");
  EXPECT_EQ(FormatReportValue(2048, 0, "kB"), "2kB");
  EXPECT_EQ(FormatReportValue(12, 0, ""), "12");
  EXPECT_EQ(FormatReportValue(15, 1, ""), "1.50");  // a weight of 1.5 (one decimal)
  EXPECT_EQ(ReportPercentage(1180, 1770), "66.67%");
  EXPECT_EQ(ReportPercentage(10, 1770), " 0.56%");
  EXPECT_EQ(ReportPercentage(1770, 1770), "  100%");
  EXPECT_EQ(ReportPercentage(0, 1770), "    0%");
  EXPECT_EQ(ReportPercentage(1, 100000), "0.001%");
}

// pprof's output unit: the smallest value's, unless the total's is larger and the smallest is
// below a hundredth of it, then the unit that shows the smallest as at least 0.01.
TEST(TextReport, OneUnitForTheWholeReport) {
  CallGraph g;
  g.unit = WeightUnit::kNanoseconds;
  g.total = 1770000000;
  g.nodes.push_back({"a", "", 1770000000, 10000000, {}, 0});
  EXPECT_EQ(ReportUnit(g), "s");  // 10 ms < 1.77 s / 100: 0.01 s
  g.nodes[0].self = 500;
  EXPECT_EQ(ReportUnit(g), "us");  // 500 ns, below 1.77 s / 100: the unit of 100 x 500 ns
  g.nodes[0].self = 900000000;
  EXPECT_EQ(ReportUnit(g), "ms");  // 900 ms and 1.77 s, within 100x: the smallest's
  g.unit = WeightUnit::kSamples;
  EXPECT_EQ(ReportUnit(g), "");
}

TEST(TextReport, TopOrdersByFlatThenNameAndSumsTheFlats) {
  StackTree t = Tree({{{"main", "b"}, 30}, {{"main", "a"}, 30}, {{"main", "c"}, 40},
                      {{"main"}, 0}},
                     WeightUnit::kSamples);
  TextReportOptions r;
  EXPECT_EQ(Report(t, r),
            "Unit: samples\n"
            "Showing nodes accounting for 100, 100% of 100 total\n"
            "flat  flat%   sum%  cum   cum%\n"
            "  40 40.00% 40.00%   40 40.00%  c\n"
            "  30 30.00% 70.00%   30 30.00%  a\n"
            "  30 30.00%   100%   30 30.00%  b\n"
            "   0     0%   100%  100   100%  main\n");
  r.cum = true;
  std::string cum = Report(t, r);
  EXPECT_LT(cum.find("  main\n"), cum.find("  c\n"));
  EXPECT_LT(cum.find("  a\n"), cum.find("  b\n"));
}

// Recursion counts once in cum; the tree has no edge from a function to itself, and each
// edge's share is of the node's cum.
TEST(TextReport, TreeCountsRecursionOnce) {
  StackTree t = Tree({{{"main", "f", "f", "g"}, 3}, {{"main", "f"}, 1}}, WeightUnit::kSamples);
  TextReportOptions r;
  r.kind = TextReportOptions::Kind::kTree;
  std::string tree = Report(t, r);
  EXPECT_NE(tree.find("   1 25.00%   100%    4   100%                | f\n"), std::string::npos)
      << tree;
  const size_t own = tree.find("| f\n");  // f's block: no edge to or from itself
  const size_t begin = tree.rfind("+-", own), end = tree.find("+-", own);
  ASSERT_NE(own, std::string::npos);
  EXPECT_EQ(tree.substr(begin, end - begin).find("|   f\n"), std::string::npos) << tree;
  EXPECT_NE(tree.find("      3 75.00% |   g\n"), std::string::npos) << tree;
  r.kind = TextReportOptions::Kind::kPeek;
  r.peek = "^g$";
  std::string peek = Report(t, r);
  EXPECT_EQ(peek.find("| main"), std::string::npos) << peek;
  EXPECT_NE(peek.find("| g\n"), std::string::npos) << peek;
  r.peek = "nothing";
  EXPECT_THROW(Report(t, r), Error);
  r.peek = "(";
  EXPECT_THROW(Report(t, r), UsageError);
}

// On a terminal, long names are elided in the middle to fit its width; distinct names stay
// distinct. Elsewhere they are whole.
TEST(TextReport, NamesFitATerminal) {
  const std::string a = "ns::Outer<std::map<int, std::vector<long>>>::Inner<char>::alpha";
  const std::string b = "ns::Outer<std::map<int, std::vector<long>>>::Inner<char>::beta";
  StackTree t = Tree({{{a}, 2}, {{b}, 1}}, WeightUnit::kSamples);
  TextReportOptions r;
  EXPECT_NE(Report(t, r).find(a), std::string::npos);
  r.width = 60;
  std::string narrow = Report(t, r);
  EXPECT_EQ(narrow.find(a), std::string::npos);
  EXPECT_NE(narrow.find("alpha\n"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("beta\n"), std::string::npos) << narrow;
  for (size_t at = 0, end; (end = narrow.find('\n', at)) != std::string::npos; at = end + 1) {
    if (narrow.compare(at, 6, "Unit: ") && narrow.compare(at, 8, "Showing ")) {
      EXPECT_LE(end - at, 60u) << narrow.substr(at, end - at);
    }
  }
}

// --list's frames: "func:file:line", the function's name keeping its own colons.
TEST(SourceList, SplitsFramesWithTheirLine) {
  std::string_view func, file;
  int64_t line = 0;
  ASSERT_TRUE(SplitSrclineFrame("ns::f<a::b>:/src/x.cc:12", &func, &file, &line));
  EXPECT_EQ(func, "ns::f<a::b>");
  EXPECT_EQ(file, "/src/x.cc");
  EXPECT_EQ(line, 12);
  ASSERT_TRUE(SplitSrclineFrame("spin:callpath.c:34", &func, &file, &line));
  EXPECT_EQ(func, "spin");
  for (const char* plain : {"main", "ns::f", "f:12", "f::12", "f:x.c:", "f:x.c:0", "f:x.c:1a",
                            ":x.c:3"}) {
    EXPECT_FALSE(SplitSrclineFrame(plain, &func, &file, &line)) << plain;
  }
}

// Each line's flat (its samples' leaves) and cum (once per sample, also when a recursive
// function is on the stack twice at the same line), as pprof counts lines.
TEST(SourceList, LinesCountOncePerSample) {
  StackTree t = Tree({{{"main:m.c:3", "f:m.c:10", "f:m.c:10", "g:m.c:20"}, 5},
                      {{"main:m.c:3", "f:m.c:11"}, 2}},
                     WeightUnit::kSamples);
  CallGraphOptions o;
  SourceListOptions l;
  l.regex = "^f$";
  l.source_path = {"/nonexistent"};
  StringSink sink;
  BufferedWriter w(sink);
  WriteSourceList(t, o, l, w);
  w.Flush();
  EXPECT_EQ(sink.data(),
            "Total: 7\n"
            "ROUTINE ======================== f in m.c\n"
            "         2          7 (flat, cum)   100% of Total\n"
            " Error: m.c: no such file here or under --source-path\n");
}

}  // namespace
}  // namespace pf
