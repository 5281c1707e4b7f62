// Golden tests over the peer corpus (../shared/corpus/peer, see its README): every
// collapse-perf case of FlameGraph and inferno, each with one and with two threads; and the
// collapse module's folding of text and mixed inputs (recordings: collapse_recording_test).
#include "app/files.h"
#include "collapse/collapse.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <tuple>

#include "base/error.h"
#include "io/line_reader.h"
#include "test_util.h"

namespace pf {

struct GoldenCase {
  std::string input;     // relative to the corpus
  std::string expected;  // relative to the corpus
  std::string option;    // one of pid tid kernel jit all addrs, or ""
};
// Readable test parameters in gtest's output.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.input << " --" << c.option; }

namespace {

using test::OptionsFor;

std::vector<GoldenCase> Cases() {
  std::vector<GoldenCase> cases;
  const char* upstream[] = {"cycles-instructions-01", "dd-stacks-01",      "funcab-cmd-01",
                            "funcab-pid-01",          "iperf-stacks-pidtid-01",
                            "java-faults-01",         "java-stacks-01",    "java-stacks-02",
                            "js-stacks-01",           "mirageos-stacks-01", "numa-stacks-01",
                            "rust-Yamakaky-dcpu",     "vertx-stacks-01"};
  for (const char* n : upstream) {
    for (const char* o : {"pid", "tid", "kernel", "jit", "all", "addrs"}) {
      std::string name = std::string("perf-") + n;
      // The Rust expectations are inferno's own (it repairs half-demangled symbols).
      std::string dir = std::string(n) == "rust-Yamakaky-dcpu"
                            ? "tests/data/collapse-perf/results/"
                            : "flamegraph/test/results/";
      cases.push_back({"flamegraph/test/" + name + ".txt",
                       dir + name + "-collapsed-" + o + ".txt", o});
    }
  }
  const std::string d = "tests/data/collapse-perf/";
  for (const char* n : {"no-events", "single-line-stacks", "single-event", "go-stacks",
                        "java-inline", "cpp-stacks-std-function"}) {
    cases.push_back({d + n + ".txt", d + "results/" + n + "-collapsed.txt", ""});
  }
  cases.push_back({d + "versioned-vmlinux.txt",
                   d + "results/versioned-vmlinux-collapsed-kernel.txt", "kernel"});
  cases.push_back({d + "sourcepawn-jitdump.txt",
                   d + "results/sourcepawn-jitdump-collapsed-jit.txt", "jit"});
  cases.push_back({"flamegraph/example-perf-stacks.txt.gz",
                   d + "results/example-perf-stacks-collapsed.txt", ""});
  return cases;
}

// The stale expectations named in the corpus README: FlameGraph's files for --pid/--tid on
// four Java inputs predate the script's `^java` rule; compare without the leading `L`.
bool IsStale(const GoldenCase& c) {
  if (c.option != "pid" && c.option != "tid") return false;
  for (const char* n : {"java-faults-01", "java-stacks-01", "java-stacks-02", "vertx-stacks-01"}) {
    if (c.input.find(n) != std::string::npos) return true;
  }
  return false;
}

std::string Unstale(const std::string& folded) {
  std::string out;
  size_t pos = 0;
  while (pos < folded.size()) {
    size_t nl = folded.find('\n', pos);
    std::string line = folded.substr(pos, nl - pos);
    pos = nl == std::string::npos ? folded.size() : nl + 1;
    std::string fixed;
    size_t start = 0;
    bool java = line.compare(0, 4, "java") == 0;
    for (;;) {
      size_t semi = line.find(';', start);
      std::string frame = line.substr(start, semi == std::string::npos ? semi : semi - start);
      if (java && start > 0 && frame.size() > 1 && frame[0] == 'L' &&
          frame.find('/') != std::string::npos) {
        frame.erase(0, 1);
      }
      fixed += (start ? ";" : "") + frame;
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
    out += fixed + "\n";
  }
  return out;
}

// The unit pf-collapse names in its `# pf-unit:` line (pf-folded(5)): the periods of
// cpu-clock and task-clock samples are nanoseconds, other events' are events; inputs without
// periods count samples, which go unsaid.
std::string UnitOf(const GoldenCase& c) {
  static const struct {
    const char* input;
    const char* unit;
  } kUnits[] = {{"perf-dd-stacks-01.", "nanoseconds"},  {"perf-java-faults-01.", "events"},
                {"perf-rust-Yamakaky-dcpu.", "events"}, {"cpp-stacks-std-function.", "events"},
                {"/go-stacks.", "nanoseconds"},         {"java-inline.", "nanoseconds"},
                {"single-event.", "nanoseconds"},       {"single-line-stacks.", "events"},
                {"sourcepawn-jitdump.", "events"},      {"versioned-vmlinux.", "events"}};
  for (const auto& u : kUnits) {
    if (c.input.find(u.input) != std::string::npos) return u.unit;
  }
  return "";
}

class Golden : public ::testing::TestWithParam<std::tuple<GoldenCase, unsigned>> {};

TEST_P(Golden, MatchesThePeer) {
  const auto& [c, threads] = GetParam();
  std::string in_path = test::kCorpus + "/" + c.input;
  if (!test::FileExists(in_path)) GTEST_SKIP() << "peer corpus not found at " << test::kCorpus;
  std::string expected = test::ReadFile(test::kCorpus + "/" + c.expected);
  if (IsStale(c)) expected = Unstale(expected);
  CollapseOptions opt = OptionsFor(c.option);
  opt.threads = threads;
  StringSink sink;
  ReadReport report;
  CollapseFiles({in_path}, opt, sink, &report);
  // The unit's line first where the unit is known (the Perl script's output has none);
  // every stack line compared.
  const std::string unit = UnitOf(c);
  if (unit.empty()) {
    EXPECT_FALSE(sink.data().starts_with("# pf-unit:")) << c.input;
  } else {
    EXPECT_TRUE(sink.data().starts_with("# pf-unit: " + unit + "\n")) << c.input;
  }
  // The corpus compares lines right-trimmed; our output has no trailing blanks.
  EXPECT_EQ(test::StackLines(sink.data()), expected) << c.input << " --" << c.option;
}

std::string CaseName(const ::testing::TestParamInfo<Golden::ParamType>& info) {
  const auto& [c, threads] = info.param;
  std::string n = c.input.substr(c.input.rfind('/') + 1);
  n = n.substr(0, n.find('.'));
  n += "_" + (c.option.empty() ? std::string("default") : c.option) + "_j" +
       std::to_string(threads);
  for (char& ch : n) {
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Golden,
                         ::testing::Combine(::testing::ValuesIn(Cases()),
                                            ::testing::Values(1u, 2u)),
                         CaseName);

TEST(Collapse, LogCasesWarnOnce) {
  std::string d = test::kCorpus + "/tests/data/collapse-perf/";
  if (!test::FileExists(d + "empty-line.txt")) GTEST_SKIP() << "peer corpus not found";
  for (const char* f : {"empty-line.txt", "weird-stack-line.txt"}) {
    StringSink sink;
    ReadReport report;
    CollapseFiles({d + f}, {}, sink, &report);
    ASSERT_EQ(report.warnings.size(), 1u) << f;
    EXPECT_NE(report.warnings[0].find("1 line skipped, first at "), std::string::npos);
  }
}

TEST(Collapse, ThreadsGiveIdenticalOutputOnLargeInput) {
  std::string path = test::kCorpus + "/flamegraph/test/perf-vertx-stacks-01.txt";
  if (!test::FileExists(path)) GTEST_SKIP() << "peer corpus not found";
  std::string text = test::ReadFile(path);
  std::string big;
  for (int i = 0; i < 12; ++i) big += text + "\n";  // > 4 MiB: several blocks
  CollapseOptions one, two;
  one.threads = 1;
  two.threads = 2;
  one.perf.include_tid = two.perf.include_tid = true;
  std::string a = test::Collapse(big, one);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, test::Collapse(big, two));
  // The first block on this thread, the rest on two workers, the first going on with its
  // folder (pf-dot's one_thread_text_bytes); and all of it on this thread.
  for (uint64_t bytes : {uint64_t{1}, uint64_t{64} << 20}) {
    CollapseOptions prefix = two;
    prefix.one_thread_text_bytes = bytes;
    EXPECT_EQ(a, test::Collapse(big, prefix)) << bytes;
    prefix.perf.include_addrs = one.perf.include_addrs = true;
    EXPECT_EQ(test::Collapse(big, one), test::Collapse(big, prefix)) << bytes;
    one.perf.include_addrs = false;
  }
}

TEST(Collapse, MergesFoldedWithPerfScript) {
  std::vector<std::unique_ptr<ByteSource>> in;
  std::string folded = "pp;f 5\nq;g 1\n";
  std::string perf = "pp 1 1.0: 3 cycles:\n\t1 f (x)\n\n";
  in.push_back(MemoryInput(folded, "a.folded"));
  in.push_back(MemoryInput(perf, "b.txt"));
  in.push_back(MemoryInput(folded, "c.folded"));
  StringSink sink;
  ReadReport report;
  CollapseSources(std::move(in), {}, sink, &report);
  EXPECT_EQ(sink.data(), "# pf-unit: events\npp;f 13\nq;g 2\n");  // the text's unit
  EXPECT_EQ(report.samples, 1u);
  EXPECT_EQ(report.folded_lines, 4u);
}

// An empty result says what happened, not always "is it folded stacks?".
TEST(Collapse, EmptyResultSaysWhy) {
  auto why = [](std::string_view text, const CollapseOptions& opt = {}) {
    ReadReport r;
    std::string out = test::Collapse(text, opt, &r);
    EXPECT_TRUE(out.empty()) << out;
    EXPECT_TRUE(r.empty);
    return EmptyResultReason(r, "");
  };
  EXPECT_EQ(why(""), "the input is empty");
  EXPECT_EQ(why("a;b 0\nc 0\n"), "the 2 stacks read all have a count of 0");
  CollapseOptions include;
  include.filter.include = {"zzz"};
  EXPECT_EQ(why("a;b 1\n", include), "--include left none of the 1 stack read");
  CollapseOptions both = include;
  both.filter.exclude = {"a"};
  EXPECT_EQ(why("a;b 1\nc;d 2\n", both), "--include/--exclude left none of the 2 distinct stacks read");
  // Samples without call chains (comm;leaf): a filter on callers cannot match; say so.
  std::string flat = "p 1 1.0: 1 cpu-clock:\n\t1 leaf (x)\n\np 1 1.0: 1 cpu-clock:\n\t2 other (x)\n\n";
  include.filter.include = {"main"};
  EXPECT_EQ(why(flat, include),
            "--include left none of the 2 distinct stacks read from 2 samples; their stacks "
            "hold only the sampled function: record call graphs (perf record -g) to select by "
            "callers");
  CollapseOptions event;
  event.perf.event_filter = "cycles";
  EXPECT_EQ(why(flat, event),
            "no samples of cycles (the input's 2 samples are of other events; choose with "
            "--event-filter)");
  // A tool's own filter (pf-flamegraph --base, pf-dot --focus) is named instead.
  ReadReport r;
  test::Collapse("a;b 1\n", {}, &r);
  EXPECT_FALSE(r.empty);
  StackTree t;
  t.AddStack(std::vector<StrId>{t.names().Intern("a"), t.names().Intern("b")}, 1);
  NoteEmptyResult(t, &r);
  EXPECT_EQ(EmptyResultReason(r, "--base=zzz"), "--base=zzz left none of the 1 stack read");
  // A recording whose samples the selection left out says so, not "the target was idle".
  ReadReport selected;
  selected.inputs = selected.recordings = 1;
  selected.selection = "--comms, --time";
  EXPECT_EQ(EmptyResultReason(selected, ""), "--comms, --time left none of the recording's samples");
  selected.selection.clear();
  EXPECT_EQ(EmptyResultReason(selected, ""),
            "the recording holds no samples (was the target idle, or the recording too short?)");
  CollapseOptions comms;
  comms.select.comms = "x";
  ReadReport names;
  test::Collapse("a;b 1\n", {}, &names);
  EXPECT_EQ(names.selection, "");
  EXPECT_EQ(comms.select.Names(), "--comms");
  // Input that is no stacks at all is an error that names the formats pf reads.
  ReadReport junk;
  try {
    test::Collapse("garbage\n", {}, &junk);
    ADD_FAILURE() << "garbage was folded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nothing in the input parsed"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("pf reads perf script text, folded stacks"),
              std::string::npos)
        << e.what();
  }
}

TEST(Collapse, DifferentialFoldedMergesByColumn) {
  EXPECT_EQ(test::Collapse("a;b 1 2\na;b 3 4\nc 5 0\n"), "a;b 4 6\nc 5 0\n");
  std::vector<std::unique_ptr<ByteSource>> in;
  in.push_back(MemoryInput("a 1 2\n", "diff.folded"));
  in.push_back(MemoryInput("a 1\n", "plain.folded"));
  StringSink sink;
  ReadReport report;
  EXPECT_THROW(CollapseSources(std::move(in), {}, sink, &report), Error);
}

TEST(Collapse, EmptyAndCommentOnlyInputGiveNothing) {
  EXPECT_EQ(test::Collapse(""), "");
  EXPECT_EQ(test::Collapse("# ========\n# nothing\n"), "");
}

TEST(Collapse, ForcedFormat) {
  CollapseOptions folded;
  folded.format = "folded";
  ReadReport report;
  EXPECT_EQ(test::Collapse("a;b 3\nweird\n", folded, &report), "a;b 3\n");
  EXPECT_EQ(report.warnings.size(), 1u);
}

// pf-collapse folds one file of perf script text on one thread into a list of its distinct
// stacks (app/collapse_files.cpp, FoldScriptFile), not a tree: it writes what the tree
// writes, and says what the tree's fold says, on text whose stacks repeat, end where others
// go on, differ in addresses, offsets or dsos alone, and whose names start one another.
TEST(Collapse, ScriptFoldedToAListWritesWhatTheTreeWrites) {
  const std::string dir = ::testing::TempDir() + "/pf_script_list_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::vector<std::string> texts;
  std::string text;
  uint64_t seed = 7;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  const char* funcs[] = {"foo",         "foo::bar", "foo_baz",      "fo",
                         "operator new(unsigned long)", "[unknown]", "f\xc3\xa9", "a;b",
                         "std::vector<int>::push_back(int const&)", "do_syscall_64"};
  const char* dsos[] = {"/usr/bin/app", "[kernel.kallsyms]", "/lib/libc.so.6", "[unknown]"};
  const char* comms[] = {"app", "app two", "java", "ap"};
  for (int i = 0; i < 3000; ++i) {
    text += std::string(comms[next(4)]) + " " + std::to_string(100 + next(3)) + "/" +
            std::to_string(200 + next(2)) + " [000] 1." + std::to_string(i) + ": " +
            (next(50) ? std::to_string(1 + next(1000)) : "18446744073709551615") +
            (next(40) ? " cpu-clock:ppp:\n" : " cycles:\n");
    for (uint64_t d = next(6); d-- > 0;) {
      text += '\t';
      text += std::to_string(1000 + next(3));
      text += ' ';
      text += funcs[next(10)];
      if (next(2)) text += "+0x" + std::to_string(next(3));
      text += " (";
      text += dsos[next(4)];
      text += ")\n";
    }
    if (next(200) == 0) text += "not a stack line\n";
    text += "\n";
  }
  texts.push_back(text);
  // Over several blocks, a line skipped in the last: the list's fold numbers the blocks' lines
  // itself (BlockReader::CountedLines).
  std::string big;
  for (std::string_view rest = text; big.size() < (9u << 20);) big += rest;
  std::string clean;
  LineSplitter lines(big);
  for (std::string_view line; lines.Next(&line);) {
    if (line != "not a stack line") clean.append(line).push_back('\n');
  }
  texts.push_back(clean + "app 1 1.0: 1 cycles:\n\tnot a stack line\n\n");
  const std::string corpus = test::kCorpus + "/tests/data/collapse-perf/";
  for (const char* f : {"cpp-stacks-std-function.txt", "go-stacks.txt", "java-inline.txt",
                        "no-events.txt", "single-event.txt", "single-line-stacks.txt",
                        "weird-stack-line.txt", "empty-line.txt"}) {
    if (test::FileExists(corpus + f)) texts.push_back(test::ReadFile(corpus + f));
  }
  texts.push_back("app 1 1.0: 1 cycles:\n\n");                      // no frames
  texts.push_back("app 1 1.0: 1 cycles:\n\t1 f (x)\n\nb 2 2.0: 1 instructions:\n\t1 g (x)\n");
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::string path = dir + "/in" + std::to_string(t) + ".txt";
    { std::ofstream(path, std::ios::binary) << texts[t]; }
    for (int o = 0; o < 6; ++o) {
      CollapseOptions opt;
      opt.threads = 1;
      opt.perf.include_pid = o == 1;
      opt.perf.include_tid = o == 2;
      opt.perf.annotate_kernel = opt.perf.annotate_jit = o == 3;
      opt.perf.include_addrs = o == 4;
      if (o == 5) opt.perf.skip_after = {"foo"};
      StringSink list, tree;
      ReadReport r1, r2;
      CollapseFiles({path}, opt, list, &r1);
      WriteCollapsed(CollapseFilesToTree({path}, opt, &r2), tree, &r2);
      EXPECT_EQ(list.data(), tree.data()) << t << " " << o;
      EXPECT_EQ(r1.warnings, r2.warnings) << t << " " << o;
      EXPECT_EQ(r1.notices, r2.notices) << t << " " << o;
      EXPECT_EQ(r1.samples, r2.samples);
      EXPECT_EQ(r1.event, r2.event);
      EXPECT_EQ(r1.empty, r2.empty);
      EXPECT_EQ(r1.other_event_samples, r2.other_event_samples);
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pf
