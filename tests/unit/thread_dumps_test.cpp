// Thread dumps (eu-stack, gdb, jstack) and .cpuprofile JSON: the scripts' line rules where
// their regexes match in a way one would not guess, the sniffing, the JSON reader's
// strictness and bounds, and the .cpuprofile's tree, names and two sample types. The
// comparisons with FlameGraph's scripts on real dumps are in tests/e2e/thread_dumps_test.sh.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "formats/cpuprofile.h"
#include "formats/json.h"
#include "formats/sniff.h"
#include "formats/thread_dumps.h"
#include "stacks/folded.h"
#include "test_util.h"

namespace pf {
namespace {

std::string Data(const std::string& name) {
  return test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/data/thread_dumps/" + name);
}

// The folded text of one column of a tree (sorted, without a unit line).
std::string Folded(const StackTree& tree, int column = 0) {
  StackTree one = OneValue(tree, std::to_string(column));
  StringSink sink;
  BufferedWriter out(sink);
  WriteFolded(one, out);
  out.Flush();
  std::string s = sink.data();
  if (s.rfind("# pf-", 0) == 0) s = s.substr(s.find('\n') + 1);
  return s;
}

StackTree Dumps(ThreadDumpFormat f, std::string_view text, ReadReport* report = nullptr) {
  ReadReport local;
  auto in = MemoryInput(text, "dump");
  return ReadThreadDumps(f, *in, report ? report : &local);
}

TEST(ThreadDumps, RealDumpsAreSniffed) {
  EXPECT_EQ(SniffFormat(Data("eu-callpath.txt")), InputFormat::kEuStack);
  EXPECT_EQ(SniffFormat(Data("eu-unwind-v.txt")), InputFormat::kEuStack);
  EXPECT_EQ(SniffFormat(Data("eu-java.txt")), InputFormat::kEuStack);
  EXPECT_EQ(SniffFormat(Data("gdb-callpath.txt")), InputFormat::kGdb);
  EXPECT_EQ(SniffFormat(Data("gdb-nested_c.txt")), InputFormat::kGdb);
  EXPECT_EQ(SniffFormat(Data("gdb-java.txt")), InputFormat::kGdb);
  EXPECT_EQ(SniffFormat(Data("jstack-busy.txt")), InputFormat::kJstack);
  EXPECT_EQ(SniffFormat(Data("jcmd-thread-print.txt")), InputFormat::kJstack);
  EXPECT_EQ(SniffFormat(Data("busy.cpuprofile")), InputFormat::kCpuProfile);
  // gdb attached to a process of many threads says so first, a line per thread.
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "[New LWP " + std::to_string(1000 + i) + "]\n";
  EXPECT_EQ(SniffFormat(many + "\nThread 2 (Thread 0x7f (LWP 5) \"p\"):\n#0  0x1 in f ()\n"),
            InputFormat::kGdb);
  // Folded stacks that name such lines stay folded.
  EXPECT_EQ(SniffFormat("PID 5 - process;main 3\nTID 5:;x 1\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("Thread 1 (x):;main 2\n"), InputFormat::kFolded);
  EXPECT_EQ(SniffFormat("a;java.lang.Thread.State: RUNNABLE 3\n"), InputFormat::kFolded);
  // A JVM's log, then its kill -3 dump.
  EXPECT_EQ(SniffFormat("started in 5\nFull thread dump OpenJDK:\n\n\"main\" #1\n"
                        "   java.lang.Thread.State: RUNNABLE\n\tat A.f(A.java:1)\n\n"),
            InputFormat::kJstack);
}

TEST(ThreadDumps, EuStackFramesAsTheScript) {
  std::string text =
      "PID 7 - process\nTID 7:\n#0  0x00000000004011cf spin\n#1  0x00000000004011ee work_a\n"
      "#2  0x0000000000401290\n    /src/x.c:3\nTID 8:\n#0  0x0000000000401000 a - /bin/p\n"
      "#1  0x0000000000401001 b - /bin/p\n"
      // No spaces before the address: the number gives back its 0 ("#1" at 0x...).
      "PID 9 - process\nTID 9:\n#10x401 f\n#2  0xZZ g\n";  // "0xZZ": [unknown]
  EXPECT_EQ(Folded(Dumps(ThreadDumpFormat::kEuStack, text)),
            "[unknown];f 1\n[unknown];work_a;spin 1\nb - /bin/p;a - /bin/p 1\n");
}

TEST(ThreadDumps, GdbFieldsAsPerlBacktracksThem) {
  std::string text =
      "Thread 1 (Thread 0x7f (LWP 5) \"p\"):\n"
      "#0  0x0000000000401000 in spin (n=1) at x.c:3\n"
      "#1  work_a () at x.c:9\n"
      "#2  0x0000000000401200 in main ()\n"
      "\n"
      // Fewer than three blanks after the spaces: Perl gives the spaces back as empty
      // fields, so "#1  a b" and "#2  main ()" have $1 "" (no 0x): frames named "".
      "Thread 2 (Thread 0x7e (LWP 6) \"p\"):\n#0  0x1 in leaf ()\n#1  a b\n#2  main ()\n"
      "[Inferior 1 (process 5) detached]\n"
      // A thread line drops the stack before it (no line ended it).
      "Thread 3 (x):\n#0  0x1 in lost ()\nThread 4 (x):\n#0  0x2 in kept ()\n";
  EXPECT_EQ(Folded(Dumps(ThreadDumpFormat::kGdb, text)),
            ";;leaf 1\nkept 1\nmain;work_a;spin 1\n");
}

TEST(ThreadDumps, JstackKeepsRunnableThreadsUnderTheirNames) {
  std::string text =
      "2024-01-01 00:00:00\nFull thread dump OpenJDK:\n\n"
      "\"pool-1-thread-3\" #12 prio=5 runnable\n   java.lang.Thread.State: RUNNABLE\n"
      "\tat A.spin(A.java:4)\n\tat A.run(A.java:9)\n\n"
      "\"waiter\" #13 waiting\n   java.lang.Thread.State: WAITING (on object monitor)\n"
      "\tat java.lang.Object.wait(Native Method)\n\t- locked <0x1>\n\n"
      "\"C2 CompilerThread0\" #5 daemon\n   java.lang.Thread.State: RUNNABLE\n\n"
      "\"net\" #14\n   java.lang.Thread.State: RUNNABLE\n\tat sun.nio.ch.Net.socketRead0(x)\n\n"
      "\"idle-7\" #15\n   java.lang.Thread.State: RUNNABLE\n\n"
      // Not ended by a blank line: not counted, as the script.
      "\"last\"\n   java.lang.Thread.State: RUNNABLE\n\tat B.f(B.java:1)\n";
  ReadReport report;
  EXPECT_EQ(Folded(Dumps(ThreadDumpFormat::kJstack, text, &report)),
            "idle 1\npool-1-thread;A.run;A.spin 1\n");
  ASSERT_EQ(report.notices.size(), 1u);
  EXPECT_NE(report.notices[0].find("2 RUNNABLE threads of 5"), std::string::npos)
      << report.notices[0];
}

TEST(ThreadDumps, TextOfNoSuchFormatIsAnError) {
  for (ThreadDumpFormat f :
       {ThreadDumpFormat::kEuStack, ThreadDumpFormat::kGdb, ThreadDumpFormat::kJstack}) {
    EXPECT_THROW(Dumps(f, "hello\nworld\n"), Error);
  }
}

TEST(Json, StrictAndBounded) {
  auto parse = [](std::string_view text) {
    JsonReader json(text, "j");
    json.Skip();
    json.End();
  };
  EXPECT_NO_THROW(parse(R"({"a":[1,-2.5e3,"x\u00e9\ud83d\ude00",true,false,null,{}]})"));
  EXPECT_NO_THROW(parse("\xEF\xBB\xBF {} "));
  for (const char* bad :
       {"[1,]", "{\"a\":1,}", "01", "1.", "-", "\"a\tb\"", "\"\\x\"", "\"\\ud800\"",
        "\"\\udc00\"", "{\"a\" 1}", "[1 2]", "{} {}", "tru", "", "[", "{\"a\":1"}) {
    EXPECT_THROW(parse(bad), Error) << bad;
  }
  std::string deep(JsonReader::kMaxDepth, '[');
  deep += std::string(JsonReader::kMaxDepth, ']');
  EXPECT_NO_THROW(parse(deep));
  EXPECT_THROW(parse("[" + deep + "]"), Error);
  JsonReader json("{\"s\":\"a\\\"\\\\\\/\\n\",\"n\":12}", "j");
  json.BeginObject();
  std::string key;
  ASSERT_TRUE(json.NextMember(&key));
  EXPECT_EQ(json.String(), "a\"\\/\n");
  ASSERT_TRUE(json.NextMember(&key));
  EXPECT_EQ(json.Int(), 12);
  EXPECT_FALSE(json.NextMember(&key));
  try {
    JsonReader j2("{\n  \"a\": [1,,2]}", "in.json");
    j2.Skip();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "in.json:2");
    EXPECT_NE(std::string(e.what()).find("column 11"), std::string::npos) << e.what();
  }
}

StackTree CpuProfile(std::string_view text) {
  auto in = MemoryInput(text, "p.cpuprofile");
  ReadReport report;
  return ReadCpuProfile(*in, &report);
}

TEST(CpuProfile, TreeNamesAndBothValues) {
  const char* text = R"js({"nodes":[
    {"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2,3]},
    {"id":2,"callFrame":{"functionName":"(program)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":1},
    {"id":3,"callFrame":{"functionName":"","scriptId":"5","url":"file:///a.js","lineNumber":0,"columnNumber":0},"hitCount":0,"children":[4]},
    {"id":4,"callFrame":{"functionName":"spin","scriptId":"5","url":"file:///a.js","lineNumber":9,"columnNumber":13},"hitCount":2}],
   "startTime":1000,"endTime":1100,"samples":[4,2,4],"timeDeltas":[10,30,20]})js";
  StackTree tree = CpuProfile(text);
  ASSERT_EQ(tree.columns(), 2);
  EXPECT_EQ(tree.sample_type(0).name, "samples");
  EXPECT_EQ(tree.sample_type(1).name, "wall");
  EXPECT_EQ(tree.unit(1), WeightUnit::kNanoseconds);
  EXPECT_EQ(Folded(tree, 0),
            "(anonymous) file:///a.js:1:1;spin file:///a.js:10:14 2\n(program) 1\n");
  // Sample times 1010, 1040, 1060; each weighs the time to the next, the last to endTime.
  EXPECT_EQ(Folded(tree, 1),
            "(anonymous) file:///a.js:1:1;spin file:///a.js:10:14 70000\n(program) 20000\n");
  // The default view (pprof's: the last column) is the wall time.
  EXPECT_EQ(OneValue(tree).sample_type().name, "wall");
}

TEST(CpuProfile, WithoutSamplesTheSpanIsSpreadOverTheHits) {
  StackTree tree = CpuProfile(R"({"nodes":[{"id":1,"callFrame":{"functionName":"a","url":""},
    "hitCount":3,"children":[2]},{"id":2,"callFrame":{"functionName":"b","url":""},"hitCount":1}],
    "startTime":0,"endTime":8})");
  EXPECT_EQ(Folded(tree, 1), "a 6000\na;b 2000\n");
}

TEST(CpuProfile, NamesStayOneFrameOfOneLine) {
  // A computed method name with ';', a URL with ';' and a name with a newline: each one
  // frame, on one folded line.
  StackTree tree = CpuProfile(R"js({"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":""},
    "children":[2]},{"id":2,"callFrame":{"functionName":"a;b c","url":"file:///x;y.js",
    "lineNumber":0,"columnNumber":0},"hitCount":3,"children":[3]},
    {"id":3,"callFrame":{"functionName":"q\n\"w\u0000","url":""},"hitCount":1}]})js");
  EXPECT_EQ(Folded(tree, 0), "a:b c file:///x:y.js:1:1 3\na:b c file:///x:y.js:1:1;q \"w  1\n");
}

TEST(CpuProfile, NodesMayNameTheirParentInstead) {
  StackTree tree = CpuProfile(R"js({"nodes":[{"id":1,"callFrame":{"functionName":"(root)","url":""}},
    {"id":2,"parent":1,"callFrame":{"functionName":"a","url":""},"hitCount":2},
    {"id":3,"parent":2,"callFrame":{"functionName":"b","url":""},"hitCount":1}]})js");
  EXPECT_EQ(Folded(tree, 0), "a 2\na;b 1\n");
  EXPECT_THROW(CpuProfile(R"({"nodes":[{"id":2,"parent":9,"callFrame":{}}]})"), Error);
}

TEST(CpuProfile, NodesThatAreNoTreeAreErrors) {
  auto node = [](int id, const char* children) {
    return std::string("{\"id\":") + std::to_string(id) +
           ",\"callFrame\":{\"functionName\":\"f\",\"url\":\"\"},\"hitCount\":1,\"children\":[" +
           children + "]}";
  };
  for (std::string nodes : {node(1, "1"), node(1, "2") + "," + node(2, "1"),
                            node(1, "2") + "," + node(2, "") + "," + node(3, "2"),
                            node(1, "9"), node(1, "") + "," + node(1, ""), std::string()}) {
    EXPECT_THROW(CpuProfile("{\"nodes\":[" + nodes + "]}"), Error) << nodes;
  }
  EXPECT_THROW(CpuProfile("{\"samples\":[]}"), Error);
  EXPECT_THROW(CpuProfile("[1]"), Error);
}

TEST(CpuProfile, OnlyCpuProfilesAreSniffedAsSuch) {
  EXPECT_TRUE(LooksLikeCpuProfile(R"({"nodes":[{"id":1,"callFrame":{)"));  // cut short
  EXPECT_TRUE(LooksLikeCpuProfile(R"({"startTime":1,"nodes":[])"));
  EXPECT_FALSE(LooksLikeCpuProfile(R"({"nodes":[{"id":1}],"edges":[]})"));
  EXPECT_FALSE(LooksLikeCpuProfile(R"({"traceEvents":[]})"));
  EXPECT_FALSE(LooksLikeCpuProfile("[{\"nodes\":1}]"));
  EXPECT_FALSE(LooksLikeCpuProfile("nodes;samples 3\n"));
}

}  // namespace
}  // namespace pf
