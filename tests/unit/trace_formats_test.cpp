// Tracepoints' formats (pfstream/trace_formats.h): tracing data laid out as perf writes it,
// read back through libtraceevent, naming tracepoints and printing their fields as perf
// script does, on format files saved from a 6.1 kernel (tests/data/tracing).

#include "pfstream/trace_formats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace pf {
namespace {

std::string DataFile(const std::string& name) {
  std::ifstream in(std::string(PF_SOURCE_DIR) + "/tests/data/tracing/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Blob() {
  TracingFiles f;
  f.header_page = DataFile("header_page");
  f.header_event = DataFile("header_event");
  f.formats = {{"sched", DataFile("sched_switch.format")},
               {"sched", DataFile("sched_process_exec.format")}};
  return TracingDataOf(f);
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A sched_switch record as the kernel lays it out (its format file's offsets).
std::string Switch(const char* prev, int prev_pid, int64_t state, const char* next, int next_pid) {
  std::string r(64, '\0');
  uint16_t type = 372;
  std::memcpy(&r[0], &type, 2);
  std::memcpy(&r[4], &prev_pid, 4);
  std::strncpy(&r[8], prev, 15);
  std::memcpy(&r[24], &prev_pid, 4);
  int prio = 120;
  std::memcpy(&r[28], &prio, 4);
  std::memcpy(&r[32], &state, 8);
  std::strncpy(&r[40], next, 15);
  std::memcpy(&r[56], &next_pid, 4);
  std::memcpy(&r[60], &prio, 4);
  return r;
}

TEST(TraceFormats, NamesAndPrintsAsPerfScript) {
  std::string blob = Blob();
  std::unique_ptr<TraceFormats> f = TraceFormats::Parse(Bytes(blob));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->Name(372), "sched:sched_switch");
  EXPECT_EQ(f->Name(1), "");
  std::string out;
  ASSERT_TRUE(f->Print(372, 1, Bytes(Switch("bash", 42, 1, "swapper/1", 0)), &out));
  EXPECT_EQ(out, "prev_comm=bash prev_pid=42 prev_prio=120 prev_state=S ==> next_comm=swapper/1 "
                 "next_pid=0 next_prio=120");
  out.clear();
  // Runnable (preempted): "R", and the preemption bit "+", as __print_flags reads them.
  f->Print(372, 1, Bytes(Switch("cc1", 7, 0x100, "sh", 8)), &out);
  EXPECT_EQ(out, "prev_comm=cc1 prev_pid=7 prev_prio=120 prev_state=R+ ==> next_comm=sh "
                 "next_pid=8 next_prio=120");
  out.clear();
  EXPECT_FALSE(f->Print(999, 0, Bytes(Switch("a", 1, 1, "b", 2)), &out));
}

TEST(TraceFormats, RecordsCutShortOrPointingAwayAreReadSafely) {
  std::string blob = Blob();
  std::unique_ptr<TraceFormats> f = TraceFormats::Parse(Bytes(blob));
  ASSERT_NE(f, nullptr);
  std::string out;
  std::string cut = Switch("bash", 42, 1, "x", 0).substr(0, 12);  // fields past the end: zeros
  EXPECT_TRUE(f->Print(372, 0, Bytes(cut), &out));
  // sched_process_exec's filename is a __data_loc string: a 16-bit offset and length into the
  // record. Pointing past the record reads the zeros after the copy.
  const std::string format = DataFile("sched_process_exec.format");
  const uint16_t id = static_cast<uint16_t>(std::stoi(format.substr(format.find("ID: ") + 4)));
  std::string exec(24, '\0');
  std::memcpy(&exec[0], &id, 2);
  uint32_t loc = (16u << 16) | 0xfff0;  // length 16 at offset 65520
  std::memcpy(&exec[8], &loc, 4);
  out.clear();
  EXPECT_TRUE(f->Print(id, 0, Bytes(exec), &out));
  EXPECT_EQ(out.rfind("filename= pid=0 old_pid=0", 0), 0u) << out;
}

TEST(TraceFormats, NotTracingDataIsRefused) {
  EXPECT_EQ(TraceFormats::Parse(Bytes("not tracing data")), nullptr);
  std::string blob = Blob();
  for (size_t n : {size_t{0}, size_t{10}, size_t{30}, blob.size() / 2}) {
    EXPECT_EQ(TraceFormats::Parse(Bytes(blob.substr(0, n))), nullptr) << n;
  }
}

}  // namespace
}  // namespace pf
