#include "cli/cli.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace pf::cli {
namespace {

int RunWith(std::vector<std::string> args, const std::function<void(Context&)>& body) {
  Tool tool({"pf-test", "[FILE...]", "Purpose.", "  pf-test x\n"});
  tool.AddGroup("Test").add_options()("flag", "a flag");
  std::vector<char*> argv;
  args.insert(args.begin(), "pf-test");
  for (auto& a : args) argv.push_back(a.data());
  return tool.Run(static_cast<int>(argv.size()), argv.data(), body);
}

TEST(Cli, ExitCodes) {
  bool ran = false;
  EXPECT_EQ(RunWith({"--flag", "a", "b"}, [&](Context& c) {
              ran = true;
              EXPECT_EQ(c.inputs, (std::vector<std::string>{"a", "b"}));
              EXPECT_EQ(c.output, "-");
              EXPECT_TRUE(c.vm.count("flag"));
            }),
            0);
  EXPECT_TRUE(ran);
  EXPECT_EQ(RunWith({"--nope"}, [](Context&) { FAIL(); }), 2);
  EXPECT_EQ(RunWith({"-o"}, [](Context&) { FAIL(); }), 2);
  EXPECT_EQ(RunWith({}, [](Context&) { throw UsageError("bad"); }), 2);
  EXPECT_EQ(RunWith({}, [](Context&) { throw Error("f.txt:3", "broken"); }), 1);
  EXPECT_EQ(RunWith({}, [](Context&) { throw PipeClosed(); }), 0);
  EXPECT_EQ(RunWith({"-o", "x", "-q"}, [](Context& c) {
              EXPECT_EQ(c.output, "x");
              EXPECT_TRUE(c.quiet);
            }),
            0);
}

TEST(Cli, SplitList) {
  EXPECT_EQ(SplitList({"a,b", "c"}), (std::vector<std::string>{"a", "b", "c"}));
}

}  // namespace
}  // namespace pf::cli
