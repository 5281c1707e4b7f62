// pprof's profile.proto from a stack tree, with protozero's pbf_writer (no generated code).
//
// Passes: collect the frame names the tree's nodes use and number them bytewise (function
// and location ids, 1-based: a location per function, as the tree knows names only) -> the
// modules noted for them, numbered bytewise but for the main binary's, first (mapping ids;
// pprof takes the first mapping for the program), with the pages of the addresses noted for
// their functions and their build-ids (SpanMappings) -> the string table's indexes,
// given in the order the message uses them -> write the message in field order: sample types,
// one sample per weighted node (a depth-first walk over the children sorted by name, so
// samples come in folded order), mappings, locations, functions, the string table and the
// default sample type. Nothing depends on the order the tree was built in, so the same
// profile gives the same bytes.

#include "formats/pprof_writer.h"

#include <algorithm>
#include <limits>
#include <protozero/pbf_writer.hpp>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "formats/frame_names.h"
#include "io/gzip_writer.h"

namespace pf {
namespace {

namespace pb = pprof_schema;

/// The string table: index 0 is "", every other string once, in the order first asked for.
class StringTable {
 public:
  StringTable() { Index(""); }
  int64_t Index(std::string_view s) {
    auto [it, added] = index_.try_emplace(s, static_cast<int64_t>(strings_.size()));
    if (added) strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string_view>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string_view, int64_t> index_;
  std::vector<std::string_view> strings_;
};

/// A module's mapping: its file name, and where the addresses noted in it lie.
struct Mapping {
  std::string_view file;
  std::string_view build_id;  // "" when none or two were noted
  uint64_t start = 0, limit = 0, offset = 0;
};

/// The frame names the tree uses, sorted bytewise, and the mappings of their modules.
struct Names {
  std::vector<StrId> functions;        // function id - 1 -> frame name
  std::vector<uint64_t> function_of;   // frame name id -> function id (0: unused)
  std::vector<Mapping> modules;        // mapping id - 1 -> module
  std::vector<uint64_t> mapping_of;    // function id - 1 -> mapping id (0: none)
};

/// The root frame with the most weight (of the default column; the first by name among
/// equals): a recording's heaviest process name.
std::string_view HeaviestRoot(const StackTree& tree) {
  int column = tree.default_column();
  std::vector<NodeId> root_of(tree.size(), StackTree::kRoot);
  std::vector<uint64_t> weight(tree.size(), 0);
  for (NodeId n{1}; n.index() < tree.size(); ++n) {  // parents come before their children
    NodeId p = tree.parent(n);
    root_of[n.index()] = p == StackTree::kRoot ? n : root_of[p.index()];
    uint64_t& w = weight[root_of[n.index()].index()];
    w = AddSat(w, tree.self(n, column));
  }
  std::string_view best;
  uint64_t best_weight = 0;
  for (NodeId n{1}; n.index() < tree.size(); ++n) {
    if (tree.parent(n) != StackTree::kRoot) continue;
    std::string_view name = tree.name(n);
    if (weight[n.index()] > best_weight || (weight[n.index()] == best_weight && name < best)) {
      best = name;
      best_weight = weight[n.index()];
    }
  }
  return best;
}

/// Moves the main binary's mapping first, where pprof looks for it ("File:" in its reports):
/// the module named as the heaviest root frame, a recording's process (its comm, which the
/// kernel cuts to 15 bytes). Without one, the modules stay in name order.
void MainBinaryFirst(const StackTree& tree, std::vector<std::string_view>* modules) {
  std::string_view comm = HeaviestRoot(tree);
  if (comm.empty()) return;
  auto it = std::find_if(modules->begin(), modules->end(), [&](std::string_view m) {
    return m == comm || (comm.size() == 15 && m.starts_with(comm));
  });
  if (it != modules->end()) std::rotate(modules->begin(), it, it + 1);
}

/// Each mapping's build-id and the pages that hold the addresses noted for its functions. A
/// binary's addresses are file offsets: its mapping's file offset is its start, so pprof
/// finds each address at itself in the file. The kernel's and JIT code's are addresses.
void SpanMappings(const StackTree& tree, Names* n) {
  constexpr uint64_t kPage = 4096;
  std::vector<uint64_t> low(n->modules.size(), UINT64_MAX), high(n->modules.size(), 0);
  for (size_t i = 0; i < n->functions.size(); ++i) {
    uint64_t m = n->mapping_of[i], address;
    if (m == 0) continue;
    if (std::string_view id; n->modules[m - 1].build_id.empty() &&
                             tree.BuildId(n->functions[i], &id)) {
      n->modules[m - 1].build_id = id;
    }
    if (!tree.Address(n->functions[i], &address)) continue;
    low[m - 1] = std::min(low[m - 1], address);
    high[m - 1] = std::max(high[m - 1], address);
  }
  for (size_t m = 0; m < n->modules.size(); ++m) {
    if (low[m] > high[m]) continue;  // no address noted
    Mapping& map = n->modules[m];
    map.start = low[m] & ~(kPage - 1);
    map.limit = high[m] >= UINT64_MAX - kPage ? UINT64_MAX : (high[m] + kPage) & ~(kPage - 1);
    if (!IsKernelModule(map.file) && !IsJitModule(map.file)) map.offset = map.start;
  }
}

Names CollectNames(const StackTree& tree) {
  const Interner& interner = tree.names();
  Names n;
  n.function_of.assign(interner.size(), 0);
  for (NodeId node{1}; node.index() < tree.size(); ++node) {
    StrId f = tree.frame(node);
    if (!n.function_of[f.value]) {
      n.function_of[f.value] = 1;
      n.functions.push_back(f);
    }
  }
  std::sort(n.functions.begin(), n.functions.end(),
            [&](StrId a, StrId b) { return interner.Name(a) < interner.Name(b); });
  std::vector<std::string_view> module_of(n.functions.size());
  std::vector<std::string_view> files;
  for (size_t i = 0; i < n.functions.size(); ++i) {
    n.function_of[n.functions[i].value] = i + 1;
    if (tree.Module(n.functions[i], &module_of[i]) && !module_of[i].empty()) {
      files.push_back(module_of[i]);
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  MainBinaryFirst(tree, &files);
  std::unordered_map<std::string_view, uint64_t> mapping_id;
  for (size_t i = 0; i < files.size(); ++i) {
    mapping_id[files[i]] = i + 1;
    n.modules.push_back(Mapping{files[i], {}, 0, 0, 0});
  }
  n.mapping_of.assign(n.functions.size(), 0);
  for (size_t i = 0; i < n.functions.size(); ++i) {
    if (!module_of[i].empty()) n.mapping_of[i] = mapping_id[module_of[i]];
  }
  SpanMappings(tree, &n);
  return n;
}

int64_t Int64(uint64_t w) {
  // A saturated sum (UINT64_MAX, already counted and warned about) stays the largest value.
  return static_cast<int64_t>(std::min<uint64_t>(w, std::numeric_limits<int64_t>::max()));
}

/// One sample per weighted node, in folded order: location ids leaf first, a value per column.
void WriteSamples(const StackTree& tree, const Names& names, protozero::pbf_writer& out) {
  StackTree::Children children = tree.SortedChildren();
  std::vector<uint64_t> path;  // location ids, root first
  std::vector<uint64_t> leaf_first;
  std::vector<int64_t> values(static_cast<size_t>(tree.columns()));
  // Depth-first without recursion (stacks may be thousands of frames deep): each entry is a
  // node and the next of its children to visit.
  std::vector<std::pair<NodeId, uint32_t>> todo{{StackTree::kRoot, children.first[0]}};
  while (!todo.empty()) {
    auto& [node, next] = todo.back();
    if (next == children.first[node.index() + 1]) {
      todo.pop_back();
      if (!path.empty()) path.pop_back();
      continue;
    }
    NodeId child = children.child_index[next++];
    path.push_back(names.function_of[tree.frame(child).value]);
    if (tree.has_self(child)) {
      leaf_first.assign(path.rbegin(), path.rend());
      for (int c = 0; c < tree.columns(); ++c) values[c] = Int64(tree.self(child, c));
      protozero::pbf_writer s(out, pb::profile::kSample);
      s.add_packed_uint64(pb::sample::kLocationId, leaf_first.begin(), leaf_first.end());
      s.add_packed_int64(pb::sample::kValue, values.begin(), values.end());
    }
    todo.emplace_back(child, children.first[child.index()]);
  }
}

void WriteValueType(protozero::pbf_writer& out, uint32_t field, int64_t type, int64_t unit) {
  protozero::pbf_writer v(out, field);
  v.add_int64(pb::value_type::kType, type);
  v.add_int64(pb::value_type::kUnit, unit);
}

}  // namespace

const char* PprofUnit(WeightUnit unit) {
  switch (unit) {
    case WeightUnit::kNanoseconds:
      return "nanoseconds";
    case WeightUnit::kBytes:
      return "bytes";
    default:
      return "count";
  }
}

std::string EncodePprof(const StackTree& tree) {
  if (tree.differential()) {
    throw Error(
        "a differential profile (two counts per stack) cannot be written as pprof; "
        "write each profile on its own");
  }
  if (tree.decimals() > 0) {
    throw Error(
        "pprof's values are integers, and these weights have decimals; write "
        "folded text, or give integer counts");
  }
  Names names = CollectNames(tree);
  const Interner& interner = tree.names();
  // String indexes in the order the message uses them.
  StringTable strings;
  std::vector<std::pair<int64_t, int64_t>> types;
  for (const SampleType& t : tree.sample_types()) {
    types.emplace_back(strings.Index(t.name), strings.Index(PprofUnit(t.unit)));
  }
  std::vector<std::pair<int64_t, int64_t>> module_strings;  // file name, build-id
  for (const Mapping& m : names.modules) {
    module_strings.emplace_back(strings.Index(m.file),
                                m.build_id.empty() ? 0 : strings.Index(m.build_id));
  }
  std::vector<int64_t> function_strings;
  for (StrId f : names.functions) function_strings.push_back(strings.Index(interner.Name(f)));

  std::string bytes;
  protozero::pbf_writer out(bytes);
  for (auto [type, unit] : types) WriteValueType(out, pb::profile::kSampleType, type, unit);
  WriteSamples(tree, names, out);
  for (size_t i = 0; i < names.modules.size(); ++i) {
    protozero::pbf_writer m(out, pb::profile::kMapping);
    const Mapping& map = names.modules[i];
    m.add_uint64(pb::mapping::kId, i + 1);
    if (map.limit) {
      m.add_uint64(pb::mapping::kMemoryStart, map.start);
      m.add_uint64(pb::mapping::kMemoryLimit, map.limit);
      if (map.offset) m.add_uint64(pb::mapping::kFileOffset, map.offset);
    }
    m.add_int64(pb::mapping::kFilename, module_strings[i].first);
    if (module_strings[i].second) m.add_int64(pb::mapping::kBuildId, module_strings[i].second);
    m.add_bool(pb::mapping::kHasFunctions, true);
  }
  for (size_t i = 0; i < names.functions.size(); ++i) {
    protozero::pbf_writer l(out, pb::profile::kLocation);
    l.add_uint64(pb::location::kId, i + 1);
    if (names.mapping_of[i]) {
      l.add_uint64(pb::location::kMappingId, names.mapping_of[i]);
      if (uint64_t address; tree.Address(names.functions[i], &address)) {
        l.add_uint64(pb::location::kAddress, address);
      }
    }
    protozero::pbf_writer line(l, pb::location::kLine);
    line.add_uint64(pb::line::kFunctionId, i + 1);
  }
  for (size_t i = 0; i < names.functions.size(); ++i) {
    protozero::pbf_writer f(out, pb::profile::kFunction);
    f.add_uint64(pb::function::kId, i + 1);
    // No system name: pprof takes a function whose system name equals its name for one it
    // has to demangle, and "simplifies" a C++-looking one by cutting its template arguments
    // and parentheses (std::vector<int>::push_back, X::operator(), (anonymous
    // namespace)::f), so the frames would not survive pf -> pprof -> pf.
    f.add_int64(pb::function::kName, function_strings[i]);
  }
  for (std::string_view s : strings.strings()) {
    out.add_string(pb::profile::kStringTable, s.data(), s.size());
  }
  out.add_int64(pb::profile::kDefaultSampleType, types[tree.default_column()].first);
  return bytes;
}

void WritePprof(const StackTree& tree, ByteSink& out, bool gzip) {
  std::string bytes = EncodePprof(tree);
  if (gzip) {
    WriteGzip(bytes, out);
  } else {
    out.WriteAll(bytes);
  }
  out.Commit();
}

}  // namespace pf
