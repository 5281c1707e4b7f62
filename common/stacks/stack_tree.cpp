// The stack prefix tree (stack_tree.h). Nodes live in flat arrays indexed by id (parent, frame,
// self weights) and children are found through one open-addressing table keyed by (parent,
// frame), whose 8-byte slots hold the child id and part of the key's hash: a lookup rarely
// leaves the slot array. A stack is inserted by walking down while its prefix exists, then
// adding its new suffix in one batch. Merge and the transforms rely on ids being created
// parents first, so one pass in id order can map a whole tree onto another.

#include "stacks/stack_tree.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "base/error.h"
#include "base/prefetch.h"

namespace pf {

StackTree::StackTree(SampleType type) : StackTree(std::vector<SampleType>{std::move(type)}) {}

StackTree::StackTree(std::vector<SampleType> types)
    : types_(std::move(types)),
      columns_(static_cast<int>(types_.size())),
      names_(std::make_unique<Interner>()) {
  if (types_.empty()) throw std::invalid_argument("stack tree: no sample type");
  links_.push_back(Link{kRoot, StrId{0}});
  self_.assign(columns_, 0);
  slots_.assign(size_t{1} << bits_, Slot{kRoot, 0});
}

StackTree StackTree::Differential(SampleType type) {
  StackTree t(std::vector<SampleType>{type, type});
  t.differential_ = true;
  return t;
}

void StackTree::set_unit(WeightUnit u) {
  for (SampleType& t : types_) t = DefaultSampleType(u);
}

int StackTree::FindSampleType(std::string_view name) const {
  if (name.empty()) return default_column();
  for (int c = 0; c < columns_; ++c) {
    if (types_[c].name == name) return c;
  }
  // As pprof: inuse_space and inuse_objects also name the "space" and "objects" of heap
  // profiles that hold only what is in use (gperftools' heap profiles through pprof -proto).
  if (name.substr(0, 6) == "inuse_") {
    for (int c = 0; c < columns_; ++c) {
      if (types_[c].name == name.substr(6)) return c;
    }
  }
  int index = 0;
  for (char ch : name) {
    if (ch < '0' || ch > '9' || index > columns_) return -1;
    index = index * 10 + (ch - '0');
  }
  return index < columns_ ? index : -1;
}

NodeId StackTree::Child(NodeId parent, StrId frame) {
  if (indexed_ != size()) IndexNew();
  uint32_t tag = Tag(parent, frame);
  size_t mask = slots_.size() - 1;
  size_t i = Home(tag);
  for (;; i = (i + 1) & mask) {
    Slot s = slots_[i];
    if (s.node == kRoot) break;
    const Link& l = links_[s.node.index()];
    if (s.tag == tag && l.parent == parent && l.frame == frame) {
      return s.node;
    }
  }
  NodeId node = Append(parent, frame);
  slots_[i] = Slot{node, tag};
  ++indexed_;
  if (Crowded()) Grow();
  return node;
}

NodeId StackTree::Append(NodeId parent, StrId frame) {
  NodeId node(static_cast<uint32_t>(links_.size()));
  links_.push_back(Link{parent, frame});
  self_.resize(self_.size() + columns_, 0);
  return node;
}

void StackTree::Index(NodeId from, NodeId to) {
  int bits = bits_;
  while (bits < 32 && links_.size() * 4 > (size_t{3} << bits)) ++bits;
  if (bits > bits_) Rehash(bits);
  // A table larger than the cache costs a miss per insert: a batch whose slots are fetched a
  // few inserts ahead pays them side by side.
  constexpr uint32_t kAhead = 8;
  size_t mask = slots_.size() - 1;
  for (NodeId n = from; n < to; ++n) {
    if (n.value + kAhead < to.value) {
      const Link& a = links_[n.index() + kAhead];
      Prefetch(&slots_[Home(Tag(a.parent, a.frame))]);
    }
    uint32_t tag = Tag(links_[n.index()].parent, links_[n.index()].frame);
    size_t i = Home(tag);
    while (slots_[i].node != kRoot) i = (i + 1) & mask;
    slots_[i] = Slot{n, tag};
  }
  indexed_ = to.value;
}

void StackTree::Reserve(size_t nodes) {
  links_.reserve(links_.size() + nodes);
  self_.reserve((links_.size() + nodes) * columns_);
}

void StackTree::Rehash(int bits) {
  if (bits > 32) throw std::length_error("stack tree: too many distinct stacks");
  std::vector<Slot> old;
  old.swap(slots_);
  bits_ = bits;
  slots_.assign(size_t{1} << bits_, Slot{kRoot, 0});
  size_t mask = slots_.size() - 1;
  // A slot's home is its tag's top bits, so the old table's order is (but for runs that wrap
  // around its end) the new one's: this pass writes the new table front to back.
  for (const Slot& s : old) {
    if (s.node == kRoot) continue;
    size_t i = Home(s.tag);
    while (slots_[i].node != kRoot) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

NodeId StackTree::AddStack(std::span<const StrId> root_first, uint64_t weight, int column) {
  NodeId n = AddPath(kRoot, root_first);
  AddSelf(n, weight, column);
  return n;
}

NodeId StackTree::AddNewPath(NodeId from, std::span<const StrId> frames) {
  const size_t first = links_.size();
  links_.resize(first + frames.size());
  self_.resize(links_.size() * columns_, 0);
  NodeId n = from;
  for (size_t i = 0; i < frames.size(); ++i) {
    links_[first + i] = Link{n, frames[i]};
    n = NodeId(static_cast<uint32_t>(first + i));
  }
  return n;
}

NodeId StackTree::AddPath(NodeId from, std::span<const StrId> root_first) {
  NodeId n = from;
  size_t k = 0;
  while (k < root_first.size()) {
    NodeId before(static_cast<uint32_t>(size()));
    n = Child(n, root_first[k++]);
    if (n == before) break;  // made: its descendants on this path are new as well
  }
  if (k < root_first.size()) {
    // Each is the first child of the one made before it, so none needs looking up: they are
    // appended, then indexed as a batch.
    NodeId first(static_cast<uint32_t>(size()));
    for (; k < root_first.size(); ++k) n = Append(n, root_first[k]);
    Index(first, NodeId(static_cast<uint32_t>(size())));
  }
  return n;
}

bool StackTree::has_self(NodeId n) const {
  for (int c = 0; c < columns_; ++c) {
    if (self(n, c)) return true;
  }
  return false;
}

uint64_t StackTree::Total(int column) const {
  uint64_t t = 0;
  bool saturated = false;
  for (NodeId n; n.index() < size(); ++n) {
    if (__builtin_add_overflow(t, self(n, column), &t)) {
      saturated = true;
      break;
    }
  }
  if (!saturated) return t;
  ++saturated_;
  return UINT64_MAX;
}

void StackTree::SetDecimals(int d) {
  if (d <= decimals_) return;
  uint64_t p = Pow10(d - decimals_);
  for (uint64_t& w : self_) {
    if (w == 0) continue;
    if (__builtin_mul_overflow(w, p, &w)) {
      w = UINT64_MAX;
      ++saturated_;
    }
  }
  decimals_ = d;
}

StackTree StackTree::EmptyLike() const {
  StackTree out(types_);
  out.differential_ = differential_;
  out.default_column_ = default_column_;
  out.SetDecimals(decimals_);
  out.NoteSaturated(saturated_);
  return out;
}

void StackTree::Merge(const StackTree& other) { MergeColumns(other, -1); }

StackTree OneValue(const StackTree& tree, std::string_view sample_type) {
  int c = tree.FindSampleType(sample_type);
  if (c < 0) {
    std::string names;
    for (const SampleType& t : tree.sample_types()) names += (names.empty() ? "" : ", ") + t.name;
    throw UsageError("no sample type '" + std::string(sample_type) + "' in the profile (it has " +
                     names + ")");
  }
  StackTree out(tree.sample_type(c));
  out.SetDecimals(tree.decimals());
  out.MergeColumns(tree, c);
  return out;
}

const StackTree& OneValueView(const StackTree& tree, StackTree* storage) {
  if (tree.columns() == 1 || tree.differential()) return tree;
  *storage = OneValue(tree);
  return *storage;
}

void StackTree::MergeColumns(const StackTree& other, int only_column) {
  SetDecimals(other.decimals_);
  const uint64_t scale = Pow10(decimals_ - other.decimals_);
  if (only_column < 0) {
    const bool empty = size() == 1 && !has_self(kRoot);
    for (int c = 0; c < columns_; ++c) {
      types_[c] = empty ? other.types_[c] : CombineSampleTypes(types_[c], other.types_[c]);
    }
    if (empty) default_column_ = other.default_column_;
  }
  saturated_ += other.saturated_;
  std::vector<StrId> name_map(other.names().size());
  std::vector<bool> mapped(other.names().size(), false);
  std::vector<NodeId> node_map(other.size());
  node_map[kRoot.index()] = kRoot;
  // Into a tree without stacks (OneValue's copy), every node is new. When the names get
  // the ids they have in `other` (a tree that has interned nothing yet), the nodes keep
  // theirs too: the links and the hash table are copied as they are. Otherwise the nodes are
  // appended, then indexed as a batch, with no lookups.
  const bool fresh = size() == 1;
  bool copied = false;
  if (fresh) {
    bool same_ids = true;
    for (uint32_t f = 0; f < other.names().size(); ++f) {
      name_map[f] = names_->Intern(other.names().Name(StrId{f}));
      mapped[f] = true;
      same_ids = same_ids && name_map[f].value == f;
    }
    if (same_ids && other.size() > 1) {
      links_ = other.links_;
      slots_ = other.slots_;
      bits_ = other.bits_;
      indexed_ = other.indexed_;
      self_.assign(other.size() * columns_, 0);
      for (NodeId n{1}; n.index() < other.size(); ++n) node_map[n.index()] = n;
      copied = true;
    } else {
      links_.reserve(other.size());
      self_.reserve(other.size() * columns_);
    }
  }
  for (NodeId n{1}; !copied && n.index() < other.size(); ++n) {
    uint32_t f = other.frame(n).value;
    if (!mapped[f]) {
      name_map[f] = names_->Intern(other.names().Name(StrId{f}));
      mapped[f] = true;
    }
    NodeId parent = node_map[other.parent(n).index()];
    node_map[n.index()] = fresh ? Append(parent, name_map[f]) : Child(parent, name_map[f]);
  }
  if (fresh && !copied) Index(NodeId{1}, NodeId(static_cast<uint32_t>(size())));
  for (NodeId n; n.index() < other.size(); ++n) {
    if (only_column >= 0) {
      uint64_t w = other.self(n, only_column);
      if (w) AddSelf(node_map[n.index()], scale == 1 ? w : MulSat(w, scale));
      continue;
    }
    for (int c = 0; c < columns_; ++c) {
      if (uint64_t w = other.self(n, c)) {
        AddSelf(node_map[n.index()], scale == 1 ? w : MulSat(w, scale), c);
      }
    }
  }
  for (size_t f = 0; f < other.module_.size(); ++f) {
    uint32_t m = other.module_[f];
    if (m == 0 || !mapped[f]) continue;
    if (m == kAmbiguous) {
      if (name_map[f].value >= module_.size()) module_.resize(name_map[f].value + 1, 0);
      module_[name_map[f].value] = kAmbiguous;
      continue;
    }
    StrId module = names_->Intern(other.names().Name(StrId{m - 1}));
    NoteModule(name_map[f], module);
    if (uint64_t a; other.Address(StrId(static_cast<uint32_t>(f)), &a)) {
      NoteAddress(name_map[f], a);
    }
    if (m - 1 < other.build_id_.size() && other.build_id_[m - 1] != 0) {
      uint32_t b = other.build_id_[m - 1];
      if (b == kAmbiguous) {
        if (module.value >= build_id_.size()) build_id_.resize(module.value + 1, 0);
        build_id_[module.value] = kAmbiguous;
      } else {
        NoteBuildId(module, names_->Intern(other.names().Name(StrId{b - 1})));
      }
    }
  }
}

// Notes `value` at `index` of a table of name ids + 1: kept when the first, kAmbiguous when
// another was noted before.
void StackTree::NoteOnce(std::vector<uint32_t>* table, StrId index, StrId value) {
  if (index.value >= table->size()) table->resize(index.value + 1, 0);
  uint32_t& v = (*table)[index.value];
  if (v == 0) {
    v = value.value + 1;
  } else if (v != value.value + 1) {
    v = kAmbiguous;
  }
}

void StackTree::NoteModule(StrId name, StrId module) { NoteOnce(&module_, name, module); }

bool StackTree::Module(StrId name, std::string_view* module) const {
  if (name.value >= module_.size()) return false;
  uint32_t m = module_[name.value];
  if (m == 0 || m == kAmbiguous) return false;
  *module = names_->Name(StrId{m - 1});
  return true;
}

void StackTree::NoteAddress(StrId name, uint64_t address) {
  if (name.value >= address_.size()) address_.resize(name.value + 1, kNoAddress);
  address_[name.value] = std::min(address_[name.value], address);
}

bool StackTree::Address(StrId name, uint64_t* address) const {
  if (name.value >= address_.size() || address_[name.value] == kNoAddress) return false;
  *address = address_[name.value];
  return true;
}

void StackTree::NoteBuildId(StrId module, StrId build_id) {
  NoteOnce(&build_id_, module, build_id);
}

bool StackTree::BuildId(StrId name, std::string_view* build_id) const {
  if (name.value >= module_.size()) return false;
  uint32_t m = module_[name.value];
  if (m == 0 || m == kAmbiguous || m - 1 >= build_id_.size()) return false;
  uint32_t b = build_id_[m - 1];
  if (b == 0 || b == kAmbiguous) return false;
  *build_id = names_->Name(StrId{b - 1});
  return true;
}

StackTree::Children StackTree::SortedChildren() const {
  Children ch;
  ch.first.assign(size() + 1, 0);
  for (NodeId n{1}; n.index() < size(); ++n) ++ch.first[links_[n.index()].parent.index() + 1];
  for (size_t i = 1; i < ch.first.size(); ++i) ch.first[i] += ch.first[i - 1];
  ch.child_index.resize(size() > 0 ? size() - 1 : 0);
  std::vector<uint32_t> fill(ch.first.begin(), ch.first.end() - 1);
  for (NodeId n{1}; n.index() < size(); ++n) {
    ch.child_index[fill[links_[n.index()].parent.index()]++] = n;
  }
  for (size_t n = 0; n < size(); ++n) {
    auto b = ch.child_index.begin() + ch.first[n];
    auto e = ch.child_index.begin() + ch.first[n + 1];
    if (e - b > 1) {
      std::sort(b, e, [this](NodeId a, NodeId c) { return name(a) < name(c); });
    }
  }
  return ch;
}

}  // namespace pf
