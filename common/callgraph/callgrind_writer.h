#pragma once
// Writing a call graph as a callgrind profile (valgrind's Callgrind Format, version 1:
// https://valgrind.org/docs/manual/cl-format.html), so kcachegrind, callgrind_annotate and
// gprof2dot -f callgrind open pf's profiles.
//
// A callgrind file holds, per function, its self cost and, per caller->callee pair, the
// inclusive cost of the calls. Both come from CountCalls (call_graph.h), the exact counting
// pf-dot draws: a pair's cost is the weight of the samples whose stack holds that adjacency,
// once per sample, as pprof computes it. Each sample type of the tree is an event (its name,
// e.g. `cpu`, `samples`, `alloc_space`; the unit is in the event's long name). Calls of a
// function to itself are left out, as pprof leaves them out of its graphs: the readers add
// every call's cost to the callee's inclusive cost, so a recursion would count twice.
// Sampled stacks hold no call counts: every call line says calls=1 (0 would make
// callgrind_annotate count the cost as the caller's own). Names are compressed (`fn=(1)
// name` once, `fn=(1)` after); functions come sorted by name, so the output is
// deterministic; `ob=` names the module a function came from when the tree noted one.

#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {

/// Writes `tree`'s call graph in the callgrind format to `out` (not flushed). `creator`
/// goes in the header's creator: line. Throws pf::Error for a differential tree or
/// decimal weights (callgrind's costs are integers).
void WriteCallgrind(const StackTree& tree, BufferedWriter& out, std::string_view creator = "pf");

}  // namespace pf
