// The tools' command lines (app/*_command.h): each tool's options read into its options
// struct by the library, with the usage errors the tool reports.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "app/collapse_command.h"
#include "app/diff_command.h"
#include "app/dot_command.h"
#include "app/flamegraph_command.h"
#include "app/record_command.h"
#include "app/script_command.h"
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

TEST(Command, CollapseOptions) {
  CollapseCommand c;
  EXPECT_EQ(RunTool(CollapseTool(),
                {"--all", "--weight=samples", "--pids=1,2", "--tids", "3", "-n", "2",
                 "--no-inline", "-f", "folded", "a.txt", "b.txt"},
                [&](cli::Context& ctx) { c = ParseCollapseOptions(ctx); }),
            0);
  EXPECT_EQ(c.inputs, (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_TRUE(c.options.perf.annotate_kernel && c.options.perf.annotate_jit);
  EXPECT_TRUE(c.options.perf.weight_samples);
  EXPECT_FALSE(c.options.perf.inline_frames);
  EXPECT_EQ(c.options.select.pids, "1,2");
  EXPECT_EQ(c.options.select.tids, "3");
  EXPECT_STREQ(c.options.select.pid_option, "--pids");
  EXPECT_EQ(c.options.threads, 2u);
  EXPECT_EQ(c.options.format, "folded");
  auto parse = [](cli::Context& ctx) { ParseCollapseOptions(ctx); };
  EXPECT_EQ(RunTool(CollapseTool(), {"--weight=x"}, parse), 2);
  EXPECT_EQ(RunTool(CollapseTool(), {"--inline", "--no-inline"}, parse), 2);
  EXPECT_EQ(RunTool(CollapseTool(), {"-j", "2", "-n", "2"}, parse), 2);
}

TEST(Command, CollapseOutputFormats) {
  auto parse = [](std::vector<std::string> args) {
    CollapseCommand c;
    args.push_back("in.txt");
    int rc = RunTool(CollapseTool(), args,
                     [&](cli::Context& ctx) { c = ParseCollapseOptions(ctx); });
    EXPECT_EQ(rc, 0);
    return c;
  };
  CollapseCommand c = parse({});
  EXPECT_EQ(c.format, "folded");
  EXPECT_FALSE(c.options.perf.note_modules);
  c = parse({"--format=pprof"});
  EXPECT_EQ(c.format, "pprof");
  EXPECT_TRUE(c.gzip);
  EXPECT_TRUE(c.options.perf.note_modules);  // pprof's mappings
  EXPECT_EQ(c.options.format, "auto");
  c = parse({"-o", "cpu.pb.gz"});
  EXPECT_EQ(c.format, "pprof");
  EXPECT_TRUE(c.gzip);
  c = parse({"-o", "out/CPU.pb"});
  EXPECT_EQ(c.format, "pprof");
  EXPECT_FALSE(c.gzip);
  c = parse({"--format=callgrind", "-f", "pprof"});  // pprof in, callgrind out
  EXPECT_EQ(c.format, "callgrind");
  EXPECT_EQ(c.options.format, "pprof");
  EXPECT_EQ(parse({"-o", "run/callgrind.out.1234"}).format, "callgrind");
  EXPECT_EQ(parse({"-o", "run.callgrind"}).format, "callgrind");
  EXPECT_EQ(parse({"-o", "callgrind.out.pf", "--format=pprof"}).format, "pprof");
  // Input format names keep naming the input; folded names both.
  c = parse({"--format=perf-script", "-o", "cpu.pb.gz"});
  EXPECT_EQ(c.format, "pprof");
  EXPECT_EQ(c.options.format, "perf-script");
  c = parse({"--format=folded", "-o", "cpu.pb.gz"});
  EXPECT_EQ(c.format, "folded");
  EXPECT_EQ(c.options.format, "folded");
  EXPECT_EQ(parse({"-o", "cpu.folded.gz"}).format, "folded");
  auto status = [](std::vector<std::string> args) {
    return RunTool(CollapseTool(), args, [](cli::Context& ctx) { ParseCollapseOptions(ctx); });
  };
  EXPECT_EQ(status({"--format=svg", "in.txt"}), 2);
  EXPECT_EQ(status({"-o", "cpu.svg", "in.txt"}), 2);  // an image's name: not folded text
}

TEST(Command, ScriptOptions) {
  ScriptCommand c;
  EXPECT_EQ(RunTool(ScriptTool(),
                {"-c", "a,b", "--pid", "7", "--reltime", "--max-stack=5", "--unwinder=libdw",
                 "--no-inline", "rec.pfs"},
                [&](cli::Context& ctx) { c = ParseScriptOptions(ctx); }),
            0);
  EXPECT_EQ(c.recording, "rec.pfs");
  EXPECT_EQ(c.options.select.comms, "a,b");
  EXPECT_EQ(c.options.select.pids, "7");
  EXPECT_STREQ(c.options.select.pid_option, "--pid");
  EXPECT_TRUE(c.options.select.reltime);
  EXPECT_EQ(c.options.max_stack, 5u);
  EXPECT_EQ(c.options.unwind_method, UnwindMethod::kLibdw);
  EXPECT_FALSE(c.options.inline_frames);
  auto parse = [](cli::Context& ctx) { ParseScriptOptions(ctx); };
  EXPECT_EQ(RunTool(ScriptTool(), {"--unwinder=x"}, parse), 2);
  EXPECT_EQ(RunTool(ScriptTool(), {"--max-stack=-1"}, parse), 2);
  EXPECT_EQ(RunTool(ScriptTool(), {"-i", "a", "b"}, parse), 2);
}

TEST(Command, FlamegraphAndDotFormats) {
  FlamegraphCommand f;
  EXPECT_EQ(RunTool(FlamegraphTool(), {"-o", "out.PDF", "--format", "", "--minwidth=1%"},
                [&](cli::Context& ctx) { f = ParseFlamegraphOptions(ctx); }),
            0);
  EXPECT_EQ(f.format, "pdf");  // an empty --format leaves the choice to the suffix
  EXPECT_TRUE(f.options.minwidth_percent);
  DotCommand d;
  EXPECT_EQ(RunTool(DotTool(), {"--format=perf", "-n", "2", "--weight=samples", "x.txt"},
                [&](cli::Context& ctx) { d = ParseDotOptions(ctx); }),
            0);
  EXPECT_EQ(d.format, "dot");  // gprof2dot's --format=perf names the input
  EXPECT_EQ(d.read.format, "perf-script");
  EXPECT_EQ(d.graph.node_thres, 2);
  EXPECT_TRUE(d.read.perf.weight_samples);
  auto dot = [](cli::Context& ctx) { ParseDotOptions(ctx); };
  EXPECT_EQ(RunTool(DotTool(), {"--format=gif", "x"}, dot), 2);
  EXPECT_EQ(RunTool(DotTool(), {"-e", "101", "x"}, dot), 2);
  EXPECT_EQ(RunTool(DotTool(), {"--total=callratios", "x"}, dot), 2);
}

TEST(Command, DiffOptions) {
  DiffCommand d;
  EXPECT_EQ(RunTool(DiffTool(), {"--threshold=150", "--top=3", "a", "b"},
                [&](cli::Context& ctx) { d = ParseDiffOptions(ctx); }),
            0);
  EXPECT_EQ(d.before, "a");
  EXPECT_EQ(d.after, "b");
  EXPECT_EQ(d.options.threshold, 150);
  EXPECT_EQ(d.options.limit, 3u);
  EXPECT_EQ(RunTool(DiffTool(), {"a"}, [](cli::Context& ctx) { ParseDiffOptions(ctx); }), 2);
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
