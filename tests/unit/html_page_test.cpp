// The HTML page's C++ side (render/html_page.h): the JSON it embeds for small trees (the
// preorder arrays, the name table, colours, units, differential columns), its escaping,
// its determinism, and pf-flamegraph's command line for --format=html.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app/flamegraph_command.h"
#include "base/error.h"
#include "io/output.h"
#include "render/html_page.h"

namespace pf {
namespace {

void Add(StackTree& t, std::vector<std::string_view> frames, uint64_t w, int column = 0) {
  std::vector<StrId> ids;
  for (std::string_view f : frames) ids.push_back(t.names().Intern(f));
  t.AddStack(ids, w, column);
}

// The member `key` of the page's JSON, as written (an array or a value), up to its end.
std::string Member(const std::string& json, const std::string& key) {
  size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return "(none)";
  at += key.size() + 3;
  size_t end = json[at] == '[' ? json.find(']', at) + 1 : json.find_first_of(",}\n", at);
  return json.substr(at, end - at);
}

std::string Data(const StackTree& t, FlameOptions o = {}) {
  std::vector<std::string> warnings;
  return HtmlPageData(t, o, &warnings);
}

TEST(HtmlPage, PreorderArraysAndNameTable) {
  StackTree t;
  Add(t, {"main", "work_b", "spin"}, 15);
  Add(t, {"main", "work_a", "spin"}, 50);
  Add(t, {"main", "work_a", "inner"}, 25);
  Add(t, {"main"}, 3);
  Add(t, {"main", "gone"}, 0);  // weighs nothing: left out
  const std::string json = Data(t);
  // Children sorted by name; names numbered as first met in preorder.
  EXPECT_EQ(Member(json, "names"), R"(["main","work_a","inner","spin","work_b"])");
  EXPECT_EQ(Member(json, "depth"), "[1,2,3,3,2,3]");
  EXPECT_EQ(Member(json, "frame"), "[0,1,2,3,4,3]");
  EXPECT_EQ(Member(json, "self"), "[3,0,25,50,0,15]");
  EXPECT_EQ(Member(json, "before"), "(none)");
  EXPECT_EQ(Member(json, "differential"), "false");
  EXPECT_EQ(Member(json, "countname"), "\"samples\"");
  EXPECT_EQ(Member(json, "scaled"), "false");
  // One colour per name, as the SVG's palette gives them.
  const std::string colors = Member(json, "colors");
  EXPECT_EQ(std::count(colors.begin(), colors.end(), '#'), 5);
}

TEST(HtmlPage, SameTreeSameBytes) {
  StackTree a, b;
  Add(a, {"x", "y"}, 1);
  Add(a, {"w", "z"}, 2);
  Add(b, {"w", "z"}, 2);  // other insertion order, other name ids
  Add(b, {"x", "y"}, 1);
  EXPECT_EQ(Data(a), Data(b));
  EXPECT_EQ(Member(Data(a), "names"), R"(["w","z","x","y"])");
}

TEST(HtmlPage, DifferentialColumns) {
  StackTree t = StackTree::Differential();
  Add(t, {"main", "x"}, 10, 0);
  Add(t, {"main", "x"}, 20, 1);
  Add(t, {"main", "gone"}, 7, 0);  // only before: kept (the table's before column)
  FlameOptions o;
  o.negate = true;
  const std::string json = Data(t, o);
  EXPECT_EQ(Member(json, "differential"), "true");
  EXPECT_EQ(Member(json, "negate"), "true");
  EXPECT_EQ(Member(json, "names"), R"(["main","gone","x"])");
  EXPECT_EQ(Member(json, "self"), "[0,0,20]");
  EXPECT_EQ(Member(json, "before"), "[0,7,10]");
  EXPECT_EQ(Member(json, "colors"), "(none)");  // the browser colours by change
}

TEST(HtmlPage, UnitsAndDecimals) {
  StackTree t;
  t.set_unit(WeightUnit::kNanoseconds);
  Add(t, {"main"}, 1500000);
  std::string json = Data(t);
  EXPECT_EQ(Member(json, "unit"), "\"nanoseconds\"");
  EXPECT_EQ(Member(json, "countname"), "\"ns\"");
  EXPECT_EQ(Member(json, "scaled"), "true");
  FlameOptions o;
  o.countname = "ticks";  // --countname: plain counts with that name
  json = Data(t, o);
  EXPECT_EQ(Member(json, "countname"), "\"ticks\"");
  EXPECT_EQ(Member(json, "scaled"), "false");
  StackTree d;
  d.SetDecimals(2);
  Add(d, {"f"}, 125);  // 1.25
  o = {};
  o.total = 3;  // --total, in the input's units: fixed-point like the weights
  json = Data(d, o);
  EXPECT_EQ(Member(json, "decimals"), "2");
  EXPECT_EQ(Member(json, "total"), "300");
}

TEST(HtmlPage, EscapesNamesAndOptions) {
  StackTree t;
  Add(t, {"</script><script>alert(1)</script>"}, 1);
  Add(t, {"bad\xff\xfe utf8 \xc3"}, 1);
  Add(t, {"q\"b\\s\x01\xe2\x80\xa8"}, 1);
  FlameOptions o;
  o.title = "</title><!--";
  const std::string json = Data(t, o);
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_EQ(json.find('>'), std::string::npos);
  EXPECT_NE(json.find(R"("\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e")"),
            std::string::npos);
  EXPECT_NE(json.find(R"("bad\ufffd\ufffd utf8 \ufffd")"), std::string::npos);
  EXPECT_NE(json.find(R"("q\"b\\s\ufffd\u2028")"), std::string::npos);
  EXPECT_EQ(Member(json, "title"), R"("\u003c/title\u003e\u003c!--")");
}

TEST(HtmlPage, WholePageHasOnlyItsOwnScripts) {
  StackTree t;
  Add(t, {"</script>", "<!--<script>"}, 1);
  FlameOptions o;
  o.title = "</title><script>x</script>";
  o.notes = "\"><script>";
  std::vector<std::string> warnings;
  HtmlPage page = BuildHtmlPage(t, o, &warnings);
  StringSink sink;
  BufferedWriter w(sink);
  WriteHtmlPage(page, w);
  w.Flush();
  const std::string& html = sink.data();
  auto count = [&](std::string_view s) {
    size_t n = 0;
    for (size_t at = html.find(s); at != std::string::npos; at = html.find(s, at + 1)) ++n;
    return n;
  };
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>\n"));
  EXPECT_EQ(count("<script"), 2u);  // the data and the code (share/'s files hold neither)
  EXPECT_EQ(count("</script"), 2u);
  EXPECT_EQ(count("<!--"), 0u);
  EXPECT_NE(html.find("<title>&lt;/title&gt;&lt;script&gt;x&lt;/script&gt;</title>"),
            std::string::npos);
  EXPECT_NE(html.find("content=\"&quot;&gt;&lt;script&gt;\""), std::string::npos);
}

TEST(HtmlPage, EveryStackEvenTheNarrowest) {
  // An SVG prunes frames under --minwidth; the page keeps them, for exact totals.
  StackTree t;
  Add(t, {"big"}, 1000000000);
  Add(t, {"tiny", "tinier"}, 1);
  FlameOptions o;
  o.minwidth = 50;
  o.minwidth_percent = true;
  const std::string json = Data(t, o);
  EXPECT_EQ(Member(json, "self"), "[1000000000,0,1]");
  EXPECT_EQ(Member(json, "minwidth"), "50");
  EXPECT_EQ(Member(json, "minwidthPercent"), "true");
}

int Parse(std::vector<std::string> args, FlamegraphCommand* out) {
  args.insert(args.begin(), "pf-flamegraph");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  int rc = FlamegraphTool().Run(static_cast<int>(argv.size()), argv.data(), [&](cli::Context& ctx) {
    *out = ParseFlamegraphOptions(ctx);
  });
  testing::internal::GetCapturedStderr();
  return rc;
}

TEST(HtmlPage, CommandLine) {
  FlamegraphCommand c;
  EXPECT_EQ(Parse({"-o", "cpu.html", "in.folded"}, &c), 0);
  EXPECT_EQ(c.format, "html");
  EXPECT_EQ(Parse({"-o", "cpu.HTM", "in.folded"}, &c), 0);
  EXPECT_EQ(c.format, "html");
  EXPECT_EQ(Parse({"--format=html", "-i", "--minwidth=1%", "in.folded"}, &c), 0);
  EXPECT_EQ(c.format, "html");
  EXPECT_TRUE(c.options.inverted);
  EXPECT_EQ(Parse({"--format=html", "-o", "x.svg", "in.folded"}, &c), 0);  // --format wins
  EXPECT_EQ(c.format, "html");
  // What only an SVG has: usage errors, not silently dropped.
  EXPECT_EQ(Parse({"--format=html", "--flamechart", "in.folded"}, &c), 2);
  EXPECT_EQ(Parse({"-o", "x.html", "--nameattr=a.txt", "in.folded"}, &c), 2);
  EXPECT_EQ(Parse({"--format=html", "--encoding=latin1", "in.folded"}, &c), 2);
  EXPECT_EQ(Parse({"--format=htm", "in.folded"}, &c), 2);
}

}  // namespace
}  // namespace pf
