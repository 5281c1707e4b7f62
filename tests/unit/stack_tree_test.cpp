#include "stacks/stack_tree.h"

#include <gtest/gtest.h>

namespace pf {
namespace {

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

TEST(StackTree, WeightsSaturate) {
  StackTree t;
  t.AddStack(Ids(t, {"a"}), UINT64_MAX - 1);
  t.AddStack(Ids(t, {"a"}), 5);
  EXPECT_EQ(t.self(1), UINT64_MAX);
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

TEST(StackTree, TwoColumns) {
  StackTree t(2);
  NodeId leaf = t.AddStack(Ids(t, {"a", "b"}), 3, 0);
  t.AddSelf(leaf, 7, 1);
  EXPECT_EQ(t.Total(0), 3u);
  EXPECT_EQ(t.Total(1), 7u);
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
  for (uint32_t i = ch.first[r]; i < ch.first[r + 1]; ++i) {
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
