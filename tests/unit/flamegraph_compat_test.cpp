// pf-flamegraph against flamegraph.pl and inferno where a script or a user relies on the
// peer's behaviour: the gaps --minwidth leaves, --base, --nameattr and --encoding. Expected
// values were read from the peers' own output on the same input (noted at each test).
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/files.h"
#include "base/error.h"
#include "collapse/collapse.h"
#include "render/flame.h"
#include "render/svg_writer.h"
#include "stacks/folded.h"
#include "test_util.h"

namespace pf {
namespace {

// A folded file in the test's temporary directory, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(::testing::TempDir() + "/pf-fgcompat-" + name) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Svg(const FlameLayout& L, const FlameOptions& o) {
  StringSink sink;
  BufferedWriter w(sink);
  WriteSvg(L, o, w);
  w.Flush();
  return sink.data();
}

// name -> "x width" of each frame as the SVG has them (for frames with distinct names).
std::map<std::string, std::string> Boxes(const std::string& svg) {
  static const re2::RE2 re("<title>(.*?) \\([^<]*</title><rect x=\"([0-9.]+)\" y=\"[0-9.]+\" "
                           "width=\"([0-9.]+)\"");
  std::map<std::string, std::string> out;
  re2::StringPiece in(svg);
  std::string name, x, w;
  while (re2::RE2::FindAndConsume(&in, re, &name, &x, &w)) out[name] = x + " " + w;
  return out;
}

// Both ways a graph is built: a sorted file streamed, and a stack tree.
std::vector<FlameLayout> BothWays(const std::string& path, const FlameOptions& o) {
  std::vector<std::string> warnings;
  ReadReport report;
  std::vector<FlameLayout> out;
  out.push_back(BuildFlameGraphFromFiles({path}, o, &warnings, &report));
  CollapseOptions defaults;
  StackTree tree = CollapseFilesToTree({path}, defaults, &report);
  out.push_back(BuildFlameGraph(tree, o, &warnings));
  return out;
}

// flamegraph.pl deletes frames narrower than --minwidth, but every other frame keeps the x
// its start time gives: the removed frames leave their gap. Expected: flamegraph.pl
// --minwidth 0.3 on this input (x and width of every rect).
TEST(FlameMinwidth, RemovedFramesLeaveTheirGap) {
  TempFile in("minwidth.folded",
              "main;a 1000\nmain;b 1\nmain;c 1000\nmain;d;x 2\nmain;d;y 1000\nmain;e 1\n"
              "main;f 1\nmain;g 2000\n");
  FlameOptions o;
  o.minwidth = 0.3;
  for (const FlameLayout& L : BothWays(in.path(), o)) {
    std::map<std::string, std::string> want = {
        {"all", "10.0 1180.0"}, {"main", "10.0 1180.0"}, {"a", "10.0 235.8"},
        {"c", "246.0 235.8"},   {"d", "481.8 236.2"},    {"x", "481.8 0.4"},
        {"y", "482.2 235.8"},   {"g", "718.5 471.5"}};
    std::map<std::string, std::string> got = Boxes(Svg(L, o));
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

std::string DrawWith(const std::string& folded_path, const FlameOptions& o,
                     std::vector<std::string>* warnings) {
  ReadReport report;
  FlameLayout L = BuildFlameGraphFromFiles({folded_path}, o, warnings, &report);
  return Svg(L, o);
}

// --nameattr as flamegraph.pl reads it: by the name as in the input (annotation included);
// href makes the frame an <a> with target _top, the link's attributes first, then id,
// class and g_extra; title replaces the tooltip; a_extra without href is unused. Expected:
// flamegraph.pl --nameattr on this input, except that values are escaped (flamegraph.pl
// writes `&` and `<` raw, which breaks the XML) and event handlers are left out.
TEST(FlameNameAttr, AsFlamegraphPl) {
  TempFile in("nameattr.folded", "main;work_a;spin 75\nmain;work_b;spin_[k] 25\n");
  TempFile attrs("nameattr.txt",
                 "work_a\thref=http://x/a?b=1&c=2\ttitle=A <tip>\tg_extra=data-x=\"1\" "
                 "onclick=\"alert(1)\"\tid=wa\tclass=c1\n"
                 "spin_[k]\tclass=kern\ta_extra=foo=\"bar\"\n"
                 "main\tfoo=bar\n");
  FlameOptions o;
  o.nameattr_file = attrs.path();
  std::vector<std::string> warnings;
  std::string svg = DrawWith(in.path(), o, &warnings);
  EXPECT_NE(svg.find("<a xlink:href=\"http://x/a?b=1&amp;c=2\" target=\"_top\" id=\"wa\" "
                     "class=\"c1\" data-x=\"1\"><title>A &lt;tip&gt;</title><rect x=\"10.0\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">work_a</text></a>\n"), std::string::npos);
  EXPECT_NE(svg.find("<g class=\"kern\"><title>spin (25 samples, 25.00%)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<g><title>spin (75 samples, 75.00%)</title>"), std::string::npos);
  EXPECT_NE(svg.find("<g><title>main (100 samples, 100.00%)</title>"), std::string::npos);
  EXPECT_EQ(svg.find("onclick"), std::string::npos);
  EXPECT_EQ(svg.find("foo="), std::string::npos);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("event handler attribute 'onclick'"), std::string::npos);
  EXPECT_NE(warnings[1].find("unknown key 'foo'"), std::string::npos);
}

TEST(FlameNameAttr, BadLinesAndScriptLinks) {
  TempFile in("nameattr2.folded", "main;f 1\n");
  TempFile bad("nameattr-bad.txt", "f\tclass=x\nno tab here\n");
  FlameOptions o;
  o.nameattr_file = bad.path();
  std::vector<std::string> warnings;
  try {
    DrawWith(in.path(), o, &warnings);
    FAIL() << "a line without a tab was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), bad.path() + ":2");
  }
  TempFile js("nameattr-js.txt", "f\thref= JavaScript:alert(1)\tclass=k\n");
  o.nameattr_file = js.path();
  std::string svg = DrawWith(in.path(), o, &warnings);
  EXPECT_EQ(svg.find("alert"), std::string::npos);
  EXPECT_NE(svg.find("<g class=\"k\"><title>f (1 samples"), std::string::npos);  // no link
  o.nameattr_file = "/nonexistent/nameattr";
  EXPECT_THROW(DrawWith(in.path(), o, &warnings), Error);
}

// --encoding names the encoding in the XML declaration, as flamegraph.pl writes it.
TEST(FlameEncoding, InTheXmlDeclaration) {
  TempFile in("encoding.folded", "main;f 1\n");
  FlameOptions o;
  std::vector<std::string> warnings;
  EXPECT_EQ(DrawWith(in.path(), o, &warnings).rfind("<?xml version=\"1.0\" standalone=\"no\"?>\n", 0), 0u);
  o.encoding = "ISO-8859-1";
  EXPECT_EQ(DrawWith(in.path(), o, &warnings)
                .rfind("<?xml version=\"1.0\" encoding=\"ISO-8859-1\" standalone=\"no\"?>\n", 0),
            0u);
  EXPECT_TRUE(IsXmlEncodingName("UTF-8"));
  EXPECT_TRUE(IsXmlEncodingName("x_y.z"));
  EXPECT_FALSE(IsXmlEncodingName(""));
  EXPECT_FALSE(IsXmlEncodingName("8bit"));
  EXPECT_FALSE(IsXmlEncodingName("a\" onload=\"x"));
}

}  // namespace
}  // namespace pf
