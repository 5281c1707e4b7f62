#pragma once
// The stack prefix tree every tool walks: a node is (parent, frame); siblings are found
// through one hash table keyed by (parent, frame id), so inserting a stack costs one probe
// per frame and memory grows with the number of distinct prefixes, not with the input.
// The table's slots are 8 bytes (a node and 32 bits of its key's hash), and a stack's new
// suffix is indexed as a batch: a tree of many distinct stacks is bound by memory traffic.
// A sorted reader's new paths (AddNewPath) are indexed only when the tree is next searched.
// Node ids are dense and a parent is always created before its children, so a pass in id
// order visits parents first (Merge relies on it).
//
// Each node carries its self weights (of the samples whose leaf it is) in columns, one per
// sample type (pprof's ValueType: a name and a unit, stacks/weight.h): one column for most
// profiles ("samples", or a recording's "cpu" nanoseconds), several for profiles with several
// values per stack (pprof's alloc_objects, alloc_space, inuse_objects, inuse_space). A
// differential profile is a kind of its own: two columns, BEFORE and AFTER of one sample
// type (differential()); ask that, not the number of columns. Folded text, flame graphs and
// call graphs show one value per stack: OneValue chooses it from a tree of several, as
// pprof's -sample_index. Weights are 64-bit fixed-point numbers (`decimals` digits after the
// point) and saturate instead of wrapping; the tree counts the sums that saturated, for the
// tools to say so.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/intern.h"
#include "base/typed_id.h"
#include "stacks/weight.h"

namespace pf {

/// A node of a StackTree (dense; parents before children).
using NodeId = TypedId<struct NodeTag>;

class StackTree {
 public:
  static constexpr NodeId kRoot{0};

  /// One value per stack, of `type` (samples unless said).
  explicit StackTree(SampleType type = {});
  /// Several values per stack, one per sample type, in this order (at least one).
  explicit StackTree(std::vector<SampleType> types);
  /// A differential profile: BEFORE (column 0) and AFTER (column 1) of one sample type.
  static StackTree Differential(SampleType type = {});
  StackTree(const StackTree&) = delete;
  StackTree& operator=(const StackTree&) = delete;
  StackTree(StackTree&&) = default;
  StackTree& operator=(StackTree&&) = default;

  Interner& names() { return *names_; }
  const Interner& names() const { return *names_; }

  /// The child of `parent` for `frame`, created when missing.
  NodeId Child(NodeId parent, StrId frame);
  /// Adds a root-first path and puts `weight` on its leaf. Returns the leaf.
  NodeId AddStack(std::span<const StrId> root_first, uint64_t weight, int column = 0);
  /// The node of path `frames` below `from` (root first), made where missing, weighing
  /// nothing: for readers that know the node of a prefix already (a sorted input's previous
  /// stack) and add only the rest.
  NodeId AddPath(NodeId from, std::span<const StrId> frames);
  /// Appends `frames` below `from` as new nodes, none looked up, and returns the last (or
  /// `from`): for a reader that knows none of them exists (a sorted input's stack past the
  /// prefix it shares with the one before). They are indexed for lookups when the tree is
  /// next searched (Child, AddPath, merging into it), in one batch.
  NodeId AddNewPath(NodeId from, std::span<const StrId> frames);
  /// Makes room for `nodes` more nodes and their weights, for a reader that knows about how
  /// many it will add: they are then not reallocated as they grow (a bound a little high
  /// costs address space, not memory).
  void Reserve(size_t nodes);
  void AddSelf(NodeId node, uint64_t weight, int column = 0) {
    uint64_t& w = self_[node.index() * columns_ + column];
    if (__builtin_add_overflow(w, weight, &w)) {
      w = UINT64_MAX;
      ++saturated_;
    }
  }

  size_t size() const { return links_.size(); }
  /// Values per stack: one per sample type (2 for a differential profile).
  int columns() const { return columns_; }
  /// BEFORE and AFTER of one sample type (Differential), not two sample types.
  bool differential() const { return differential_; }
  /// What each column holds (for a differential profile, both hold the same type).
  const std::vector<SampleType>& sample_types() const { return types_; }
  /// The column shown when none is chosen (pprof's default_sample_type): the last unless
  /// the profile says otherwise (set_default_column).
  int default_column() const { return default_column_ < 0 ? columns_ - 1 : default_column_; }
  void set_default_column(int column) { default_column_ = column; }
  const SampleType& sample_type(int column = 0) const { return types_[column]; }
  NodeId parent(NodeId n) const { return links_[n.index()].parent; }
  StrId frame(NodeId n) const { return links_[n.index()].frame; }
  std::string_view name(NodeId n) const { return names_->Name(links_[n.index()].frame); }
  uint64_t self(NodeId n, int column = 0) const {
    return self_[n.index() * columns_ + column];
  }
  bool has_self(NodeId n) const;
  /// Sum of all self weights of a column (saturating; counted in saturated()).
  uint64_t Total(int column = 0) const;

  /// Digits after the point of every weight (weights are stored times 10^decimals).
  int decimals() const { return decimals_; }
  /// Keeps `d` (>= decimals()) digits after the point: every weight is multiplied by
  /// 10^(d - decimals()), saturating.
  void SetDecimals(int d);
  /// What column `column`'s weights count (samples, nanoseconds, events, bytes, ...).
  WeightUnit unit(int column = 0) const { return types_[column].unit; }
  /// Gives every column the sample type of unit `u` (DefaultSampleType): for the readers
  /// that know only what their weights count (a recording's event, folded text's unit line).
  void set_unit(WeightUnit u);
  void set_sample_type(int column, SampleType type) { types_[column] = std::move(type); }
  /// How many sums reached UINT64_MAX and stopped there (weights added, totals taken).
  uint64_t saturated() const { return saturated_; }
  void NoteSaturated(uint64_t n = 1) const { saturated_ += n; }

  /// Notes that frame name `name` came from module `module` (a binary's file name), for
  /// call graphs that label functions with their module. A name seen in two modules has none.
  void NoteModule(StrId name, StrId module);
  /// The module noted for `name`; false when none or more than one was noted.
  bool Module(StrId name, std::string_view* module) const;
  /// Notes where the function of frame name `name` starts in its module: a file offset in a
  /// binary, an address for the kernel and JIT code. For formats that keep addresses (pprof's
  /// locations). Of two addresses noted, the lower stays (the same in any order).
  void NoteAddress(StrId name, uint64_t address);
  /// The address noted for `name` (NoteAddress); false when none.
  bool Address(StrId name, uint64_t* address) const;
  /// Notes the build-id (hex) of module `module` (a module NoteModule was given); two
  /// different ones noted leave none (two builds of one file name).
  void NoteBuildId(StrId module, StrId build_id);
  /// The build-id of the module noted for `name`; false when none.
  bool BuildId(StrId name, std::string_view* build_id) const;

  /// Adds every stack of `other` (which may intern names elsewhere) into this tree, with the
  /// modules noted for its names. The result keeps the larger number of decimals; the sample
  /// types combine (CombineSampleTypes), an empty tree taking `other`'s.
  /// Both trees must have as many columns and be differential or not alike.
  void Merge(const StackTree& other);

  /// Calls visit(node, path) for every node with a self weight (in any column), in id order;
  /// `path` holds the node ids from the root's child down to `node` (its last element). What
  /// every transform that rebuilds a tree from the stacks of another walks.
  template <typename F>
  void ForEachStack(F&& visit) const {
    std::vector<NodeId> path;
    for (NodeId n{1}; n.index() < size(); ++n) {
      if (!has_self(n)) continue;
      path.clear();
      for (NodeId p = n; p != kRoot; p = parent(p)) path.push_back(p);
      std::reverse(path.begin(), path.end());
      visit(n, std::span<const NodeId>(path));
    }
  }

  /// A tree without stacks whose weights are like this one's: the same sample types (and
  /// differential or not), decimals and the saturations counted so far.
  StackTree EmptyLike() const;

  /// The column of the sample type `name`, as pprof's -sample_index takes it: a sample
  /// type's name (inuse_space and inuse_objects also naming "space" and "objects", as in
  /// pprof), or its index in decimal; "" is the default column (pprof's default: the
  /// profile's default sample type, else the last; AFTER for a differential profile). -1
  /// when there is none.
  int FindSampleType(std::string_view name) const;

  /// Children lists in CSR form (children of n: child_index[first[n]..first[n+1])), each
  /// list sorted by name bytewise.
  struct Children {
    std::vector<uint32_t> first;
    std::vector<NodeId> child_index;
  };
  Children SortedChildren() const;

 private:
  struct Link {
    NodeId parent;
    StrId frame;
  };
  struct Slot {
    NodeId node;   // 0 = empty (the root is never a child)
    uint32_t tag;  // the top half of the key's hash; its top bits_ bits are the home slot
  };
  static uint32_t Tag(NodeId parent, StrId frame) {
    return static_cast<uint32_t>(MixU64((uint64_t{parent.value} << 32) | frame.value) >> 32);
  }
  size_t Home(uint32_t tag) const { return tag >> (32 - bits_); }
  /// More than three quarters full (linear probing in 8-byte slots stays within a cache line
  /// or two at that load).
  bool Crowded() const { return links_.size() * 4 > slots_.size() * 3; }
  /// A node without its slot (Index gives it one).
  NodeId Append(NodeId parent, StrId frame);
  /// Gives nodes [from, to) their slots, growing the table first; `to` is size().
  void Index(NodeId from, NodeId to);
  /// Indexes the nodes AddNewPath appended.
  void IndexNew() { Index(NodeId(indexed_), NodeId(static_cast<uint32_t>(size()))); }
  void Grow() { Rehash(bits_ + 1); }
  /// Rebuilds the hash table with 2^bits slots.
  void Rehash(int bits);
  /// Merge, or with `only_column` >= 0 that column of `other` into this tree's column 0.
  void MergeColumns(const StackTree& other, int only_column);
  friend StackTree OneValue(const StackTree& tree, std::string_view sample_type);

  std::vector<SampleType> types_;  // by column
  int columns_;                    // types_.size(), for the hot paths
  bool differential_ = false;
  int default_column_ = -1;        // default_column(); -1: the last
  int decimals_ = 0;
  mutable uint64_t saturated_ = 0;
  std::unique_ptr<Interner> names_;
  std::vector<Link> links_;  // by node
  std::vector<uint64_t> self_;
  std::vector<Slot> slots_;
  int bits_ = 10;                 // slots_.size() == 1 << bits_, at most 32
  uint32_t indexed_ = 1;          // nodes [1, indexed_) have their slots (AddNewPath's not)
  std::vector<uint32_t> module_;  // name id -> module name id + 1; 0 none; kAmbiguous
  std::vector<uint64_t> address_;   // name id -> NoteAddress's address; kNoAddress none
  std::vector<uint32_t> build_id_;  // module name id -> build-id name id + 1; 0; kAmbiguous
  static constexpr uint64_t kNoAddress = UINT64_MAX;
  static void NoteOnce(std::vector<uint32_t>* table, StrId index, StrId value);
  static constexpr uint32_t kAmbiguous = UINT32_MAX;
};

/// The one-value view of `tree`, as pprof's -sample_index chooses it: the column of sample
/// type `sample_type` (a name or an index; "" the default column) in a tree of its
/// own, with its modules, decimals and saturations. Folded text, flame graphs and call
/// graphs show one value per stack. Throws pf::UsageError naming the sample types when none
/// matches.
StackTree OneValue(const StackTree& tree, std::string_view sample_type = "");
/// What the views of one value per stack draw: `tree` itself when it holds one value per
/// stack or is differential, else its default one-value view (OneValue), kept in *storage.
const StackTree& OneValueView(const StackTree& tree, StackTree* storage);

}  // namespace pf
