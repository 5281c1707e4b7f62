#include "formats/perf_script.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <random>
#include <set>

#include "base/error.h"
#include "formats/perf_script_lines.h"
#include "test_util.h"

namespace pf {
namespace {

// The Perl script's regular expressions, written for re2 with Perl's \s (which has \v).
#define S "[\\t\\n\\v\\f\\r ]"
#define NS "[^\\t\\n\\v\\f\\r ]"
const re2::RE2 kHead("^(" NS ".+?)" S "+(\\d+)/*(\\d+)*" S "+");
const re2::RE2 kTail(":" S "*(\\d+)*" S "+(" NS "+):" S "*$");
const re2::RE2 kStack("^" S "*(\\w+)" S "*(.+) \\((.*)\\)");

std::string RandomLine(std::mt19937& rng, const std::string& alphabet, int max_len) {
  int n = rng() % (max_len + 1);
  std::string s;
  for (int i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
  return s;
}

std::string Str(const re2::StringPiece& p) { return p.data() ? std::string(p.data(), p.size()) : ""; }

// The hand-written scanners must agree with the regular expressions on every line.
TEST(PerfScriptRegex, EventHeadAgreesWithTheRegex) {
  std::mt19937 rng(1);
  for (int i = 0; i < 300000; ++i) {
    std::string l = RandomLine(rng, "ab 1 2/\t\v:.0", 18);
    re2::StringPiece c, p, t;
    bool want = re2::RE2::PartialMatch(l, kHead, &c, &p, &t);
    EventHead h;
    bool got = MatchEventHead(l, &h);
    ASSERT_EQ(got, want) << "[" << l << "]";
    if (!got) continue;
    ASSERT_EQ(std::string(h.comm), Str(c)) << "[" << l << "]";
    ASSERT_EQ(std::string(h.pid), Str(p)) << "[" << l << "]";
    ASSERT_EQ(std::string(h.tid), Str(t)) << "[" << l << "]";
  }
}

TEST(PerfScriptRegex, EventTailAgreesWithTheRegex) {
  std::mt19937 rng(2);
  for (int i = 0; i < 300000; ++i) {
    std::string l = RandomLine(rng, "ab 1 2::\t:x ", 16);
    re2::StringPiece p, e;
    bool want = re2::RE2::PartialMatch(l, kTail, &p, &e);
    std::string_view period, event;
    bool got = MatchEventTail(l, &period, &event);
    ASSERT_EQ(got, want) << "[" << l << "]";
    if (!got) continue;
    ASSERT_EQ(std::string(period), Str(p)) << "[" << l << "]";
    ASSERT_EQ(std::string(event), Str(e)) << "[" << l << "]";
  }
}

// A period is summed digit by digit up to 19 digits, which cannot overflow; past that it is
// parsed with the overflow checked, a number over 64 bits giving UINT64_MAX.
TEST(PerfScriptRegex, PeriodsAreExactUpTo64BitsAndSaturateAbove) {
  EXPECT_EQ(script_lines::ParsePeriod("1001001"), 1001001u);
  EXPECT_EQ(script_lines::ParsePeriod("0"), 0u);
  EXPECT_EQ(script_lines::ParsePeriod("9999999999999999999"), 9999999999999999999u);
  EXPECT_EQ(script_lines::ParsePeriod("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(script_lines::ParsePeriod("18446744073709551614"), UINT64_MAX - 1);
  EXPECT_EQ(script_lines::ParsePeriod("18446744073709551616"), UINT64_MAX);
  EXPECT_EQ(script_lines::ParsePeriod("99999999999999999999999"), UINT64_MAX);
  EXPECT_EQ(script_lines::ParsePeriod("000000000000000000000012"), 12u);
}

// MatchStackLine and the regular expression agree on `l`.
void ExpectStackLineAsTheRegex(const std::string& l) {
  re2::StringPiece pc, f, d;
  bool want = re2::RE2::PartialMatch(l, kStack, &pc, &f, &d);
  StackLine sl;
  bool got = MatchStackLine(l, &sl);
  ASSERT_EQ(got, want) << "[" << l << "]";
  if (!got) return;
  ASSERT_EQ(std::string(sl.pc), Str(pc)) << "[" << l << "]";
  ASSERT_EQ(std::string(sl.func), Str(f)) << "[" << l << "]";
  ASSERT_EQ(std::string(sl.dso), Str(d)) << "[" << l << "]";
}

TEST(PerfScriptRegex, StackLineAgreesWithTheRegex) {
  std::mt19937 rng(3);
  for (int i = 0; i < 300000; ++i) {
    ASSERT_NO_FATAL_FAILURE(ExpectStackLineAsTheRegex(RandomLine(rng, "a1 ( )\t_x(", 16)));
  }
}

// Longer lines over the bytes at the edges of \w and \s (the scanners step 8 bytes at a time
// over an indent and an address): the same agreement.
TEST(PerfScriptRegex, StackLineAgreesWithTheRegexAtEveryClassEdge) {
  std::mt19937 rng(5);
  const std::string alphabet = "/09:@AZ[`_az{ \t\v()f+x\x7f";  // (re2 reads UTF-8: no high bytes)
  for (int i = 0; i < 200000; ++i) {
    std::string l = RandomLine(rng, alphabet, 40);
    if (i % 2) l = std::string(rng() % 20, ' ') + std::string(rng() % 20, 'a') + l;
    ASSERT_NO_FATAL_FAILURE(ExpectStackLineAsTheRegex(l));
  }
  // A byte from 0x80 up ends the address, as Perl's \w on bytes.
  StackLine sl;
  ASSERT_TRUE(MatchStackLine("\t   0123456789abcdef01234\x80\xff f (x)", &sl));
  EXPECT_EQ(sl.pc, "0123456789abcdef01234");
  EXPECT_EQ(sl.func, "\x80\xff f");
  EXPECT_EQ(sl.dso, "x");
  ASSERT_TRUE(MatchStackLine("\t   0123_Zz\xc3\xa9" "abcdef0123456789 f (x)", &sl));
  EXPECT_EQ(sl.pc, "0123_Zz");
}

// Long indents and long tails of parentheses and blanks (the indent and the " (" before the
// dso are found 16 bytes at a time): the same agreement, at every length around a step.
TEST(PerfScriptRegex, StackLineAgreesWithTheRegexOverLongIndentsAndTails) {
  std::mt19937 rng(6);
  for (int i = 0; i < 200000; ++i) {
    std::string indent;
    for (size_t n = rng() % 40; n > 0; --n) indent += " \t \v"[rng() % 4];
    std::string l = indent + RandomLine(rng, "ab1_", 20) + RandomLine(rng, " (a)\t", 70);
    ASSERT_NO_FATAL_FAILURE(ExpectStackLineAsTheRegex(l));
  }
}

TEST(PerfScriptRegex, StripOffsetAgreesWithTheRegex) {
  const re2::RE2 offset("\\+0x[\\da-f]+$");
  std::mt19937 rng(4);
  for (int i = 0; i < 300000; ++i) {
    std::string l = RandomLine(rng, "+0xa1Fg(", 12);
    std::string want = l;
    re2::RE2::Replace(&want, offset, "");
    ASSERT_EQ(std::string(StripOffset(l)), want) << "[" << l << "]";
  }
}

TEST(PerfScriptRegex, RealLines) {
  EventHead h;
  ASSERT_TRUE(MatchEventHead("V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:", &h));
  EXPECT_EQ(h.comm, "V8 WorkerThread");
  EXPECT_EQ(h.pid, "24636");
  EXPECT_EQ(h.tid, "25607");
  // A one-letter comm: Perl's \S.+? needs two characters, so the comm swallows more.
  ASSERT_TRUE(MatchEventHead("t 99076 10314749.002559: 1 cycles:", &h));
  EXPECT_EQ(h.comm, "t 99076 10314749.002559:");
  std::string_view period, event;
  ASSERT_TRUE(MatchEventTail("perf 1 [000] 1.5:     250000 cpu-clock:ppp: ", &period, &event));
  EXPECT_EQ(period, "250000");
  EXPECT_EQ(event, "cpu-clock:ppp");
  ASSERT_TRUE(MatchEventTail("perf 1 1.5: sched:sched_switch:", &period, &event));
  EXPECT_EQ(period, "");
  EXPECT_EQ(event, "sched:sched_switch");
  StackLine sl;
  ASSERT_TRUE(MatchStackLine("\t    7f1e2215d058  (/lib/libc-2.15.so)", &sl));
  EXPECT_EQ(sl.pc, "7f1e2215d058");
  EXPECT_EQ(sl.func, " ");
  EXPECT_EQ(sl.dso, "/lib/libc-2.15.so");
  ASSERT_TRUE(MatchStackLine("  ffffffff81 foo (bar) (baz)+0x3 ([kernel.kallsyms])", &sl));
  EXPECT_EQ(sl.func, "foo (bar) (baz)+0x3");
  EXPECT_EQ(EventKey("cpu-clock:ppp"), "cpu-clock");
  EXPECT_EQ(EventKey("cycles:uhH"), "cycles");
  EXPECT_EQ(EventKey("sched:sched_switch"), "sched:sched_switch");
  EXPECT_EQ(EventKey("instructions"), "instructions");
}

// One sample with a single frame named `func` in `dso`, folded with `opt`.
std::string FoldFrame(const std::string& func, const std::string& dso = "/bin/x",
                      CollapseOptions opt = {}, const std::string& comm = "prog") {
  std::string text = comm + " 10 1.0: 1 cycles:\n\t  4005d0 " + func + " (" + dso + ")\n\n";
  std::string out = test::Collapse(text, opt);
  std::string prefix = comm + ";";
  if (out.compare(0, prefix.size(), prefix) != 0) return "<" + out + ">";
  return out.substr(prefix.size(), out.rfind(' ') - prefix.size());
}

TEST(PerfScriptNames, TidyingFollowsThePerlScript) {
  EXPECT_EQ(FoldFrame("main+0x1f"), "main");
  EXPECT_EQ(FoldFrame("main+0x1F"), "main+0x1F");  // Perl strips lower-case hex only
  EXPECT_EQ(FoldFrame("foo(int, char)"), "foo");
  EXPECT_EQ(FoldFrame("a;b"), "a:b");
  EXPECT_EQ(FoldFrame("RegExp:[&<>\\\"\\']"), "RegExp:[&<>\\\\]");
  EXPECT_EQ(FoldFrame("net/http.(*Client).Do"), "net/http.(*Client).Do");
  EXPECT_EQ(FoldFrame("ns::(anonymous namespace)::f(int)"), "ns::(anonymous namespace)::f");
  EXPECT_EQ(FoldFrame("[unknown]", "/usr/lib/libc.so.6"), "[libc.so.6]");
  EXPECT_EQ(FoldFrame("[unknown]", "[unknown]"), "[unknown]");
  EXPECT_EQ(FoldFrame("f->g->h"), "f;g_[i];h_[i]");
  EXPECT_EQ(FoldFrame("(/usr/bin/prog)"), "<prog 1\n>");  // process names are skipped
}

TEST(PerfScriptNames, WhereWeDifferFromPerlOnPurpose) {
  EXPECT_EQ(FoldFrame("std::function<void (int)>::operator()(int) const"),
            "std::function<void (int)>::operator");
  EXPECT_EQ(FoldFrame("std::_Iter_comp_iter<bool (*)(int, int)>::operator()<int*>"),
            "std::_Iter_comp_iter<bool (*)(int, int)>::operator");
  EXPECT_EQ(FoldFrame("std::operator<< <char>(std::ostream&)"), "std::operator<< <char>");
  EXPECT_EQ(FoldFrame("(anonymous namespace)::fib(int)"), "(anonymous namespace)::fib");
  EXPECT_EQ(FoldFrame("core::str::Split<'a, P>::next"), "core::str::Split<'a, P>::next");
  EXPECT_EQ(FoldFrame("std::sys::unix::fs::File::open::hb90e1c1c787080f0"),
            "std::sys::unix::fs::File::open");
}

TEST(PerfScriptNames, Annotations) {
  CollapseOptions all;
  all.perf.annotate_kernel = all.perf.annotate_jit = true;
  EXPECT_EQ(FoldFrame("native_safe_halt", "[kernel.kallsyms]", all), "native_safe_halt_[k]");
  EXPECT_EQ(FoldFrame("tcp_sendmsg", "/lib/modules/4.3/build/vmlinux", all), "tcp_sendmsg_[k]");
  EXPECT_EQ(FoldFrame("f", "/usr/lib/debug/boot/vmlinux-5.4.14-cloudflare", all), "f_[k]");
  EXPECT_EQ(FoldFrame("f", "/lib/modules/x/nf_conntrack.ko", all), "f_[k]");
  EXPECT_EQ(FoldFrame("[unknown]", "[unknown]", all), "[unknown]");
  EXPECT_EQ(FoldFrame("Lfoo/Bar;::baz", "/tmp/perf-1234.map", all), "Lfoo/Bar:::baz_[j]");
  EXPECT_EQ(FoldFrame("jit", "/home/x/.debug/jit/jitted-12-3.so", all), "jit_[j]");
  EXPECT_EQ(FoldFrame("Lfoo/Bar;::baz", "/tmp/perf-1234.map", all, "java"),
            "foo/Bar:::baz_[j]");
  CollapseOptions addrs;
  addrs.perf.include_addrs = true;
  EXPECT_EQ(FoldFrame("[unknown]", "/usr/lib/libc.so.6", addrs), "[libc.so.6 <4005d0>]");
  EXPECT_EQ(FoldFrame("[unknown]", "[unknown]", addrs), "[unknown <4005d0>]");
}

const char* kTwoSamples =
    "# ========\n# captured on: x\n# ========\n#\n"
    "my prog 100/101 [001] 5.000001:     250000 cpu-clock:ppp: \n"
    "\t    400100 leaf+0x10 (/bin/prog)\n"
    "\t    400200 main+0x20 (/bin/prog)\n"
    "\n"
    "my prog 100/102 [001] 5.000002:     250000 cpu-clock:ppp: \n"
    "\n";

TEST(PerfScriptFolder, CommPidTidAndEmptyCallchains) {
  EXPECT_EQ(test::Collapse(kTwoSamples), "my_prog 250000\nmy_prog;main;leaf 250000\n");
  CollapseOptions tid;
  tid.perf.include_tid = true;
  EXPECT_EQ(test::Collapse(kTwoSamples, tid),
            "my_prog-100/101;main;leaf 250000\nmy_prog-100/102 250000\n");
  CollapseOptions pid;
  pid.perf.include_pid = true;
  EXPECT_EQ(test::Collapse("a.out 77 1.0: 5 cycles:\n\t1 f (x)\n\n", pid), "a.out-?;f 5\n");
  CollapseOptions samples;
  samples.perf.weight_samples = true;
  EXPECT_EQ(test::Collapse(kTwoSamples, samples), "my_prog 1\nmy_prog;main;leaf 1\n");
  // No period column: 1 per sample.
  EXPECT_EQ(test::Collapse("a.out 77 1.0: cycles:\n\t1 f (x)\n\na.out 77 1.1: cycles:\n\t1 f (x)\n"),
            "a.out;f 2\n");
}

// --event-filter A,B keeps both; with offcpu-time among them (a wall-clock profile), each
// off-CPU stack ends in [off-cpu], also where an on-CPU sample had the same lines (the sample
// cache keeps them apart), and the weights stay nanoseconds.
TEST(PerfScriptFolder, SeveralEventsAndTheOffCpuFrame) {
  const std::string text =
      "prog 1 1.0: 1000 cpu-clock:ppp:\n\t1 f (x)\n\t2 main (x)\n\n"
      "prog 1 1.1: 5000 offcpu-time:\n\t1 f (x)\n\t2 main (x)\n\n"
      "prog 1 1.2: 7 page-faults:\n\t1 g (x)\n\n"
      "prog 1 1.3: 3000 offcpu-time:\n\t9 f (x)\n\t8 main (x)\n\n"
      "prog 1 1.4: 1000 cpu-clock:ppp:\n\t1 f (x)\n\t2 main (x)\n\n";
  // The whole output, its unit line included.
  auto fold = [&text](const std::string& filter) {
    CollapseOptions opt;
    opt.perf.event_filter = filter;
    std::vector<std::unique_ptr<ByteSource>> sources;
    sources.push_back(MemoryInput(text, "in.txt"));
    StringSink sink;
    ReadReport report;
    CollapseSources(std::move(sources), opt, sink, &report);
    return sink.data();
  };
  EXPECT_EQ(fold("cpu-clock,offcpu-time"),
            "# pf-unit: nanoseconds\nprog;main;f 2000\nprog;main;f;[off-cpu] 8000\n");
  // One event: no mark.
  EXPECT_EQ(fold("offcpu-time"), "# pf-unit: nanoseconds\nprog;main;f 8000\n");
  // Nanoseconds and faults: no unit to state.
  EXPECT_EQ(fold("cpu-clock,page-faults"), "prog;g 7\nprog;main;f 2000\n");
}

// The frames from the root to `n`, joined by ';'.
std::string PathOf(const StackTree& tree, NodeId n) {
  std::vector<std::string_view> names;
  for (; n != StackTree::kRoot; n = tree.parent(n)) names.push_back(tree.name(n));
  std::string path;
  for (size_t i = names.size(); i-- > 0;) {
    path += names[i];
    if (i > 0) path += ';';
  }
  return path;
}

// A sample given as fields (BeginSample, AddFrame, EndSample: how a recording is folded) lands
// where its text does: the same names, leaf, filter and period.
TEST(PerfScriptFolder, FieldsFoldAsTheirText) {
  PerfScriptOptions o;
  o.include_tid = true;
  o.annotate_inline = true;
  PerfScriptFolder text(o, "");
  NodeId from_text = text.FoldSample(
      "java 100/101 5.000001:     250000 cpu-clock:ppp: \n"
      "\t    400100 Lcom/x/Y;run+0x10 (/tmp/perf-100.map)\n"
      "\t    400180 inl->in2+0x8 (inlined)\n"
      "\t    400200 [unknown] (/bin/prog)\n"
      "\t    400300 (anon)+0x1 (/bin/prog)\n\n",
      "t");
  PerfScriptFolder fields(o, "");
  ASSERT_TRUE(fields.BeginSample({"java", "100", "101", "250000", "cpu-clock:ppp", false}));
  for (const ScriptFrame& f : {ScriptFrame{"400100", "Lcom/x/Y;run", "/tmp/perf-100.map", ""},
                               ScriptFrame{"400180", "inl->in2", "inlined", ""},
                               ScriptFrame{"400200", "[unknown]", "/bin/prog", ""},
                               ScriptFrame{"400300", "(anon)", "/bin/prog", ""}}) {
    fields.AddFrame(f);
  }
  NodeId from_fields = fields.EndSample();
  ASSERT_NE(from_text, PerfScriptFolder::kNoLeaf);
  ASSERT_NE(from_fields, PerfScriptFolder::kNoLeaf);
  EXPECT_EQ(PathOf(text.tree(), from_text), PathOf(fields.tree(), from_fields));
  EXPECT_EQ(PathOf(fields.tree(), from_fields), "java-100/101;[prog];inl_[i];in2_[i];com/x/Y:run");
  // Another event is filtered out: no sample begins.
  EXPECT_FALSE(fields.BeginSample({"java", "100", "101", "1", "page-faults", false}));
  EXPECT_EQ(fields.EndSample(), PerfScriptFolder::kNoLeaf);
  EXPECT_EQ(fields.other_event_samples(), 1u);
  EXPECT_EQ(fields.tree().self(from_fields), 250000u);
}

TEST(PerfScriptFolder, EventFilter) {
  std::string text =
      "pp 1 1.0: 10 cycles:\n\t1 f (x)\n\n"
      "pp 1 1.1: 20 instructions:\n\t1 g (x)\n\n"
      "pp 1 1.2: 30 cycles:\n\t1 h (x)\n\n";
  ReadReport report;
  EXPECT_EQ(test::Collapse(text, {}, &report), "pp;f 10\npp;h 30\n");
  ASSERT_EQ(report.notices.size(), 1u);
  EXPECT_NE(report.notices[0].find("cycles"), std::string::npos);
  EXPECT_NE(report.notices[0].find("1 sample of instructions"), std::string::npos);
  CollapseOptions ins;
  ins.perf.event_filter = "instructions";
  EXPECT_EQ(test::Collapse(text, ins), "pp;g 20\n");
  CollapseOptions clock;
  clock.perf.event_filter = "cpu-clock";
  EXPECT_EQ(test::Collapse("pp 1 1.0: 10 cpu-clock:ppp:\n\t1 f (x)\n\n", clock), "pp;f 10\n");
}

TEST(PerfScriptFolder, SkipAfter) {
  std::string text =
      "go 1 1.0: 1 cycles:\n\t1 leaf (x)\n\t2 main.init (x)\n\t3 runtime.main (x)\n\n"
      "go 1 1.0: 1 cycles:\n\t1 other (x)\n\t3 runtime.main (x)\n\n";
  CollapseOptions opt;
  opt.perf.skip_after = {"main.init"};
  EXPECT_EQ(test::Collapse(text, opt), "go;runtime.main;other 1\nmain.init;leaf 1\n");
  // Folded input is cut alike (it used to pass through whole): at the innermost FUNC, the
  // leaf included, with annotations not part of the name; other stacks are kept whole.
  EXPECT_EQ(test::Collapse(test::Collapse(text), opt), test::Collapse(text, opt));
  EXPECT_EQ(test::Collapse("p;main.init;a;main.init_[k];b 5\np;main.init 2\np;x 1\n", opt),
            "main.init 2\nmain.init_[k];b 5\np;x 1\n");
  EXPECT_EQ(test::Collapse("a;main.init;b 1 2\n", opt), "main.init;b 1 2\n");  // differential
}

// --per-cpu: a root frame for the CPU perf prints after the ids ("[003]"), or wherever the
// first such word is when the Perl pattern reads the ids into the comm (":-1 -1 [001] 2.0:");
// other events' samples need none; a sample without one is an error naming its line. The
// sample cache keeps the CPUs apart, and --skip-after keeps the CPU frame.
TEST(PerfScriptFolder, PerCpu) {
  CollapseOptions opt;
  opt.perf.include_cpu = true;
  const std::string sample = "\t1 f (x)\n\t2 main (x)\n\n";
  std::string text = "ab 7 [002] 1.0: 5 cpu-clock:\n" + sample + "ab 7 [012] 1.1: 5 cpu-clock:\n" +
                     sample + "ab 7 [002] 1.2: 5 cpu-clock:\n" + sample +
                     ":-1    -1 [001] 2.0: 1 cpu-clock:\n" + sample +
                     "b 8 3.0: 1 page-faults:\n" + sample;
  EXPECT_EQ(test::Collapse(text, opt),
            "[cpu 001];:-1____-1_[001]_2.0:;main;f 1\n[cpu 002];ab;main;f 10\n"
            "[cpu 012];ab;main;f 5\n");
  opt.perf.skip_after = {"main"};
  EXPECT_EQ(test::Collapse("ab 7/7 [003] 1.0: 5 cpu-clock:\n" + sample, opt),
            "[cpu 003];main;f 5\n");
  opt.perf.skip_after.clear();
  try {
    test::Collapse(text + "ab 7 1.3: 5 cpu-clock:\n" + sample, opt);
    ADD_FAILURE() << "a sample without its CPU was folded";
  } catch (const pf::Error& e) {
    EXPECT_EQ(e.where(), "in.txt:21");
    EXPECT_NE(std::string(e.what()).find("--per-cpu: this sample shows no CPU"), std::string::npos)
        << e.what();
  }
}

TEST(PerfScriptFolder, BadLinesAreCountedNotFatal) {
  std::string text =
      "pp 1 1.0: 1 cycles:\n\t1 f (x)\n\tGARBAGE\n\t2 g (x)\n\n"
      "\t9 orphan (x)\n"
      "pp 1 1.0: 1 cycles:\n\t1 f (x)\n\t2 g (x\n";  // cut mid-stack
  ReadReport report;
  EXPECT_EQ(test::Collapse(text, {}, &report), "pp;f 1\npp;g;f 1\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0], "3 lines skipped, first at in.txt:3");
}

TEST(PerfScriptFolder, TracepointPayloadAndSingleLineStacks) {
  // Perl keeps tracepoint samples whose event line carries a payload, weighing 1.
  std::string tp =
      "bash 12 [000] 1.0: sched:sched_switch: prev_comm=bash prev_pid=12 ==> next_comm=x\n"
      "\tffffffff81 __schedule+0x1 ([kernel.kallsyms])\n\t7f00 read (/lib/libc.so.6)\n\n";
  EXPECT_EQ(test::Collapse(tp), "bash;read;__schedule 1\n");
  // perf script without -g: the frame is on the event line.
  std::string single =
      "prog 5 1.0:     100 cpu-clock:ppp:  400100 work+0x5 (/bin/prog)\n"
      "prog 5 1.1:     100 cpu-clock:ppp:  400100 work+0x9 (/bin/prog)\n";
  EXPECT_EQ(test::Collapse(single), "prog;work 200\n");
}

// Samples whose text repeats exactly are found by their text, and fold as the same samples
// do when each one's addresses differ (so that only their lines' keys repeat): under other
// comms, after a whitespace line that ends a sample before its empty line, with bad lines
// (skipped each time, at the right line numbers), and in CRLF text.
TEST(PerfScriptFolder, RepeatedTextsFoldAsTheirLines) {
  const std::string stacks[] = {
      "\t    400100 leaf+0x10 (/bin/p)\n\t    400200 main+0x20 (/bin/p)\n",
      "\t    400100 leaf+0x10 (/bin/p)\n\t    GARBAGE\n\t    400200 main+0x20 (/bin/p)\n",
      "\t    400f00 [unknown] ([unknown])\n",
      "\t    400300 other+0x4 (/bin/p)\n  \n\t    400200 main+0x20 (/bin/p)\n",
  };
  std::mt19937 rng(11);
  for (const char* eol : {"\n", "\r\n"}) {
    std::string same, unique;
    std::set<std::string> seen;  // the texts a cache can keep: no bad line, no early end
    uint64_t repeats = 0;
    for (int i = 0; i < 3000; ++i) {
      const std::string comm = i % 7 == 0 ? "java" : i % 5 == 0 ? "other" : "prog";
      std::string head = comm + " 10/11 [000] 1.0: " + std::to_string(1 + rng() % 50) +
                         " cpu-clock:ppp: \n";
      size_t which = rng() % 4;
      if (which % 2 == 1 && i < 2900) which = 0;  // the first line skipped late: its number tells
      std::string stack = stacks[which] + "\n";
      if (which % 2 == 0) repeats += !seen.insert(comm + stack).second;
      same += head + stack;
      // The same sample with an address of its own: no text repeats.
      char address[16];
      std::snprintf(address, sizeof address, "%x", 0x500000 + i);
      unique += head + stack.replace(stack.find("400"), 6, address);
    }
    auto crlf = [&](std::string s) {
      std::string out;
      for (char c : s) c == '\n' ? out += eol : out += c;
      return out;
    };
    SCOPED_TRACE(std::string(eol) == "\n" ? "LF" : "CRLF");
    PerfScriptOptions o;
    PerfScriptFolder folder(o, "");
    folder.AddBlock(crlf(same), 1, "t");
    if (std::string(eol) == "\n") {
      EXPECT_EQ(folder.cached_texts(), repeats);
    } else {
      EXPECT_EQ(folder.cached_texts(), 0u);
    }
    ReadReport same_report, unique_report;
    EXPECT_EQ(test::Collapse(crlf(same), {}, &same_report),
              test::Collapse(crlf(unique), {}, &unique_report));
    EXPECT_EQ(same_report.warnings, unique_report.warnings);
    EXPECT_FALSE(same_report.warnings.empty());
  }
}

// Where samples do not repeat, the caches of whole samples rest (no lookup, no entry) and
// the samples are folded line by line: alike.
TEST(PerfScriptFolder, SampleCachesRestWhereNothingRepeats) {
  std::string text, expected;
  for (int i = 0; i < 300; ++i) {  // more than a round, each stack new
    text += "prog 1 1.0: 1 cycles:\n\t1 f" + std::to_string(i) + " (x)\n\t2 main (x)\n\n";
  }
  for (int i = 0; i < 1000; ++i) text += "prog 1 1.0: 3 cycles:\n\t1 g (x)\n\t2 main (x)\n\n";
  PerfScriptOptions o;
  PerfScriptFolder folder(o, "");
  folder.AddBlock(text, 1, "t");
  EXPECT_EQ(folder.samples(), 1300u);
  EXPECT_LT(folder.cached_samples(), 100u);  // resting through the repeats that followed
  const std::string folded = test::Collapse(text);
  EXPECT_NE(folded.find("prog;main;g 3000\n"), std::string::npos) << folded;
  EXPECT_NE(folded.find("prog;main;f299 1\n"), std::string::npos) << folded;
}

// An event line that ends the input, with no newline: nothing past it is read (the buffer
// holds the text alone, for AddressSanitizer to see a read past it).
TEST(PerfScriptFolder, EventLineAtTheVeryEnd) {
  const std::string text = "prog 1 1.0: 1 cycles:\n\t1 f (x)\n\nprog 1 1.0: 2 cycles:";
  std::vector<char> exact(text.begin(), text.end());
  PerfScriptOptions o;
  PerfScriptFolder folder(o, "");
  folder.AddBlock(std::string_view(exact.data(), exact.size()), 1, "t");
  EXPECT_EQ(folder.samples(), 2u);  // the last with its comm alone, as Perl counts it
}

TEST(PerfScriptFolder, CrlfAndWhitespaceLines) {
  std::string text = "pp 1 1.0: 3 cycles:\r\n\t1 f (x)\r\n  \r\npp 1 1.0: 4 cycles:\r\n\t1 f (x)\r\n";
  ReadReport report;
  EXPECT_EQ(test::Collapse(text, {}, &report), "pp;f 7\n");
  EXPECT_TRUE(report.warnings.empty());
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

TEST(PerfScriptFolder, HugeLinesAreSkippedNotKept) {
  std::string text = "comm 1 1.0: 1 cycles:\n\t1 " + std::string(20 << 20, 'x') + " (dso)\n" +
                     "\t2 main (dso)\n\n";
  ReadReport report;
  EXPECT_EQ(test::Collapse(text, {}, &report), "comm;main 1\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0], "1 line skipped, first at in.txt:2");
}

TEST(PerfScriptFolder, CachedSamplesEqualFreshOnes) {
  // The same sample text under two comms, repeated: the whole-sample cache must keep them
  // apart and weigh each repeat with its own period.
  std::string one = "aa 1 1.0: 10 cycles:\n\t1 f (x)\n\t2 main (x)\n\n";
  std::string two = "javaxx 1 1.0: 20 cycles:\n\t1 f (x)\n\t2 main (x)\n\n";
  std::string l = "aa 1 1.0: 5 cycles:\n\t1 Lpkg/C;.m (x)\n\n";
  std::string j = "java 1 1.0: 7 cycles:\n\t1 Lpkg/C;.m (x)\n\n";
  std::string text = one + two + one + two + l + j + l + j;
  EXPECT_EQ(test::Collapse(text),
            "aa;Lpkg/C:.m 10\naa;main;f 20\njava;pkg/C:.m 14\njavaxx;main;f 40\n");
}

// A capture's repeated stacks differ in their addresses and offsets, which no name depends on
// (but an unknown frame's name with --addrs): the sample cache takes them as repeats, each with
// its own period, and keeps apart what the names tell apart.
TEST(PerfScriptFolder, SampleCacheIgnoresAddressesAndOffsetsOnly) {
  auto sample = [](std::string head, std::string leaf, std::string unknown) {
    return head + "\n\t    " + leaf + "\n\t    400200 main+0x20 (/bin/p)\n\t  " + unknown +
           "\n\n";
  };
  std::string a = sample("prog 10/11 [000] 1.000001:     100 cpu-clock:ppp: ",
                         "400100 leaf+0x10 (/bin/p)", "7f00 [unknown] ([unknown])");
  std::string b = sample("prog 10/11 [001] 2.500000:     250 cpu-clock:ppp: ",
                         "400184 leaf+0x94 (/bin/p)", "7f88 [unknown] ([unknown])");
  std::string c = sample("prog 10/12 [001] 2.600000:       7 cpu-clock:ppp: ",
                         "400184 leaf+0x94 (/bin/p)", "7f88 [unknown] (/lib/libz.so)");
  // Not an offset (Perl strips lowercase hex only): another name.
  std::string d = sample("prog 10/11 [001] 2.700000:      40 cpu-clock:ppp: ",
                         "400184 leaf+0x9A (/bin/p)", "7f88 [unknown] ([unknown])");
  std::string text = a + b + c + d + a + c;
  PerfScriptOptions o;
  PerfScriptFolder folder(o, "");
  folder.AddBlock(text, 1, "t");
  EXPECT_EQ(folder.samples(), 6u);
  EXPECT_EQ(folder.cached_samples(), 3u);  // b, the second a and the second c
  EXPECT_EQ(test::Collapse(text),
            "prog;[libz.so];main;leaf 14\n"
            "prog;[unknown];main;leaf 450\n"
            "prog;[unknown];main;leaf+0x9A 40\n");
  CollapseOptions addrs;
  addrs.perf.include_addrs = true;
  EXPECT_EQ(test::Collapse(text, addrs),
            "prog;[libz.so <7f88>];main;leaf 14\n"
            "prog;[unknown <7f00>];main;leaf 200\n"
            "prog;[unknown <7f88>];main;leaf 250\n"
            "prog;[unknown <7f88>];main;leaf+0x9A 40\n");
  CollapseOptions tid;
  tid.perf.include_tid = true;
  EXPECT_EQ(test::Collapse(text, tid),
            "prog-10/11;[unknown];main;leaf 450\n"
            "prog-10/11;[unknown];main;leaf+0x9A 40\n"
            "prog-10/12;[libz.so];main;leaf 14\n");
}

// The Perl pattern's comm can take the ids and the time (a one-letter comm), a comm can hold
// whitespace, a period can be missing or 0: repeats of one stack under such event lines fold
// as stackcollapse-perf.pl folds them (its output, and with --pid).
TEST(PerfScriptFolder, SampleCacheUnderOddEventLines) {
  const std::string stack = "\t 400100 leaf+0x10 (/bin/p)\n\t 400200 main+0x20 (/bin/p)\n\n";
  std::string text;
  for (const char* head :
       {"a 123/456 [000] 12345.678901: 100 cpu-clock:", "a 123/456 [000] 1.678901: 200 cpu-clock:",
        "a 12 3 4: 300 cpu-clock:", "a 12 3: 400 cpu-clock:", "x y 7 8.5: 500 cpu-clock:",
        "x y 7 8.5:  cpu-clock:", "x\ty 7 9.5: 0 cpu-clock:"}) {
    text += head + ("\n" + stack);
  }
  EXPECT_EQ(test::Collapse(text),
            "a_123/456_[000]_1.678901:;main;leaf 200\n"
            "a_123/456_[000]_12345.678901:;main;leaf 100\n"
            "a_12;main;leaf 300\n"
            "a_12_3:;main;leaf 400\n"
            "x\ty;main;leaf 1\n"
            "x_y;main;leaf 501\n");
  CollapseOptions pid;
  pid.perf.include_pid = true;
  EXPECT_EQ(test::Collapse(text, pid),
            "a_12-?;main;leaf 300\n"
            "a_123/456_[000]_1.678901:-?;main;leaf 200\n"
            "a_123/456_[000]_12345.678901:-?;main;leaf 100\n"
            "a_12_3:-?;main;leaf 400\n"
            "x\ty-?;main;leaf 1\n"
            "x_y-?;main;leaf 501\n");
}

// A sample's key is its lines' text without addresses and offsets (the address kept where it
// names the frame): lines whose fields differ, even where the text is odd (a name that holds
// " (", a dso that holds '(', no space after the address, an offset that is not at the end,
// an inline chain, a line only backtracking matches), stay apart, and each repeat (other
// addresses, offsets, trailing blanks, indents, periods) folds as its first did.
TEST(PerfScriptFolder, SampleCacheKeysKeepOddLinesApart) {
  const char* kStacks[][2] = {
      {"1 f (x)", "2 main+0x1 (x)"},         {"1 f (x) ", "2 main+0x2 (x)"},
      {"1 a+0x1 (b) (c)", "2 main (x)"},     {"1 a (b) (c)", "2 main (x)"},
      {"1 g+0x10 (x (y)", "2 main (x)"},     {"7f00 [unknown] (x)", "2 main (x)"},
      {"7f01 [unknown] (x)", "3 main (x)"},  {"7f01 [unknown]+0x5 (x)", "3 main (x)"},
      {"abc[unknown] (x)", "3 main (x)"},    {"7f1e2215d058  (/lib/libc.so)", "3 main (x)"},
      {"\t 1 f+0xa (x)", "2 main+0x1 (x)"}, {"1 h->k+0x3 (inlined)", "2 main+0x1 (x)"},
  };
  const char* kHeads[] = {"pp 1/2 [000] 1.0: 10 cycles:", "pp 1/2 [001] 2.0: 20 cycles:",
                          "qq 1/3 [001] 3.0: 40 cycles:"};
  std::string text;
  for (size_t rep = 0; rep < 2; ++rep) {
    for (size_t i = 0; i < std::size(kStacks); ++i) {
      text += kHeads[(i + rep) % 3];
      for (const char* line : kStacks[i]) text += std::string("\n\t  ") + line;
      text += "\n\n";
    }
  }
  EXPECT_EQ(test::Collapse(text),
            "pp;main;  30\npp;main;[x] 70\npp;main;a  30\npp;main;a+0x1  10\npp;main;f 70\n"
            "pp;main;g+0x10  20\npp;main;h;k_[i] 10\nqq;main;[x] 120\nqq;main;a+0x1  40\n"
            "qq;main;f 80\nqq;main;g+0x10  40\nqq;main;h;k_[i] 40\n");
  CollapseOptions addrs;
  addrs.perf.include_addrs = true;
  EXPECT_EQ(test::Collapse(text, addrs),
            "pp;main;  30\npp;main;[x <7f00>] 10\npp;main;[x <7f01>] 50\npp;main;[x <abc>] 10\n"
            "pp;main;a  30\npp;main;a+0x1  10\npp;main;f 70\npp;main;g+0x10  20\n"
            "pp;main;h;k_[i] 10\nqq;main;[x <7f00>] 40\nqq;main;[x <7f01>] 40\n"
            "qq;main;[x <abc>] 40\nqq;main;a+0x1  40\nqq;main;f 80\nqq;main;g+0x10  40\n"
            "qq;main;h;k_[i] 40\n");
}

// A repeated sample with a line the fold skips is warned about each time.
TEST(PerfScriptFolder, SampleCacheKeepsWarningsOfRepeats) {
  std::string s = "pp 1 1.0: 10 cycles:\n\t1 f (x)\n\tnot a frame\n\t2 main (x)\n\n";
  ReadReport report;
  EXPECT_EQ(test::Collapse(s + s + s, {}, &report), "pp;main;f 30\n");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0], "3 lines skipped, first at in.txt:3");
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

// perf script -F +srcline on a DWARF recording: each frame's line follows it, and an inlined
// frame is printed without its dso, "(inlined)" after its source line.
const char kSrclineText[] =
    "prog  4119   243.93: 1001001 cpu-clock:ppp: \n"
    "\t            128b inl_mix+0x2b\n"
    "  prog.c:52 (inlined)\n"
    "\t            128b hot_beta+0x2b (/bin/prog)\n"
    "  prog.c:59\n"
    "\t           27304 __libc_start_main+0x84 (/lib/libc.so.6)\n"
    "  libc.so.6[27304]\n"
    "\t        7ffc7158 [unknown] ([unknown])\n"
    "\n";

TEST(PerfScriptFolder, InlinedFramesAreMarkedWithInline) {
  const char text[] =
      "prog  4119   243.93: 1 cpu-clock: \n"
      "\t 128b inl_mix+0x2b (inlined)\n"
      "\t 128b hot_beta+0x2b (/bin/prog)\n"
      "\n";
  EXPECT_EQ(test::Collapse(text), "prog;hot_beta;inl_mix 1\n");
  CollapseOptions o;
  o.perf.annotate_inline = true;
  EXPECT_EQ(test::Collapse(text, o), "prog;hot_beta;inl_mix_[i] 1\n");
}

TEST(PerfScriptFolder, SrclineAppendsTheLineAfterEachFrame) {
  CollapseOptions o;
  o.perf.srcline = true;
  ReadReport report;
  EXPECT_EQ(test::Collapse(kSrclineText, o, &report),
            "prog;[unknown];__libc_start_main:libc.so.6;hot_beta:prog.c:59;inl_mix:prog.c:52 "
            "1001001\n");
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
  o.perf.annotate_inline = true;
  EXPECT_EQ(test::Collapse(kSrclineText, o),
            "prog;[unknown];__libc_start_main:libc.so.6;hot_beta:prog.c:59;inl_mix_[i]:prog.c:52 "
            "1001001\n");
  // The same text twice: the second sample comes from the caches, and agrees.
  std::string twice = std::string(kSrclineText) + kSrclineText;
  o.perf.annotate_inline = false;
  EXPECT_EQ(test::Collapse(twice, o),
            "prog;[unknown];__libc_start_main:libc.so.6;hot_beta:prog.c:59;inl_mix:prog.c:52 "
            "2002002\n");
}


// perf prints no source line after a frame it cannot place at all (an unnamed frame in a
// binary whose symbols addr2line cannot search): the next frame line is a frame, not its
// source line (the Perl script would swallow it).
TEST(PerfScriptFolder, SrclineMissingAfterAnUnplacedFrame) {
  const char text[] =
      "xz  4119   243.93: 1001001 cpu-clock:ppp: \n"
      "\t            3ac0 [unknown] (/usr/bin/xz)\n"
      "\t           27249 __libc_start_call_main+0x79 (/lib/libc.so.6)\n"
      "  libc_start_call_main.h:58\n"
      "\n";
  CollapseOptions o;
  o.perf.srcline = true;
  ReadReport report;
  EXPECT_EQ(test::Collapse(text, o, &report),
            "xz;__libc_start_call_main:libc_start_call_main.h:58;[xz] 1001001\n");
  EXPECT_TRUE(report.warnings.empty()) << report.warnings[0];
  // Followed by an inlined frame, printed without its dso.
  const char bare[] =
      "prog  4119   243.93: 1001001 cpu-clock:ppp: \n"
      "\t           8aeec [unknown] (/lib/libc.so.6)\n"
      "\t           3bfb1 gsignal+0x11\n"
      "  ??:0 (inlined)\n"
      "\t            1524 signal_site+0x14 (/bin/prog)\n"
      "  prog.c:148\n"
      "\n";
  ReadReport bare_report;
  EXPECT_EQ(test::Collapse(bare, o, &bare_report),
            "prog;signal_site:prog.c:148;gsignal:??:0;[libc.so.6] 1001001\n");
  EXPECT_TRUE(bare_report.warnings.empty()) << bare_report.warnings[0];
}

}  // namespace
}  // namespace pf
