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
  CollapseReport report;
  std::vector<FlameLayout> out;
  out.push_back(BuildFlameGraphFromFiles({path}, o, &warnings, &report));
  StackTree tree = CollapseFilesToTree({path}, {}, &report);
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
