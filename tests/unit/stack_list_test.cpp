// Tests of StackList (the distinct stacks of folded text in any order) and of the flame
// graphs drawn from it (DrawFoldedInAnyOrder): equal to what the stack tree path draws, on
// shuffled stacks of every shape, and left to the tree path where it has more to say.
#include "stacks/stack_list.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "app/files.h"
#include "diff/diff.h"
#include "io/input.h"
#include "io/output.h"
#include "render/flame.h"
#include "render/svg_writer.h"

namespace pf {
namespace {

// The folded text of a stack's frames.
std::string Text(const std::vector<std::string>& frames) {
  std::string out;
  for (const std::string& f : frames) {
    if (!out.empty()) out += ';';
    out += f;
  }
  return out;
}

std::string Joined(const StackList& list, uint32_t s) {
  std::string out;
  for (StrId id : list.frames(s)) {
    if (!out.empty()) out += ';';
    out += list.names().Name(id);
  }
  return out;
}

TEST(StackList, SumsTheCountsOfAStackSeenAgain) {
  StackList list(2);
  uint64_t one[2] = {1, 2}, two[2] = {10, 20};
  list.Add(Text({"main", "f"}), one);
  list.Add(Text({"main"}), one);
  list.Add(Text({"main", "f"}), two);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(Joined(list, 0), "main;f");
  EXPECT_EQ(list.count(0, 0), 11u);
  EXPECT_EQ(list.count(0, 1), 22u);
  EXPECT_EQ(list.count(1, 1), 2u);
  uint64_t big[2] = {UINT64_MAX, 0};
  list.Add(Text({"main"}), big);
  EXPECT_EQ(list.count(1, 0), UINT64_MAX);
  EXPECT_EQ(list.saturated(), 1u);
}

TEST(StackList, SortsFrameByFrameWithPrefixesFirst) {
  StackList list;
  uint64_t one = 1;
  // Whole lines sort "foo;baz" after "foo::bar" (';' > ':'); frame by frame, foo's children
  // come under foo, before the sibling foo::bar.
  for (auto stack : std::vector<std::vector<std::string>>{{"foo::bar"},
                                                          {"foo", "baz"},
                                                          {"b", "x", "y", "z"},
                                                          {"foo"},
                                                          {"b", "x", "y"},
                                                          {"b", "x", "a", "z"},
                                                          {"a"}}) {
    list.Add(Text(stack), &one);
  }
  std::vector<std::string> got;
  for (uint32_t s : list.SortedOrder()) got.push_back(Joined(list, s));
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b;x;a;z", "b;x;y", "b;x;y;z", "foo", "foo;baz",
                                           "foo::bar"}));
}

TEST(StackList, SortsLinesBytewise) {
  StackList list;
  uint64_t one = 1;
  // As LC_ALL=C sort orders the lines: ':' (0x3a) < ';' (0x3b) < 'a'.
  for (auto stack : std::vector<std::vector<std::string>>{{"foo", "baz"},
                                                          {"foo::bar"},
                                                          {"foo"},
                                                          {"foo", "baz", "q"},
                                                          {"fo"},
                                                          {"foob"},
                                                          {"b", "x"},
                                                          {"a b"},
                                                          {""}}) {
    list.Add(Text(stack), &one);
  }
  std::vector<std::string> got;
  for (uint32_t s : list.LineOrder()) got.push_back(Joined(list, s));
  std::vector<std::string> want = got;
  std::sort(want.begin(), want.end());  // std::string compares bytewise, as the lines
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.front(), "");
  EXPECT_EQ(got[1], "a b");
}

// Enough stacks for the radix sorts' every path: the first sort's buckets, runs of one key
// past the small runs' size and below it, keys that run out (prefixes), frames past the key.
TEST(StackList, SortsManyStacksAsStringsDo) {
  std::mt19937 rng(29);
  const std::vector<std::string> names = {"a", "b", "a::b", "b::a", "c", "a;", "x_[k]", "", "a b"};
  // (Text and Joined drop the ';' after an empty first name: not here.)
  auto join = [](const auto& frames, auto name) {
    std::string out;
    for (size_t i = 0; i < frames.size(); ++i) {
      if (i) out += ';';
      out += name(frames[i]);
    }
    return out;
  };
  auto as_is = [](const std::string& n) { return n; };
  StackList list;
  std::vector<std::vector<std::string>> stacks;
  uint64_t one = 1;
  for (int i = 0; i < 40000; ++i) {
    // Deep stacks over few names: long runs of one key; a few shallow ones.
    // Most stacks share a trunk longer than a sort key: runs of one key of every size.
    std::vector<std::string> st;
    if (rng() % 5 != 0) st = {"main", "run", "loop", "step", "a", "b", "c", "a", "b", "c"};
    const int depth =
        i % 50 == 0 ? 1 + static_cast<int>(rng() % 3) : 4 + static_cast<int>(rng() % 12);
    for (int d = 0; d < depth; ++d) {
      std::string n = names[rng() % names.size()];
      if (n == "a;") n = 't' + std::to_string(rng() % 300);  // many names: wide ranks
      st.push_back(n);
    }
    list.Add(join(st, as_is), &one);
    stacks.push_back(st);
  }
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  ASSERT_EQ(list.size(), stacks.size());
  // Frame by frame: as vectors of names compare (a prefix first).
  auto listed = [&](uint32_t s) {
    return join(list.frames(s), [&](StrId id) { return std::string(list.names().Name(id)); });
  };
  std::vector<std::string> want, got;
  for (const auto& st : stacks) want.push_back(join(st, as_is));
  for (uint32_t s : list.SortedOrder()) got.push_back(listed(s));
  EXPECT_EQ(got, want);
  // Line by line: as the texts compare.
  std::sort(want.begin(), want.end());
  got.clear();
  for (uint32_t s : list.LineOrder()) got.push_back(listed(s));
  EXPECT_EQ(got, want);
}

// Frames are kept in chunks of 2^20: stacks on both sides of a chunk's end, and a stack
// longer than a chunk, keep their frames.
TEST(StackList, KeepsFramesAcrossChunks) {
  StackList list;
  uint64_t one = 1;
  const int kShort = 250000;  // 5 frames each: a chunk's end falls among them
  for (int i = 0; i < kShort; ++i) {
    list.Add("r;" + std::to_string(i % 7) + ";" + std::to_string(i) + ";x;y", &one);
  }
  std::string big;
  const size_t kLong = (size_t{1} << 20) + 12345;
  big.reserve(kLong * 2);
  for (size_t i = 0; i < kLong; ++i) big += i ? (i % 3 ? ";b" : ";c") : "a";
  list.Add(big, &one);
  list.Add("after;it", &one);
  ASSERT_EQ(list.size(), static_cast<size_t>(kShort) + 2);
  for (int i = 0; i < kShort; i += 997) {
    EXPECT_EQ(Joined(list, i), "r;" + std::to_string(i % 7) + ";" + std::to_string(i) + ";x;y");
  }
  EXPECT_EQ(Joined(list, kShort - 1),
            "r;" + std::to_string((kShort - 1) % 7) + ";" + std::to_string(kShort - 1) + ";x;y");
  EXPECT_EQ(Joined(list, kShort), big);
  EXPECT_EQ(Joined(list, kShort + 1), "after;it");
}

TEST(StackList, GrowsAndKeepsEveryStack) {
  StackList list;
  uint64_t one = 1;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 5000; ++i) list.Add(Text({"root", std::to_string(i)}), &one);
  }
  ASSERT_EQ(list.size(), 5000u);
  for (uint32_t s = 0; s < list.size(); ++s) EXPECT_EQ(list.count(s, 0), 2u);
}

// A directory of this process's own (ctest runs tests at once), removed at exit.
std::string ScratchDir() {
  static const struct Dir {
    std::string path = ::testing::TempDir() + "/pf_list_" + std::to_string(getpid());
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() { std::filesystem::remove_all(path); }
  } dir;
  return dir.path;
}

// Random stacks over a small alphabet (so that prefixes, extensions and repeats abound).
const std::vector<std::string> kNames = {"a", "b",   "a::b",  "b::a", "c",  "[unknown]",
                                         "x_[k]", "", "a b", "a b.c", "a-", "a::b::c"};

std::vector<std::string> RandomLines(int n, bool differential, std::mt19937& rng) {
  const std::vector<std::string>& names = kNames;
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    std::string line;
    int depth = 1 + static_cast<int>(rng() % 6);
    for (int d = 0; d < depth; ++d) {
      if (d) line += ';';
      line += names[rng() % names.size()];
    }
    if (line.empty()) line.push_back('e');
    // Mostly small counts, some large: frames of every width, pruned at every depth.
    auto count = [&rng] { return rng() % 8 == 0 ? rng() % 100000 : rng() % 5; };
    for (int c = 0; c < (differential ? 2 : 1); ++c) {
      line += ' ';
      line += std::to_string(count());
    }
    lines.push_back(line);
  }
  return lines;
}

// "" when `a` and `b` are equal, else their first line that differs (a whole SVG is too
// long to read in a failure).
std::string FirstDifference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  size_t at = std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin();
  size_t from = a.rfind('\n', at == 0 ? 0 : at - 1);
  from = from == std::string::npos ? 0 : from + 1;
  auto line = [from](const std::string& s) { return s.substr(from, s.find('\n', from) - from); };
  return "line at byte " + std::to_string(from) + ":\n  " + line(a) + "\n  " + line(b);
}

std::string Svg(const FlameLayout& layout, const FlameOptions& o) {
  StringSink sink;
  BufferedWriter w(sink);
  WriteSvg(layout, o, w);
  w.Flush();
  return sink.data();
}

void Write(const std::string& path, const std::vector<std::string>& lines, size_t from,
           size_t to, const std::string& head = "") {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << head;
  for (size_t i = from; i < to; ++i) out << lines[i] << '\n';
}

TEST(FoldedInAnyOrder, DrawsWhatTheTreeDraws) {
  std::mt19937 rng(11);
  const std::string dir = ScratchDir();
  const std::vector<std::string> files = {dir + "/list_a.folded", dir + "/list_b.folded"};
  for (bool differential : {false, true}) {
    for (int round = 0; round < 20; ++round) {
      std::vector<std::string> lines = RandomLines(200, differential, rng);
      std::string head = round % 3 == 0 ? "# pf-unit: nanoseconds\n" : "";
      Write(files[0], lines, 0, 100, head);
      Write(files[1], lines, 100, 200, head);
      FlameOptions o;
      // Pruned frames leave their gaps alike, whatever decides the width that is pruned
      // (the walk plans them ahead: FlowBuilder::AddPruned).
      o.minwidth = round % 2 ? 0.1 : 3;
      if (round % 5 == 4) o.minwidth = 0;
      if (round % 7 == 6) o.minwidth_percent = true, o.minwidth = 0.5;
      if (round % 4 == 3) o.total = 5000000;
      std::vector<std::string> wl, wt;
      std::vector<std::unique_ptr<ByteSource>> sources;
      std::vector<ByteSource*> views;
      for (const std::string& f : files) {
        sources.push_back(OpenInput(f));
        views.push_back(sources.back().get());
      }
      FlameLayout list_layout;
      ASSERT_TRUE(DrawFoldedInAnyOrder(views, o, &wl, &list_layout)) << round;
      ReadReport report;
      FlameLayout tree_layout = BuildFlameGraph(CollapseFilesToTree(files, {}, &report), o, &wt);
      EXPECT_EQ(Svg(list_layout, o), Svg(tree_layout, o)) << "round " << round;
      EXPECT_EQ(wl, wt);
    }
  }
}

// One sorted file streamed into the frame merger (StreamSortedFolded) draws what the tree
// draws, or is left to the StackList: counts of every size are pruned at every depth, and
// names that extend each other ("a", "a b", "a::b") close and reopen frames, or come out of
// frame order ("a b;x" sorts before "a;y").
TEST(SortedFolded, StreamsWhatTheTreeDraws) {
  std::mt19937 rng(17);
  const std::string path = ScratchDir() + "/sorted.folded";
  int streamed_rounds = 0;
  for (bool differential : {false, true}) {
    for (int round = 0; round < 30; ++round) {
      std::vector<std::string> lines = RandomLines(150 + round * 20, differential, rng);
      std::sort(lines.begin(), lines.end());  // bytewise, as LC_ALL=C sort
      Write(path, lines, 0, lines.size(), round % 5 == 0 ? "# pf-unit: nanoseconds\n" : "");
      FlameOptions o;
      o.minwidth = round % 2 ? 0.1 : 3;
      if (round % 5 == 4) o.minwidth = 0;
      if (round % 7 == 6) o.minwidth_percent = true, o.minwidth = 0.5;
      if (round % 4 == 3) o.total = 5000000;
      std::unique_ptr<ByteSource> src = OpenInput(path);
      std::vector<std::string> ws, wt;
      FlameLayout streamed;
      if (!StreamSortedFolded(*src, o, &ws, &streamed)) continue;
      ++streamed_rounds;
      ReadReport report;
      FlameLayout tree = BuildFlameGraph(CollapseFilesToTree({path}, {}, &report), o, &wt);
      EXPECT_EQ(FirstDifference(Svg(streamed, o), Svg(tree, o)), "") << "round " << round;
      EXPECT_EQ(ws, wt);
    }
  }
  EXPECT_GE(streamed_rounds, 45);  // not those of --minwidth 0 with empty stacks
}

TEST(SortedFolded, ReopensAFrameOrPutsItBeforeItsExtensions) {
  const std::string path = ScratchDir() + "/reopen.folded";
  auto streamed_as_tree = [&](std::vector<std::string> lines) {
    std::sort(lines.begin(), lines.end());
    Write(path, lines, 0, lines.size());
    std::unique_ptr<ByteSource> src = OpenInput(path);
    std::vector<std::string> w;
    FlameLayout streamed;
    FlameOptions o;
    o.minwidth = 2;
    if (!StreamSortedFolded(*src, o, &w, &streamed)) return false;
    ReadReport report;
    return Svg(streamed, o) == Svg(BuildFlameGraph(CollapseFilesToTree({path}, {}, &report), o, &w), o);
  };
  EXPECT_TRUE(streamed_as_tree({"x;foo 500", "x;foo::bar 1", "x;foo;baz 700"}));  // reopened
  // Frame by frame, foo goes before foo::bar and foo.cold, kept or removed, and after a
  // sibling removed before them.
  EXPECT_TRUE(streamed_as_tree({"x;foo::bar 300", "x;foo;baz 700"}));
  EXPECT_TRUE(streamed_as_tree({"x;a 1", "x;foo.cold 1", "x;foo.cold;a 1", "x;foo;baz 700"}));
  EXPECT_TRUE(streamed_as_tree({"x;a 1", "x;f 1", "x;f-a 1", "x;f-a;b 300", "x;f-a.b 1",
                                "x;f-a.b;c 1", "x;f-a;c 1", "x;f;g 900"}));
  EXPECT_TRUE(streamed_as_tree({"c;a::b 65676", "c;a;a b;a 4"}));
  EXPECT_TRUE(streamed_as_tree({"c;a 65676", "c;a.b 4", "c;a;b 4"}));
  EXPECT_TRUE(streamed_as_tree({"x;foo;baz 7", "x;foo_bar 1"}));
}

// pf-diff of two folded files in any order: what the trees give, with and without -n.
TEST(FoldedInAnyOrder, DiffsAsTheTreesDo) {
  std::mt19937 rng(5);
  const std::string dir = ScratchDir();
  const std::string before = dir + "/diff_b.folded", after = dir + "/diff_a.folded";
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> lines = RandomLines(300, false, rng);
    std::string head = round % 4 == 0 ? "# pf-unit: bytes\n" : "";
    Write(before, lines, 0, 180, head);
    Write(after, lines, 120, 300, head);
    DiffOptions o;
    o.normalize = round % 2;
    std::unique_ptr<ByteSource> in[2] = {OpenInput(before), OpenInput(after)};
    std::string_view data[2] = {in[0]->Peek(), in[1]->Peek()};
    StringSink listed;
    uint64_t lines_read = 0;
    ASSERT_TRUE(DiffFoldedInAnyOrder(data, "b", "a", o, listed, &lines_read)) << round;
    EXPECT_EQ(lines_read, 360u);
    ReadReport r[2];
    std::vector<std::string> warnings;
    StackTree t = DiffTrees(CollapseFilesToTree({before}, {}, &r[0]),
                            CollapseFilesToTree({after}, {}, &r[1]), "b", "a", o, &warnings);
    StringSink tree;
    WriteDiff(t, "b", "a", o, tree, &warnings);
    EXPECT_EQ(listed.data(), tree.data()) << "round " << round;
  }
}

// pf-collapse of folded files merged as they are: what the tree gives.
TEST(FoldedInAnyOrder, MergesAsTheTreeDoes) {
  std::mt19937 rng(9);
  const std::string dir = ScratchDir();
  const std::vector<std::string> files = {dir + "/merge_a.folded", dir + "/merge_b.folded"};
  for (int round = 0; round < 10; ++round) {
    std::vector<std::string> lines = RandomLines(300, false, rng);
    std::string head = round % 3 == 0 ? "# pf-unit: nanoseconds\n" : "";
    Write(files[0], lines, 0, 200, head);
    Write(files[1], lines, 100, 300, head);
    StringSink merged, tree;
    ReadReport r1, r2;
    CollapseFiles(files, {}, merged, &r1);
    WriteCollapsed(CollapseFilesToTree(files, {}, &r2), tree, &r2);
    EXPECT_EQ(merged.data(), tree.data()) << "round " << round;
    EXPECT_EQ(r1.folded_lines, 400u);
  }
}

// What the tree's readers say more about is left to them, before anything is drawn.
TEST(FoldedInAnyOrder, LeavesToTheTreeWhatItSaysMoreAbout) {
  const std::string dir = ScratchDir();
  const std::string a = dir + "/left_a.folded", b = dir + "/left_b.folded";
  auto refused = [&](const std::vector<std::string>& a_lines,
                     const std::vector<std::string>& b_lines) {
    Write(a, a_lines, 0, a_lines.size());
    Write(b, b_lines, 0, b_lines.size());
    std::unique_ptr<ByteSource> sa = OpenInput(a), sb = OpenInput(b);
    ByteSource* views[2] = {sa.get(), sb.get()};
    std::vector<std::string> w;
    FlameLayout layout;
    return !DrawFoldedInAnyOrder(views, FlameOptions{}, &w, &layout) && w.empty();
  };
  EXPECT_TRUE(refused({"m;f 1.5"}, {"m 1"}));  // decimals
  EXPECT_TRUE(refused({"m;f 1", "not a stack"}, {"m 1"}));           // malformed
  EXPECT_TRUE(refused({"m;f 1"}, {"m 1 2"}));                        // columns differ
  EXPECT_TRUE(refused({"m;f 0"}, {"m 0"}));                          // nothing to draw
  EXPECT_TRUE(refused({"# pf-unit: bytes", "m 1"}, {"m 1"}));        // units differ
  EXPECT_TRUE(refused({"m 18446744073709551615"}, {"m 1"}));         // the sum saturates
  EXPECT_TRUE(refused({"# pf-diff: before=x after=y", "m 1 2"}, {"m 1 1"}));
  EXPECT_FALSE(refused({"b;f 1", "a 2"}, {"a;g 1"}));
}

}  // namespace
}  // namespace pf
