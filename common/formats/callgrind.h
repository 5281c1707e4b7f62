#pragma once
// Reading valgrind's callgrind files (callgrind.out.PID; the format: valgrind's manual,
// "Callgrind Format Specification", cl-format.html), and cachegrind's, which is a subset.
//
// A callgrind file holds call edges, not stacks: each function's self cost (cost lines under
// `fn=`) and each call's inclusive cost (the cost line after `calls=N`, under the caller's
// `fn=` and the callee's `cfn=`), in one column per event of the `events:` line (Ir, or Ir
// Dr Dw ... with --cache-sim). ReadCallgrind reads that into a FunctionGraph, which pf-dot
// draws. Stacks exist only in files written with --separate-callers=N: their function names
// are contexts, the function and its callers innermost first, joined by "'" ("spin'work_a'
// main'(below main)'..."); when every context reaches a root (a function callgrind saw no
// caller of), CallgrindStacks rebuilds the stacks exactly, and the stack tools read them.

#include <string>
#include <vector>

#include "io/input.h"
#include "stacks/function_graph.h"
#include "stacks/read_report.h"
#include "stacks/stack_tree.h"

namespace pf {

/// Reads a callgrind file: functions named as in the file (contexts "f'caller'..." with
/// --separate-callers), modules from `ob=`. Several parts are summed. Costs that disagree
/// with the file's `summary:` or `totals:` line, and lines that are not callgrind's, are
/// counted in `report`'s warnings. Throws pf::Error (FILE:LINE) for a file that is not
/// callgrind's or uses a name id it never defined.
FunctionGraph ReadCallgrind(ByteSource& source, ReadReport* report);

/// Whether `graph` comes from --separate-callers (a function name holds a "'").
bool HasCallerContexts(const FunctionGraph& graph);

/// The function graph of a --separate-callers file: each context becomes its function (the
/// name before the first "'"), the costs and calls of a function's contexts summed (a graph
/// without contexts comes out the same).
FunctionGraph MergeCallerContexts(const FunctionGraph& graph);

/// The stacks of a --separate-callers file: each context's self costs on the stack of its
/// names reversed (root first), every event a column, the first event last (the default, as
/// callgrind_annotate's). Throws pf::Error, naming `source_name`, when the file has no stacks
/// (no contexts: "draw it with pf-dot") or a context was cut before its root
/// (--separate-callers too small).
StackTree CallgrindStacks(const FunctionGraph& graph, const std::string& source_name);

/// The unit of a callgrind event: instructions for Ir, events for the others.
WeightUnit CallgrindEventUnit(std::string_view event);

}  // namespace pf
