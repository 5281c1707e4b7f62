#pragma once
// Writing pprof's profile.proto (github.com/google/pprof, proto/profile.proto), so pf's
// profiles open in `pprof -top`/`-http`, Pyroscope, Parca and the other tools that read it.
//
// What is written from a StackTree: every sample type (column) as a ValueType with pprof's
// unit ("nanoseconds", "bytes", "count"), one Function per distinct frame name (its name as
// pf shows it, "[unknown]" and module-qualified names included; no system_name, which would
// make pprof shorten C++ names: std::vector<int>::push_back to std::vector::push_back),
// one Location per Function (a single Line; the address noted for the name, where a
// recording says where the function starts), a Mapping per distinct module the tree noted
// for its names (the file name, has_functions set; from a recording the pages that hold its
// functions' addresses and its build-id),
// one Sample per distinct stack with its location ids leaf first and a value per sample type,
// and default_sample_type: the last column, the one pf and pprof show by default. pprof's
// values are integers, so a tree with decimal weights is refused; a differential tree too.
// The bytes depend on the tree's content only: functions are numbered by name (bytewise),
// mappings by file name (the main binary's first: the one named as the heaviest root frame,
// a recording's process), samples come in the order of their folded stacks.

#include <cstdint>
#include <string>

#include "formats/pprof_schema.h"
#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {


/// pprof's unit for a weight unit: "nanoseconds", "bytes", else "count".
const char* PprofUnit(WeightUnit unit);

/// The profile.proto message of `tree`, not compressed. Throws pf::Error for a differential
/// tree or one with decimal weights (pprof's values are integers).
std::string EncodePprof(const StackTree& tree);

/// Writes EncodePprof(tree) to `out`, gzipped unless `gzip` is false (deterministic bytes
/// either way), and commits `out`.
void WritePprof(const StackTree& tree, ByteSink& out, bool gzip = true);

}  // namespace pf
