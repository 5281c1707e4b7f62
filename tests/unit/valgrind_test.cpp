// valgrind's outputs: massif heap trees (the snapshot chosen, self bytes from inclusive
// entries, frame names, below-threshold entries, lying files), callgrind files (name
// compression, relative positions, calls, several events, objects, totals), the stacks of
// --separate-callers files, pf-dot's call graph of call edges, and the sniffing of both.
// Real files made by valgrind 3.19 are in tests/data/valgrind (README there).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/error.h"
#include "callgraph/call_graph.h"
#include "collapse/collapse.h"
#include "formats/callgrind.h"
#include "formats/massif.h"
#include "formats/sniff.h"
#include "io/input.h"
#include "stacks/folded.h"
#include "test_util.h"

namespace pf {
namespace {

std::string Data(const std::string& name) {
  return test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/data/valgrind/" + name);
}

/// The folded lines of a tree's column (root first, sorted).
std::map<std::string, uint64_t> Stacks(const StackTree& tree, int column = 0) {
  std::map<std::string, uint64_t> out;
  tree.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
    std::string s;
    for (NodeId p : path) {
      if (!s.empty()) s += ';';
      s += tree.name(p);
    }
    if (tree.self(n, column)) out[s] += tree.self(n, column);
  });
  return out;
}

StackTree Massif(std::string_view text, std::string_view snapshot = "peak",
                 ReadReport* report = nullptr) {
  ReadReport local;
  auto src = MemoryInput(text, "massif.out");
  return ReadMassif(*src, snapshot, report ? report : &local);
}

FunctionGraph Callgrind(std::string_view text, ReadReport* report = nullptr) {
  ReadReport local;
  auto src = MemoryInput(text, "callgrind.out");
  return ReadCallgrind(*src, report ? report : &local);
}

constexpr std::string_view kMassif =
    "desc: --threshold=5\n"
    "cmd: ./prog\n"
    "time_unit: i\n"
    "#-----------\nsnapshot=0\n#-----------\ntime=0\nmem_heap_B=0\nmem_heap_extra_B=0\n"
    "mem_stacks_B=0\nheap_tree=empty\n"
    "#-----------\nsnapshot=1\n#-----------\ntime=10\nmem_heap_B=1100\nmem_heap_extra_B=8\n"
    "mem_stacks_B=0\nheap_tree=detailed\n"
    "n2: 1100 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
    " n1: 1000 0x4005B3: f (a.c:3)\n"
    "  n0: 1000 0x4005C0: main (a.c:9)\n"
    " n0: 100 in 3 places, all below massif's threshold (5.00%)\n"
    "#-----------\nsnapshot=2\n#-----------\ntime=20\nmem_heap_B=3000\nmem_heap_extra_B=8\n"
    "mem_stacks_B=0\nheap_tree=peak\n"
    "n3: 3000 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
    " n2: 2500 0x4005B3: f (a.c:3)\n"
    "  n1: 2000 0x4005C0: main (a.c:9)\n"
    "   n0: 2000 0x4006C0: (below main) (libc-start.c:1)\n"
    "  n0: 400 0x4005D0: main (a.c:12)\n"
    " n1: 400 0x4007B3: ??? (in /usr/lib/libz.so.1)\n"
    "  n0: 400 0x4005C0: main (a.c:9)\n"
    " n0: 100 in 1 place, below massif's threshold (5.00%)\n"
    "#-----------\nsnapshot=3\n#-----------\ntime=30\nmem_heap_B=0\nmem_heap_extra_B=0\n"
    "mem_stacks_B=0\nheap_tree=empty\n";

TEST(Massif, PeakTreeBySelfBytes) {
  ReadReport report;
  StackTree t = Massif(kMassif, "peak", &report);
  EXPECT_EQ(t.sample_type().name, "inuse_space");
  EXPECT_EQ(t.unit(), WeightUnit::kBytes);
  EXPECT_EQ(t.Total(), 3000u);  // mem_heap_B
  // f (2500) = main:9 (2000) + main:12 (400) + 100 of its own.
  std::map<std::string, uint64_t> want = {{"(below main);main;f", 2000},
                                          {"main;f", 400},
                                          {"f", 100},
                                          {"main;[libz.so.1]", 400},
                                          {"[below threshold: 1 place]", 100}};
  EXPECT_EQ(Stacks(t), want);
  EXPECT_TRUE(report.warnings.empty());
}

TEST(Massif, ChoosesSnapshots) {
  EXPECT_EQ(Massif(kMassif, "1").Total(), 1100u);
  EXPECT_EQ(Stacks(Massif(kMassif, "1")),
            (std::map<std::string, uint64_t>{{"main;f", 1000}, {"[below threshold: 3 places]", 100}}));
  EXPECT_EQ(Massif(kMassif, "2").Total(), 3000u);
  EXPECT_EQ(Massif(kMassif, "last").Total(), 3000u);  // the last with a tree
  try {
    Massif(kMassif, "3");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("snapshot 3 has no heap tree"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("1, 2 (peak)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Massif(kMassif, "7"), Error);
  EXPECT_THROW(Massif(kMassif, "top"), UsageError);
}

TEST(Massif, FrameNames) {
  EXPECT_EQ(MassifFrameName("0x109167: alloc_row (massif_prog.c:32)"), "alloc_row");
  EXPECT_EQ(MassifFrameName("0x4C2B: operator new(unsigned long) (in /usr/lib/libstdc++.so.6)"),
            "operator new(unsigned long)");
  EXPECT_EQ(MassifFrameName("0x4C2B: Foo::operator()(int) const (foo.cpp:12)"),
            "Foo::operator()(int) const");
  EXPECT_EQ(MassifFrameName("0x485E05C: ??? (in /usr/lib/libselinux.so.1)"), "[libselinux.so.1]");
  EXPECT_EQ(MassifFrameName("in 12 places, all below massif's threshold (1.00%)"),
            "[below threshold: 12 places]");
  EXPECT_EQ(MassifFrameName("0x1: f (not a location)"), "f (not a location)");
}

TEST(Massif, LyingEntriesAreCountedNotNegative) {
  std::string text(kMassif.substr(0, kMassif.find("#-----------\nsnapshot=2")));
  text.replace(text.find(" n1: 1000 0x4005B3"), 10, " n1: 900 0x4005B3");
  ReadReport report;
  StackTree t = Massif(text, "1", &report);
  ASSERT_EQ(report.warnings.size(), 2u);
  EXPECT_NE(report.warnings[0].find("more bytes below it than it holds"), std::string::npos);
  EXPECT_NE(report.warnings[1].find("holds 1200 bytes, its mem_heap_B says 1100"),
            std::string::npos) << report.warnings[1];
  // main's 1000, the 100 below threshold, and the 100 the root holds beyond its entries; f
  // owns nothing.
  EXPECT_EQ(t.Total(), 1200u);
  EXPECT_EQ(Stacks(t)["[heap outside the tree]"], 100u);
}

TEST(Massif, NotMassifIsAnError) {
  EXPECT_THROW(Massif("desc: x\ncmd: y\nsnapshot=1\n"), Error);
  EXPECT_THROW(Massif("desc: x\ncmd: y\ntime_unit: i\n"), Error);  // no snapshot
  EXPECT_THROW(Massif("desc: x\ncmd: y\ntime_unit: i\n#---\nsnapshot=0\nheap_tree=peak\n"
                      "n1: 5 root\n   n0: 5 0x1: f (a.c:1)\n"),
               Error);  // depth 3 under 1 open entry
}

TEST(Massif, RealFile) {
  std::string text = Data("massif.out.massif_prog");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(SniffFormat(text), InputFormat::kMassif);
  StackTree t = Massif(text);
  EXPECT_EQ(t.Total(), 75712u);  // ms_print: the peak, snapshot 40, 75,712 B useful heap
  auto s = Stacks(t);
  EXPECT_EQ(s["main;build_table;alloc_row"], 64000u);
  EXPECT_EQ(s["main;build_list;new_node"], 9600u);
  EXPECT_EQ(s["main;small_bits"], 1600u);
}

constexpr std::string_view kCallgrind =
    "# callgrind format\n"
    "version: 1\ncreator: callgrind-3.19.0\npid: 1\ncmd: ./p\npart: 1\n\n"
    "positions: line\n"
    "events: Ir Dr\n"
    "summary: 1123 20\n\n"
    "ob=(1) /bin/p\n"
    "fl=(1) p.c\n"
    "fn=(1) main\n"
    "3 4 1\n"
    "+1 6\n"
    "cfn=(2) fib\n"
    "calls=1 2\n"
    "* 1000 30\n"
    "cob=(2) /lib/libc.so.6\n"
    "cfi=(2) ???\n"
    "cfn=(3) (below main)\n"
    "calls=2 0\n"
    "-1 13\n"
    "jump=1 +2\n"
    "* 0\n"
    "\n"
    "fn=(2)\n"
    "2 500 5\n"
    "cfn=(2)\n"
    "calls=9 2\n"
    "2 450 4\n"
    "fi=(3) inl.h\n"
    "7 50 5\n"
    "fe=(1)\n"
    "cfn=(4) leaf\n"
    "calls=3 1\n"
    "* 450\n"
    "fn=(4)\n"
    "1 450\n"
    "ob=(2)\n"
    "fn=(3)\n"
    "0 13 9\n"
    "ob=(1)\n"
    "fn=(5) (below main)\n"
    "0 100\n"
    "totals: 1123 20\n";

TEST(Callgrind, FunctionsCallsAndCosts) {
  ReadReport report;
  FunctionGraph g = Callgrind(kCallgrind, &report);
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
  ASSERT_EQ(g.columns(), 2);
  EXPECT_EQ(g.sample_types()[0].name, "Ir");
  EXPECT_EQ(g.sample_types()[0].unit, WeightUnit::kInstructions);
  EXPECT_EQ(g.sample_types()[1].unit, WeightUnit::kEvents);
  // main, fib, (below main) of libc, leaf, (below main) of /bin/p.
  ASSERT_EQ(g.functions().size(), 5u);
  EXPECT_EQ(g.functions()[2].name, "(below main)");
  EXPECT_EQ(g.functions()[2].module(), "libc.so.6");
  EXPECT_EQ(g.functions()[4].module(), "p");
  EXPECT_EQ(g.Total(0), 1123u);
  EXPECT_EQ(g.Total(1), 20u);
  EXPECT_EQ(g.self(0, 0), 10u);
  EXPECT_EQ(g.self(1, 0), 550u);  // fib's own lines, the inlined one too
  EXPECT_EQ(g.self(1, 1), 10u);
  ASSERT_EQ(g.calls().size(), 4u);  // main->fib, main->(below main), fib->fib, fib->leaf
  EXPECT_EQ(g.calls()[0].count, 1u);
  EXPECT_EQ(g.inclusive(0, 0), 1000u);
  EXPECT_EQ(g.calls()[1].callee, 2u);  // the callee's object from cob=
  EXPECT_EQ(g.calls()[2].count, 9u);
  EXPECT_EQ(g.calls()[3].callee, 3u);  // leaf is in main's object again (no cob=)
  std::vector<uint64_t> incl = g.Inclusive(0);
  EXPECT_EQ(incl[0], 10u + 1000 + 13);  // main
  EXPECT_EQ(incl[1], 550u + 450);       // fib: recursion not counted twice
  EXPECT_EQ(g.FindSampleType(""), 0);
  EXPECT_EQ(g.FindSampleType("Dr"), 1);
  EXPECT_EQ(g.FindSampleType("1"), 1);
  EXPECT_EQ(g.FindSampleType("D1mr"), -1);
}

TEST(Callgrind, TotalsThatDisagreeAreWarned) {
  std::string text(kCallgrind);
  text.replace(text.find("totals: 1123"), 12, "totals: 1124");
  ReadReport report;
  Callgrind(text, &report);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("sum to 1123, the file's totals: line says 1124"),
            std::string::npos);
}

TEST(Callgrind, MalformedLines) {
  ReadReport report;
  FunctionGraph g = Callgrind("events: Ir\nfn=f\n1 2\nx 5\n1 2 3\n+ 4\nfoo=bar\n", &report);
  EXPECT_EQ(g.Total(0), 2u);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("4 lines skipped"), std::string::npos) << report.warnings[0];
  EXPECT_THROW(Callgrind("events: Ir\nfn=(3)\n1 2\n"), Error);  // id never defined
  EXPECT_THROW(Callgrind("fn=f\n1 2\n"), Error);                // no events:
  EXPECT_THROW(Callgrind("version: 1\n"), Error);
}

TEST(Callgrind, SeparateCallersGiveStacks) {
  std::string text =
      "events: Ir Dr\n"
      "fn=(1) start\n1 1\ncfn=(2) main'start\ncalls=1 1\n1 111 4\n"
      "fn=(2)\n1 10 2\ncfn=(3) f'main'start\ncalls=2 1\n1 100 2\n"
      "cfn=(4) f'f'main'start\ncalls=1 1\n1 1\n"
      "fn=(3)\n1 99 2\n"
      "fn=(4)\n1 1\n";
  FunctionGraph g = Callgrind(text);
  EXPECT_TRUE(HasCallerContexts(g));
  StackTree t = CallgrindStacks(g, "cg");
  // The events in the file's order; the first is the default column.
  ASSERT_EQ(t.columns(), 2);
  EXPECT_EQ(t.sample_type(0).name, "Ir");
  EXPECT_EQ(t.sample_type(1).name, "Dr");
  EXPECT_EQ(t.default_column(), 0);
  EXPECT_EQ(Stacks(t, 0), (std::map<std::string, uint64_t>{{"start", 1},
                                                           {"start;main", 10},
                                                           {"start;main;f", 99},
                                                           {"start;main;f;f", 1}}));
  EXPECT_EQ(t.Total(0), g.Total(0));
  EXPECT_EQ(t.Total(1), 4u);
  // Merged into functions for pf-dot.
  FunctionGraph m = MergeCallerContexts(g);
  ASSERT_EQ(m.functions().size(), 3u);
  EXPECT_EQ(m.functions()[2].name, "f");
  EXPECT_EQ(m.self(2, 0), 100u);
  // A context cut short of its root (--separate-callers=1 here): no stacks.
  std::string cut = "events: Ir\nfn=(1) start\n1 1\ncfn=(2) main'start\ncalls=1 1\n1 5\n"
                    "fn=(2)\n1 1\ncfn=(3) f'main\ncalls=1 1\n1 4\nfn=(3)\n1 4\n";
  try {
    CallgrindStacks(Callgrind(cut), "cg");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--separate-callers smaller"), std::string::npos);
  }
  try {
    CallgrindStacks(Callgrind(kCallgrind), "cg");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pf-dot"), std::string::npos);
  }
}

TEST(Callgrind, RecursionLevelIsNotACaller) {
  // What valgrind 3.19 writes for r(3) called from main (--separate-recs=2, the default):
  // the recursive calls are a function "r'2", a level of r, not a context with a caller "2".
  std::string plain =
      "events: Ir\n"
      "fn=(1) main\n1 3\ncfn=(2) r\ncalls=1 1\n1 40\n"
      "fn=(2)\n1 10\ncfn=(3) r'2\ncalls=1 1\n1 30\n"
      "fn=(3)\n1 30\ncfn=(3)\ncalls=2 1\n1 20\n";
  FunctionGraph g = Callgrind(plain);
  EXPECT_FALSE(HasCallerContexts(g));
  try {
    CallgrindStacks(g, "cg");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    // Call edges only: pf-dot, not "--separate-callers smaller than its deepest stack".
    EXPECT_NE(std::string(e.what()).find("call edges, not call stacks"), std::string::npos)
        << e.what();
  }
  FunctionGraph m = MergeCallerContexts(g);
  ASSERT_EQ(m.functions().size(), 2u);
  EXPECT_EQ(m.functions()[1].name, "r");
  EXPECT_EQ(m.self(1, 0), 40u);
  // With --separate-callers, callgrind holds a run of direct recursion once ("r'2'main"),
  // and names mutual recursion's callers ("even'2'odd'even'main").
  std::string sep =
      "events: Ir\n"
      "fn=(1) main\n1 3\ncfn=(2) r'main\ncalls=1 1\n1 40\ncfn=(4) even'main\ncalls=1 1\n1 9\n"
      "fn=(2)\n1 10\ncfn=(3) r'2'main\ncalls=1 1\n1 30\n"
      "fn=(3)\n1 30\ncfn=(3)\ncalls=2 1\n1 20\n"
      "fn=(4)\n1 3\ncfn=(5) odd'even'main\ncalls=1 1\n1 6\n"
      "fn=(5)\n1 3\ncfn=(6) even'2'odd'even'main\ncalls=1 1\n1 3\n"
      "fn=(6)\n1 3\n";
  FunctionGraph gs = Callgrind(sep);
  EXPECT_TRUE(HasCallerContexts(gs));
  StackTree t = CallgrindStacks(gs, "cg");
  EXPECT_EQ(Stacks(t), (std::map<std::string, uint64_t>{{"main", 3},
                                                       {"main;r", 40},
                                                       {"main;even", 3},
                                                       {"main;even;odd", 3},
                                                       {"main;even;odd;even", 3}}));
  EXPECT_EQ(t.Total(), gs.Total(0));
}

TEST(Callgrind, ThreadStartOutcostsTheCallIntoIt) {
  // A thread's clone: called by pthread_create in the parent (36 Ir until it returns there),
  // it calls start_thread in the child (2,400,000 Ir), which is not in the call into clone.
  std::string text =
      "events: Ir\n"
      "fn=(1) main\n1 10\ncfn=(2) pthread_create\ncalls=2 1\n1 50\n"
      "fn=(2)\n1 14\ncfn=(3) clone\ncalls=2 1\n1 36\n"
      "fn=(3)\n1 36\ncfn=(4) start_thread\ncalls=2 1\n1 2400000\n"
      "fn=(4)\n1 2400000\n";
  FunctionGraph g = Callgrind(text);
  std::vector<uint64_t> incl = g.Inclusive(0);
  ASSERT_EQ(incl.size(), 4u);
  EXPECT_EQ(incl[0], 60u);       // main: its own and pthread_create's (as callgrind_annotate)
  EXPECT_EQ(incl[1], 50u);       // pthread_create: the calls into it
  EXPECT_EQ(incl[2], 2400036u);  // clone: its own and start_thread's (gprof2dot's 100%)
  EXPECT_EQ(incl[3], 2400000u);
}

TEST(Callgrind, SelfCostsSummingPastTheLimitAreSaturated) {
  // Each cost fits, their sum does not: the graph's total stops at UINT64_MAX, and says so.
  FunctionGraph g = Callgrind(
      "events: Ir\nfn=(1) main\n1 18446744073709551615\ncfn=(2) f\ncalls=1 1\n"
      "1 18446744073709551615\nfn=(2)\n1 18446744073709551615\n");
  EXPECT_EQ(g.saturated(), 0u);
  CallGraphOptions o;
  CallGraph cg = BuildFunctionCallGraph(g, o);
  EXPECT_EQ(cg.total, UINT64_MAX);
  EXPECT_GT(cg.saturated, 0u);
}

TEST(Callgrind, CallGraphOfEdges) {
  FunctionGraph g = Callgrind(kCallgrind);
  CallGraphOptions o;
  o.node_thres = 0;
  o.edge_thres = 0;
  CallGraph cg = BuildFunctionCallGraph(g, o);
  EXPECT_TRUE(cg.from_call_edges);
  EXPECT_EQ(cg.total, 1123u);
  EXPECT_EQ(cg.unit, WeightUnit::kInstructions);
  ASSERT_EQ(cg.nodes.size(), 5u);
  std::map<std::string, const CallGraph::Node*> by;
  for (const auto& n : cg.nodes) by[n.module + ":" + n.name] = &n;
  ASSERT_TRUE(by.count("p:main") && by.count("p:fib") && by.count("libc.so.6:(below main)"));
  EXPECT_EQ(by["p:main"]->total, 1023u);
  EXPECT_EQ(by["p:fib"]->total, 1000u);
  EXPECT_EQ(by["p:fib"]->self, 550u);
  EXPECT_EQ(by["p:fib"]->calls, 10u);  // 1 from main, 9 from itself
  EXPECT_EQ(cg.edges.size(), 4u);
  // The other event, and pruning.
  CallGraph dr = BuildFunctionCallGraph(g, o, "Dr");
  EXPECT_EQ(dr.total, 20u);
  o.nodecount = 2;
  CallGraph two = BuildFunctionCallGraph(g, o);
  EXPECT_EQ(two.nodes.size(), 2u);
  EXPECT_EQ(two.edges.size(), 2u);  // main->fib, and fib->fib (a self edge)
  EXPECT_THROW(BuildFunctionCallGraph(g, o, "Bc"), UsageError);
  o.focus = {"main"};
  EXPECT_THROW(BuildFunctionCallGraph(g, o), UsageError);
}

TEST(Callgrind, RealFiles) {
  std::string plain = Data("callgrind.out.massif_prog");
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(SniffFormat(plain), InputFormat::kCallgrind);
  ReadReport report;
  FunctionGraph g = Callgrind(plain, &report);
  EXPECT_TRUE(report.warnings.empty());
  EXPECT_FALSE(HasCallerContexts(g));
  // The separate-callers file folds into stacks whose total is its totals: line.
  std::string sep = Data("callgrind.out.separate");
  FunctionGraph s = Callgrind(sep);
  StackTree t = CallgrindStacks(s, "sep");
  size_t at = sep.find("\ntotals: ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(std::to_string(t.Total()), sep.substr(at + 9, sep.find('\n', at + 1) - at - 9));
  // --dump-instr=yes: two positions per cost line; --cache-sim: 9 events.
  std::string cache = Data("callgrind.out.cache");
  FunctionGraph c = Callgrind(cache, &report);
  EXPECT_EQ(c.columns(), 9);
  EXPECT_GT(c.Total(0), 0u);
}

TEST(Sniff, ValgrindFormats) {
  EXPECT_EQ(SniffFormat(kMassif), InputFormat::kMassif);
  EXPECT_EQ(SniffFormat(kCallgrind), InputFormat::kCallgrind);
  // Without the "# callgrind format" line (older callgrind, cachegrind).
  EXPECT_EQ(SniffFormat("version: 1\nevents: Ir\nfl=a.c\nfn=main\n1 5\n"),
            InputFormat::kCallgrind);
  // A folded stack whose first frame is "desc:" is still folded.
  EXPECT_EQ(SniffFormat("desc:;main 3\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("desc: x\ncmd: y\n"), InputFormat::kPerfScript);  // not massif's
}

TEST(Collapse, ValgrindThroughEveryTool) {
  EXPECT_EQ(test::Collapse(kMassif),
            "(below main);main;f 2000\n[below threshold: 1 place] 100\nf 100\n"
            "main;[libz.so.1] 400\nmain;f 400\n");
  try {
    test::Collapse(kCallgrind);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("call edges, not call stacks"), std::string::npos);
  }
  CollapseOptions opt;
  opt.profile.snapshot = "1";
  EXPECT_EQ(test::Collapse(kMassif, opt), "[below threshold: 3 places] 100\nmain;f 1000\n");
}

}  // namespace
}  // namespace pf
