// pf-dot's names: long C++ labels are elided in the middle (never the function's own name) and
// stay distinct; operator() and lambda names survive tidying and --strip; --focus and
// --show-from that match nothing are errors, as -z and -l are.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "callgraph/call_graph.h"
#include "callgraph/names.h"
#include "io/output.h"
#include "stacks/stack_tree.h"
#include "test_util.h"

namespace pf {
namespace {

// The class std::map<std::string, std::vector<double>> is built on (as perf script prints it).
const std::string kTree =
    "std::_Rb_tree<std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >, std::pair<std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> > const, std::vector<double, "
    "std::allocator<double> > >, std::_Select1st<std::pair<std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> > const, std::vector<double, "
    "std::allocator<double> > > >, std::less<std::__cxx11::basic_string<char, "
    "std::char_traits<char>, std::allocator<char> > >, "
    "std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> > const, std::vector<double, std::allocator<double> > > > >";

TEST(DotNames, ShortNamesAreKept) {
  EXPECT_EQ(ElideName("std::vector<int>::push_back", 200), "std::vector<int>::push_back");
  EXPECT_EQ(ElideName("", 10), "");
}

TEST(DotNames, TemplateArgumentsOfTheScopeGoFirst) {
  EXPECT_EQ(ElideName(kTree + "::_M_erase", 200), "std::_Rb_tree<...>::_M_erase");
  EXPECT_EQ(ElideName(kTree + "::_M_get_insert_hint_unique_pos", 200),
            "std::_Rb_tree<...>::_M_get_insert_hint_unique_pos");
  // The function's own template arguments only when the scope's are not enough.
  std::string emplace = kTree +
                        "::_M_emplace_hint_unique<std::piecewise_construct_t const&, "
                        "std::tuple<std::__cxx11::basic_string<char, std::char_traits<char>, "
                        "std::allocator<char> >&&>, std::tuple<> >";
  EXPECT_EQ(ElideName(emplace, 200),
            "std::_Rb_tree<...>::_M_emplace_hint_unique<std::piecewise_construct_t const&, "
            "std::tuple<std::__cxx11::basic_string<char, std::char_traits<char>, "
            "std::allocator<char> >&&>, std::tuple<> >");
  EXPECT_EQ(ElideName(emplace, 60), "std::_Rb_tree<...>::_M_emplace_hint_unique<...>");
  // The longest group first: a short one survives when eliding the long one is enough.
  std::string two = "ns::A<int>::B<" + std::string(300, 'x') + ">::f";
  EXPECT_EQ(ElideName(two, 40), "ns::A<int>::B<...>::f");
}

TEST(DotNames, ThenTheNamespaces) {
  std::string name = "alpha_namespace::beta_namespace::gamma_namespace::Klass<int>::method";
  // ("<int>" stays: "<...>" would be no shorter.)
  EXPECT_EQ(ElideName(name, 50), "...::gamma_namespace::Klass<int>::method");
  EXPECT_EQ(ElideName(name, 30), "...::Klass<int>::method");
  EXPECT_EQ(ElideName(name, 12), "...::method");
}

TEST(DotNames, TheOwnNameIsCutOnlyWhenItAloneIsTooLong) {
  std::string own = "f" + std::string(300, 'y') + "z";
  std::string got = ElideName("ns::" + own, 100);
  EXPECT_LE(got.size(), 100u);
  EXPECT_NE(got.find("..."), std::string::npos);
  EXPECT_EQ(got.back(), 'z');
}

TEST(DotNames, OperatorsAndLambdasAreNotBrackets) {
  std::string scope = "ns::Printer<" + std::string(200, 'T') + ">";
  EXPECT_EQ(ElideName(scope + "::operator<<", 40), "ns::Printer<...>::operator<<");
  EXPECT_EQ(ElideName(scope + "::operator()", 40), "ns::Printer<...>::operator()");
  EXPECT_EQ(ElideName(scope + "::operator->", 40), "ns::Printer<...>::operator->");
  EXPECT_EQ(ElideName(scope + "::run()::{lambda(int)#1}::operator()", 60),
            "ns::Printer<...>::run()::{lambda(int)#1}::operator()");
}

// Any bytes, balanced or not: never longer than asked, unchanged when short enough.
TEST(DotNames, ArbitraryNamesStayWithinTheLimit) {
  std::mt19937 rng(26);
  const std::string alphabet = "ab:<>(){}[] ,operator\xc3\xa9";
  for (int i = 0; i < 20000; ++i) {
    std::string name;
    for (int n = rng() % 120; n > 0; --n) name += alphabet[rng() % alphabet.size()];
    size_t max = 3 + rng() % 60;
    std::string got = ElideName(name, max);
    if (name.size() <= max) {
      ASSERT_EQ(got, name);
    } else {
      ASSERT_LE(got.size(), max) << name;
    }
  }
}

TEST(DotNames, DistinctLabelsStayDistinct) {
  std::string a = "Holder<" + std::string(300, 'a') + ">::get";
  std::string b = "Holder<" + std::string(299, 'a') + "b>::get";
  // Equal when elided to 50; elided less, they differ.
  std::vector<std::string> got = DistinctLabels({a, b}, {"", ""}, 50);
  EXPECT_NE(got[0], got[1]);
  EXPECT_EQ(got[0].find(" ["), std::string::npos) << got[0];
  // Equal whatever the budget (here: --strip made them so): numbered.
  got = DistinctLabels({"f", "f", "g"}, {"", "", ""}, 50);
  EXPECT_EQ(got, (std::vector<std::string>{"f [1/2]", "f [2/2]", "g"}));
  // Different modules tell them apart already.
  got = DistinctLabels({"f", "f"}, {"liba.so", "libb.so"}, 50);
  EXPECT_EQ(got, (std::vector<std::string>{"f", "f"}));
}

TEST(DotNames, StripKeepsLambdasAndOperators) {
  EXPECT_EQ(StripFunctionName("main::{lambda(int)#1}::operator()(int) const"),
            "main::{lambda(int)#1}::operator()");
  EXPECT_EQ(
      StripFunctionName("std::_Function_handler<int (int), main::{lambda(int)#2}>::_M_invoke"),
      "std::_Function_handler::_M_invoke");
  EXPECT_NE(StripFunctionName("app::run()::{lambda(int)#1}::operator()"),
            StripFunctionName("app::run()::{lambda(int, int)#2}::operator()"));
}

StackTree Tree(const std::vector<std::pair<std::vector<std::string>, uint64_t>>& stacks) {
  StackTree tree;
  for (const auto& [frames, w] : stacks) {
    std::vector<StrId> ids;
    for (const std::string& f : frames) ids.push_back(tree.names().Intern(f));
    tree.AddStack(ids, w);
  }
  return tree;
}

std::string Dot(const StackTree& tree, const CallGraphOptions& o) {
  StringSink sink;
  BufferedWriter w(sink);
  WriteDot(BuildCallGraph(tree, o), o, w);
  w.Flush();
  return sink.data();
}

TEST(DotNames, TwoMethodsOfALongClassGetTwoLabels) {
  StackTree tree = Tree({{{"main", kTree + "::_M_erase"}, 3},
                         {{"main", kTree + "::_M_get_insert_hint_unique_pos"}, 2}});
  CallGraphOptions o;
  o.node_thres = o.edge_thres = 0;
  std::string dot = Dot(tree, o);
  EXPECT_NE(dot.find("label=\"std::_Rb_tree<...>::_M_erase\\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"std::_Rb_tree<...>::_M_get_insert_hint_unique_pos\\n"),
            std::string::npos)
      << dot;
  // With --strip, overloads that strip alike are numbered.
  StackTree overloads = Tree({{{"main", "f(int)"}, 3}, {{"main", "f(char)"}, 2}});
  o.strip = true;
  dot = Dot(overloads, o);
  EXPECT_NE(dot.find("label=\"f [1/2]\\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"f [2/2]\\n"), std::string::npos) << dot;
}

TEST(DotNames, FocusOrShowFromMatchingNothingIsAnError) {
  StackTree tree = Tree({{{"main", "work"}, 3}});
  CallGraphOptions o;
  o.focus = {"NOMATCH"};
  try {
    BuildCallGraph(tree, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--focus: no function matches 'NOMATCH'"),
              std::string::npos)
        << e.what();
  }
  o.focus = {"NOMATCH", "wor"};  // one of them matches: fine
  EXPECT_NO_THROW(BuildCallGraph(tree, o));
  o.focus = {};
  o.show_from = {"^nothing$"};
  EXPECT_THROW(BuildCallGraph(tree, o), Error);
  // A focus that matches only frames --ignore drops is not "no match".
  o.show_from = {};
  o.focus = {"work"};
  o.ignore = {"main"};
  EXPECT_NO_THROW(BuildCallGraph(tree, o));
}

// pf-dot reads perf script text without Perl's cut at '(' for operator() and lambdas.
TEST(DotNames, PerfScriptKeepsOperatorCallAndLambdas) {
  const char* text =
      "prog 100 1.000000: 1 cpu-clock:\n"
      "\t 401000 main::{lambda(int)#1}::operator()+0x1 (/bin/prog)\n"
      "\t 401100 Functor::operator()+0x2 (/bin/prog)\n"
      "\t 401200 main+0x3 (/bin/prog)\n\n";
  CollapseOptions dot;
  dot.perf.keep_cxx_names = true;
  EXPECT_EQ(test::Collapse(text, dot),
            "prog;main;Functor::operator();main::{lambda(int)#1}::operator() 1\n");
  // pf-collapse stays byte-compatible with stackcollapse-perf.pl.
  EXPECT_EQ(test::Collapse(text), "prog;main;Functor::operator;main::{lambda 1\n");
}

}  // namespace
}  // namespace pf
