// Choosing the nodes of a call graph (graph_select.h): the functions --root/--leaf reach
// (breadth-first over the direct edges, within --depth), above the node threshold, at most
// the --nodecount largest; then numbered in the order of their ids.

#include "callgraph/graph_select.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "base/intern.h"

namespace pf::graph_select {

namespace {

/// Functions reachable from the functions matching `globs` within `depth` edges, following
/// `adj` (callees for --root, callers for --leaf).
std::vector<bool> Reach(const std::vector<std::string>& globs, const char* option,
                        const std::vector<std::string_view>& names,
                        const std::vector<std::vector<uint32_t>>& adj, int depth) {
  std::vector<bool> seen(names.size(), false);
  std::vector<uint32_t> frontier;
  for (uint32_t f = 0; f < names.size(); ++f) {
    std::string name(names[f]);
    for (const std::string& g : globs) {
      if (fnmatch(g.c_str(), name.c_str(), 0) == 0) {
        seen[f] = true;
        frontier.push_back(f);
        break;
      }
    }
  }
  if (frontier.empty()) {
    std::string list;
    for (const std::string& g : globs) list += (list.empty() ? "'" : ", '") + g + "'";
    throw Error(std::string("--") + option + ": no function matches " + list);
  }
  for (int d = 0; (depth < 0 || d < depth) && !frontier.empty(); ++d) {
    std::vector<uint32_t> next;
    for (uint32_t f : frontier) {
      for (uint32_t g : adj[f]) {
        if (!seen[g]) {
          seen[g] = true;
          next.push_back(g);
        }
      }
    }
    frontier.swap(next);
  }
  return seen;
}

/// "N" and 16 hex digits of the name's hash.
std::string NodeIdOf(std::string_view name) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "N%016llx", static_cast<unsigned long long>(HashBytes(name)));
  return buf;
}

}  // namespace

void CheckGraphOptions(const CallGraphOptions& o) {
  if (!(o.node_thres >= 0) || !(o.edge_thres >= 0)) {
    throw UsageError("--node-thres and --edge-thres must be percentages >= 0");
  }
  if (!(o.skew > 0) || !std::isfinite(o.skew)) throw UsageError("--skew must be a positive number");
  for (const std::string& m : o.node_labels) {
    if (m != "total-time-percentage" && m != "self-time-percentage" && m != "total-time" &&
        m != "self-time") {
      throw UsageError("--node-label must be total-time-percentage, self-time-percentage, "
                       "total-time or self-time, not '" + m + "'");
    }
  }
  CallGraphColor(o.colormap, 0, 1);  // throws for an unknown colormap
}

// The functions to draw, largest first: --root/--leaf reach, the node threshold, then the
// largest --nodecount.
std::vector<uint32_t> ChooseNodes(const CallCounts& fs, const CallGraphOptions& o,
                                  uint64_t total, CallGraph* graph) {
  const std::vector<std::string_view>& names = fs.names;
  const std::vector<uint64_t>& totals = fs.totals;
  std::vector<bool> allowed(names.size(), true);
  if (!o.root.empty() || !o.leaf.empty()) {
    std::vector<std::vector<uint32_t>> down(names.size()), up(names.size());
    for (const auto& [key, w] : fs.direct) {  // sorted by key
      uint32_t a = static_cast<uint32_t>(key >> 32), b = static_cast<uint32_t>(key);
      down[a].push_back(b);
      up[b].push_back(a);
    }
    if (!o.root.empty()) {
      std::vector<bool> r = Reach(o.root, "root", names, down, o.depth);
      for (size_t f = 0; f < names.size(); ++f) allowed[f] = allowed[f] && r[f];
    }
    if (!o.leaf.empty()) {
      std::vector<bool> r = Reach(o.leaf, "leaf", names, up, o.depth);
      for (size_t f = 0; f < names.size(); ++f) allowed[f] = allowed[f] && r[f];
    }
  }
  std::vector<uint32_t> candidates;
  if (o.pprof_selection) {  // (pprof: kept when cum >= int64(float64(total) * fraction))
    graph->node_cutoff =
        static_cast<uint64_t>(static_cast<double>(total) * (o.node_thres / 100.0));
  }
  for (uint32_t f = 0; f < names.size(); ++f) {
    double pct = total ? 100.0 * static_cast<double>(totals[f]) / static_cast<double>(total) : 0;
    bool above = o.pprof_selection ? totals[f] >= graph->node_cutoff : pct >= o.node_thres;
    if (allowed[f] && above) candidates.push_back(f);
  }
  graph->above_cutoff = candidates.size();
  const std::vector<uint64_t>& selfs = fs.selfs;
  std::sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
    if (!o.pprof_selection) {
      return totals[a] != totals[b] ? totals[a] > totals[b] : names[a] < names[b];
    }
    // A text report's order (text_report.cpp): by self weight or total, then name.
    const uint64_t a1 = o.cum_order ? totals[a] : selfs[a], b1 = o.cum_order ? totals[b] : selfs[b];
    if (a1 != b1) return a1 > b1;
    if (names[a] != names[b]) return names[a] < names[b];
    return (o.cum_order ? selfs[a] : totals[a]) > (o.cum_order ? selfs[b] : totals[b]);
  });
  if (o.nodecount > 0 && candidates.size() > o.nodecount) candidates.resize(o.nodecount);
  return candidates;
}

bool EdgeKept(uint64_t weight, uint64_t total, const CallGraphOptions& o) {
  if (o.pprof_selection) {
    return weight >= static_cast<uint64_t>(static_cast<double>(total) * (o.edge_thres / 100.0));
  }
  const double pct = total ? 100.0 * static_cast<double>(weight) / static_cast<double>(total) : 0;
  return pct >= o.edge_thres;
}

// The chosen functions become the graph's nodes, sorted by id (a hash of the name; a
// collision gets a suffix). Returns each function's node (-1: not drawn).
std::vector<int32_t> AddNodes(const StackTree* tree, const CallCounts& fs,
                              const std::vector<uint32_t>& candidates, CallGraph* graph) {
  CallGraph& g = *graph;
  const std::vector<std::string_view>& names = fs.names;
  for (uint32_t f : candidates) {
    g.nodes.push_back(
        {std::string(names[f]), NodeIdOf(names[f]), fs.totals[f], fs.selfs[f], {}});
    std::string_view module;
    if (!fs.modules.empty()) {
      g.nodes.back().module = fs.modules[f];
    } else if (tree && tree->Module(StrId{fs.name_ids[f]}, &module)) {
      g.nodes.back().module = module;
    }
    if (!fs.called.empty()) g.nodes.back().calls = fs.called[f];
  }
  std::vector<uint32_t> order(g.nodes.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return g.nodes[a].id != g.nodes[b].id ? g.nodes[a].id < g.nodes[b].id
                                          : g.nodes[a].name < g.nodes[b].name;
  });
  std::vector<CallGraph::Node> sorted;
  std::vector<int32_t> node_of(names.size(), -1);
  for (uint32_t i : order) {
    node_of[candidates[i]] = static_cast<int32_t>(sorted.size());
    sorted.push_back(std::move(g.nodes[i]));
    if (sorted.size() >= 2 && sorted[sorted.size() - 2].id.substr(0, 17) == sorted.back().id) {
      sorted.back().id.append("_").append(std::to_string(sorted.size()));
    }
  }
  g.nodes = std::move(sorted);
  g.dropped_nodes = g.all_nodes - g.nodes.size();
  return node_of;
}

}  // namespace pf::graph_select
