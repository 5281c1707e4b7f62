// perf script's sample selection: --time's forms read as perf 6.1's time-utils reads them,
// and the comm, pid, tid, CPU and time tests. (tests/e2e/select_test.sh holds pf-script and
// pf-collapse to perf script on real recordings.)
#include "pfstream/sample_selection.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace pf {
namespace {

constexpr uint64_t kSec = 1000000000;

std::vector<std::pair<uint64_t, uint64_t>> Pairs(const std::vector<TimeRange>& ranges) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const TimeRange& r : ranges) out.emplace_back(r.start, r.end);
  return out;
}

using P = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(TimeRanges, Seconds) {
  EXPECT_EQ(Pairs(ParseTimeRanges("1.5,2")), (P{{kSec + kSec / 2, 2 * kSec}}));
  EXPECT_EQ(Pairs(ParseTimeRanges(",2")), (P{{0, 2 * kSec}}));
  EXPECT_EQ(Pairs(ParseTimeRanges("1,")), (P{{kSec, 0}}));
  EXPECT_EQ(Pairs(ParseTimeRanges(",")), (P{{0, 0}}));
  EXPECT_EQ(Pairs(ParseTimeRanges("1.000000001,1.5")), (P{{kSec + 1, kSec + kSec / 2}}));
  EXPECT_EQ(Pairs(ParseTimeRanges("1,2 3,4")), (P{{kSec, 2 * kSec}, {3 * kSec, 4 * kSec}}));
  EXPECT_EQ(Pairs(ParseTimeRanges("1, 2 3,")), (P{{kSec, 2 * kSec}, {3 * kSec, 0}}));
}

TEST(TimeRanges, BadSecondsAreUsageErrors) {
  for (const char* bad : {"1", "", "2,1", "1.0000000001,", "1,2,3,4", "1,3 2,4", "a,b", "1x,2"}) {
    EXPECT_THROW(ParseTimeRanges(bad), UsageError) << bad;
  }
}

TEST(TimeRanges, PercentSlices) {
  const uint64_t first = 1000, last = 2000;
  // A slice ends a nanosecond before the next begins, but not at the last sample.
  EXPECT_EQ(Pairs(ParsePercentRanges("10%/2", first, last)), (P{{1100, 1199}}));
  EXPECT_EQ(Pairs(ParsePercentRanges("10%/1,10%/3", first, last)),
            (P{{1000, 1099}, {1200, 1299}}));
  EXPECT_EQ(Pairs(ParsePercentRanges("0%-10%,30%-40%", first, last)),
            (P{{1000, 1099}, {1300, 1399}}));
  EXPECT_EQ(Pairs(ParsePercentRanges("25%", first, last)), (P{{1000, 1249}}));
  EXPECT_EQ(Pairs(ParsePercentRanges("100%", first, last)), (P{{1000, 2000}}));
  EXPECT_EQ(Pairs(ParsePercentRanges("50%/2", first, last)), (P{{1500, 2000}}));
  for (const char* bad : {"5%/21", "%/2", "10%/2x", "50%x", "abc%", "-5%-10%", "10%-", "nan%"}) {
    EXPECT_THROW(ParsePercentRanges(bad, first, last), UsageError) << bad;
  }
}

TEST(SampleSelection, TimeAndCpu) {
  SelectionOptions o;
  o.time = "1,2";
  o.cpus = "1,3-4";
  SampleSelection sel(o);
  Sample s;
  s.cpu = 1;
  for (uint64_t t : {uint64_t{0}, kSec, 2 * kSec, kSec + 7}) {
    s.time = t;
    EXPECT_TRUE(sel.KeepsTimeAndCpu(s)) << t;  // (ends included; untimed samples kept)
  }
  for (uint64_t t : {kSec - 1, 2 * kSec + 1}) {
    s.time = t;
    EXPECT_FALSE(sel.KeepsTimeAndCpu(s)) << t;
  }
  s.time = kSec;
  for (uint32_t cpu : {0u, 2u, 5u, 100u}) {
    s.cpu = cpu;
    EXPECT_FALSE(sel.KeepsTimeAndCpu(s)) << cpu;
  }
  s.cpu = 4;
  EXPECT_TRUE(sel.KeepsTimeAndCpu(s));
  EXPECT_FALSE(sel.filters_threads());
}

TEST(SampleSelection, SeveralRanges) {
  SelectionOptions o;
  o.time = "1,2 3,";
  SampleSelection sel(o);
  Sample s;
  for (auto [t, keep] : {std::pair{kSec, true}, {2 * kSec + 1, false}, {3 * kSec, true},
                         {100 * kSec, true}, {kSec - 1, false}}) {
    s.time = t;
    EXPECT_EQ(sel.KeepsTimeAndCpu(s), keep) << t;
  }
}

TEST(SampleSelection, Threads) {
  SelectionOptions o;
  o.comms = "sh,prog";
  o.pids = "10,30";
  o.tids = "11,31,12";
  SampleSelection sel(o);
  EXPECT_TRUE(sel.filters_threads());
  EXPECT_TRUE(sel.KeepsTimeAndCpu(Sample{}));
  Sample s;
  s.pid = 10;
  s.tid = 12;
  EXPECT_TRUE(sel.KeepsThread(s, "prog"));
  EXPECT_FALSE(sel.KeepsThread(s, "progs"));
  EXPECT_FALSE(sel.KeepsThread(s, ":12"));
  s.pid = 20;
  EXPECT_FALSE(sel.KeepsThread(s, "sh"));
  s.pid = 30;
  s.tid = 30;
  EXPECT_FALSE(sel.KeepsThread(s, "sh"));
  EXPECT_TRUE(SampleSelection().empty());
  EXPECT_TRUE(SampleSelection().KeepsThread(s, "anything"));
}

TEST(SampleSelection, BadListsAreUsageErrors) {
  for (const char* bad : {"x", "1,,2", "-1", "1 2", "99999999999"}) {
    SelectionOptions o;
    o.pids = bad;
    EXPECT_THROW(SampleSelection{o}, UsageError) << bad;
  }
  SelectionOptions o;
  o.cpus = "1-";
  EXPECT_THROW(SampleSelection{o}, UsageError);
  o.cpus = "";
  o.time = "abc";
  EXPECT_THROW(SampleSelection{o}, UsageError);
  o.time = "10%/2";  // percentages wait for the recording
  EXPECT_NO_THROW(SampleSelection{o});
}

}  // namespace
}  // namespace pf
