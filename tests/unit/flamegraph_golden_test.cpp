// Structural golden tests over the peer corpus's flame graphs (inferno's expected SVGs, see
// ../shared/corpus/peer/README.md): for each case, the frames we draw — name, depth and
// count, read back from our SVG — and their tooltips equal the expected ones. inferno's
// default --minwidth is 0.01%, so the cases run with that; layout and script are our own.
#include <gtest/gtest.h>
#include <unistd.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "app/files.h"
#include "base/error.h"
#include "collapse/collapse.h"
#include "render/flame.h"
#include "render/svg_writer.h"
#include "test_util.h"

namespace pf {
namespace {

std::string Unescape(std::string s) {
  static const std::pair<const char*, const char*> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&#39;", "'"},
      {"&amp;", "&"}};
  for (const auto& [from, to] : kEntities) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + 1)) {
      s.replace(p, std::strlen(from), to);
    }
  }
  return s;
}

struct Frame {
  std::string title;  // unescaped tooltip
  int depth;
  uint64_t count;
  std::string fill;
  bool operator<(const Frame& o) const {
    return std::tie(depth, title, count, fill) < std::tie(o.depth, o.title, o.count, o.fill);
  }
  bool operator==(const Frame& o) const = default;
};

struct Parsed {
  std::vector<Frame> frames;
  std::string title, subtitle, notes;
};

// Reads frames from an SVG of ours or inferno's (pretty or not): title, y, fill, fg:w.
Parsed ParseSvg(const std::string& svg, bool inverted) {
  Parsed p;
  static const re2::RE2 frame_re(
      "<title>([^<]*)</title>\\s*<rect [^>]*?y=\"([0-9.]+)\"[^>]*?fill=\"([^\"]*)\"[^>]*?"
      "fg:w=\"(\\d+)\"");
  re2::StringPiece in(svg);
  std::string title, y, fill, w;
  std::vector<std::pair<double, Frame>> raw;
  while (re2::RE2::FindAndConsume(&in, frame_re, &title, &y, &fill, &w)) {
    raw.push_back({std::stod(y), Frame{Unescape(title), 0, std::stoull(w), fill}});
  }
  std::set<double> ys;
  for (auto& r : raw) ys.insert(r.first);
  std::vector<double> order(ys.begin(), ys.end());
  if (!inverted) std::reverse(order.begin(), order.end());  // the root is lowest
  for (auto& r : raw) {
    r.second.depth = static_cast<int>(std::find(order.begin(), order.end(), r.first) -
                                      order.begin());
    p.frames.push_back(r.second);
  }
  std::sort(p.frames.begin(), p.frames.end());
  static const re2::RE2 title_re("id=\"title\"[^>]*>([^<]*)<");
  static const re2::RE2 subtitle_re("id=\"subtitle\"[^>]*>([^<]*)<");
  static const re2::RE2 notes_re("<!-- ?NOTES: ?(.*?) ?-->");
  re2::RE2::PartialMatch(svg, title_re, &p.title);
  re2::RE2::PartialMatch(svg, subtitle_re, &p.subtitle);
  re2::RE2::PartialMatch(svg, notes_re, &p.notes);
  p.title = Unescape(p.title);
  p.subtitle = Unescape(p.subtitle);
  p.notes = Unescape(p.notes);
  return p;
}

struct Case {
  std::string name;
  std::string expected;             // relative to tests/data/flamegraph/
  std::vector<std::string> inputs;  // relative to the corpus root
  std::function<void(FlameOptions&)> options;
  bool compare_fill = false;  // compare colours too (not the root's: inferno colours it its way)
  std::string palette;  // a palette.map to start from (relative to tests/data/flamegraph/)
  // Where the peer is not the reference: inferno rounds counts scaled by --factor half up
  // where flamegraph.pl rounds half to even (compare raw counts, not tooltips). Names are
  // always compared without leading blanks: inferno trims them (a frame named " " becomes
  // "", the first frame after --reverse loses its leading space); flamegraph.pl and we
  // keep them.
  bool raw_counts_only = false;
  bool trim_names = true;
  bool grey_only = false;  // compare only the colours of "-" and "--" separator frames
};
// Not here: base/single-base.svg and multi-base.svg (FlameGolden.BaseAsInferno below).

const std::string kFg = "tests/data/flamegraph/";
const std::string kDiff = kFg + "differential/perf-cycles-instructions-01-collapsed-all-diff.txt";
const std::string kVx = "flamegraph/test/results/perf-vertx-stacks-01-collapsed-all.txt";
const std::string kUnsorted =
    kFg + "unsorted-input/perf-vertx-stacks-01-collapsed-all-unsorted.txt";

std::vector<Case> Cases() {
  auto none = [](FlameOptions&) {};
  std::vector<Case> c = {
      {"default", "options/default.svg", {kDiff}, none},
      {"diff", "differential/diff.svg", {kDiff}, none},
      {"diff_negated", "differential/diff-negated.svg", {kDiff}, [](FlameOptions& o) { o.negate = true; }},
      {"title_simple", "options/title_simple.svg", {kDiff}, [](FlameOptions& o) { o.title = "Test Graph"; }},
      {"title_symbols", "options/title_with_symbols.svg", {kDiff}, [](FlameOptions& o) { o.title = "Test <& ' \""; }},
      {"subtitle_simple", "options/subtitle_simple.svg", {kDiff}, [](FlameOptions& o) { o.subtitle = "Test Subtitle"; }},
      {"subtitle_symbols", "options/subtitle_with_symbols.svg", {kDiff}, [](FlameOptions& o) { o.subtitle = "Test Subtitle <& ' \""; }},
      {"notes_simple", "options/notes_simple.svg", {kDiff}, [](FlameOptions& o) { o.notes = "Test Notes"; }},
      {"notes_symbols", "options/notes_with_symbols.svg", {kDiff}, [](FlameOptions& o) { o.notes = "Test Notes <& ' \""; }},
      {"countname_simple", "options/count_name_simple.svg", {kDiff}, [](FlameOptions& o) { o.countname = "test-samples"; }},
      {"countname_symbols", "options/count_name_with_symbols.svg", {kDiff}, [](FlameOptions& o) { o.countname = "test-samples <& ' \""; }},
      {"nametype", "options/name_type_simple.svg", {kDiff}, [](FlameOptions& o) { o.nametype = "Tfunction:"; }},
      {"fonttype", "options/font_type_simple.svg", {kDiff}, [](FlameOptions& o) { o.fonttype = "Andale Mono"; }},
      {"search_color", "options/search_color.svg", {kDiff}, [](FlameOptions& o) { o.search_color = "#7d7d7d"; }},
      {"colordiffusion", "options/colordiffusion.svg", {kVx}, none},
      {"java", "colors/java.svg", {"flamegraph/test/results/perf-java-stacks-01-collapsed-all.txt"},
       [](FlameOptions& o) { o.palette = "java"; o.bgcolors = "blue"; o.color_mode = 1; }},
      {"js", "colors/js.svg", {"flamegraph/test/results/perf-js-stacks-01-collapsed-all.txt"},
       [](FlameOptions& o) { o.palette = "js"; o.bgcolors = "green"; o.color_mode = 1; }},
      {"async_profiler", "colors/async-profiler-java.svg", {kFg + "colors/async-profiler-collapsed-part.txt"},
       [](FlameOptions& o) { o.palette = "java"; o.color_mode = 1; }},
      {"factor", "factor/factor-2.5.svg", {kVx}, [](FlameOptions& o) { o.factor = 2.5; }, false, "", true},
      {"inverted", "inverted/inverted.svg", {kVx}, [](FlameOptions& o) { o.inverted = true; }},
      {"vertx", "perf-vertx-stacks/perf-vertx-stacks-01-collapsed-all.svg", {kVx}, none},
      {"vertx_unsorted", "perf-vertx-stacks/perf-vertx-stacks-01-collapsed-all.svg", {kUnsorted}, none},
      {"vertx_multiple", "perf-vertx-stacks/perf-vertx-stacks-01-collapsed-all.svg",
       {kFg + "multiple-inputs/perf-vertx-stacks-01-collapsed-all-unsorted-1.txt",
        kFg + "multiple-inputs/perf-vertx-stacks-01-collapsed-all-unsorted-2.txt"}, none},
      {"vertx_reversed", "perf-vertx-stacks/perf-vertx-stacks-01-collapsed-all-reversed-stacks.svg",
       {kUnsorted}, [](FlameOptions& o) { o.reverse = true; }},
      // (inferno truncates decimal counts, flamegraph.pl keeps them, as pf does: its
      // fractional-samples cases are checked against flamegraph.pl in weight_test.cpp.)
      {"narrow_blocks", "narrow-blocks/narrow-blocks.svg", {kFg + "narrow-blocks/narrow-blocks.txt"}, none},
      {"grey_frames", "grey-frames/grey-frames.svg", {kFg + "grey-frames/grey-frames.txt"}, none, true,
       "", false, false, true},
      {"consistent_palette", "palette-map/consistent-palette.svg", {kVx}, none, true, "palette-map/palette.map"},
      {"example_palette", "example-perf-stacks/example-perf-stacks.svg",
       {"tests/data/collapse-perf/results/example-perf-stacks-collapsed.txt"}, none, true,
       "example-perf-stacks/palette.map"},
      {"flamechart", "flamechart/flame.svg", {kFg + "flamechart/flames.txt"}, [](FlameOptions& o) { o.flamechart = true; }},
      {"austin", "austin/flame.svg", {kFg + "austin/flames.txt"}, none},
  };
  return c;
}

std::string Draw(const Case& c, FlameOptions o, bool via_tree = false) {
  std::vector<std::string> inputs;
  for (const std::string& i : c.inputs) inputs.push_back(test::kCorpus + "/" + i);
  std::vector<std::string> warnings;
  FlameLayout layout;
  if (o.flamechart) {
    layout = BuildFlameChartFromFiles(inputs, o, &warnings);
  } else if (via_tree) {
    ReadReport report;
    StackTree tree = CollapseFilesToTree(inputs, {}, &report);
    layout = BuildFlameGraph(tree, o, &warnings);
  } else {
    ReadReport report;  // a single sorted file streams; anything else goes via a tree
    layout = BuildFlameGraphFromFiles(inputs, o, &warnings, &report);
  }
  StringSink sink;
  BufferedWriter w(sink);
  WriteSvg(layout, o, w);
  w.Flush();
  return sink.data();
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class FlameGolden : public ::testing::TestWithParam<Case> {};

TEST_P(FlameGolden, SameFramesAsThePeer) {
  const Case& c = GetParam();
  std::string expected_path = test::kCorpus + "/" + kFg + c.expected;
  if (!test::FileExists(expected_path)) GTEST_SKIP() << "peer corpus not found at " << test::kCorpus;
  FlameOptions o;
  o.minwidth = 0.01;  // inferno's default
  o.minwidth_percent = true;
  c.options(o);
  std::string palette_copy;
  if (!c.palette.empty()) {
    palette_copy = ::testing::TempDir() + "/pf-palette-" + c.name + ".map";
    std::filesystem::copy_file(test::kCorpus + "/" + kFg + c.palette, palette_copy,
                               std::filesystem::copy_options::overwrite_existing);
    o.palette_file = palette_copy;
  }
  std::set<std::string> mapped;  // names the starting palette.map colours
  if (!palette_copy.empty()) {
    std::string text = test::ReadFile(palette_copy);
    for (size_t p = 0, nl; p < text.size(); p = nl + 1) {
      nl = text.find('\n', p);
      if (nl == std::string::npos) nl = text.size();
      std::string line = text.substr(p, nl - p);
      if (line.rfind("->") != std::string::npos) mapped.insert(line.substr(0, line.rfind("->")));
    }
  }
  Parsed want = ParseSvg(test::ReadFile(expected_path), o.inverted);
  Parsed got = ParseSvg(Draw(c, o), o.inverted);
  for (Parsed* p : {&want, &got}) {
    for (Frame& f : p->frames) {
      std::string name = f.title.substr(0, f.title.rfind(" ("));
      bool root = f.depth == 0;
      if (c.raw_counts_only) f.title = name;
      if (c.trim_names) {
        size_t b = f.title.find_first_not_of(' ');
        f.title = b == std::string::npos ? "" : f.title.substr(b);
      }
      bool blank = name.find_first_not_of(' ') == std::string::npos;  // named apart, above
      if (!c.compare_fill || root || blank || (!c.palette.empty() && !mapped.count(name)) ||
          (c.grey_only && name != "-" && name != "--")) {
        f.fill = "";
      }
    }
    std::sort(p->frames.begin(), p->frames.end());
  }
  ASSERT_FALSE(want.frames.empty());
  ASSERT_EQ(got.frames.size(), want.frames.size()) << c.name;
  for (size_t i = 0; i < want.frames.size(); ++i) {
    const Frame& a = got.frames[i];
    const Frame& b = want.frames[i];
    ASSERT_EQ(a, b) << c.name << ": frame " << i << " differs: got '" << a.title << "' depth "
                    << a.depth << " count " << a.count << " " << a.fill << ", want '" << b.title
                    << "' depth " << b.depth << " count " << b.count << " " << b.fill;
  }
  // Text options are reproduced exactly (after XML unescaping).
  EXPECT_EQ(got.title, want.title);
  EXPECT_EQ(got.subtitle, want.subtitle);
  EXPECT_EQ(got.notes, want.notes);
  if (!palette_copy.empty()) std::remove(palette_copy.c_str());
}

// The streaming path (a single sorted folded file) draws exactly what the tree path draws.
class FlameStreaming : public ::testing::TestWithParam<Case> {};

TEST_P(FlameStreaming, EqualsTree) {
  const Case& c = GetParam();
  if (!test::FileExists(test::kCorpus + "/" + c.inputs[0])) GTEST_SKIP() << "no corpus";
  FlameOptions o;
  c.options(o);
  for (bool percent : {false, true}) {
    o.minwidth_percent = percent;
    o.minwidth = percent ? 0.01 : 0.1;
    EXPECT_EQ(Draw(c, o, false), Draw(c, o, true)) << c.name;
  }
}

std::vector<Case> StreamingCases() {
  std::vector<Case> out;
  for (const Case& c : Cases()) {
    FlameOptions o;
    c.options(o);
    if (!o.flamechart && c.palette.empty()) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, FlameStreaming, ::testing::ValuesIn(StreamingCases()),
                         [](const auto& info) { return info.param.name; });

// Folded files in another order (their lines shuffled, split in two files) are drawn from
// the list of their distinct stacks: exactly what the tree path draws.
class FlameAnyOrder : public ::testing::TestWithParam<Case> {};

TEST_P(FlameAnyOrder, EqualsTree) {
  const Case& c = GetParam();
  if (!test::FileExists(test::kCorpus + "/" + c.inputs[0])) GTEST_SKIP() << "no corpus";
  std::vector<std::string> lines;
  for (const std::string& in : c.inputs) {
    std::istringstream text(test::ReadFile(test::kCorpus + "/" + in));
    for (std::string line; std::getline(text, line);) lines.push_back(line);
  }
  std::mt19937 rng(7);
  std::shuffle(lines.begin(), lines.end(), rng);
  const std::string dir = ::testing::TempDir();
  // (ctest runs each case in a process of its own, some at once: a file each.)
  const std::string stem = dir + "/any_" + c.name + "_" + std::to_string(getpid());
  std::vector<std::string> files = {stem + "_a.folded", stem + "_b.folded"};
  for (int half = 0; half < 2; ++half) {
    std::ofstream out(files[half], std::ios::binary | std::ios::trunc);
    for (size_t i = half * lines.size() / 2; i < (half + 1) * lines.size() / 2; ++i) {
      out << lines[i] << '\n';
    }
  }
  FlameOptions o;
  c.options(o);
  o.minwidth = 0.1;
  auto draw = [&](const std::vector<std::string>& inputs, bool via_tree) {
    std::vector<std::string> warnings;
    ReadReport report;
    FlameLayout layout = via_tree ? BuildFlameGraph(CollapseFilesToTree(inputs, {}, &report), o,
                                                    &warnings)
                                  : BuildFlameGraphFromFiles(inputs, o, &warnings, &report);
    StringSink sink;
    BufferedWriter w(sink);
    WriteSvg(layout, o, w);
    w.Flush();
    return sink.data();
  };
  EXPECT_EQ(draw(files, false), draw(files, true)) << c.name;
  EXPECT_EQ(draw({files[0]}, false), draw({files[0]}, true)) << c.name;
  for (const std::string& f : files) std::remove(f.c_str());
}

INSTANTIATE_TEST_SUITE_P(Corpus, FlameAnyOrder, ::testing::ValuesIn(StreamingCases()),
                         [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Corpus, FlameGolden, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// Each frame's path from the root ("all;main;f") and its count, from an SVG of ours or
// inferno's (fg:x and fg:w: a frame lies within its parent's range, one level down).
std::map<std::string, uint64_t> PathCounts(const std::string& svg) {
  static const re2::RE2 re("<title>([^<]*)</title>\\s*<rect [^>]*?y=\"([0-9.]+)\"[^>]*?"
                           "fg:x=\"(\\d+)\"[^>]*?fg:w=\"(\\d+)\"");
  struct Box {
    double y;
    uint64_t x, w;
    std::string name, path;
  };
  std::vector<Box> boxes;
  re2::StringPiece in(svg);
  std::string title, y, x, w;
  while (re2::RE2::FindAndConsume(&in, re, &title, &y, &x, &w)) {
    title = Unescape(title);
    boxes.push_back({std::stod(y), std::stoull(x), std::stoull(w),
                     title.substr(0, title.rfind(" (")), ""});
  }
  std::sort(boxes.begin(), boxes.end(), [](const Box& a, const Box& b) { return a.y > b.y; });
  std::map<std::string, uint64_t> out;
  for (size_t i = 0; i < boxes.size(); ++i) {
    Box& b = boxes[i];
    b.path = b.name;
    for (size_t j = i; j-- > 0;) {  // the parent: one row below, around this frame
      const Box& p = boxes[j];
      if (p.y > b.y && p.x <= b.x && b.x + b.w <= p.x + p.w && p.y - b.y < 20 &&
          p.y - b.y > 1) {
        b.path = p.path + ";" + b.name;
        break;
      }
    }
    out[b.path] += b.w;
  }
  return out;
}

// --base re-roots at the innermost base, as inferno does (its own case: "Final" nests in
// 11 stacks). Where we differ: inferno compares the base with each line's last field,
// count included, so it never takes the leaf as the base: a stack whose leaf is a base is
// re-rooted at the next base out, or dropped; we re-root it at its leaf. Expected: inferno's
// graph with those stacks moved as we draw them.
TEST(FlameGolden, BaseAsInferno) {
  const std::string input = test::kCorpus + "/" + kFg + "base/flames.txt";
  if (!test::FileExists(input)) GTEST_SKIP() << "peer corpus not found";
  const std::string text = test::ReadFile(input);
  struct BaseCase {
    std::string expected;
    std::vector<std::string> bases;
  };
  for (const BaseCase& bc : {BaseCase{"base/single-base.svg", {"Final"}},
                             BaseCase{"base/multi-base.svg", {"Final", "Samples"}}}) {
    std::map<std::string, uint64_t> want =
        PathCounts(test::ReadFile(test::kCorpus + "/" + kFg + bc.expected));
    ASSERT_FALSE(want.empty());
    auto is_base = [&](const std::string& f) {
      return std::find(bc.bases.begin(), bc.bases.end(), f) != bc.bases.end();
    };
    uint64_t moved = 0;
    for (size_t p = 0, nl; p < text.size(); p = nl + 1) {
      nl = text.find('\n', p);
      if (nl == std::string::npos) nl = text.size();
      std::string line = text.substr(p, nl - p);
      size_t sp = line.rfind(' ');
      uint64_t count = std::stoull(line.substr(sp + 1));
      std::vector<std::string> frames;
      for (size_t a = 0, e; a <= sp; a = e + 1) {
        e = std::min(line.find(';', a), sp);
        frames.push_back(line.substr(a, e - a));
      }
      if (!is_base(frames.back())) continue;
      ++moved;
      // Take it from where inferno put it: under the innermost base before the leaf.
      size_t from = frames.size() - 1;
      while (from-- > 0 && !is_base(frames[from])) {
      }
      if (from != static_cast<size_t>(-1)) {
        std::string path = "all";
        for (size_t i = from; i < frames.size(); ++i) {
          path += ";" + frames[i];
          if ((want[path] -= count) == 0) want.erase(path);
        }
        want["all"] -= count;
      }
      // And put it where we do: on the leaf, re-rooted there.
      want["all"] += count;
      want["all;" + frames.back()] += count;
    }
    ASSERT_GT(moved, 0u);
    FlameOptions o;
    o.minwidth = 0.01;  // inferno's default
    o.minwidth_percent = true;
    o.base = bc.bases;
    ReadReport report;
    std::vector<std::string> warnings;
    StackTree tree = CollapseFilesToTree({input}, {}, &report);
    FlameLayout layout = BuildFlameGraph(tree, o, &warnings);
    StringSink sink;
    BufferedWriter w(sink);
    WriteSvg(layout, o, w);
    w.Flush();
    std::map<std::string, uint64_t> got = PathCounts(sink.data());
    EXPECT_EQ(got, want) << bc.expected;
  }
}

TEST(FlameGolden, EmptyInputIsAnError) {
  std::string path = test::kCorpus + "/" + kFg + "empty/empty.txt";
  if (!test::FileExists(path)) GTEST_SKIP() << "peer corpus not found";
  ReadReport report;
  StackTree tree = CollapseFilesToTree({path}, {}, &report);
  std::vector<std::string> warnings;
  EXPECT_THROW(BuildFlameGraph(tree, {}, &warnings), Error);
}

}  // namespace
}  // namespace pf
