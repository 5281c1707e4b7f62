// The frame merger of flame graphs (FlowBuilder, flame.h): stacks, visited in order, become
// frames as flamegraph.pl's flow() makes them, a frame being a run of neighbouring stacks
// that share it. Frames are nodes in one array, children linked through their siblings;
// a frame narrower than --minwidth is removed with its subtree when its parent closes, and
// leaves its width as a gap, so memory follows what will be drawn. In text order (lines
// sorted as whole strings) a frame may be reopened ("foo", "foo::bar", "foo;baz") and a new
// frame goes before the siblings that extend its name, which keeps frame order (Place).

#include <algorithm>
#include <cmath>
#include <utility>

#include "render/flame.h"
#include "stacks/weight.h"

namespace pf {

namespace {
constexpr uint32_t kNone = UINT32_MAX;

bool StartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(0, p.size()) == p;
}
}  // namespace

struct FlowBuilder::Node {
  StrId name;
  std::string_view view;
  uint32_t depth = 0;
  uint64_t start = 0;   // the running total when the frame opened (flame charts)
  uint64_t self = 0;    // weight of stacks ending here
  uint64_t pruned = 0;  // weight of children removed as too narrow
  // Removed siblings leave their gap, as in flamegraph.pl: `gap` is the width of those just
  // before this child, `tail_gap` that of those after the last child kept (the next child
  // opened, if the frame is reopened, starts after it).
  uint64_t gap = 0;
  uint64_t tail_gap = 0;
  uint64_t width = 0;   // valid once closed
  double delta = 0;
  bool owned = false;   // `view` points into names_, not into the caller's input
  // The children, in the order they were opened: a list through the nodes themselves (a
  // vector each was an allocation per frame).
  uint32_t first_child = kNone, last_child = kNone, prev = kNone, next = kNone;
};

FlowBuilder::FlowBuilder(double threshold_per_total, bool flamechart, bool stable_names)
    : threshold_per_total_(threshold_per_total), flamechart_(flamechart),
      stable_names_(stable_names) {
  StrId root = names_.Intern("");
  open_.push_back(NewNode(root, names_.Name(root), 0));
}

FlowBuilder::~FlowBuilder() = default;

uint32_t FlowBuilder::NewNode(StrId name, std::string_view view, uint32_t depth) {
  uint32_t n;
  if (!free_.empty()) {
    n = free_.back();
    free_.pop_back();
    nodes_[n] = Node();
  } else {
    n = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& node = nodes_[n];
  node.name = name;
  node.view = view;
  node.depth = depth;
  node.start = sum_;
  return n;
}

void FlowBuilder::Add(std::span<const std::string_view> frames, uint64_t weight, double delta) {
  size_t common = 0;
  while (common < frames.size() && common + 1 < open_.size() &&
         nodes_[open_[common + 1]].view == frames[common]) {
    ++common;
  }
  AddAfter(common, frames.subspan(common), weight, delta);
}

void FlowBuilder::AddAfter(size_t shared, std::span<const std::string_view> tail,
                           uint64_t weight, double delta, bool frame_order) {
  // The open frames beyond the shared ones may still continue with the tail's first frames.
  size_t common = shared;
  while (!frame_order && common - shared < tail.size() && common + 1 < open_.size() &&
         nodes_[open_[common + 1]].view == tail[common - shared]) {
    ++common;
  }
  while (open_.size() > common + 1) {
    Close(open_.back());
    if (open_.size() <= pruned_names_.size()) pruned_names_[open_.size() - 1].clear();
    open_.pop_back();
  }
  for (size_t i = common; i < shared + tail.size(); ++i) {
    std::string_view frame = tail[i - shared];
    uint32_t parent = open_.back();
    uint32_t n = kNone;
    if (!flamechart_ && !frame_order) {
      // Lines sorted as whole strings visit "foo", then "foo::bar", then "foo;baz": reopen
      // "foo" instead of drawing it twice; a new "foo" goes before the siblings extending
      // its name ("foo.cold;x" sorts before "foo;y").
      uint32_t first_extension;
      n = FindSibling(parent, frame, &first_extension);
      if (n == kNone) {
        n = NewNode(StrId{}, frame, static_cast<uint32_t>(i + 1));
        Place(parent, n, first_extension);
      }
    }
    if (n == kNone) {
      n = NewNode(StrId{}, frame, static_cast<uint32_t>(i + 1));
      nodes_[n].gap = std::exchange(nodes_[parent].tail_gap, 0);
      Link(parent, n);
    }
    open_.push_back(n);
  }
  Node& leaf = nodes_[open_.back()];
  if (__builtin_add_overflow(leaf.self, weight, &leaf.self)) leaf.self = UINT64_MAX;
  leaf.delta += delta;
  if (__builtin_add_overflow(sum_, weight, &sum_)) {
    sum_ = UINT64_MAX;
    ++saturated_;
  }
  double a = std::fabs(delta);
  if (a > max_delta_) max_delta_ = a;
}

uint32_t FlowBuilder::FindSibling(uint32_t parent, std::string_view frame,
                                  uint32_t* first_extension) const {
  // Siblings are in frame order: those extending `frame`'s name end the list, and only
  // they can be between the end and a sibling of that name.
  *first_extension = kNone;
  for (uint32_t c = nodes_[parent].last_child; c != kNone; c = nodes_[c].prev) {
    std::string_view v = nodes_[c].view;
    if (v == frame) return c;
    if (!StartsWith(v, frame)) break;
    *first_extension = c;
  }
  return kNone;
}

bool FlowBuilder::AddPruned(uint64_t weight, double delta, const std::string_view* first) {
  // What PruneChildren leaves of a removed child: its width in the gap before the next
  // child kept (before the siblings extending its name), and in the frame's pruned weight.
  const uint32_t parent = open_.back();
  uint64_t* gap = &nodes_[parent].tail_gap;
  if (first) {
    uint32_t first_extension;
    if (FindSibling(parent, *first, &first_extension) != kNone) return false;
    const uint32_t after =
        first_extension == kNone ? nodes_[parent].last_child : nodes_[first_extension].prev;
    if (first_extension != kNone) gap = &nodes_[first_extension].gap;
    if (std::any_of(first->begin(), first->end(),
                    [](char c) { return static_cast<unsigned char>(c) < ';'; })) {
      pruned_names_.resize(std::max(pruned_names_.size(), open_.size()));
      pruned_names_[open_.size() - 1].push_back({*first, weight, after});
    }
  }
  Node& node = nodes_[parent];
  *gap = AddSat(*gap, weight);
  node.pruned = AddSat(node.pruned, weight);
  if (__builtin_add_overflow(sum_, weight, &sum_)) {
    sum_ = UINT64_MAX;
    ++saturated_;
  }
  max_delta_ = std::max(max_delta_, std::fabs(delta));
  return true;
}

void FlowBuilder::Close(uint32_t n) {
  Node& node = nodes_[n];
  uint64_t w = AddSat(node.self, node.pruned);
  for (uint32_t c = node.first_child; c != kNone; c = nodes_[c].next) {
    w = AddSat(w, nodes_[c].width);
  }
  node.width = w;
  // Children are final now: the narrow ones can go (see the file comment in flame.h).
  if (threshold_per_total_ > 0) PruneChildren(n, threshold_per_total_ * static_cast<double>(sum_));
  // The survivors keep their names: copy them, so the views no longer point into the input
  // (whose pages a streaming caller gives back) — only frames likely to be drawn pay this.
  if (stable_names_) return;
  for (uint32_t c = nodes_[n].first_child; c != kNone; c = nodes_[c].next) {
    Node& child = nodes_[c];
    if (!child.owned) {
      child.view = names_.Name(names_.Intern(child.view));
      child.owned = true;
    }
  }
}

void FlowBuilder::Link(uint32_t parent, uint32_t child) {
  Node& p = nodes_[parent];
  nodes_[child].prev = p.last_child;
  nodes_[child].next = kNone;
  if (p.last_child == kNone) {
    p.first_child = child;
  } else {
    nodes_[p.last_child].next = child;
  }
  p.last_child = child;
}

void FlowBuilder::Place(uint32_t parent, uint32_t child, uint32_t first_extension) {
  // Siblings are kept in frame order, so those that extend the new frame's name ("foo.cold",
  // "foo::bar" for "foo": the bytes after "foo" sort before ';') end the list, kept ones
  // from `first_extension` on, removed ones in the gaps; they go after it. Removed siblings
  // between the kept one before (`after`) and it split: those extending it go after it.
  Node& p = nodes_[parent];
  const uint32_t after = first_extension == kNone ? p.last_child : nodes_[first_extension].prev;
  const std::string_view name = nodes_[child].view;
  uint64_t extending = 0;
  const size_t depth = nodes_[child].depth - 1;
  if (depth < pruned_names_.size()) {
    // They were removed in text order, and those extending the name came last: the walk
    // back stops at the first that does not.
    std::vector<PrunedName>& removed = pruned_names_[depth];
    for (size_t i = removed.size(); i-- > 0 && StartsWith(removed[i].name, name);) {
      if (removed[i].after == after) {
        extending += removed[i].width;
        removed[i].after = child;
      }
    }
  }
  uint64_t& gap = first_extension == kNone ? p.tail_gap : nodes_[first_extension].gap;
  extending = std::min(extending, gap);
  nodes_[child].gap = gap - extending;
  gap = extending;
  if (first_extension == kNone) {
    Link(parent, child);
    return;
  }
  Node& e = nodes_[first_extension];
  nodes_[child].prev = e.prev;
  nodes_[child].next = first_extension;
  (e.prev == kNone ? p.first_child : nodes_[e.prev].next) = child;
  e.prev = child;
}

void FlowBuilder::PruneChildren(uint32_t n, double threshold) {
  uint64_t gone = 0, gap = 0;  // gap: the removed width since the last child kept
  for (uint32_t c = nodes_[n].first_child; c != kNone;) {
    Node& child = nodes_[c];
    const uint32_t next = child.next;
    if (static_cast<double>(child.width) < threshold) {
      gone = AddSat(gone, child.width);
      gap += child.gap + child.width;
      (child.prev == kNone ? nodes_[n].first_child : nodes_[child.prev].next) = next;
      (next == kNone ? nodes_[n].last_child : nodes_[next].prev) = child.prev;
      FreeSubtree(c);
    } else {
      child.gap += gap;
      gap = 0;
    }
    c = next;
  }
  nodes_[n].pruned = AddSat(nodes_[n].pruned, gone);
  nodes_[n].tail_gap += gap;
}

void FlowBuilder::FreeSubtree(uint32_t n) {
  todo_.assign(1, n);
  while (!todo_.empty()) {
    uint32_t m = todo_.back();
    todo_.pop_back();
    for (uint32_t c = nodes_[m].first_child; c != kNone; c = nodes_[c].next) todo_.push_back(c);
    free_.push_back(m);
  }
}

void FlowBuilder::Finish(uint64_t total) {
  while (open_.size() > 1) {
    Close(open_.back());
    open_.pop_back();
  }
  uint32_t root = open_[0];
  Node& r = nodes_[root];
  uint64_t w = AddSat(r.self, r.pruned);
  for (uint32_t c = r.first_child; c != kNone; c = nodes_[c].next) w = AddSat(w, nodes_[c].width);
  r.width = w;
  // Final pruning with the real total, every level (flamegraph.pl: width < minwidth_time).
  if (threshold_per_total_ > 0) {
    double threshold = threshold_per_total_ * static_cast<double>(total);
    std::vector<uint32_t> todo{root};
    while (!todo.empty()) {
      uint32_t m = todo.back();
      todo.pop_back();
      PruneChildren(m, threshold);
      for (uint32_t c = nodes_[m].first_child; c != kNone; c = nodes_[c].next) todo.push_back(c);
    }
  }
  // Depth first, children in the order they were opened; in a flame graph the own samples
  // come first, then the children; a flame chart keeps the recorded offsets.
  out_.clear();
  struct Item {
    uint32_t node;
    uint64_t start;
  };
  std::vector<Item> todo{{root, 0}};
  while (!todo.empty()) {
    Item it = todo.back();
    todo.pop_back();
    const Node& node = nodes_[it.node];
    out_.push_back({node.view, node.depth, it.start, node.width, node.delta});
    uint64_t pos = AddSat(it.start, node.self);
    size_t first = todo.size();
    for (uint32_t c = node.first_child; c != kNone; c = nodes_[c].next) {
      pos += nodes_[c].gap;
      todo.push_back({c, flamechart_ ? nodes_[c].start : pos});
      pos = AddSat(pos, nodes_[c].width);
    }
    std::reverse(todo.begin() + static_cast<std::ptrdiff_t>(first), todo.end());
  }
}

}  // namespace pf
