#include "stacks/stack_tree.h"

#include <gtest/gtest.h>

#include "base/error.h"

#include <string>
#include <type_traits>
#include <vector>

namespace pf {
namespace {

// A node is neither a frame name nor an integer.
static_assert(!std::is_convertible_v<NodeId, StrId> && !std::is_convertible_v<StrId, NodeId>);
static_assert(!std::is_convertible_v<uint32_t, NodeId> && !std::is_convertible_v<NodeId, size_t>);

std::vector<StrId> Ids(StackTree& t, std::initializer_list<const char*> names) {
  std::vector<StrId> v;
  for (const char* n : names) v.push_back(t.names().Intern(n));
  return v;
}

TEST(StackTree, SharesPrefixesAndSumsLeaves) {
  StackTree t;
  t.AddStack(Ids(t, {"a", "b", "c"}), 5);
  t.AddStack(Ids(t, {"a", "b"}), 2);
  t.AddStack(Ids(t, {"a", "b", "c"}), 1);
  t.AddStack(Ids(t, {"a", "x"}), 4);
  EXPECT_EQ(t.size(), 5u);  // root, a, b, c, x
  EXPECT_EQ(t.Total(), 12u);
  NodeId a = t.Child(StackTree::kRoot, t.names().Intern("a"));
  NodeId b = t.Child(a, t.names().Intern("b"));
  NodeId c = t.Child(b, t.names().Intern("c"));
  EXPECT_EQ(t.self(b), 2u);
  EXPECT_EQ(t.self(c), 6u);
  EXPECT_EQ(t.parent(c), b);
  EXPECT_EQ(t.name(c), "c");
  EXPECT_FALSE(t.has_self(a));
}

// Enough distinct stacks to grow the table many times: each path's new suffix is indexed as
// a batch, and every node must then be found again, by AddStack and by Child.
TEST(StackTree, ForEachStackVisitsWeightedNodesWithTheirPaths) {
  StackTree t = StackTree::Differential();
  t.AddStack(Ids(t, {"a", "b", "c"}), 5);
  t.AddStack(Ids(t, {"a", "d"}), 0);  // no weight: not visited
  NodeId ab = t.AddStack(Ids(t, {"a", "b"}), 0);
  t.AddSelf(ab, 7, 1);  // weight in the second column only
  std::vector<std::string> got;
  t.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
    std::string s;
    for (NodeId p : path) s += std::string(t.name(p)) + ";";
    EXPECT_EQ(path.back(), n);
    got.push_back(s + std::to_string(t.self(n, 0)) + "/" + std::to_string(t.self(n, 1)));
  });
  EXPECT_EQ(got, (std::vector<std::string>{"a;b;0/7", "a;b;c;5/0"}));  // in id order
}

TEST(StackTree, EmptyLikeKeepsHowWeightsAreCounted) {
  StackTree t;
  t.SetDecimals(2);
  t.set_unit(WeightUnit::kNanoseconds);
  t.AddStack(Ids(t, {"a"}), UINT64_MAX);
  t.AddStack(Ids(t, {"a"}), 1);  // saturates
  StackTree e = t.EmptyLike();
  EXPECT_EQ(e.size(), 1u);
  EXPECT_EQ(e.columns(), 1);
  EXPECT_EQ(e.decimals(), 2);
  EXPECT_EQ(e.unit(), WeightUnit::kNanoseconds);
  EXPECT_EQ(e.sample_type().name, "cpu");
  EXPECT_EQ(e.saturated(), t.saturated());
  EXPECT_GT(e.saturated(), 0u);
  StackTree d = StackTree::Differential({"alloc_space", WeightUnit::kBytes});
  EXPECT_TRUE(d.EmptyLike().differential());
  EXPECT_EQ(d.EmptyLike().sample_type(1), (SampleType{"alloc_space", WeightUnit::kBytes}));
  StackTree several({{"alloc_objects", WeightUnit::kObjects}, {"alloc_space", WeightUnit::kBytes}});
  EXPECT_EQ(several.EmptyLike().sample_types(), several.sample_types());
  EXPECT_FALSE(several.EmptyLike().differential());
}

TEST(StackTree, ManyDistinctStacksAreFoundAgain) {
  StackTree t;
  std::vector<StrId> f;
  for (int i = 0; i < 64; ++i)
    f.push_back(t.names().Intern(std::string("f").append(std::to_string(i))));
  std::vector<std::vector<StrId>> stacks;
  std::vector<NodeId> leaves;
  uint64_t x = 88172645463325252ull;
  for (int s = 0; s < 20000; ++s) {
    std::vector<StrId> path;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t depth = 1 + x % 24;
    // Shared roots (a few) then frames that make most suffixes new.
    for (size_t d = 0; d < depth; ++d) path.push_back(f[(x >> (d % 40)) % (d < 2 ? 3 : 64)]);
    leaves.push_back(t.AddStack(path, 1));
    stacks.push_back(std::move(path));
  }
  size_t nodes = t.size();
  EXPECT_GT(nodes, 100000u);
  for (size_t s = 0; s < stacks.size(); ++s) {
    EXPECT_EQ(t.AddStack(stacks[s], 1), leaves[s]) << s;
    NodeId n = StackTree::kRoot;
    for (StrId id : stacks[s]) n = t.Child(n, id);
    ASSERT_EQ(n, leaves[s]) << s;
  }
  EXPECT_EQ(t.size(), nodes);  // nothing made twice
  EXPECT_EQ(t.Total(), 2 * stacks.size());
  for (NodeId n{1}; n.index() < t.size(); ++n) ASSERT_EQ(t.Child(t.parent(n), t.frame(n)), n);
}

// AddNewPath appends without looking up (a sorted reader's new suffixes): the nodes are
// indexed when the tree is next searched, and then found by Child, AddStack and a merge.
TEST(StackTree, NewPathsAreFoundOnceSearched) {
  StackTree t;
  t.Reserve(1000);
  std::vector<StrId> f;
  for (int i = 0; i < 40; ++i) f.push_back(t.names().Intern(std::string("f").append(std::to_string(i))));
  std::vector<std::vector<StrId>> stacks;
  std::vector<NodeId> leaves;
  std::vector<NodeId> path_nodes;
  for (int a = 0; a < 40; ++a) {
    for (int b = 0; b < 40; ++b) {
      // Sorted stacks [a, b, a, b]: each shares [a] with the one before, or nothing.
      std::vector<StrId> s{f[a], f[b], f[a], f[b]};
      size_t k = b ? 1 : 0;
      NodeId leaf = t.AddNewPath(k ? path_nodes[0] : StackTree::kRoot,
                                 std::span<const StrId>(s).subspan(k));
      path_nodes.assign(1, k ? path_nodes[0] : NodeId(leaf.value - 3));
      t.AddSelf(leaf, 1);
      leaves.push_back(leaf);
      stacks.push_back(std::move(s));
    }
  }
  const size_t nodes = t.size();
  EXPECT_EQ(nodes, 1 + 40 + 40 * 40 * 3u);
  StackTree copy;
  copy.Merge(t);
  for (size_t s = 0; s < stacks.size(); ++s) {
    NodeId n = StackTree::kRoot;
    for (StrId id : stacks[s]) n = t.Child(n, id);
    ASSERT_EQ(n, leaves[s]) << s;
    ASSERT_EQ(copy.AddStack(stacks[s], 1), leaves[s]) << s;
  }
  EXPECT_EQ(t.size(), nodes);  // nothing made twice
  EXPECT_EQ(copy.size(), nodes);
  EXPECT_EQ(copy.Total(), 2 * stacks.size());
}

TEST(StackTree, WeightsSaturate) {
  StackTree t;
  t.AddStack(Ids(t, {"a"}), UINT64_MAX - 1);
  t.AddStack(Ids(t, {"a"}), 5);
  EXPECT_EQ(t.self(NodeId{1}), UINT64_MAX);
}

TEST(StackTree, MergeAcrossInterners) {
  StackTree x, y;
  x.AddStack(Ids(x, {"m", "f"}), 3);
  y.names().Intern("unrelated");
  y.AddStack(Ids(y, {"m", "g"}), 4);
  y.AddStack(Ids(y, {"m", "f"}), 1);
  x.Merge(y);
  EXPECT_EQ(x.Total(), 8u);
  NodeId m = x.Child(StackTree::kRoot, x.names().Intern("m"));
  EXPECT_EQ(x.self(x.Child(m, x.names().Intern("f"))), 4u);
  EXPECT_EQ(x.self(x.Child(m, x.names().Intern("g"))), 4u);
}

TEST(StackTree, DifferentialIsAKindNotAColumnCount) {
  StackTree t = StackTree::Differential({"cpu", WeightUnit::kNanoseconds});
  NodeId leaf = t.AddStack(Ids(t, {"a", "b"}), 3, 0);
  t.AddSelf(leaf, 7, 1);
  EXPECT_EQ(t.Total(0), 3u);
  EXPECT_EQ(t.Total(1), 7u);
  EXPECT_TRUE(t.differential());
  EXPECT_EQ(t.columns(), 2);
  EXPECT_EQ(t.unit(0), WeightUnit::kNanoseconds);
  EXPECT_EQ(t.unit(1), WeightUnit::kNanoseconds);
  // Two values per stack of two sample types are not a differential profile.
  StackTree two({{"alloc_objects", WeightUnit::kObjects}, {"alloc_space", WeightUnit::kBytes}});
  EXPECT_EQ(two.columns(), 2);
  EXPECT_FALSE(two.differential());
  EXPECT_FALSE(StackTree().differential());
  EXPECT_EQ(StackTree().sample_type(), (SampleType{"samples", WeightUnit::kUnspecified}));
}

// pprof's heap profile: four values per stack.
StackTree Heap() {
  StackTree t({{"alloc_objects", WeightUnit::kObjects},
               {"alloc_space", WeightUnit::kBytes},
               {"inuse_objects", WeightUnit::kObjects},
               {"inuse_space", WeightUnit::kBytes}});
  NodeId ab = t.AddStack(Ids(t, {"main", "alloc"}), 2, 0);
  t.AddSelf(ab, 4096, 1);
  t.AddSelf(ab, 1, 2);
  t.AddSelf(ab, 1024, 3);
  NodeId ac = t.AddStack(Ids(t, {"main", "cache"}), 5, 0);  // freed: nothing in use
  t.AddSelf(ac, 500, 1);
  t.NoteModule(t.names().Intern("alloc"), t.names().Intern("libfoo.so"));
  return t;
}

TEST(StackTree, SeveralValuesPerStack) {
  StackTree t = Heap();
  EXPECT_EQ(t.columns(), 4);
  EXPECT_EQ(t.Total(0), 7u);
  EXPECT_EQ(t.Total(1), 4596u);
  EXPECT_EQ(t.Total(2), 1u);
  EXPECT_EQ(t.Total(3), 1024u);
  EXPECT_EQ(t.unit(1), WeightUnit::kBytes);
  EXPECT_EQ(t.FindSampleType("inuse_objects"), 2);
  EXPECT_EQ(t.FindSampleType("1"), 1);  // an index, as -sample_index takes it
  EXPECT_EQ(t.FindSampleType(""), 3);   // pprof's default: the last
  EXPECT_EQ(t.FindSampleType("4"), -1);
  EXPECT_EQ(t.FindSampleType("cpu"), -1);
  // Merged with a tree of the same types, column by column.
  StackTree u = Heap();
  u.Merge(t);
  EXPECT_EQ(u.Total(1), 2 * 4596u);
  EXPECT_EQ(u.Total(3), 2 * 1024u);
  EXPECT_EQ(u.sample_types(), t.sample_types());
}

TEST(StackTree, OneValueChoosesAColumnBySampleType) {
  StackTree t = Heap();
  StackTree space = OneValue(t, "alloc_space");
  EXPECT_EQ(space.columns(), 1);
  EXPECT_FALSE(space.differential());
  EXPECT_EQ(space.sample_type(), (SampleType{"alloc_space", WeightUnit::kBytes}));
  EXPECT_EQ(space.Total(), 4596u);
  NodeId main = space.Child(StackTree::kRoot, space.names().Intern("main"));
  EXPECT_EQ(space.self(space.Child(main, space.names().Intern("alloc"))), 4096u);
  std::string_view module;
  ASSERT_TRUE(space.Module(space.names().Intern("alloc"), &module));
  EXPECT_EQ(module, "libfoo.so");
  // The default is the last (inuse_space); stacks that weigh 0 there have no self weight.
  StackTree inuse = OneValue(t);
  EXPECT_EQ(inuse.sample_type().name, "inuse_space");
  EXPECT_EQ(inuse.Total(), 1024u);
  int weighted = 0;
  inuse.ForEachStack([&](NodeId, std::span<const NodeId>) { ++weighted; });
  EXPECT_EQ(weighted, 1);
  EXPECT_EQ(OneValue(t, "0").Total(), 7u);
  EXPECT_THROW(OneValue(t, "cpu"), UsageError);
  // The views of one value take a one-value or differential tree as it is.
  StackTree storage;
  EXPECT_EQ(OneValueView(t, &storage).sample_type().name, "inuse_space");
  EXPECT_EQ(&OneValueView(t, &storage), &storage);
  StackTree one, d = StackTree::Differential();
  EXPECT_EQ(&OneValueView(one, &storage), &one);
  EXPECT_EQ(&OneValueView(d, &storage), &d);
}

TEST(StackTree, MergeCombinesSampleTypes) {
  auto tree = [](WeightUnit u) {
    StackTree t;
    t.set_unit(u);
    t.AddStack(Ids(t, {"a"}), 1);
    return t;
  };
  StackTree empty;
  empty.Merge(tree(WeightUnit::kEvents));  // an empty tree takes the other's
  EXPECT_EQ(empty.sample_type(), (SampleType{"events", WeightUnit::kEvents}));
  StackTree ns = tree(WeightUnit::kNanoseconds);
  ns.Merge(tree(WeightUnit::kUnspecified));  // the specified one stays
  EXPECT_EQ(ns.sample_type(), (SampleType{"cpu", WeightUnit::kNanoseconds}));
  ns.Merge(tree(WeightUnit::kEvents));  // they disagree: no unit
  EXPECT_EQ(ns.unit(), WeightUnit::kUnspecified);
  EXPECT_EQ(ns.Total(), 3u);
}

TEST(StackTree, SortedChildrenAreBytewise) {
  StackTree t;
  t.AddStack(Ids(t, {"r", "b"}), 1);
  t.AddStack(Ids(t, {"r", "B"}), 1);
  t.AddStack(Ids(t, {"r", "a::x"}), 1);
  t.AddStack(Ids(t, {"r", "a"}), 1);
  auto ch = t.SortedChildren();
  NodeId r = t.Child(StackTree::kRoot, t.names().Intern("r"));
  std::vector<std::string> names;
  for (uint32_t i = ch.first[r.index()]; i < ch.first[r.index() + 1]; ++i) {
    names.emplace_back(t.name(ch.child_index[i]));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"B", "a", "a::x", "b"}));
}

TEST(StackTree, ModulesSurviveMergeAndConflictsHaveNone) {
  StackTree a, b, out;
  a.AddStack(Ids(a, {"main", "f"}), 1);
  a.NoteModule(a.names().Intern("f"), a.names().Intern("libf.so"));
  a.NoteModule(a.names().Intern("main"), a.names().Intern("prog"));
  b.names().Intern("padding");  // different ids in b
  b.AddStack(Ids(b, {"main", "g"}), 1);
  b.NoteModule(b.names().Intern("main"), b.names().Intern("other"));
  b.NoteModule(b.names().Intern("g"), b.names().Intern("libg.so"));
  out.Merge(a);
  out.Merge(b);
  std::string_view m;
  ASSERT_TRUE(out.Module(out.names().Intern("f"), &m));
  EXPECT_EQ(m, "libf.so");
  ASSERT_TRUE(out.Module(out.names().Intern("g"), &m));
  EXPECT_EQ(m, "libg.so");
  EXPECT_FALSE(out.Module(out.names().Intern("main"), &m));  // prog and other: ambiguous
  EXPECT_FALSE(out.Module(out.names().Intern("nothing"), &m));
}

}  // namespace
}  // namespace pf
