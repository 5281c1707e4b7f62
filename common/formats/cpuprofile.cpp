// Reading a .cpuprofile (formats/cpuprofile.h) in three passes: the JSON is walked once with
// the pull reader, keeping per node only its id, interned frame name, hitCount and children,
// and the samples' node ids and time deltas; the nodes are then linked to their parents and
// visited from the roots in breadth-first order, so each becomes a stack tree node after its
// parent (a node listed as the child of two nodes, an unknown child id or a cycle is an
// error, never a loop); last the weights are put on the tree nodes: hitCount in the samples
// column, the samples' intervals in the wall column.

#include "formats/cpuprofile.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "base/diagnostics.h"
#include "base/error.h"
#include "formats/json.h"

namespace pf {

namespace {

// A .cpuprofile is read whole; one beyond this is refused rather than buffered.
constexpr size_t kMaxProfileBytes = size_t{2} << 30;
constexpr uint32_t kNoParent = UINT32_MAX;

struct Node {
  int64_t id = 0;
  StrId frame = StrId::Invalid();
  bool v8_root = false;  // V8's "(root)": no frame of its own
  uint64_t hits = 0;
  std::vector<int64_t> children;
  uint32_t parent = kNoParent;
  bool has_parent_id = false;  // a "parent" member (Chrome's trace ProfileChunk nodes)
  int64_t parent_id = 0;
};

struct Profile {
  std::vector<Node> nodes;
  bool has_start = false, has_end = false, has_samples = false, has_deltas = false;
  double start = 0, end = 0;  // microseconds
  std::vector<int64_t> samples;
  std::vector<double> deltas;  // microseconds
};

// Node ids to positions in Profile::nodes: a vector when the ids are dense (V8 numbers its
// nodes from 1), a hash map otherwise. Sample lookups are the reader's hot loop.
class NodeIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  /// Throws for a repeated id.
  NodeIndex(const std::vector<Node>& nodes, const std::string& name) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Node& n : nodes) {
      lo = std::min(lo, n.id);
      hi = std::max(hi, n.id);
    }
    dense_ = !nodes.empty() && lo >= 0 && hi <= static_cast<int64_t>(4 * nodes.size() + 64);
    if (dense_) {
      table_.assign(static_cast<size_t>(hi) + 1, kNone);
    } else {
      map_.reserve(nodes.size());
    }
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      bool fresh = dense_ ? table_[nodes[i].id] == kNone : map_.emplace(nodes[i].id, i).second;
      if (!fresh) throw Error(name, "two nodes with id " + std::to_string(nodes[i].id));
      if (dense_) table_[nodes[i].id] = i;
    }
  }
  uint32_t Find(int64_t id) const {
    if (dense_) {
      return id >= 0 && static_cast<uint64_t>(id) < table_.size() ? table_[id] : kNone;
    }
    auto it = map_.find(id);
    return it == map_.end() ? kNone : it->second;
  }

 private:
  bool dense_ = false;
  std::vector<uint32_t> table_;
  std::unordered_map<int64_t, uint32_t> map_;
};

std::string_view WholeInput(ByteSource& source, std::string* storage) {
  if (source.stable()) return source.Peek();
  for (std::string_view chunk = source.Next(); !chunk.empty(); chunk = source.Next()) {
    if (storage->size() + chunk.size() > kMaxProfileBytes) {
      throw Error(source.name(), "a .cpuprofile larger than 2 GiB, more than pf reads");
    }
    storage->append(chunk);
  }
  return *storage;
}

// DevTools' numbers are 0-based; it shows them 1-based. -1 (or none) is unknown.
std::string Position(double line, double column) {
  std::string s;
  if (!(line >= 0) || line > 1e12) return s;
  s += ':';
  s += std::to_string(static_cast<int64_t>(line) + 1);
  if (column >= 0 && column <= 1e12) {
    s += ':';
    s += std::to_string(static_cast<int64_t>(column) + 1);
  }
  return s;
}

// A callFrame: "FUNCTION URL:LINE:COLUMN", "(anonymous)" for an empty name, the bare name
// without a URL.
void ReadCallFrame(JsonReader& json, Interner& names, Node* node) {
  std::string function, url, key;
  double line = -1, column = -1;
  json.BeginObject();
  while (json.NextMember(&key)) {
    if (key == "functionName") {
      function = json.String();
    } else if (key == "url") {
      url = json.String();
    } else if (key == "lineNumber") {
      line = json.Number();
    } else if (key == "columnNumber") {
      column = json.Number();
    } else {
      json.Skip();  // scriptId, codeType, ...
    }
  }
  node->v8_root = function == "(root)" && url.empty();
  if (function.empty()) function = "(anonymous)";
  if (!url.empty()) {
    function += ' ';
    function += url;
    function += Position(line, column);
  }
  // A folded line is a stack of frames joined by ';': a ';' in a name (a computed method
  // name, a URL's query) becomes ':', as stackcollapse-perf.pl's names, and a control
  // character (a newline would end the line) a blank.
  for (char& c : function) {
    if (c == ';') {
      c = ':';
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      c = ' ';
    }
  }
  node->frame = names.Intern(function);
}

void ReadNode(JsonReader& json, Interner& names, Node* node) {
  std::string key;
  bool has_id = false;
  json.BeginObject();
  while (json.NextMember(&key)) {
    if (key == "id") {
      node->id = json.Int();
      has_id = true;
    } else if (key == "callFrame") {
      ReadCallFrame(json, names, node);
    } else if (key == "hitCount") {
      int64_t hits = json.Int();
      if (hits < 0) json.Fail("a negative hitCount");
      node->hits = static_cast<uint64_t>(hits);
    } else if (key == "children") {
      json.BeginArray();
      while (json.NextElement()) node->children.push_back(json.Int());
    } else if (key == "parent") {
      node->parent_id = json.Int();
      node->has_parent_id = true;
    } else {
      json.Skip();  // positionTicks, deoptReason, ...
    }
  }
  if (!has_id) json.Fail("a node without an id");
  if (!node->frame.valid()) node->frame = names.Intern("(anonymous)");
}

Profile ReadJson(JsonReader& json, Interner& names) {
  Profile p;
  std::string key;
  if (json.Peek() != JsonReader::Type::kObject) json.Fail("a .cpuprofile is a JSON object");
  json.BeginObject();
  bool has_nodes = false;
  while (json.NextMember(&key)) {
    if (key == "nodes") {
      has_nodes = true;
      json.BeginArray();
      while (json.NextElement()) ReadNode(json, names, &p.nodes.emplace_back());
    } else if (key == "startTime") {
      p.start = json.Number();
      p.has_start = true;
    } else if (key == "endTime") {
      p.end = json.Number();
      p.has_end = true;
    } else if (key == "samples") {
      p.has_samples = true;
      json.BeginArray();
      while (json.NextElement()) p.samples.push_back(json.Int());
    } else if (key == "timeDeltas") {
      p.has_deltas = true;
      json.BeginArray();
      while (json.NextElement()) p.deltas.push_back(json.Number());
    } else {
      json.Skip();
    }
  }
  json.End();
  if (!has_nodes) json.Fail("no \"nodes\": not a .cpuprofile (Profiler.Profile)");
  return p;
}

// Links every node to its parent; returns the nodes in breadth-first order from the roots.
std::vector<uint32_t> TreeOrder(Profile& p, const NodeIndex& index, const std::string& name) {
  // Nodes that name their parent instead of their children (as Chrome's trace events'
  // ProfileChunk nodes do) get children from them, when no node lists children.
  bool any_children = false;
  for (const Node& n : p.nodes) any_children = any_children || !n.children.empty();
  if (!any_children) {
    for (const Node& n : p.nodes) {
      if (!n.has_parent_id) continue;
      uint32_t k = index.Find(n.parent_id);
      if (k == NodeIndex::kNone) {
        throw Error(name, "node " + std::to_string(n.id) + " has parent " +
                              std::to_string(n.parent_id) + ", which is no node");
      }
      p.nodes[k].children.push_back(n.id);
    }
  }
  for (uint32_t i = 0; i < p.nodes.size(); ++i) {
    for (int64_t child : p.nodes[i].children) {
      uint32_t k = index.Find(child);
      if (k == NodeIndex::kNone) {
        throw Error(name, "node " + std::to_string(p.nodes[i].id) + " has child " +
                              std::to_string(child) + ", which is no node");
      }
      Node& c = p.nodes[k];
      if (c.parent != kNoParent || k == i) {
        throw Error(name, "node " + std::to_string(child) +
                              " is listed as a child twice (or of itself): not a tree");
      }
      c.parent = i;
    }
  }
  std::vector<uint32_t> order;
  order.reserve(p.nodes.size());
  for (uint32_t i = 0; i < p.nodes.size(); ++i) {
    if (p.nodes[i].parent == kNoParent) order.push_back(i);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    for (int64_t child : p.nodes[order[k]].children) order.push_back(index.Find(child));
  }
  if (order.size() != p.nodes.size()) {
    throw Error(name, std::to_string(p.nodes.size() - order.size()) +
                          " nodes form a cycle, unreachable from the root: not a tree");
  }
  return order;
}

uint64_t Nanoseconds(double microseconds) {
  if (!(microseconds > 0)) return 0;
  double ns = std::round(microseconds * 1000.0);
  return ns >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(ns);
}

// The wall column: each sample weighs the interval to the next sample (the last one, to
// endTime); without samples and deltas, endTime - startTime spread over the hits.
void AddWallTime(const Profile& p, const NodeIndex& index, const std::vector<NodeId>& leaf,
                 StackTree& tree, const std::string& name, ReadReport* report) {
  if (p.has_samples && p.has_deltas && p.samples.size() == p.deltas.size()) {
    // Summed per node first (a small array), then put on the tree once per node.
    std::vector<uint64_t> wall(p.nodes.size(), 0);
    uint64_t unknown = 0;
    double t = p.start;
    for (size_t i = 0; i < p.samples.size(); ++i) {
      t += p.deltas[i];
      double us = i + 1 < p.samples.size() ? p.deltas[i + 1] : (p.has_end ? p.end - t : 0);
      uint32_t k = index.Find(p.samples[i]);
      if (k == NodeIndex::kNone) {
        ++unknown;
        continue;
      }
      wall[k] = AddSat(wall[k], Nanoseconds(us));
    }
    for (size_t k = 0; k < wall.size(); ++k) {
      if (wall[k]) tree.AddSelf(leaf[k], wall[k], 1);
    }
    if (unknown) {
      report->warnings.push_back(name + ": " + Plural(unknown, "sample", "samples") +
                                 " of no node left out of the wall time");
    }
    return;
  }
  if (p.has_samples || p.has_deltas) {
    report->warnings.push_back(name + ": " + std::to_string(p.samples.size()) + " samples but " +
                               std::to_string(p.deltas.size()) +
                               " timeDeltas; the wall time is endTime - startTime spread "
                               "over the hits");
  }
  uint64_t hits = 0;
  for (const Node& n : p.nodes) hits = AddSat(hits, n.hits);
  uint64_t span = p.has_start && p.has_end ? Nanoseconds(p.end - p.start) : 0;
  if (hits == 0 || span == 0) return;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    unsigned __int128 w = static_cast<unsigned __int128>(p.nodes[i].hits) * span / hits;
    tree.AddSelf(leaf[i], static_cast<uint64_t>(w), 1);
  }
}

}  // namespace

StackTree ReadCpuProfile(ByteSource& source, ReadReport* report) {
  std::string storage;
  std::string_view text = WholeInput(source, &storage);
  StackTree tree({SampleType{"samples", WeightUnit::kSamples},
                  SampleType{"wall", WeightUnit::kNanoseconds}});
  // Read the JSON, keeping what makes the tree.
  JsonReader json(text, source.name());
  Profile p = ReadJson(json, tree.names());
  if (p.nodes.empty()) throw Error(source.name(), "a .cpuprofile without nodes");
  NodeIndex index(p.nodes, source.name());
  // Link the nodes into a tree and make each a stack tree node after its parent.
  std::vector<uint32_t> order = TreeOrder(p, index, source.name());
  std::vector<NodeId> tree_node(p.nodes.size(), StackTree::kRoot);
  for (uint32_t i : order) {
    const Node& n = p.nodes[i];
    NodeId parent = n.parent == kNoParent ? StackTree::kRoot : tree_node[n.parent];
    tree_node[i] = n.v8_root && parent == StackTree::kRoot ? StackTree::kRoot
                                                           : tree.Child(parent, n.frame);
  }
  // Weights land on a frame: V8's root, when it has any, on a "(root)" one.
  std::vector<NodeId> leaf = tree_node;
  for (NodeId& l : leaf) {
    if (l == StackTree::kRoot) l = tree.Child(StackTree::kRoot, tree.names().Intern("(root)"));
  }
  for (size_t i = 0; i < p.nodes.size(); ++i) tree.AddSelf(leaf[i], p.nodes[i].hits, 0);
  AddWallTime(p, index, leaf, tree, source.name(), report);
  return tree;
}

bool LooksLikeCpuProfile(std::string_view head) {
  size_t i = head.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' ||
                             head[i] == '\r')) {
    ++i;
  }
  if (i >= head.size() || head[i] != '{') return false;
  // The members `head` holds whole, until one settles it or the head ends.
  try {
    JsonReader json(head, "");
    json.BeginObject();
    bool nodes = false, timing = false;
    std::string key;
    while (json.NextMember(&key)) {
      if (key == "nodes") {
        nodes = true;
        if (json.Peek() != JsonReader::Type::kArray) return false;
        json.BeginArray();
        if (json.NextElement()) {
          if (json.Peek() != JsonReader::Type::kObject) return false;
          json.BeginObject();
          while (json.NextMember(&key)) {
            if (key == "callFrame") return true;
            json.Skip();
          }
          while (json.NextElement()) json.Skip();
        }
      } else {
        timing = timing || key == "samples" || key == "startTime" || key == "timeDeltas";
        json.Skip();
      }
      if (nodes && timing) return true;
    }
  } catch (const Error&) {
  }
  return false;
}

}  // namespace pf
