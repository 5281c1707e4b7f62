// perf's rules for a symbol table, and the lookup they give (elf_symbols.h states the rules
// and where they come from). perf extends zero-size symbols, drops duplicates by its
// choose_best_symbol, and keeps what is left in a red-black tree that a lookup searches; when
// ranges overlap (nested symbols, a zero-size `_init` stretched over .plt) which symbol a
// search finds depends on the tree's shape. So SymbolRanges records perf's insertions and
// erasures, and Finish either flattens the symbols into sorted disjoint ranges (no overlap:
// a binary search answers as perf would) or replays the tree exactly (RbReplay, the kernel's
// lib/rbtree.c balancing) and keeps it for Find to search as perf does (Find is in
// elf_symbols.cpp, beside the lookups it serves). ELF files (elf_symbols_read.cpp) and
// kallsyms share these rules.

#include <elf.h>

#include <algorithm>

#include "symbolize/elf_symbols.h"

namespace pf {

namespace {

constexpr uint32_t kNone = UINT32_MAX;  // a range no symbol covers

size_t LeadingUnderscores(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[n] == '_') ++n;
  return n;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// A replay of perf's red-black tree of symbols (the kernel's lib/rbtree.c balancing, which is
// the textbook algorithm): same insertions in the same order, same erasures, same search. Used
// only when symbol ranges overlap, where the search result depends on the tree's shape.

namespace {

class RbReplay {
 public:
  /// Inserts a symbol; equal starts go to the right (after the existing ones).
  int Insert(uint64_t start, uint64_t end, uint32_t id) {
    int z = static_cast<int>(nodes_.size());
    nodes_.push_back({start, end, id, -1, -1, -1, true});
    int parent = -1;
    for (int x = root_; x >= 0;) {
      parent = x;
      x = start < nodes_[x].start ? nodes_[x].left : nodes_[x].right;
    }
    nodes_[z].parent = parent;
    if (parent < 0)
      root_ = z;
    else if (start < nodes_[parent].start)
      nodes_[parent].left = z;
    else
      nodes_[parent].right = z;
    InsertFixup(z);
    return z;
  }

  void Erase(int z) {
    int y = z;
    bool y_was_red = nodes_[y].red;
    int x, x_parent;
    if (nodes_[z].left < 0) {
      x = nodes_[z].right;
      x_parent = nodes_[z].parent;
      Transplant(z, x);
    } else if (nodes_[z].right < 0) {
      x = nodes_[z].left;
      x_parent = nodes_[z].parent;
      Transplant(z, x);
    } else {
      y = nodes_[z].right;
      while (nodes_[y].left >= 0) y = nodes_[y].left;
      y_was_red = nodes_[y].red;
      x = nodes_[y].right;
      if (nodes_[y].parent == z) {
        x_parent = y;
      } else {
        x_parent = nodes_[y].parent;
        Transplant(y, x);
        nodes_[y].right = nodes_[z].right;
        nodes_[nodes_[y].right].parent = y;
      }
      Transplant(z, y);
      nodes_[y].left = nodes_[z].left;
      nodes_[nodes_[y].left].parent = y;
      nodes_[y].red = nodes_[z].red;
    }
    if (!y_was_red) EraseFixup(x, x_parent);
  }

  struct Node {
    uint64_t start, end;
    uint32_t id;
    int left, right, parent;
    bool red;
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  int root() const { return root_; }

 private:
  bool Red(int n) const { return n >= 0 && nodes_[n].red; }

  void Transplant(int u, int v) {
    int p = nodes_[u].parent;
    if (p < 0)
      root_ = v;
    else if (nodes_[p].left == u)
      nodes_[p].left = v;
    else
      nodes_[p].right = v;
    if (v >= 0) nodes_[v].parent = p;
  }

  void RotateLeft(int x) {
    int y = nodes_[x].right;
    nodes_[x].right = nodes_[y].left;
    if (nodes_[y].left >= 0) nodes_[nodes_[y].left].parent = x;
    Transplant(x, y);
    nodes_[y].left = x;
    nodes_[x].parent = y;
  }

  void RotateRight(int x) {
    int y = nodes_[x].left;
    nodes_[x].left = nodes_[y].right;
    if (nodes_[y].right >= 0) nodes_[nodes_[y].right].parent = x;
    Transplant(x, y);
    nodes_[y].right = x;
    nodes_[x].parent = y;
  }

  void InsertFixup(int z) {
    while (Red(nodes_[z].parent)) {
      int p = nodes_[z].parent;
      int g = nodes_[p].parent;
      if (p == nodes_[g].left) {
        int u = nodes_[g].right;
        if (Red(u)) {
          nodes_[p].red = nodes_[u].red = false;
          nodes_[g].red = true;
          z = g;
          continue;
        }
        if (z == nodes_[p].right) {
          z = p;
          RotateLeft(z);
          p = nodes_[z].parent;
        }
        nodes_[p].red = false;
        nodes_[g].red = true;
        RotateRight(g);
      } else {
        int u = nodes_[g].left;
        if (Red(u)) {
          nodes_[p].red = nodes_[u].red = false;
          nodes_[g].red = true;
          z = g;
          continue;
        }
        if (z == nodes_[p].left) {
          z = p;
          RotateRight(z);
          p = nodes_[z].parent;
        }
        nodes_[p].red = false;
        nodes_[g].red = true;
        RotateLeft(g);
      }
    }
    nodes_[root_].red = false;
  }

  void EraseFixup(int x, int parent) {
    while (x != root_ && !Red(x)) {
      if (parent < 0) break;
      if (x == nodes_[parent].left) {
        int w = nodes_[parent].right;
        if (Red(w)) {
          nodes_[w].red = false;
          nodes_[parent].red = true;
          RotateLeft(parent);
          w = nodes_[parent].right;
        }
        if (!Red(nodes_[w].left) && !Red(nodes_[w].right)) {
          nodes_[w].red = true;
          x = parent;
          parent = nodes_[x].parent;
        } else {
          if (!Red(nodes_[w].right)) {
            nodes_[nodes_[w].left].red = false;
            nodes_[w].red = true;
            RotateRight(w);
            w = nodes_[parent].right;
          }
          nodes_[w].red = nodes_[parent].red;
          nodes_[parent].red = false;
          if (nodes_[w].right >= 0) nodes_[nodes_[w].right].red = false;
          RotateLeft(parent);
          x = root_;
          parent = -1;
        }
      } else {
        int w = nodes_[parent].left;
        if (Red(w)) {
          nodes_[w].red = false;
          nodes_[parent].red = true;
          RotateRight(parent);
          w = nodes_[parent].left;
        }
        if (!Red(nodes_[w].right) && !Red(nodes_[w].left)) {
          nodes_[w].red = true;
          x = parent;
          parent = nodes_[x].parent;
        } else {
          if (!Red(nodes_[w].left)) {
            nodes_[nodes_[w].right].red = false;
            nodes_[w].red = true;
            RotateLeft(w);
            w = nodes_[parent].left;
          }
          nodes_[w].red = nodes_[parent].red;
          nodes_[parent].red = false;
          if (nodes_[w].left >= 0) nodes_[nodes_[w].left].red = false;
          RotateRight(parent);
          x = root_;
          parent = -1;
        }
      }
    }
    if (x >= 0) nodes_[x].red = false;
  }

  std::vector<Node> nodes_;
  int root_ = -1;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Table rules shared with kallsyms.

bool PreferFirstSymbol(const TableSymbol& a, std::string_view a_name, const TableSymbol& b,
                       std::string_view b_name) {
  // A symbol with a size, then a non-weak one, then a global one, then fewer leading
  // underscores, then the longer name; on a full tie the first one stays.
  bool a_sized = a.end > a.start, b_sized = b.end > b.start;
  if (a_sized != b_sized) return a_sized;
  bool a_weak = a.binding == STB_WEAK, b_weak = b.binding == STB_WEAK;
  if (a_weak != b_weak) return !a_weak;
  bool a_global = a.binding == STB_GLOBAL, b_global = b.binding == STB_GLOBAL;
  if (a_global != b_global) return a_global;
  size_t a_us = LeadingUnderscores(a_name), b_us = LeadingUnderscores(b_name);
  if (a_us != b_us) return a_us < b_us;
  if (a_name.size() != b_name.size()) return a_name.size() > b_name.size();
  return true;
}

void FixupSymbolEnds(std::vector<TableSymbol>& sorted, bool kallsyms) {
  if (sorted.empty()) return;
  for (size_t i = 1; i < sorted.size(); ++i) {
    TableSymbol& prev = sorted[i - 1];
    const TableSymbol& curr = sorted[i];
    if (prev.end != prev.start) continue;
    if (kallsyms && prev.module != curr.module) {
      // The last symbol before the other kind's (core kernel / module) gap gets one page.
      prev.end = ((prev.end + 4096) + 4095) & ~uint64_t{4095};
    } else {
      prev.end = curr.start;
    }
  }
  TableSymbol& last = sorted.back();
  if (last.end == last.start) last.end = ((last.start + 4095) & ~uint64_t{4095}) + 4096;
}

std::vector<uint32_t> RemoveDuplicateSymbols(std::vector<TableSymbol>& sorted,
                                             const TableNameFn& name) {
  // perf walks the tree in order comparing a symbol with its successor; the loser is erased
  // and the walk goes on from the survivor.
  std::vector<uint32_t> erased;
  std::vector<bool> gone(sorted.size(), false);
  size_t curr = 0;
  while (curr < sorted.size()) {
    size_t next = curr + 1;
    while (next < sorted.size() && sorted[next].start == sorted[curr].start) {
      if (PreferFirstSymbol(sorted[curr], name(sorted[curr].id), sorted[next],
                            name(sorted[next].id))) {
        gone[next] = true;
        erased.push_back(sorted[next].id);
        ++next;
      } else {
        gone[curr] = true;
        erased.push_back(sorted[curr].id);
        curr = next;
        ++next;
      }
    }
    curr = next;
  }
  size_t out = 0;
  for (size_t i = 0; i < sorted.size(); ++i)
    if (!gone[i]) sorted[out++] = sorted[i];
  sorted.resize(out);
  return erased;
}

void SymbolRanges::Insert(const TableSymbol& s) {
  if (s.id >= index_.size()) index_.resize(size_t{s.id} + 1, kNone);
  index_[s.id] = static_cast<uint32_t>(symbols_.size());
  ops_.push_back({false, symbols_.size()});
  symbols_.push_back(s);
}

void SymbolRanges::Erase(uint32_t id) {
  if (id < index_.size() && index_[id] != kNone) ops_.push_back({true, index_[id]});
}

void SymbolRanges::SetEnd(uint32_t id, uint64_t end) {
  if (id < index_.size() && index_[id] != kNone) symbols_[index_[id]].end = end;
}

void SymbolRanges::Finish() {
  // The symbols alive at the end, in address order (stable: insertion order on ties).
  std::vector<TableSymbol> alive;
  {
    std::vector<bool> gone(symbols_.size(), false);
    for (const auto& [erase, at] : ops_)
      if (erase) gone[at] = true;
    for (size_t i = 0; i < symbols_.size(); ++i)
      if (!gone[i]) alive.push_back(symbols_[i]);
  }
  std::stable_sort(alive.begin(), alive.end(),
                   [](const TableSymbol& a, const TableSymbol& b) { return a.start < b.start; });

  // A symbol covers [start, end), a zero-size one its start alone; an end below the start
  // (wrapped around) covers nothing.
  auto last = [](const TableSymbol& t) -> uint64_t {
    if (t.start == UINT64_MAX) return t.start;
    return t.end == t.start ? t.start + 1 : std::max(t.start, t.end);
  };
  bool overlap = false;
  for (size_t i = 1; i < alive.size() && !overlap; ++i)
    overlap = alive[i].start < last(alive[i - 1]);
  own_ranges_.clear();
  own_nodes_.clear();
  root_ = -1;
  tree_ = overlap;
  if (!overlap) {
    for (const TableSymbol& t : alive) {
      if (last(t) == t.start) continue;
      if (!own_ranges_.empty() && own_ranges_.back().start == t.start) own_ranges_.pop_back();
      own_ranges_.push_back({t.start, t.id, 0});
      own_ranges_.push_back({last(t), kNone, 0});
    }
  } else {
    // The search's answer depends on the tree's shape: keep the replayed tree and search it
    // (a lookup walks one path; flattening it would search at every start and end).
    RbReplay tree;
    std::vector<int> node_of(symbols_.size(), -1);
    for (const auto& [erase, at] : ops_) {
      const TableSymbol& t = symbols_[at];
      if (!erase) {
        node_of[at] = tree.Insert(t.start, t.end, t.id);
      } else if (node_of[at] >= 0) {
        tree.Erase(node_of[at]);
        node_of[at] = -1;
      }
    }
    // (Erased nodes stay in the array, unreachable.)
    for (const RbReplay::Node& n : tree.nodes())
      own_nodes_.push_back({n.start, n.end, n.id, n.left, n.right, 0});
    root_ = tree.root();
  }
  // Merge neighbours with the same answer.
  size_t out = 0;
  for (size_t i = 0; i < own_ranges_.size(); ++i) {
    if (out > 0 && own_ranges_[out - 1].id == own_ranges_[i].id) continue;
    own_ranges_[out++] = own_ranges_[i];
  }
  own_ranges_.resize(out);
  ranges_ = own_ranges_;
  nodes_ = own_nodes_;
  symbols_ = {};
  index_ = {};
  ops_ = {};
}

}  // namespace pf
