// pf-dot's call graph of a profile of call edges (callgrind; call_graph.h,
// BuildFunctionCallGraph). The numbers come from the profile, not from stacks: a function's
// total is its inclusive cost (FunctionGraph::Inclusive: self plus its calls to others), its
// self weight its self cost, an edge the inclusive cost of the call, labelled with the call
// count as gprof2dot labels callgrind's edges ("12×"), and a node with the calls into it.
// The nodes are chosen by the same code as a stack tree's (graph_select.h); an edge is drawn
// when both its ends are and it is above the edge threshold. Stack filters have nothing to
// work on here and are refused rather than ignored.

#include <algorithm>

#include "base/error.h"
#include "callgraph/call_graph.h"
#include "callgraph/graph_select.h"

namespace pf {

namespace {

using graph_select::PairKey;

void RefuseStackFilters(const CallGraphOptions& o) {
  for (auto [name, list] : {std::pair{"focus", &o.focus}, std::pair{"ignore", &o.ignore},
                            std::pair{"hide", &o.hide}, std::pair{"show-from", &o.show_from}}) {
    if (!list->empty()) {
      throw UsageError(std::string("--") + name +
                       " filters call stacks, and a callgrind profile has call edges only; use "
                       "-z/--root, -l/--leaf and --depth, or record with valgrind "
                       "--separate-callers=N and draw its stacks (pf-collapse FILE | pf-dot)");
    }
  }
}

int FindColumn(const FunctionGraph& graph, std::string_view value) {
  int c = graph.FindSampleType(value);
  if (c >= 0) return c;
  std::string names;
  for (const SampleType& t : graph.sample_types()) names += (names.empty() ? "" : ", ") + t.name;
  throw UsageError("no event '" + std::string(value) + "' in the profile (it has " + names + ")");
}

// The functions, their totals, self costs and calls, and the direct edges, of one column.
CallCounts CollectFunctions(const FunctionGraph& graph, int column) {
  CallCounts fs;
  fs.totals = graph.Inclusive(column);
  fs.called.assign(graph.functions().size(), 0);
  for (uint32_t f = 0; f < graph.functions().size(); ++f) {
    const FunctionGraph::Function& fn = graph.functions()[f];
    fs.names.push_back(fn.name);
    fs.modules.push_back(fn.module());
    fs.selfs.push_back(graph.self(f, column));
  }
  for (uint32_t c = 0; c < graph.calls().size(); ++c) {
    const FunctionGraph::Call& call = graph.calls()[c];
    fs.direct.emplace_back(PairKey(call.caller, call.callee), graph.inclusive(c, column));
    fs.called[call.callee] = AddSat(fs.called[call.callee], call.count);
  }
  // Sorted by pair, each pair once: the last call of a pair gives its weight.
  std::stable_sort(fs.direct.begin(), fs.direct.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  auto last = std::unique(fs.direct.rbegin(), fs.direct.rend(),
                          [](const auto& a, const auto& b) { return a.first == b.first; });
  fs.direct.erase(fs.direct.begin(), last.base());
  return fs;
}

}  // namespace

CallGraph BuildFunctionCallGraph(const FunctionGraph& graph, const CallGraphOptions& o,
                                 std::string_view value) {
  graph_select::CheckGraphOptions(o);
  RefuseStackFilters(o);
  int column = FindColumn(graph, value);
  CallGraph g;
  g.from_call_edges = true;
  g.total = graph.Total(column);
  g.kept_weight = g.total;
  g.unit = graph.sample_types()[column].unit;
  g.saturated = graph.saturated();
  if (g.total == UINT64_MAX) ++g.saturated;  // the self costs' sum stopped there
  CallCounts fs = CollectFunctions(graph, column);
  g.all_nodes = fs.names.size();
  g.all_edges = graph.calls().size();
  // Choose the nodes, and number them in id order.
  std::vector<int32_t> node_of =
      graph_select::AddNodes(nullptr, fs, graph_select::ChooseNodes(fs, o, g.total, &g), &g);
  // The calls between drawn nodes, above the edge threshold.
  for (uint32_t c = 0; c < graph.calls().size(); ++c) {
    const FunctionGraph::Call& call = graph.calls()[c];
    int32_t from = node_of[call.caller], to = node_of[call.callee];
    uint64_t w = graph.inclusive(c, column);
    if (from < 0 || to < 0 || !graph_select::EdgeKept(w, g.total, o)) continue;
    g.edges.push_back(
        {static_cast<uint32_t>(from), static_cast<uint32_t>(to), w, false, call.count});
  }
  std::sort(g.edges.begin(), g.edges.end(), [](const CallGraph::Edge& a, const CallGraph::Edge& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  g.dropped_edges = g.all_edges - g.edges.size();
  return g;
}

}  // namespace pf
