// Tests of the callgrind writer: the whole file for a small profile (compressed names, self
// costs, call costs counted once per stack, recursion left out, totals), one event per
// sample type, ob=/cob= from the modules, determinism, and what it refuses.
#include "callgraph/callgrind_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {
namespace {

void Add(StackTree& tree, const std::string& stack, uint64_t w, int column = 0) {
  std::vector<StrId> ids;
  size_t start = 0;
  while (true) {
    size_t semi = stack.find(';', start);
    ids.push_back(tree.names().Intern(stack.substr(start, semi - start)));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  tree.AddStack(ids, w, column);
}

std::string Callgrind(const StackTree& tree) {
  StringSink sink;
  BufferedWriter w(sink);
  WriteCallgrind(tree, w, "test");
  w.Flush();
  return sink.data();
}

TEST(CallgrindWriter, WritesSelfCostsAndExactCallCosts) {
  StackTree tree(SampleType{"cpu", WeightUnit::kNanoseconds});
  Add(tree, "prog;main;a;b", 10);
  Add(tree, "prog;main;a;c", 5);
  Add(tree, "prog;main;b", 3);
  Add(tree, "prog;main;b;b;b", 7);  // recursion: b's total is 20, once per stack
  Add(tree, "prog;main", 2);
  EXPECT_EQ(Callgrind(tree),
            "# callgrind format\n"
            "version: 1\n"
            "creator: test\n"
            "positions: line\n"
            "event: cpu : cpu (ns)\n"
            "events: cpu\n"
            "\n"
            "fl=(1) ???\n"
            "fn=(1) a\n"
            "cfn=(2) b\ncalls=1 0\n0 10\n"
            "cfn=(3) c\ncalls=1 0\n0 5\n"
            "fn=(2)\n0 20\n"
            "fn=(3)\n0 5\n"
            "fn=(4) main\n0 2\n"
            "cfn=(1)\ncalls=1 0\n0 15\n"
            "cfn=(2)\ncalls=1 0\n0 10\n"
            "fn=(5) prog\n"
            "cfn=(4)\ncalls=1 0\n0 27\n"
            "\n"
            "totals: 27\n");
}

TEST(CallgrindWriter, OneEventPerSampleType) {
  StackTree tree(std::vector<SampleType>{{"alloc_objects", WeightUnit::kObjects},
                                         {"alloc space", WeightUnit::kBytes}});
  Add(tree, "main;alloc", 3, 0);
  Add(tree, "main;alloc", 4096, 1);
  Add(tree, "main;other", 8, 1);
  std::string out = Callgrind(tree);
  EXPECT_NE(out.find("event: alloc_objects : alloc_objects (objects)\n"
                     "event: alloc_space : alloc space (bytes)\n"
                     "events: alloc_objects alloc_space\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("fn=(1) alloc\n0 3 4096\n"), std::string::npos) << out;
  EXPECT_NE(
      out.find("fn=(2) main\ncfn=(1)\ncalls=1 0\n0 3 4096\ncfn=(3) other\ncalls=1 0\n0 0 8\n"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("totals: 3 4104\n"), std::string::npos) << out;
}

TEST(CallgrindWriter, NamesModulesWithObAndCob) {
  StackTree tree;
  Add(tree, "main;memcpy", 2);
  tree.NoteModule(tree.names().Intern("memcpy"), tree.names().Intern("libc.so.6"));
  tree.NoteModule(tree.names().Intern("main"), tree.names().Intern("prog"));
  EXPECT_NE(Callgrind(tree).find("ob=(1) prog\nfn=(1) main\ncob=(2) libc.so.6\ncfn=(2) memcpy\n"
                                 "calls=1 0\n0 2\nob=(2)\nfn=(2)\n0 2\n"),
            std::string::npos)
      << Callgrind(tree);
}

TEST(CallgrindWriter, SameProfileSameBytesWhateverTheOrderOfInsertion) {
  StackTree a, b;
  Add(a, "x;y;z", 1);
  Add(a, "x;q", 2);
  Add(b, "x;q", 2);
  Add(b, "x;y;z", 1);
  EXPECT_EQ(Callgrind(a), Callgrind(b));
}

TEST(CallgrindWriter, NewlinesInNamesDoNotBreakLines) {
  StackTree tree;
  Add(tree, "a\nb;c", 1);
  std::string out = Callgrind(tree);
  EXPECT_NE(out.find("fn=(1) a b\n"), std::string::npos) << out;
}

TEST(CallgrindWriter, RefusesDecimalsAndDifferentialTrees) {
  StackTree decimals;
  Add(decimals, "a", 15);
  decimals.SetDecimals(1);
  EXPECT_THROW(Callgrind(decimals), Error);
  StackTree diff = StackTree::Differential();
  Add(diff, "a", 1);
  EXPECT_THROW(Callgrind(diff), Error);
}

}  // namespace
}  // namespace pf
