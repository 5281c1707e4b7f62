// The callgrind file of a stack tree: CountCalls once per sample type (column), the counts
// merged by frame name, then written function by function in name order.
//
// Layout (one part, `positions: line`, every position 0 as the tree knows no lines):
//   # callgrind format / version: 1 / creator: / positions: line / event: lines / events:
//   fl=(1) ???              every function in one unknown file, as valgrind names it
//   ob=(n) MODULE           before each function, when some function has a module
//   fn=(n) NAME
//   0 SELF...               its self costs, when not all zero
//   cob=(m) MODULE          before each call, when modules are written
//   cfn=(m) CALLEE
//   calls=1 0
//   0 INCLUSIVE...          the pair's exact cost
//   totals: TOTAL...
// A name is written with its id the first time it is used (as fn= or cfn=) and by id alone
// after; names with a newline or a carriage return have them replaced by spaces, which the
// line-based format cannot hold.

#include "callgraph/callgrind_writer.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "callgraph/call_graph.h"

namespace pf {
namespace {

/// What the file holds: per function (frame name id) the self costs, per pair the costs.
struct CallgrindCosts {
  size_t columns = 0;
  std::unordered_map<uint32_t, std::vector<uint64_t>> self;   // name id -> costs
  std::unordered_map<uint64_t, std::vector<uint64_t>> calls;  // caller << 32 | callee
  std::vector<uint64_t> totals;
};

CallgrindCosts Count(const StackTree& tree) {
  CallgrindCosts k;
  k.columns = static_cast<size_t>(tree.columns());
  auto costs = [&](auto& map, auto key) -> std::vector<uint64_t>& {
    auto [it, added] = map.try_emplace(key);
    if (added) it->second.assign(k.columns, 0);
    return it->second;
  };
  for (int c = 0; c < tree.columns(); ++c) {
    CallCounts counts = CountCalls(tree, c);
    k.totals.push_back(counts.total);
    for (size_t f = 0; f < counts.names.size(); ++f) {
      costs(k.self, counts.name_ids[f])[c] = counts.selfs[f];
    }
    for (const auto& [pair, w] : counts.direct) {
      uint32_t caller = counts.name_ids[pair >> 32], callee = counts.name_ids[pair & 0xffffffffu];
      if (caller == callee) continue;  // recursion: see the header
      costs(k.calls, uint64_t{caller} << 32 | callee)[c] = w;
    }
  }
  return k;
}

/// Event names are tokens: the sample type's name with blanks and other bytes callgrind
/// readers split on replaced by '_', made distinct.
std::vector<std::string> EventNames(const StackTree& tree) {
  std::vector<std::string> names;
  for (const SampleType& t : tree.sample_types()) {
    std::string n = t.name.empty() ? "samples" : t.name;
    for (char& ch : n) {
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.')) {
        ch = '_';
      }
    }
    std::string unique = n;
    for (int i = 2; std::find(names.begin(), names.end(), unique) != names.end(); ++i) {
      unique = n + "_" + std::to_string(i);
    }
    names.push_back(unique);
  }
  return names;
}

/// Compressed names of one kind (fn and cfn share one table, ob and cob another).
class NameTable {
 public:
  /// "(id) name" the first time, "(id)" after.
  std::string Ref(std::string_view name) {
    auto [it, added] = ids_.try_emplace(std::string(name), ids_.size() + 1);
    std::string ref(1, '(');
    ref += std::to_string(it->second);
    ref += ')';
    if (added) {
      ref += ' ';
      for (char c : name) ref += (c == '\n' || c == '\r') ? ' ' : c;
    }
    return ref;
  }

 private:
  std::unordered_map<std::string, size_t> ids_;
};

void AppendCosts(BufferedWriter& out, const std::vector<uint64_t>& costs) {
  out.Append('0');
  for (uint64_t c : costs) {
    out.Append(' ');
    out.AppendU64(c);
  }
  out.Append('\n');
}

}  // namespace

void WriteCallgrind(const StackTree& tree, BufferedWriter& out, std::string_view creator) {
  if (tree.differential()) {
    throw Error(
        "a differential profile (two counts per stack) cannot be written as callgrind; "
        "write each profile on its own");
  }
  if (tree.decimals() > 0) {
    throw Error(
        "callgrind's costs are integers, and these weights have decimals; write "
        "folded text, or give integer counts");
  }
  CallgrindCosts k = Count(tree);
  const Interner& interner = tree.names();
  // The functions in name order, with their callees (in name order too).
  std::vector<uint32_t> functions;
  for (const auto& [id, costs] : k.self) functions.push_back(id);
  auto by_name = [&](uint32_t a, uint32_t b) {
    return interner.Name(StrId{a}) < interner.Name(StrId{b});
  };
  std::sort(functions.begin(), functions.end(), by_name);
  std::unordered_map<uint32_t, std::vector<uint32_t>> callees;
  for (const auto& [pair, costs] : k.calls) {
    callees[static_cast<uint32_t>(pair >> 32)].push_back(static_cast<uint32_t>(pair));
  }
  for (auto& [caller, list] : callees) std::sort(list.begin(), list.end(), by_name);
  // Modules: written for every function when the tree noted one for any.
  auto module = [&](uint32_t id) {
    std::string_view m;
    return tree.Module(StrId{id}, &m) && !m.empty() ? m : std::string_view("???");
  };
  bool modules = false;
  for (uint32_t f : functions) modules = modules || module(f) != "???";

  std::vector<std::string> events = EventNames(tree);
  out.Append("# callgrind format\nversion: 1\ncreator: ");
  out.Append(creator);
  out.Append("\npositions: line\n");
  for (size_t c = 0; c < events.size(); ++c) {
    const SampleType& t = tree.sample_type(static_cast<int>(c));
    out.Append("event: " + events[c] + " : " + t.name + " (" + std::string(UnitName(t.unit)) +
               ")\n");
  }
  out.Append("events:");
  for (const std::string& e : events) out.Append(" " + e);
  out.Append("\n\nfl=(1) ???\n");
  NameTable fn_names, ob_names;
  for (uint32_t f : functions) {
    if (modules) out.Append("ob=" + ob_names.Ref(module(f)) + "\n");
    out.Append("fn=" + fn_names.Ref(interner.Name(StrId{f})) + "\n");
    const std::vector<uint64_t>& self = k.self[f];
    if (std::any_of(self.begin(), self.end(), [](uint64_t c) { return c != 0; })) {
      AppendCosts(out, self);
    }
    for (uint32_t callee : callees[f]) {
      if (modules) out.Append("cob=" + ob_names.Ref(module(callee)) + "\n");
      out.Append("cfn=" + fn_names.Ref(interner.Name(StrId{callee})) + "\ncalls=1 0\n");
      AppendCosts(out, k.calls[uint64_t{f} << 32 | callee]);
    }
  }
  out.Append("\ntotals:");
  for (uint64_t t : k.totals) {
    out.Append(' ');
    out.AppendU64(t);
  }
  out.Append('\n');
}

}  // namespace pf
