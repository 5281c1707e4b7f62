#include "stacks/folded.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "test_util.h"

namespace pf {
namespace {

std::string Write(const StackTree& t) {
  StringSink sink;
  BufferedWriter w(sink, 16);  // a tiny buffer exercises flushing
  WriteFolded(t, w);
  w.Flush();
  return sink.data();
}

std::string Fold(const std::string& text, int columns = 1) {
  StackTree t = TreeForFolded(columns);
  FoldedReader r(t);
  r.AddBlock(text, 1, "x.folded");
  return Write(t);
}

TEST(FoldedLine, Parses) {
  FoldedLine fl;
  ASSERT_TRUE(ParseFoldedLine("a;b;c 12", 1, &fl));
  EXPECT_EQ(fl.stack, "a;b;c");
  EXPECT_EQ(fl.counts[0], 12u);
  ASSERT_TRUE(ParseFoldedLine("a b;c d\t 7\r", 1, &fl));  // spaces in names, tab, CR
  EXPECT_EQ(fl.stack, "a b;c d\t");  // one blank separates the count, as in flamegraph.pl
  EXPECT_EQ(fl.counts[0], 7u);
  ASSERT_TRUE(ParseFoldedLine("a;  3", 1, &fl));
  EXPECT_EQ(fl.stack, "a; ");  // the last frame is " "
  EXPECT_EQ(fl.counts[0], 3u);
  ASSERT_TRUE(ParseFoldedLine("a;b 3 9", 0, &fl));
  EXPECT_EQ(fl.ncounts, 2);
  EXPECT_EQ(fl.counts[0], 3u);
  EXPECT_EQ(fl.counts[1], 9u);
  ASSERT_TRUE(ParseFoldedLine("a;b 3 9", 1, &fl));  // one column: "b 3" is a name
  EXPECT_EQ(fl.stack, "a;b 3");
  EXPECT_EQ(fl.counts[0], 9u);
  ASSERT_TRUE(ParseFoldedLine("a 12.5", 1, &fl));
  EXPECT_TRUE(fl.fractional);
  EXPECT_EQ(fl.counts[0], 12u);
  ASSERT_TRUE(ParseFoldedLine("a 12.000", 1, &fl));
  EXPECT_FALSE(fl.fractional);
  ASSERT_TRUE(ParseFoldedLine("a 99999999999999999999999", 1, &fl));
  EXPECT_EQ(fl.counts[0], UINT64_MAX);
  for (const char* bad : {"a", "a;b", "12", " 12", "a;b -5", "a;b 1e3", "a;b 5x", "a;b5", ""}) {
    EXPECT_FALSE(ParseFoldedLine(bad, 1, &fl)) << bad;
  }
  EXPECT_FALSE(ParseFoldedLine("a 5", 2, &fl));
}

TEST(FoldedReader, SumsRepeatsAndReportsMalformedLines) {
  StackTree t;
  FoldedReader r(t);
  r.AddBlock("a;b 1\n# comment\n\na;b 2\r\nbad line\na;c 4\nalso bad\na 1", 10, "x.folded");
  EXPECT_EQ(Write(t), "a 1\na;b 3\na;c 4\n");
  EXPECT_EQ(r.malformed().count, 2u);
  EXPECT_EQ(r.malformed().first_file, "x.folded");
  EXPECT_EQ(r.malformed().first_line, 14u);
  EXPECT_EQ(r.stacks_read(), 4u);
}

// One reader for every path: a '\r' before the '\n' is dropped, so a blank line of a CRLF
// file is blank (not malformed) and pf's comment keeps no '\r'.
TEST(FoldedLines, CrlfBlankLinesCommentsAndLineNumbers) {
  FoldedLines lines("a;b 1\r\n \r\n\t\r\n# note\r\n# pf-diff: before=x after=y\r\nbad\r\na 2 3\r\n",
                    0, 7);
  std::vector<std::string> got;
  while (lines.Next()) {
    std::string kind = lines.kind() == FoldedLines::kStack       ? "stack"
                       : lines.kind() == FoldedLines::kPfComment ? "comment"
                                                                 : "bad";
    got.push_back(kind + ":" + std::to_string(lines.line_number()) + ":" +
                  std::string(lines.line()));
    if (lines.kind() == FoldedLines::kStack) {
      got.back() += "=" + std::string(lines.folded().stack) + "/" +
                    std::to_string(lines.folded().ncounts);
    }
  }
  EXPECT_EQ(got, (std::vector<std::string>{"stack:7:a;b 1=a;b/1",
                                           "comment:11:# pf-diff: before=x after=y", "bad:12:bad",
                                           "stack:13:a 2 3=a/2"}));
  EXPECT_EQ(FoldedColumns("# x\n\nbad\na;b 1 2\n"), 2);
  EXPECT_EQ(FoldedColumns("a;b 1\n"), 1);
  EXPECT_EQ(FoldedColumns("# only\n"), 0);
}

TEST(FoldedReader, CrlfBlankLinesAreNotMalformed) {
  StackTree t;
  FoldedReader r(t);
  r.AddBlock("a;b 1\r\n \r\n\t\r\n# pf-diff: before=x after=y\r\n", 1, "x.folded");
  EXPECT_EQ(r.malformed().count, 0u);
  EXPECT_EQ(r.pf_comments(), (std::vector<std::string>{"# pf-diff: before=x after=y"}));
}

TEST(FoldedUnitLine, WrittenFirstWhenTheUnitIsKnownAndNotSamples) {
  EXPECT_EQ(PfUnitLine(WeightUnit::kNanoseconds), "# pf-unit: nanoseconds\n");
  EXPECT_EQ(PfUnitLine(WeightUnit::kBytes), "# pf-unit: bytes\n");
  EXPECT_EQ(PfUnitLine(WeightUnit::kSamples), "");
  EXPECT_EQ(PfUnitLine(WeightUnit::kUnspecified), "");
  StackTree t;
  t.AddStack(std::vector<StrId>{t.names().Intern("a"), t.names().Intern("b")}, 5);
  EXPECT_EQ(Write(t), "a;b 5\n");
  t.set_unit(WeightUnit::kSamples);
  EXPECT_EQ(Write(t), "a;b 5\n");
  t.set_unit(WeightUnit::kEvents);
  EXPECT_EQ(Write(t), "# pf-unit: events\na;b 5\n");
  StackTree d = StackTree::Differential({"cpu", WeightUnit::kNanoseconds});
  NodeId leaf = d.AddStack(std::vector<StrId>{d.names().Intern("a")}, 1, 0);
  d.AddSelf(leaf, 2, 1);
  EXPECT_EQ(Write(d), "# pf-unit: nanoseconds\na 1 2\n");
  // A tree of several values per stack is written as its default one-value view.
  StackTree heap({{"alloc_objects", WeightUnit::kObjects}, {"alloc_space", WeightUnit::kBytes}});
  NodeId h = heap.AddStack(std::vector<StrId>{heap.names().Intern("m")}, 3, 0);
  heap.AddSelf(h, 4096, 1);
  EXPECT_EQ(Write(heap), "# pf-unit: bytes\nm 4096\n");
  EXPECT_EQ(Write(OneValue(heap, "alloc_objects")), "# pf-unit: objects\nm 3\n");
}

TEST(FoldedUnitLine, ReadBack) {
  WeightUnit u = WeightUnit::kSamples;
  EXPECT_TRUE(ParsePfUnitLine("# pf-unit: nanoseconds", &u));
  EXPECT_EQ(u, WeightUnit::kNanoseconds);
  EXPECT_TRUE(ParsePfUnitLine("# pf-unit:  bytes \t", &u));
  EXPECT_EQ(u, WeightUnit::kBytes);
  EXPECT_TRUE(ParsePfUnitLine("# pf-unit: furlongs", &u));  // a unit line, of no known unit
  EXPECT_EQ(u, WeightUnit::kUnspecified);
  EXPECT_FALSE(ParsePfUnitLine("# pf-diff: before=a after=b", &u));
  EXPECT_FALSE(ParsePfUnitLine("# pf-units: events", &u));

  // The reader takes the unit (it is no pf comment for pf_comments) and the stacks alike.
  StackTree t;
  FoldedReader r(t);
  r.AddBlock("# pf-diff: before=x after=y\n# pf-unit: nanoseconds\r\na;b 5\n", 1, "x.folded");
  EXPECT_EQ(r.unit().unit(), WeightUnit::kNanoseconds);
  EXPECT_EQ(r.unit().warning(), "");
  EXPECT_EQ(r.pf_comments(), (std::vector<std::string>{"# pf-diff: before=x after=y"}));
  EXPECT_EQ(r.malformed().count, 0u);
  EXPECT_EQ(Write(t), "a;b 5\n");  // the tree's unit is the caller's to set

  // Files concatenated: units that disagree are no unit, said once.
  FoldedUnit mixed;
  EXPECT_TRUE(mixed.Take("# pf-unit: nanoseconds", "m", 1));
  EXPECT_TRUE(mixed.Take("# pf-unit: nanoseconds", "m", 5));
  EXPECT_EQ(mixed.unit(), WeightUnit::kNanoseconds);
  EXPECT_TRUE(mixed.Take("# pf-unit: events", "m", 9));
  EXPECT_TRUE(mixed.Take("# pf-unit: nanoseconds", "m", 12));
  EXPECT_EQ(mixed.unit(), WeightUnit::kUnspecified);
  EXPECT_EQ(mixed.warning(), "m:9: `# pf-unit: events` disagrees with the unit line before it; "
                             "the counts are read as samples");
  FoldedUnit unknown;
  EXPECT_TRUE(unknown.Take("# pf-unit: furlongs", "f", 1));
  EXPECT_EQ(unknown.unit(), WeightUnit::kUnspecified);
  EXPECT_EQ(unknown.warning(), "f:1: `# pf-unit: furlongs` names no unit pf knows; the counts "
                               "are read as samples");
}

TEST(FoldedWriter, SortsLikeTheWholeLines) {
  // flamegraph.pl's pitfall: "foo::bar" sorts between "foo" and "foo;baz".
  std::vector<std::string> lines = {"main;foo;baz 50", "main;foo::bar 30", "main;foo 20",
                                    "main 1",          "main;foo-x;y 2",  "main;foo;baz;q 1",
                                    "Main;a 1",        "main;;x 3",       "main;fo 4"};
  std::string in;
  for (auto& l : lines) in += l + "\n";
  std::string out = Fold(in);
  std::vector<std::string> keys;
  for (auto& l : lines) keys.push_back(l);
  std::sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
    return a.substr(0, a.rfind(' ')) < b.substr(0, b.rfind(' '));
  });
  std::string want;
  for (auto& k : keys) want += k + "\n";
  EXPECT_EQ(out, want);
}

TEST(FoldedWriter, RandomStacksMatchAPlainSort) {
  std::mt19937 rng(7);
  const char* names[] = {"a", "a:", "a::b", "a;", "b", "ab", "a b", "", "a-", "Z", "a\xc3\xa9"};
  std::map<std::string, uint64_t> want;
  std::string in;
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    int depth = 1 + rng() % 5;
    for (int d = 0; d < depth; ++d) {
      std::string n = names[rng() % 11];
      if (n.find(';') != std::string::npos) n = "x";
      s += (d ? ";" : "") + n;
    }
    if (s.empty()) continue;
    uint64_t c = 1 + rng() % 100;
    want[s] += c;
    in += s + " " + std::to_string(c) + "\n";
  }
  std::string expected;
  for (auto& [k, v] : want) expected += k + " " + std::to_string(v) + "\n";
  EXPECT_EQ(Fold(in), expected);
}

TEST(FoldedWriter, TwoColumnsAndDeepStacks) {
  EXPECT_EQ(Fold("a;b 1 2\na;b 3 4\na 0 5\n", 2), "a 0 5\na;b 4 6\n");
  std::string deep;
  for (int i = 0; i < 200000; ++i) deep += "f;";
  deep += "leaf 1\n";
  std::string out = Fold(deep);  // no recursion: a deep stack must not overflow
  EXPECT_EQ(out, deep);
}

// The frames of stacks with ';' anywhere (first, last, doubled), of every length to 300 and
// at every offset in their buffer, are those of a plain split.
TEST(ForEachFrame, SplitsLikeAPlainLoop) {
  std::mt19937 rng(7);
  std::string buffer(400, 'x');
  for (size_t length = 0; length <= 300; ++length) {
    for (int trial = 0; trial < 8; ++trial) {
      for (size_t i = 0; i < buffer.size(); ++i) {
        buffer[i] = rng() % 5 == 0 ? ';' : static_cast<char>('a' + rng() % 26);
      }
      const size_t offset = rng() % (buffer.size() - length + 1);
      const std::string_view stack(buffer.data() + offset, length);
      std::vector<std::string_view> want, got;
      size_t start = 0;
      for (size_t i = 0; i <= length; ++i) {
        if (i == length || stack[i] == ';') {
          want.push_back(stack.substr(start, i - start));
          start = i + 1;
        }
      }
      ForEachFrame(stack, [&](std::string_view f) { got.push_back(f); });
      ASSERT_EQ(got, want) << length << " bytes at " << offset;
    }
  }
}

}  // namespace
}  // namespace pf
