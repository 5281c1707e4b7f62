#pragma once
// What pf-dot's two call graph builders share (internal to the callgraph module): the
// choice of the nodes to draw from the functions' counts (CallCounts, call_graph.h).
// BuildCallGraph (call_graph.cpp) counts them from the stacks of a stack tree,
// BuildFunctionCallGraph (function_call_graph.cpp) takes them from a profile of call edges
// (callgrind); both then choose the nodes here, link them and write the same DOT.

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "callgraph/call_graph.h"

namespace pf::graph_select {

inline uint64_t PairKey(uint32_t a, uint32_t b) { return static_cast<uint64_t>(a) << 32 | b; }


/// The options every call graph checks before it reads its input (UsageError).
void CheckGraphOptions(const CallGraphOptions& o);

// The functions to draw, largest first: --root/--leaf reach, the node threshold, then the
// largest --nodecount (pprof's choice with pprof_selection). Sets graph->above_cutoff and
// node_cutoff.
std::vector<uint32_t> ChooseNodes(const CallCounts& fs, const CallGraphOptions& o,
                                  uint64_t total, CallGraph* graph);

// Whether an edge of `weight` (of `total`) passes the edge threshold: its percentage, or
// with pprof_selection pprof's cut, int(total × edge_thres / 100).
bool EdgeKept(uint64_t weight, uint64_t total, const CallGraphOptions& o);

// The chosen functions become the graph's nodes, sorted by id (a hash of the name; a
// collision gets a suffix), with their modules (from `tree` when given, else fs.modules).
// Returns each function's node (-1: not drawn).
std::vector<int32_t> AddNodes(const StackTree* tree, const CallCounts& fs,
                              const std::vector<uint32_t>& candidates, CallGraph* graph);

}  // namespace pf::graph_select
