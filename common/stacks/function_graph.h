#pragma once
// A profile of call edges, not stacks: what callgrind (and gprof) record. Each function has
// its self cost, each call edge caller->callee its call count and its inclusive cost (what
// the callee and everything it called cost while called from that caller), in one column
// per event (SampleType, as StackTree's columns: callgrind's Ir, Dr, ...).
//
// Such a profile cannot be turned into stacks without inventing them, so it has a model of
// its own, beside StackTree: pf-dot draws it (callgraph/call_graph.h, BuildFunctionCallGraph)
// with the node and edge selection and the DOT writer of stack trees. A function's inclusive
// cost is what the calls into it from other functions cost (callgrind measures each call's
// cost, the callee's last instructions before a program's exit too), or, for a root (never
// called), its self cost plus its calls' costs; the larger of the two for a function that
// also runs without a caller (clone: called in the parent thread, it calls start_thread in
// the child, whose costs are not in the call into clone). A call f->f is inside f's cost already, so
// direct recursion is exact (callgrind_annotate --inclusive=yes counts it twice); with
// mutual recursion (f->g->f) the inner activations count again, as callgrind_annotate and
// kcachegrind (without cycle detection) count them, and pf-dot shows at most 100%.

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "stacks/weight.h"

namespace pf {

class FunctionGraph {
 public:
  struct Function {
    std::string name;
    std::string object;  ///< the binary it is in (a path), "" when unknown
    /// The object's file name ("libc.so.6"), "" when unknown.
    std::string_view module() const;
  };
  struct Call {
    uint32_t caller = 0, callee = 0;  ///< indexes into functions()
    uint64_t count = 0;               ///< calls made (saturating)
  };

  /// A graph of `types` (at least one) and no function.
  explicit FunctionGraph(std::vector<SampleType> types);

  const std::vector<SampleType>& sample_types() const { return types_; }
  int columns() const { return static_cast<int>(types_.size()); }
  const std::vector<Function>& functions() const { return functions_; }
  const std::vector<Call>& calls() const { return calls_; }

  /// The function `name` of binary `object`, added when new: functions of the same name in
  /// two binaries are two functions (callgrind's "(below main)" of the program and of libc).
  uint32_t AddFunction(std::string_view name, std::string_view object);
  /// The call edge caller->callee, added when new.
  uint32_t AddCall(uint32_t caller, uint32_t callee);

  uint64_t self(uint32_t function, int column) const { return self_[function * columns() + column]; }
  /// The inclusive cost of call edge `call`.
  uint64_t inclusive(uint32_t call, int column) const { return incl_[call * columns() + column]; }
  void AddSelf(uint32_t function, int column, uint64_t cost) {
    Add(self_[function * columns() + column], cost);
  }
  void AddCallCost(uint32_t call, uint64_t count, int column, uint64_t cost);
  void AddCallCount(uint32_t call, uint64_t count);

  /// Adds `other`'s functions (named by `rename(name)` when given), calls and costs; the
  /// sample types must be the same (the caller checks).
  void Merge(const FunctionGraph& other, std::string_view (*rename)(std::string_view) = nullptr);

  /// The sum of every function's self cost in `column` (the profile's 100%).
  uint64_t Total(int column) const;
  /// Every function's inclusive cost (see the file comment). It may exceed Total(column)
  /// with mutual recursion, and by the few instructions callgrind counts in a call and in no
  /// function's own cost (the last ones before exit).
  std::vector<uint64_t> Inclusive(int column) const;
  /// The column of sample type `name` (a name or an index in decimal; "" the first, as
  /// callgrind_annotate shows the first event by default); -1 when none matches.
  int FindSampleType(std::string_view name) const;
  /// How many sums reached UINT64_MAX and stopped there.
  uint64_t saturated() const { return saturated_; }

 private:
  void Add(uint64_t& sum, uint64_t cost) {
    if (__builtin_add_overflow(sum, cost, &sum)) {
      sum = UINT64_MAX;
      ++saturated_;
    }
  }

  std::vector<SampleType> types_;
  std::vector<Function> functions_;
  std::vector<Call> calls_;
  std::vector<uint64_t> self_;  // function * columns + column
  std::vector<uint64_t> incl_;  // call * columns + column
  std::unordered_map<std::string, uint32_t> by_key_;  // object + '\n' + name
  std::unordered_map<uint64_t, uint32_t> by_pair_;  // caller << 32 | callee
  std::string key_;  // AddFunction's buffer
  uint64_t saturated_ = 0;
};

}  // namespace pf
