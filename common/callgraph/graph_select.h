#pragma once
// What pf-dot's two call graph builders share (internal to the callgraph module): the
// functions with their totals, self weights and direct edges, and the choice of the nodes
// to draw. BuildCallGraph (call_graph.cpp) counts them from the stacks of a stack tree,
// BuildFunctionCallGraph (function_call_graph.cpp) takes them from a profile of call edges
// (callgrind); both then choose the nodes here, link them and write the same DOT.

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "callgraph/call_graph.h"

namespace pf::graph_select {

inline uint64_t PairKey(uint32_t a, uint32_t b) { return static_cast<uint64_t>(a) << 32 | b; }

// The functions (distinct frame names) of the paths kept, numbered as first seen, with their
// exact totals and self weights, and the direct edges between them.
struct Functions {
  std::vector<int32_t> func_of;  // frame name id -> function (stack trees)
  std::vector<std::string_view> names;
  std::vector<uint32_t> name_ids;  // function -> frame name id (stack trees)
  std::vector<uint64_t> totals, selfs;
  std::unordered_map<uint64_t, uint64_t> direct;  // PairKey(caller, callee) -> weight
  std::vector<std::string_view> modules;  // function -> module, when not from a tree
  std::vector<uint64_t> called;           // function -> calls into it, when known
};

/// The options every call graph checks before it reads its input (UsageError).
void CheckGraphOptions(const CallGraphOptions& o);

// The functions to draw, largest first: --root/--leaf reach, the node threshold, then the
// largest --nodecount.
std::vector<uint32_t> ChooseNodes(const Functions& fs, const CallGraphOptions& o,
                                  uint64_t total);

// The chosen functions become the graph's nodes, sorted by id (a hash of the name; a
// collision gets a suffix), with their modules (from `tree` when given, else fs.modules).
// Returns each function's node (-1: not drawn).
std::vector<int32_t> AddNodes(const StackTree* tree, const Functions& fs,
                              const std::vector<uint32_t>& candidates, CallGraph* graph);

}  // namespace pf::graph_select
