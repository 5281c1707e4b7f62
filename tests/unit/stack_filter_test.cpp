#include "stacks/stack_filter.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "test_util.h"

namespace pf {
namespace {

std::string Filtered(const std::string& folded, StackFilterOptions o) {
  CollapseOptions opt;
  opt.filter = std::move(o);
  return test::Collapse(folded, opt);
}

const char* kIn =
    "app;main;work_a;spin 30\n"
    "app;main;work_b;spin 10\n"
    "app;main;work_b 5\n"
    "swapper;idle 50\n";

TEST(StackFilter, IncludeExclude) {
  EXPECT_EQ(Filtered(kIn, {.include = {"work_b"}}), "app;main;work_b 5\napp;main;work_b;spin 10\n");
  EXPECT_EQ(Filtered(kIn, {.include = {"^swapper", "work_a"}}),
            "app;main;work_a;spin 30\nswapper;idle 50\n");
  EXPECT_EQ(Filtered(kIn, {.exclude = {"^swapper;"}}),
            "app;main;work_a;spin 30\napp;main;work_b 5\napp;main;work_b;spin 10\n");
  EXPECT_EQ(Filtered(kIn, {.include = {"main"}, .exclude = {"spin$"}}), "app;main;work_b 5\n");
}

TEST(StackFilter, HideGivesWeightToTheCaller) {
  EXPECT_EQ(Filtered(kIn, {.hide = {"^spin$"}}),
            "app;main;work_a 30\napp;main;work_b 15\nswapper;idle 50\n");
  EXPECT_EQ(Filtered(kIn, {.hide = {"^main$", "^work"}}), "app 5\napp;spin 40\nswapper;idle 50\n");
  // Include sees the stack before hiding.
  EXPECT_EQ(Filtered(kIn, {.include = {"work_a"}, .hide = {"work_a"}}), "app;main;spin 30\n");
  // Everything hidden: the stack goes.
  EXPECT_EQ(Filtered("a;b 1\nc 2\n", {.hide = {"^[ab]$"}}), "c 2\n");
}

TEST(PatternList, MatchesAnywhereAndNamesTheOption) {
  PatternList p({"^std::", "alloc$"}, "hide");
  EXPECT_FALSE(p.empty());
  EXPECT_TRUE(p.Matches("std::vector"));
  EXPECT_TRUE(p.Matches("my_alloc"));
  EXPECT_FALSE(p.Matches("x::std::y"));
  EXPECT_TRUE(PatternList({}, "focus").empty());
  try {
    PatternList bad({"ok", "(x"}, "focus");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--focus: bad regular expression '(x': ", 0), 0u)
        << e.what();
  }
}

TEST(StackFilter, BadPatternIsAUsageError) {
  EXPECT_THROW(StackFilter({.include = {"("}}), UsageError);
  EXPECT_THROW(Filtered(kIn, {.hide = {"[z-a]"}}), UsageError);
}

}  // namespace
}  // namespace pf
