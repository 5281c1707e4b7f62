// FunctionGraph (function_graph.h): functions and call edges found by name and pair through
// hash maps, costs in flat arrays of one row per function or call.

#include "stacks/function_graph.h"

#include <algorithm>

namespace pf {

FunctionGraph::FunctionGraph(std::vector<SampleType> types) : types_(std::move(types)) {
  if (types_.empty()) types_.emplace_back();
}

std::string_view FunctionGraph::Function::module() const {
  std::string_view o = object;
  return o.substr(o.rfind('/') + 1);
}

uint32_t FunctionGraph::AddFunction(std::string_view name, std::string_view object) {
  key_.assign(object).append(1, '\n').append(name);
  auto [it, added] = by_key_.try_emplace(key_, static_cast<uint32_t>(functions_.size()));
  if (added) {
    functions_.push_back({std::string(name), std::string(object)});
    self_.resize(self_.size() + types_.size(), 0);
  }
  return it->second;
}

uint32_t FunctionGraph::AddCall(uint32_t caller, uint32_t callee) {
  uint64_t key = static_cast<uint64_t>(caller) << 32 | callee;
  auto [it, added] = by_pair_.try_emplace(key, static_cast<uint32_t>(calls_.size()));
  if (added) {
    calls_.push_back({caller, callee, 0});
    incl_.resize(incl_.size() + types_.size(), 0);
  }
  return it->second;
}

void FunctionGraph::AddCallCount(uint32_t call, uint64_t count) { Add(calls_[call].count, count); }

void FunctionGraph::AddCallCost(uint32_t call, uint64_t count, int column, uint64_t cost) {
  if (count) AddCallCount(call, count);
  Add(incl_[call * columns() + column], cost);
}

void FunctionGraph::Merge(const FunctionGraph& other,
                          std::string_view (*rename)(std::string_view)) {
  std::vector<uint32_t> to;
  to.reserve(other.functions_.size());
  for (const Function& f : other.functions_) {
    to.push_back(AddFunction(rename ? rename(f.name) : std::string_view(f.name), f.object));
  }
  int n = std::min(columns(), other.columns());
  for (uint32_t f = 0; f < other.functions_.size(); ++f) {
    for (int e = 0; e < n; ++e) AddSelf(to[f], e, other.self(f, e));
  }
  for (uint32_t c = 0; c < other.calls_.size(); ++c) {
    const Call& call = other.calls_[c];
    uint32_t mine = AddCall(to[call.caller], to[call.callee]);
    AddCallCount(mine, call.count);
    for (int e = 0; e < n; ++e) AddCallCost(mine, 0, e, other.inclusive(c, e));
  }
  saturated_ += other.saturated_;
}

uint64_t FunctionGraph::Total(int column) const {
  uint64_t total = 0;
  for (size_t f = 0; f < functions_.size(); ++f) total = AddSat(total, self_[f * columns() + column]);
  return total;
}

std::vector<uint64_t> FunctionGraph::Inclusive(int column) const {
  // Called by others: what those calls cost. Else (a root): its own cost and its calls'.
  std::vector<uint64_t> in(functions_.size(), 0), own(functions_.size());
  std::vector<bool> called(functions_.size(), false);
  for (size_t f = 0; f < functions_.size(); ++f) own[f] = self_[f * columns() + column];
  for (size_t c = 0; c < calls_.size(); ++c) {
    const Call& call = calls_[c];
    if (call.callee == call.caller) continue;  // inside the caller's own cost already
    uint64_t cost = incl_[c * columns() + column];
    own[call.caller] = AddSat(own[call.caller], cost);
    in[call.callee] = AddSat(in[call.callee], cost);
    called[call.callee] = true;
  }
  // A function some of whose runs have no caller (a thread's clone: called in the parent,
  // the child thread's start_thread called from it) costs its own cost and its calls' more
  // than the calls into it: the larger of the two.
  for (size_t f = 0; f < functions_.size(); ++f) {
    if (called[f]) own[f] = std::max(own[f], in[f]);
  }
  return own;
}

int FunctionGraph::FindSampleType(std::string_view name) const {
  int columns = this->columns();
  if (name.empty()) return 0;
  for (int c = 0; c < columns; ++c) {
    if (types_[c].name == name) return c;
  }
  if (name.size() > 6) return -1;
  int index = 0;
  for (char ch : name) {
    if (ch < '0' || ch > '9') return -1;
    index = index * 10 + (ch - '0');
  }
  return index < columns ? index : -1;
}

}  // namespace pf
