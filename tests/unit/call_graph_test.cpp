// Tests of pf-dot's call graph: exact totals (recursion counted once per sample), pruning with
// residual edges, the pprof filters, -z/-l with --depth, name stripping, and DOT that Graphviz
// accepts even for hostile names.
#include "callgraph/call_graph.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {
namespace {

/// A tree from folded lines "a;b;c N" (split on ';' and the last space only).
StackTree Tree(const std::vector<std::string>& lines) {
  StackTree tree;
  for (const std::string& line : lines) {
    size_t sp = line.rfind(' ');
    std::string stack = line.substr(0, sp);
    uint64_t w = std::stoull(line.substr(sp + 1));
    std::vector<StrId> ids;
    size_t start = 0;
    while (true) {
      size_t semi = stack.find(';', start);
      ids.push_back(tree.names().Intern(stack.substr(start, semi - start)));
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
    tree.AddStack(ids, w);
  }
  return tree;
}

const CallGraph::Node* Find(const CallGraph& g, std::string_view name) {
  for (const auto& n : g.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

/// The edge caller->callee, or nullptr.
const CallGraph::Edge* FindEdge(const CallGraph& g, std::string_view from, std::string_view to) {
  for (const auto& e : g.edges) {
    if (g.nodes[e.from].name == from && g.nodes[e.to].name == to) return &e;
  }
  return nullptr;
}

std::string Dot(const CallGraph& g, const CallGraphOptions& o = {}) {
  StringSink sink;
  BufferedWriter w(sink);
  WriteDot(g, o, w);
  w.Flush();
  return sink.data();
}

CallGraphOptions NoPruning() {
  CallGraphOptions o;
  o.node_thres = 0;
  o.edge_thres = 0;
  o.nodecount = 0;
  return o;
}

TEST(CallGraphTest, RecursionCountsOncePerSample) {
  CallGraph g = BuildCallGraph(Tree({"a;b;b;b 10"}), NoPruning());
  EXPECT_EQ(g.total, 10u);
  ASSERT_NE(Find(g, "b"), nullptr);
  EXPECT_EQ(Find(g, "b")->total, 10u);
  EXPECT_EQ(Find(g, "b")->self, 10u);
  EXPECT_EQ(Find(g, "a")->total, 10u);
  EXPECT_EQ(Find(g, "a")->self, 0u);
  ASSERT_NE(FindEdge(g, "b", "b"), nullptr);
  EXPECT_EQ(FindEdge(g, "b", "b")->weight, 10u);
  EXPECT_EQ(FindEdge(g, "a", "b")->weight, 10u);
  EXPECT_EQ(g.edges.size(), 2u);
  EXPECT_NE(Dot(g).find("label=\"b\\n100.00%\\n(100.00%)\""), std::string::npos);
}

TEST(CallGraphTest, MutualRecursionNeverAbove100Percent) {
  CallGraph g = BuildCallGraph(Tree({"m;even;odd;even;odd 4", "m;x 4"}), NoPruning());
  EXPECT_EQ(Find(g, "even")->total, 4u);
  EXPECT_EQ(Find(g, "odd")->total, 4u);
  EXPECT_EQ(FindEdge(g, "even", "odd")->weight, 4u);
  EXPECT_EQ(FindEdge(g, "odd", "even")->weight, 4u);
}

TEST(CallGraphTest, Diamond) {
  CallGraph g =
      BuildCallGraph(Tree({"main;a;c 3", "main;b;c 5", "main;c 2", "main 1"}), NoPruning());
  EXPECT_EQ(g.total, 11u);
  EXPECT_EQ(Find(g, "main")->total, 11u);
  EXPECT_EQ(Find(g, "main")->self, 1u);
  EXPECT_EQ(Find(g, "c")->total, 10u);
  EXPECT_EQ(Find(g, "c")->self, 10u);
  EXPECT_EQ(FindEdge(g, "a", "c")->weight, 3u);
  EXPECT_EQ(FindEdge(g, "b", "c")->weight, 5u);
  EXPECT_EQ(FindEdge(g, "main", "c")->weight, 2u);
  EXPECT_EQ(FindEdge(g, "main", "a")->weight, 3u);
  EXPECT_EQ(g.edges.size(), 5u);
}

TEST(CallGraphTest, SelfVersusTotal) {
  CallGraph g = BuildCallGraph(Tree({"p;f 6", "p;f;g 4"}), NoPruning());
  EXPECT_EQ(Find(g, "f")->total, 10u);
  EXPECT_EQ(Find(g, "f")->self, 6u);
  EXPECT_EQ(Find(g, "g")->total, 4u);
  EXPECT_EQ(Find(g, "g")->self, 4u);
  EXPECT_NE(Dot(g).find("label=\"f\\n100.00%\\n(60.00%)\""), std::string::npos);
}

TEST(CallGraphTest, ThresholdsDropNodesAndEdges) {
  // tiny is 0.4% of 1000: below the default node threshold of 0.5%.
  CallGraph g = BuildCallGraph(Tree({"p;main;work 996", "p;main;tiny 4"}), CallGraphOptions{});
  EXPECT_EQ(Find(g, "tiny"), nullptr);
  EXPECT_NE(Find(g, "work"), nullptr);
  EXPECT_EQ(g.dropped_nodes, 1u);
  EXPECT_EQ(g.dropped_edges, 1u);
  CallGraphOptions o;
  o.node_thres = 0.3;
  o.edge_thres = 0.5;  // the main->tiny edge (0.4%) goes, the node stays
  g = BuildCallGraph(Tree({"p;main;work 996", "p;main;tiny 4"}), o);
  EXPECT_NE(Find(g, "tiny"), nullptr);
  EXPECT_EQ(FindEdge(g, "main", "tiny"), nullptr);
  EXPECT_NE(Dot(g, o).find("1 dropped"), std::string::npos);
}

TEST(CallGraphTest, NodecountKeepsLargestAndDrawsResidualEdge) {
  CallGraphOptions o = NoPruning();
  o.nodecount = 3;  // m 110, big 100, then leaf and mid tie at 10: "leaf" sorts first
  CallGraph g = BuildCallGraph(Tree({"m;big 100", "m;mid;leaf 10"}), o);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(Find(g, "mid"), nullptr);
  const CallGraph::Edge* e = FindEdge(g, "m", "leaf");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->residual);
  EXPECT_EQ(e->weight, 10u);
  EXPECT_FALSE(FindEdge(g, "m", "big")->residual);
  std::string dot = Dot(g, o);
  EXPECT_NE(dot.find("style=dotted"), std::string::npos);
  EXPECT_NE(dot.find("dotted residual"), std::string::npos);
}

TEST(CallGraphTest, FocusIgnoreHideShowFrom) {
  std::vector<std::string> in = {"p;main;parse;lex 5", "p;main;eval 3",
                                 "p;main;parse;std::alloc 2"};
  CallGraphOptions o = NoPruning();
  o.focus = {"^parse$"};
  CallGraph g = BuildCallGraph(Tree(in), o);
  EXPECT_EQ(g.total, 10u);  // percentages stay relative to the whole profile
  EXPECT_EQ(g.kept_weight, 7u);
  EXPECT_EQ(Find(g, "eval"), nullptr);
  EXPECT_EQ(Find(g, "main")->total, 7u);

  o = NoPruning();
  o.ignore = {"alloc"};
  g = BuildCallGraph(Tree(in), o);
  EXPECT_EQ(Find(g, "std::alloc"), nullptr);
  EXPECT_EQ(Find(g, "parse")->total, 5u);

  o = NoPruning();
  o.hide = {"^std::"};
  g = BuildCallGraph(Tree(in), o);
  EXPECT_EQ(Find(g, "std::alloc"), nullptr);
  EXPECT_EQ(Find(g, "parse")->total, 7u);
  EXPECT_EQ(Find(g, "parse")->self, 2u);  // the hidden frame's weight stays with its caller

  o = NoPruning();
  o.show_from = {"^(main|parse)$"};
  g = BuildCallGraph(Tree(in), o);
  EXPECT_EQ(Find(g, "p"), nullptr);  // above the outermost match
  EXPECT_EQ(Find(g, "main")->total, 10u);
  o.show_from = {"^parse$"};
  g = BuildCallGraph(Tree(in), o);
  EXPECT_EQ(Find(g, "main"), nullptr);
  EXPECT_EQ(Find(g, "eval"), nullptr);  // no match: the sample goes
  EXPECT_EQ(Find(g, "parse")->total, 7u);

  o = NoPruning();
  o.focus = {"("};
  EXPECT_THROW(BuildCallGraph(Tree(in), o), UsageError);
}

TEST(CallGraphTest, RootAndLeafWithDepth) {
  std::vector<std::string> in = {"p;main;a;b;c 4", "p;main;x 2", "p;other;b 1"};
  CallGraphOptions o = NoPruning();
  o.root = {"a"};
  CallGraph g = BuildCallGraph(Tree(in), o);
  EXPECT_NE(Find(g, "a"), nullptr);
  EXPECT_NE(Find(g, "c"), nullptr);
  EXPECT_EQ(Find(g, "main"), nullptr);
  EXPECT_EQ(Find(g, "x"), nullptr);
  EXPECT_EQ(Find(g, "b")->total, 5u);  // totals stay those of the whole profile
  o.depth = 1;
  g = BuildCallGraph(Tree(in), o);
  EXPECT_NE(Find(g, "b"), nullptr);
  EXPECT_EQ(Find(g, "c"), nullptr);

  o = NoPruning();
  o.leaf = {"b"};
  g = BuildCallGraph(Tree(in), o);
  EXPECT_NE(Find(g, "other"), nullptr);
  EXPECT_NE(Find(g, "p"), nullptr);
  EXPECT_EQ(Find(g, "c"), nullptr);
  EXPECT_EQ(Find(g, "x"), nullptr);
  o.depth = 1;
  g = BuildCallGraph(Tree(in), o);
  EXPECT_EQ(g.nodes.size(), 3u);  // b, a, other
  EXPECT_EQ(Find(g, "p"), nullptr);

  o = NoPruning();
  o.root = {"m*"};
  o.leaf = {"c"};
  g = BuildCallGraph(Tree(in), o);
  EXPECT_EQ(g.nodes.size(), 4u);  // main, a, b, c

  o = NoPruning();
  o.root = {"nothing"};
  EXPECT_THROW(BuildCallGraph(Tree(in), o), Error);
}

TEST(CallGraphTest, StripFunctionName) {
  EXPECT_EQ(StripFunctionName("ns::f<int>(char const*) const"), "ns::f");
  EXPECT_EQ(
      StripFunctionName("std::vector<std::pair<int, int> >::push_back(std::pair<int, int>&&)"),
      "std::vector::push_back");
  EXPECT_EQ(StripFunctionName("operator<<(std::ostream&, int)"), "operator<<");
  EXPECT_EQ(StripFunctionName("A::operator()(int)"), "A::operator()");
  EXPECT_EQ(StripFunctionName("(anonymous namespace)::g(int)"), "(anonymous namespace)::g");
  EXPECT_EQ(StripFunctionName("main"), "main");
  EXPECT_EQ(StripFunctionName("[unknown]"), "[unknown]");
  CallGraphOptions o = NoPruning();
  o.strip = true;
  CallGraph g = BuildCallGraph(Tree({"p;ns::f<int>(char const*) 1"}), o);
  EXPECT_NE(Dot(g, o).find("label=\"ns::f\\n"), std::string::npos);
}

TEST(CallGraphTest, DotQuote) {
  EXPECT_EQ(DotQuote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
  EXPECT_EQ(DotQuote("x<y>{|}"), "\"x<y>{|}\"");
  EXPECT_EQ(DotQuote(std::string("a\tb\xff", 4)), "\"a b?\"");
  EXPECT_EQ(DotQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}

TEST(CallGraphTest, ColormapEnds) {
  EXPECT_EQ(CallGraphColor("color", 1.0, 1.0), "#ff0000");
  EXPECT_EQ(CallGraphColor("color", 0.0, 1.0), "#0d0d73");  // dark blue: HSL(2/3, .8, .25)
  EXPECT_EQ(CallGraphColor("bw", 0.5, 1.0), "#000000");
  EXPECT_NE(CallGraphColor("color", 0.3, 0.1), CallGraphColor("color", 0.3, 1.0));
  EXPECT_THROW(CallGraphColor("rainbow", 0.5, 1.0), UsageError);
}

TEST(CallGraphTest, DeterministicOutput) {
  std::vector<std::string> in = {"p;z 1", "p;y 2", "p;x;w 3", "q;x 4"};
  std::vector<std::string> rev(in.rbegin(), in.rend());
  EXPECT_EQ(Dot(BuildCallGraph(Tree(in), NoPruning())),
            Dot(BuildCallGraph(Tree(rev), NoPruning())));
}

// Without filters the counts come from one walk down the tree; a filter that removes nothing
// takes the walk up from each stack: both give the same graph, with recursion (direct and
// mutual, also through the process frame's name), stacks of no weight, weight on inner nodes,
// and the process frame left out or kept.
TEST(CallGraphTest, TheWalkDownTheTreeCountsAsTheWalkUpEachStack) {
  StackTree tree = Tree({"p;a;b;a;b 10", "p;a;a;a 3", "p;a;b 7", "p;a 2", "p 5", "q;a;b;c 4",
                         "q;a;dead;end 0", "q;c;a;c;b 6", "p;p;p 1", "r 0"});
  for (bool skip_process : {false, true}) {
    CallGraphOptions o = NoPruning();
    o.skip_process = skip_process;
    CallGraphOptions walk_up = o;
    walk_up.hide = {"^no such frame$"};
    EXPECT_EQ(Dot(BuildCallGraph(tree, o), o), Dot(BuildCallGraph(tree, walk_up), walk_up));
    CallGraph g = BuildCallGraph(tree, o);
    const CallGraph::Node* a = Find(g, "a");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->total, 32u);  // once per stack, however often a stack holds it
    EXPECT_EQ(g.all_nodes, skip_process ? 4u : 5u);  // not "dead", "end" nor "r": no weight
  }
}

// Past a thousand caller-callee pairs the walk down sums them through a radix sort (of keys
// that use two bytes of each function's index here): the walk up, which sorts each stack's
// pairs on their own, gives the same graph.
TEST(CallGraphTest, ManyPairsCountAsInTheWalkUp) {
  std::mt19937 random(7);
  std::vector<std::string> lines;
  for (int i = 0; i < 4000; ++i) {
    std::string line = "p";
    line += std::to_string(random() % 3);
    for (size_t depth = 1 + random() % 12; depth-- > 0;) {
      line += ";f";
      line += std::to_string(random() % 700);
    }
    line += " ";
    line += std::to_string(1 + random() % 50);
    lines.push_back(line);
  }
  StackTree tree = Tree(lines);
  CallGraphOptions o = NoPruning();
  CallGraphOptions walk_up = o;
  walk_up.hide = {"^no such frame$"};
  CallGraph g = BuildCallGraph(tree, o);
  EXPECT_GT(g.all_edges, 10000u);
  EXPECT_EQ(Dot(g, o), Dot(BuildCallGraph(tree, walk_up), walk_up));
}

/// Runs `dot -Tsvg` on `text`; returns its exit status, or -1 when dot is missing.
int RunDot(const std::string& text) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) return -1;
  char path[] = "/tmp/pf_call_graph_test_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return -2;
  close(fd);
  std::ofstream(path, std::ios::binary) << text;
  int status = std::system(("dot -Tsvg " + std::string(path) + " >/dev/null 2>&1").c_str());
  unlink(path);
  return status;
}

TEST(CallGraphTest, HostileNamesGiveValidDot) {
  std::string long_name(10000, 'x');
  std::vector<std::string> in = {
      "p;quote\"d;back\\slash\\ 3",
      "p;new\nline;tab\tname 2",
      "p;" + long_name + ";<html>{rec|ord} 4",
      "p;node;edge;graph;digraph;subgraph;strict;0x12 1",
      std::string("p;bad\xff\xfe utf8;-> 1"),
  };
  // Folded lines cannot carry a newline, but a tree built by other readers can.
  CallGraphOptions o = NoPruning();
  o.show_samples = true;
  o.wrap = true;
  CallGraph g = BuildCallGraph(Tree(in), o);
  std::string dot = Dot(g, o);
  EXPECT_EQ(dot.find(long_name), std::string::npos);  // labels and tooltips are truncated
  EXPECT_NE(dot.find("..."), std::string::npos);
  int status = RunDot(dot);
  if (status == -1) GTEST_SKIP() << "dot (Graphviz) is not installed";
  EXPECT_EQ(status, 0) << dot;
}

// The graph of folded text read line by line in each pass (no tree: as pf-dot reads folded
// files) is the graph of its tree, under every filter and pruning option.
TEST(CallGraphTest, FoldedTextDrawsWhatTheTreeDraws) {
  const std::vector<std::string> names = {"a", "b", "a::b", "c", "[unknown]", "x_[k]", "a b",
                                          "main", "f", "g"};
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> lines;
    std::string text;
    for (int i = 0; i < 150; ++i) {
      std::string line;
      const int depth = 1 + static_cast<int>(rng() % 7);
      for (int d = 0; d < depth; ++d) {
        if (d) line += ';';
        line += names[rng() % names.size()];
      }
      line += ' ';
      line += std::to_string(rng() % 8 == 0 ? rng() % 100000 : 1 + rng() % 5);
      lines.push_back(line);
      text += line;
      text += '\n';
    }
    CallGraphOptions o;
    switch (round % 10) {
      case 1: o.node_thres = 0, o.edge_thres = 0; break;
      case 2: o.nodecount = 3; break;
      case 3: o.focus = {"^a$"}; break;
      case 4: o.ignore = {"^c$"}, o.hide = {"b"}; break;
      case 5: o.show_from = {"a::b"}; break;
      case 6: o.root = {"main"}, o.depth = 2; break;
      case 7: o.leaf = {"g", "f"}; break;
      case 8: o.pprof_selection = true, o.node_thres = 5; break;
      case 9: o.hide = {"."}; break;  // every frame hidden: nothing kept
    }
    Interner names;
    WeightUnit unit = WeightUnit::kBytes;
    const std::string_view texts[] = {text};
    ASSERT_TRUE(NameFoldedTexts(texts, false, &names, &unit)) << round;
    ASSERT_EQ(unit, WeightUnit::kUnspecified);  // (no unit line)
    std::set<std::string> distinct;  // every line read: each name met
    for (const std::string& line : lines) {
      const std::string stack = line.substr(0, line.rfind(' '));
      for (size_t start = 0, semi = 0; semi != std::string::npos; start = semi + 1) {
        semi = stack.find(';', start);
        distinct.insert(stack.substr(start, semi - start));
      }
    }
    ASSERT_EQ(names.size(), distinct.size()) << round;
    std::string from_tree, from_text;
    try {
      from_tree = Dot(BuildCallGraph(Tree(lines), o), o);
    } catch (const Error& e) {
      from_tree = std::string("error: ") + e.what();
    }
    try {
      from_text = Dot(BuildCallGraph(texts, names, WeightUnit::kUnspecified, false, o), o);
    } catch (const Error& e) {
      from_text = std::string("error: ") + e.what();
    }
    EXPECT_EQ(from_text, from_tree) << "round " << round;
    if (round % 10 == 0) {
      EXPECT_NE(from_tree.find("->"), std::string::npos);  // a graph with edges
    }
  }
}

TEST(CallGraphTest, RefusesDifferentialTrees) {
  StackTree tree = StackTree::Differential();
  EXPECT_THROW(BuildCallGraph(tree, CallGraphOptions{}), Error);
}

}  // namespace
}  // namespace pf
