// pf-record's command line (app/record_command.h): its options parsed into the recorder's.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "app/record_command.h"
#include "base/error.h"

namespace pf {
namespace {

/// Runs `tool` on `args` (stdin is never a terminal under ctest); returns the exit status.
int RunTool(cli::Tool tool, std::vector<std::string> args,
            const std::function<void(cli::Context&)>& body) {
  args.insert(args.begin(), "pf-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  int rc = tool.Run(static_cast<int>(argv.size()), argv.data(), body);
  testing::internal::GetCapturedStderr();
  return rc;
}

TEST(Command, RecordOptions) {
  RecordCommand r;
  EXPECT_EQ(RunTool(RecordTool(), {"-o", "-", "-p", "5,6", "-c", "1000", "--", "true"},
                [&](cli::Context& ctx) { r = ParseRecordOptions(ctx); }),
            0);
  EXPECT_EQ(r.options.pids, (std::vector<int>{5, 6}));
  EXPECT_EQ(r.options.period, 1000u);
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"true"}));
  EXPECT_EQ(r.options.argv.size(), 9u);
  auto record = [](cli::Context& ctx) { ParseRecordOptions(ctx); };
  EXPECT_EQ(RunTool(RecordTool(), {"-o", "-", "-p", "x"}, record), 2);
  EXPECT_EQ(RunTool(RecordTool(), {"-o", "-", "-c", "5", "-F", "9", "-p", "1"}, record), 2);
}

}  // namespace
}  // namespace pf
