#include "stacks/stack_tree.h"

#include <algorithm>

namespace pf {

StackTree::StackTree(int columns)
    : columns_(columns), names_(std::make_unique<Interner>()), slots_(1024, Slot{0, 0}) {
  parent_.push_back(kRoot);
  frame_.push_back(StrId{0});
  self_.assign(columns_, 0);
}

NodeId StackTree::Child(NodeId parent, StrId frame) {
  uint64_t key = (static_cast<uint64_t>(parent) << 32) | frame.value;
  size_t mask = slots_.size() - 1;
  size_t i = MixU64(key) & mask;
  for (;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.node == 0) break;
    if (s.key == key) return s.node;
  }
  NodeId node = static_cast<NodeId>(parent_.size());
  parent_.push_back(parent);
  frame_.push_back(frame);
  self_.resize(self_.size() + columns_, 0);
  slots_[i] = Slot{key, node};
  if (parent_.size() * 2 > slots_.size()) Grow();
  return node;
}

void StackTree::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Slot{0, 0});
  size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.node == 0) continue;
    size_t i = MixU64(s.key) & mask;
    while (slots_[i].node != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

NodeId StackTree::AddStack(std::span<const StrId> root_first, uint64_t weight, int column) {
  NodeId n = kRoot;
  for (StrId f : root_first) n = Child(n, f);
  AddSelf(n, weight, column);
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
  for (NodeId n = 0; n < size(); ++n) {
    uint64_t w = self(n, column);
    t = (t + w < t) ? UINT64_MAX : t + w;
  }
  return t;
}

void StackTree::Merge(const StackTree& other) {
  std::vector<StrId> name_map(other.names().size());
  std::vector<bool> mapped(other.names().size(), false);
  std::vector<NodeId> node_map(other.size());
  node_map[kRoot] = kRoot;
  for (NodeId n = 1; n < other.size(); ++n) {
    uint32_t f = other.frame(n).value;
    if (!mapped[f]) {
      name_map[f] = names_->Intern(other.names().Name(StrId{f}));
      mapped[f] = true;
    }
    node_map[n] = Child(node_map[other.parent(n)], name_map[f]);
  }
  for (NodeId n = 0; n < other.size(); ++n) {
    for (int c = 0; c < columns_; ++c) {
      if (uint64_t w = other.self(n, c)) AddSelf(node_map[n], w, c);
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
    NoteModule(name_map[f], names_->Intern(other.names().Name(StrId{m - 1})));
  }
}

void StackTree::NoteModule(StrId name, StrId module) {
  if (name.value >= module_.size()) module_.resize(name.value + 1, 0);
  uint32_t& m = module_[name.value];
  if (m == 0) {
    m = module.value + 1;
  } else if (m != module.value + 1) {
    m = kAmbiguous;
  }
}

bool StackTree::Module(StrId name, std::string_view* module) const {
  if (name.value >= module_.size()) return false;
  uint32_t m = module_[name.value];
  if (m == 0 || m == kAmbiguous) return false;
  *module = names_->Name(StrId{m - 1});
  return true;
}

StackTree::Children StackTree::SortedChildren() const {
  Children ch;
  ch.first.assign(size() + 1, 0);
  for (NodeId n = 1; n < size(); ++n) ++ch.first[parent_[n] + 1];
  for (size_t i = 1; i < ch.first.size(); ++i) ch.first[i] += ch.first[i - 1];
  ch.child_index.resize(size() > 0 ? size() - 1 : 0);
  std::vector<uint32_t> fill(ch.first.begin(), ch.first.end() - 1);
  for (NodeId n = 1; n < size(); ++n) ch.child_index[fill[parent_[n]]++] = n;
  for (NodeId n = 0; n < size(); ++n) {
    auto b = ch.child_index.begin() + ch.first[n];
    auto e = ch.child_index.begin() + ch.first[n + 1];
    if (e - b > 1) {
      std::sort(b, e, [this](NodeId a, NodeId c) { return name(a) < name(c); });
    }
  }
  return ch;
}

}  // namespace pf
