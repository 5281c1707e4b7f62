// pf-record --off-cpu's tracker (perf/off_cpu.h): switch-out samples and the records of a
// thread's return, taken in ring order, become offcpu-time samples weighted by the wait.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "io/input.h"
#include "io/output.h"
#include "perf/off_cpu.h"
#include "pfstream/perf_data.h"
#include "pfstream/perf_writer.h"

namespace pf {
namespace {

constexpr uint64_t kType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                           PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
                           PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
constexpr uint64_t kClockId = 1, kSwitchId = 2;

perf_event_attr Attr(uint64_t config) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = config;
  a.sample_type = kType;
  a.sample_id_all = 1;
  return a;
}

// Records as the kernel writes them into a ring: built by a writer, handed over one by one.
class Ring {
 public:
  Ring() : out_(sink_), w_(out_) {
    w_.SetObserver([this](std::span<const uint8_t> r) { records_.emplace_back(r.begin(), r.end()); });
    w_.WriteAttr(Attr(PERF_COUNT_SW_CPU_CLOCK), std::vector<uint64_t>{kClockId});
    records_.clear();
  }
  // A sample of `id`: a switch-out when id is kSwitchId.
  void Sample(uint64_t id, uint32_t tid, uint64_t time, uint64_t leaf) {
    SampleFields s;
    s.misc = PERF_RECORD_MISC_KERNEL;
    s.id = id;
    s.ip = 0xffffffff81000000;
    s.pid = 100;
    s.tid = tid;
    s.time = time;
    s.cpu = 1;
    s.callchain = {PERF_CONTEXT_KERNEL, 0xffffffff81000000, PERF_CONTEXT_USER, leaf};
    w_.WriteSample(s);
  }
  // A PERF_RECORD_SWITCH of `tid`: its return to a CPU, or (out) its leaving it.
  void Switch(uint32_t tid, uint64_t time, bool out) {
    uint64_t body[5];
    uint32_t ids[2] = {100, tid};
    std::memcpy(&body[0], ids, 8);
    body[1] = time;
    body[2] = kClockId;  // ID
    body[3] = 2;         // CPU 2, reserved 0
    body[4] = kClockId;  // IDENTIFIER
    std::vector<uint8_t> rec(8 + sizeof body);
    perf_event_header h{PERF_RECORD_SWITCH,
                        static_cast<uint16_t>(out ? PERF_RECORD_MISC_SWITCH_OUT : 0),
                        static_cast<uint16_t>(rec.size())};
    std::memcpy(rec.data(), &h, 8);
    std::memcpy(rec.data() + 8, body, sizeof body);
    records_.push_back(rec);
  }
  std::vector<std::vector<uint8_t>> Take() { return std::exchange(records_, {}); }

 private:
  StringSink sink_;
  BufferedWriter out_;
  PerfStreamWriter w_;
  std::vector<std::vector<uint8_t>> records_;
};

struct Written {
  uint32_t tid;
  uint64_t time, period, leaf;
};

class OffCpuTest : public ::testing::Test {
 protected:
  OffCpuTest() : tracker_(kOffCpuId), out_(sink_), w_(out_) {
    tracker_.AddAttr(Attr(PERF_COUNT_SW_CPU_CLOCK), std::vector<uint64_t>{kClockId}, false);
    tracker_.AddAttr(Attr(PERF_COUNT_SW_CONTEXT_SWITCHES), std::vector<uint64_t>{kSwitchId}, true);
    w_.WriteHeader();
    w_.WriteAttr(Attr(PERF_COUNT_SW_CPU_CLOCK), std::vector<uint64_t>{kClockId});
    w_.WriteAttr(OffCpuTracker::EventAttr(Attr(PERF_COUNT_SW_CPU_CLOCK)),
                 std::vector<uint64_t>{kOffCpuId});
  }
  // One pass: the records offered in this order; returns how many the tracker took.
  size_t Pass(const std::vector<std::vector<uint8_t>>& records) {
    size_t taken = 0;
    for (const auto& r : records) taken += tracker_.Take(r);
    tracker_.Flush(w_);
    return taken;
  }
  std::vector<Written> Samples() {
    w_.Flush();
    std::unique_ptr<ByteSource> src = MemoryInput(sink_.data(), "stream");
    PerfDataReader r(*src);
    std::vector<Written> out;
    Record rec;
    while (r.Next(&rec)) {
      Sample s;
      if (rec.type != kRecordSample || !r.ParseSample(rec, &s)) continue;
      EXPECT_EQ(s.id, kOffCpuId);
      EXPECT_EQ(s.callchain.size(), 4u);
      out.push_back({s.tid, s.time, s.period, s.callchain.empty() ? 0 : s.callchain.back()});
    }
    return out;
  }

  Ring ring_;
  OffCpuTracker tracker_;
  StringSink sink_;
  BufferedWriter out_;
  PerfStreamWriter w_;
};

TEST_F(OffCpuTest, AWaitIsFromItsSwitchOutToItsReturnWhateverTheRingOrder) {
  ring_.Switch(7, 500, false);  // read first: its CPU's ring was drained first
  ring_.Sample(kClockId, 7, 50, 0x111);
  ring_.Switch(7, 100, true);   // the record of leaving: the sample says it
  ring_.Sample(kSwitchId, 7, 100, 0x400);
  EXPECT_EQ(Pass(ring_.Take()), 3u);  // all but the clock's sample
  std::vector<Written> w = Samples();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].tid, 7u);
  EXPECT_EQ(w[0].time, 500u);  // stamped when it ran again
  EXPECT_EQ(w[0].period, 400u);
  EXPECT_EQ(w[0].leaf, 0x400u);
  EXPECT_EQ(tracker_.intervals(), 1u);
}

TEST_F(OffCpuTest, ASwitchOutReadAfterItsReturnIsMatchedWithIt) {
  ring_.Switch(8, 900, false);
  Pass(ring_.Take());
  ring_.Sample(kSwitchId, 8, 700, 0x800);
  Pass(ring_.Take());
  std::vector<Written> w = Samples();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].time, 900u);
  EXPECT_EQ(w[0].period, 200u);
}

TEST_F(OffCpuTest, WaitsWithoutBothEndsAreNotWritten) {
  ring_.Switch(3, 10, false);            // off the CPU since before the recording
  ring_.Sample(kSwitchId, 9, 20, 0x9);   // still waiting at the end
  ring_.Sample(kSwitchId, 0, 30, 0x0);   // the idle task
  ring_.Switch(0, 40, false);
  EXPECT_EQ(Pass(ring_.Take()), 4u);
  EXPECT_TRUE(Samples().empty());
}

TEST_F(OffCpuTest, ConsecutiveWaitsOfAThreadAreEachWritten) {
  ring_.Sample(kSwitchId, 5, 100, 0x1);
  ring_.Switch(5, 150, false);
  ring_.Sample(kSwitchId, 5, 200, 0x2);
  ring_.Switch(5, 260, false);
  Pass(ring_.Take());
  std::vector<Written> w = Samples();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].period, 50u);
  EXPECT_EQ(w[0].leaf, 0x1u);
  EXPECT_EQ(w[1].period, 60u);
  EXPECT_EQ(w[1].leaf, 0x2u);
}

}  // namespace
}  // namespace pf
