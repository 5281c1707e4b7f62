#pragma once
// pf-record's call-graph options as perf record reads them. perf users combine them freely
// (`-g --call-graph dwarf`, as profiling guides print), so they are applied in the order
// given: --call-graph=MODE chooses the mode; -g turns call graphs on with frame pointers
// unless a mode is already chosen (perf record keeps dwarf for `--call-graph=dwarf -g`);
// --no-call-graph (or --call-graph=none) turns them off until a later -g or --call-graph.
// With none of them pf-record records frame-pointer call graphs: pf exists to draw stacks.

#include <string>
#include <vector>

#include "perf/recorder.h"

namespace pf {

/// One call-graph option, in command-line order.
struct CallGraphOption {
  enum Kind { kG, kMode, kNone } kind;
  std::string mode;  // kMode: fp, dwarf, dwarf,STACK_BYTES or none
};

/// Sets o->call_graph and o->stack_bytes from `options`. Throws pf::UsageError for a mode
/// it does not know or a bad stack size.
void ApplyCallGraphOptions(const std::vector<CallGraphOption>& options, RecordOptions* o);

}  // namespace pf
