// Tests of folding perf.data recordings (collapse/collapse.h over pfstream/): headers perf
// refuses, records cut short or compressed, two stages folding as one thread does, process
// maps across forks and exits, and what a recording says of its threads.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "app/files.h"
#include "base/error.h"
#include "collapse/collapse.h"
#include "collapse/test_seams.h"
#include "pfstream/perf_data.h"
#include "pfstream/perf_writer.h"
#include "pfstream/process_maps.h"
#include "pfstream/script_output.h"
#include "pfstream/session.h"
#include "symbolize/symbolizer.h"
#include "test_util.h"

namespace pf {
namespace {

using test::OptionsFor;
using test_seams::ForceTwoStageUnwinder;
using test_seams::TwoStageUnwinder;
// Every way the two stages share the unwinding, the tools' last.
constexpr TwoStageUnwinder kEveryUnwinder[] = {TwoStageUnwinder::kReadingThread,
                                               TwoStageUnwinder::kFoldingThread,
                                               TwoStageUnwinder::kByLoad};

// `o` on `threads` threads, where two fold every recording in two stages, whatever its size
// and whatever its samples carry.
CollapseOptions Staged(CollapseOptions o, int threads) {
  o.threads = threads;
  o.two_stage_bytes = 0;
  o.two_stage_fp_bytes = 0;
  return o;
}

TEST(Collapse, RefusesBinaryAndBrokenRecordings) {
  // A perf.data header cut short: read as a recording, refused with a clear message.
  std::string perf_data("PERFILE2\x68\0\0\0\0\0\0\0", 16);
  try {
    test::Collapse(perf_data);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.Describe().find("perf.data header is truncated"), std::string::npos)
        << e.Describe();
  }
  std::string garbage;
  for (int i = 0; i < 5000; ++i) garbage += static_cast<char>((i * 7919) % 256);
  EXPECT_THROW(test::Collapse(garbage), Error);
}

// A perf.data header that perf refuses is refused, not read as junk: sections inside the
// file and after its header, entry and attribute sizes that perf knows and that agree, ids
// inside the file (tools/perf/util/header.c). The file's entry: attr_size 144 at 16, the
// attribute section at 24, data at 40, one attribute at 120 (size 128, then its ids at 248).
TEST(Collapse, RefusesFileHeadersPerfRefuses) {
  const std::string data =
      test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/fuzz/corpus/perf_data/file.data");
  ASSERT_GT(data.size(), 4000u);
  auto with = [&](size_t at, uint64_t value, size_t width) {
    std::string d = data;
    std::memcpy(d.data() + at, &value, width);
    return d;
  };
  struct Case {
    std::string data;
    std::string message;
  };
  const std::vector<Case> cases = {
      {with(24, 0, 8),
       "attribute section (144 bytes at 0) is not inside the file after its header"},
      {with(24, data.size(), 8), "attribute section (144 bytes at"},
      {with(16, 200, 8), "attribute entries of 200 bytes: not a size perf writes"},
      {with(16, 64, 8), "attribute entries of 64 bytes"},
      {with(124, 100, 4), "event attribute of 100 bytes in an entry of 144"},
      {with(124, 0, 4), "event attribute of 0 bytes"},
      {with(248, 1u << 20, 8), "event ids (16 bytes at 1048576) are not inside the file"},
      {with(256, data.size(), 8), "are not inside the file"},
      {with(40, 0, 8), "data section (at 0) is not inside the file after its header"},
      {with(40, data.size() + 1, 8), "data section (at"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<ByteSource> src = MemoryInput(c.data, "bad.data");
    try {
      PerfDataReader reader(*src);
      ADD_FAILURE() << "accepted; expected: " << c.message;
    } catch (const Error& e) {
      EXPECT_NE(e.Describe().find(c.message), std::string::npos) << e.Describe();
      EXPECT_EQ(e.Describe().rfind("bad.data", 0), 0u) << e.Describe();
    }
  }
  // The file itself, and one whose data section runs past its end (cut short), are read.
  for (const std::string& d : {data, with(48, data.size(), 8)}) {
    std::unique_ptr<ByteSource> src = MemoryInput(d, "good.data");
    PerfDataReader reader(*src);
    Record r;
    int samples = 0;
    while (reader.Next(&r)) samples += r.type == kRecordSample;
    EXPECT_GT(samples, 0);
    ASSERT_EQ(reader.attrs().size(), 1u);
    EXPECT_EQ(reader.attrs()[0].name, "cpu-clock:ppp");
  }
}

// The features follow the data, which need not end 8-byte aligned (perf record -z's
// compressed records end anywhere): the event names of EVENT_DESC are read all the same.
TEST(Collapse, ReadsEventNamesFromAnUnalignedSection) {
  std::string d =
      test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/fuzz/corpus/perf_data/file.data");
  auto u64 = [&d](size_t at) {
    uint64_t v;
    std::memcpy(&v, d.data() + at, 8);
    return v;
  };
  // The feature table follows the data section; one entry (offset, size) a feature set in
  // the bitmap at 72, in order. EVENT_DESC is feature 12.
  const size_t table = u64(40) + u64(48);
  size_t entry = table;
  for (int f = 0; f < 12; ++f) entry += ((d[72 + f / 8] >> (f % 8)) & 1) ? 16 : 0;
  ASSERT_TRUE((d[72 + 1] >> 4) & 1) << "the corpus file has no EVENT_DESC";
  std::string desc = d.substr(u64(entry), u64(entry + 8));
  const size_t name_at = desc.find("cpu-clock:ppp");
  ASSERT_NE(name_at, std::string::npos);
  desc[name_at + 13] = 'H';  // in the name's padding: a name pf would not make up itself
  d.append(8 - d.size() % 8 + 4, '\0');  // at 4 past a multiple of 8
  const uint64_t moved = d.size(), size = desc.size();
  d += desc;
  std::memcpy(d.data() + entry, &moved, 8);
  std::memcpy(d.data() + entry + 8, &size, 8);
  std::unique_ptr<ByteSource> src = MemoryInput(d, "unaligned.data");
  PerfDataReader reader(*src);
  ASSERT_EQ(reader.attrs().size(), 1u);
  EXPECT_EQ(reader.attrs()[0].name, "cpu-clock:pppH");
}

// A perf.data file folded in two stages (read and unwound on one thread, named and folded on
// another) gives what one thread gives, whole or cut short in a record.
TEST(Collapse, TwoStagesFoldARecordingAsOneThreadDoes) {
  const std::string data =
      test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/fuzz/corpus/perf_data/file.data");
  ASSERT_GT(data.size(), 4000u);
  const std::string path = ::testing::TempDir() + "/two_stage.data";
  for (size_t size : {data.size(), data.size() - 1000, data.size() / 2}) {
    SCOPED_TRACE(size);
    { std::ofstream(path, std::ios::binary) << data.substr(0, size); }
    CollapseOptions one;
    one.threads = 1;
    StringSink out_one;
    ReadReport report_one;
    CollapseFiles({path}, one, out_one, &report_one);
    EXPECT_EQ(report_one.two_stage_inputs, 0u);
    EXPECT_FALSE(out_one.data().empty());
    // Unwound (here: the recorded chains read) by the reading thread, the folding one, or
    // as their loads share it.
    for (TwoStageUnwinder unwind : kEveryUnwinder) {
      SCOPED_TRACE(static_cast<int>(unwind));
      ForceTwoStageUnwinder force(unwind);
      const CollapseOptions two = Staged({}, 2);
      StringSink out_two;
      ReadReport report_two;
      CollapseFiles({path}, two, out_two, &report_two);
      EXPECT_EQ(report_two.two_stage_inputs, 1u);
      EXPECT_EQ(out_two.data(), out_one.data());
      EXPECT_EQ(report_two.samples, report_one.samples);
      EXPECT_EQ(report_two.warnings, report_one.warnings);
    }
  }
  std::remove(path.c_str());
}

// A perf.data file (file mode) of one cpu-clock event (sample_type IP|TID|TIME|PERIOD, plus
// CALLCHAIN when asked) and the given records; for the tests below.
struct PerfFile {
  std::string data;
  void Record(uint32_t type, uint16_t misc, const std::string& body) {
    uint16_t size = static_cast<uint16_t>(8 + body.size());
    data.append(reinterpret_cast<const char*>(&type), 4);
    data.append(reinterpret_cast<const char*>(&misc), 2);
    data.append(reinterpret_cast<const char*>(&size), 2);
    data += body;
  }
  template <typename... T>
  static std::string Words(T... v) {
    std::string s;
    (s.append(reinterpret_cast<const char*>(&v), sizeof v), ...);
    return s;
  }
  void Sample(uint32_t pid, uint32_t tid, uint64_t time, bool callchain,
              bool stack_copy = false) {
    std::string body = Words(uint64_t{0x1234}, pid, tid, time, uint64_t{1});
    if (callchain) body += Words(uint64_t{2}, uint64_t{0xfffffffffffffe00}, uint64_t{0x1234});
    if (stack_copy) body += Words(uint64_t{0});  // an empty stack copy
    Record(9, 2, body);  // PERF_RECORD_SAMPLE, user mode
  }
  // A sample type with a call chain, and an empty one recorded (a DWARF sample's, in user
  // mode: the recorded chain is the kernel's part).
  void SampleWithEmptyChain(uint32_t pid, uint32_t tid, uint64_t time, uint64_t ip) {
    Record(9, 2, Words(ip, pid, tid, time, uint64_t{1}, uint64_t{0}));
  }
  void Comm(uint32_t pid, uint32_t tid, std::string name) {
    name.append(8 - name.size() % 8, '\0');
    Record(3, 0, Words(pid, tid) + name);
  }
  // A user-mode MMAP (of 64 KiB at offset 0 unless told), and a FORK or EXIT.
  void Mmap(uint32_t pid, uint64_t start, std::string path, uint64_t len = 0x10000,
            uint64_t pgoff = 0) {
    path.append(8 - path.size() % 8, '\0');
    Record(1, 2, Words(pid, pid, start, len, pgoff) + path);
  }
  static constexpr uint32_t kFork = 7, kExit = 4;
  void Task(uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid) {
    Record(type, 0, Words(pid, ppid, tid, ptid, uint64_t{0}));
  }
  // (`stack_copies`: the samples carry copies of the user stack, PERF_SAMPLE_STACK_USER.)
  std::string File(bool callchain, bool stack_copies = false) const {
    const uint64_t attr_size = 16 + 120;
    uint64_t sample_type = 1 | 2 | 4 | 256 | (callchain ? 32 : 0) | (stack_copies ? 8192 : 0);
    std::string attr = Words(uint32_t{1}, uint32_t{120}, uint64_t{0}, uint64_t{1}, sample_type,
                             uint64_t{0}, uint64_t{0});
    attr.resize(120, '\0');
    const uint64_t attrs_off = 104, data_off = attrs_off + attr_size;
    std::string out = Words(uint64_t{0x32454c4946524550}, uint64_t{104}, attr_size, attrs_off,
                            attr_size, data_off, uint64_t{data.size()}, uint64_t{0}, uint64_t{0});
    out.resize(104, '\0');
    return out + attr + Words(data_off, uint64_t{0}) + data;
  }
};

std::string FoldFile(const std::string& bytes, int threads,
                     TwoStageUnwinder unwind = TwoStageUnwinder::kByLoad,
                     ReadReport* report_out = nullptr) {
  // (Named by the process: ctest runs tests side by side, and they all fold through here.)
  const std::string path = ::testing::TempDir() + "/made." + std::to_string(getpid()) + ".data";
  { std::ofstream(path, std::ios::binary) << bytes; }
  const CollapseOptions o = Staged({}, threads);
  ForceTwoStageUnwinder force(unwind);
  StringSink out;
  ReadReport report;
  CollapseFiles({path}, o, out, &report);
  std::remove(path.c_str());
  EXPECT_EQ(report.two_stage_inputs, threads > 1 ? 1u : 0u);
  if (report_out) *report_out = report;
  return out.data();
}

// By default only a recording whose samples carry stack copies is folded in two stages: for
// frame-pointer call chains the second thread costs more CPU than it saves wall time. Either
// way the fold is the one thread's.
TEST(Collapse, OnlyRecordingsWithStackCopiesFoldInTwoStagesByDefault) {
  for (bool stack_copies : {false, true}) {
    SCOPED_TRACE(stack_copies);
    PerfFile f;
    f.Comm(100, 100, "foo");
    for (uint64_t t = 1; t <= 3; ++t) f.Sample(100, 100, t, true, stack_copies);
    const std::string path =
        ::testing::TempDir() + "/stages." + std::to_string(getpid()) + ".data";
    { std::ofstream(path, std::ios::binary) << f.File(true, stack_copies); }
    std::string outs[2];
    for (unsigned threads : {1u, 2u}) {
      CollapseOptions o;
      o.threads = threads;
      o.two_stage_bytes = 0;  // (two_stage_fp_bytes: the default)
      StringSink out;
      ReadReport report;
      CollapseFiles({path}, o, out, &report);
      EXPECT_EQ(report.two_stage_inputs, threads == 2 && stack_copies ? 1u : 0u);
      EXPECT_EQ(report.samples, 3u);
      outs[threads - 1] = out.data();
    }
    EXPECT_EQ(outs[1], outs[0]);
    std::remove(path.c_str());
  }
}

// A thread sampled before any COMM names it is ":TID", and that changes what a later COMM does
// (perf names the process of a COMM from another thread only while it has no name): both
// stages must see every sample so, whichever unwinds it. (A misaligned record makes what
// follows it go through the reading thread whatever the mode.)
TEST(Collapse, TwoStagesNameThreadsAsOneThreadDoes) {
  PerfFile f;
  // (Times 0, as the COMMs carry none: the records stay in file order.)
  f.Sample(100, 100, 0, true);
  f.Comm(100, 101, "foo");
  f.Record(100, 0, std::string(4, '\0'));  // an unknown record of 12 bytes
  f.Sample(100, 100, 0, true);
  f.Comm(100, 100, "foo");
  f.Sample(100, 100, 0, true);
  const std::string file = f.File(true);
  const std::string one = FoldFile(file, 1);
  EXPECT_EQ(one, "# pf-unit: nanoseconds\n:100;[unknown] 2\nfoo;[unknown] 1\n");
  for (TwoStageUnwinder unwind : kEveryUnwinder) {
    EXPECT_EQ(FoldFile(file, 2, unwind), one) << static_cast<int>(unwind);
  }
}

// Samples without a call chain of a key folded sample by sample (a one-letter comm before a
// five-digit thread id takes the time into the Perl script's comm): each keeps its frame.
TEST(Collapse, SamplesWithoutChainsKeepTheirFrameWhenFoldedOneByOne) {
  PerfFile f;
  f.Comm(19375, 19375, "w");
  f.Sample(19375, 19375, 1000, false);
  f.Sample(19375, 19375, 2000, false);
  const std::string folded = FoldFile(f.File(false), 1);
  EXPECT_EQ(folded, "# pf-unit: nanoseconds\nw_19375_____0.000001:;[unknown] 1\n"
                    "w_19375_____0.000002:;[unknown] 1\n");
}

// The table of sample keys is emptied when full: a key forgotten and found fresh again folds
// as it did, whether its samples fold alike (their NamedKey) or one by one (a one-letter comm
// before a five-digit thread id), on one thread or two.
TEST(Collapse, ForgottenSampleKeysFoldAsBefore) {
  PerfFile f;
  f.Comm(19375, 19375, "w");
  f.Comm(200, 200, "two");
  f.Comm(201, 201, "too");
  for (uint64_t t = 1; t <= 12; ++t) {
    f.Sample(19375, 19375, 1000 * t, true);
    f.Sample(200 + t % 2, 200 + t % 2, 1000 * t + 1, true);
    if (t % 3 == 0) f.Sample(200, 200, 1000 * t + 2, true);
  }
  PerfFile plain;  // (no call chains: the ip stands for one)
  plain.Comm(19375, 19375, "w");
  plain.Comm(300, 300, "xy");
  for (uint64_t t = 1; t <= 6; ++t) {
    plain.Sample(19375, 19375, 1000 * t, false);
    plain.Sample(300, 300, 1000 * t + 1, false);
  }
  const std::string files[] = {
      f.File(true), plain.File(false),
      test::ReadFile(std::string(PF_SOURCE_DIR) + "/tests/fuzz/corpus/perf_data/file.data")};
  for (const std::string& file : files) {
    const std::string whole = FoldFile(file, 1);
    EXPECT_FALSE(whole.empty());
    for (size_t keys : {1, 2, 3}) {
      SCOPED_TRACE(keys);
      test_seams::sample_key_keys.store(keys);
      EXPECT_EQ(FoldFile(file, 1), whole);
      for (TwoStageUnwinder unwind : kEveryUnwinder) {
        EXPECT_EQ(FoldFile(file, 2, unwind), whole) << static_cast<int>(unwind);
      }
      test_seams::sample_key_keys.store(0);
    }
  }
}

// Where the sample type has a call chain, perf script prints no ip on the event line, so
// samples that differ in their ip alone fold alike: the first is named and folded from its
// frames, the others as it was (a DWARF recording's samples in a loop differ so, their leaf
// named in the unwound chain).
TEST(Collapse, SamplesThatDifferInTheirIpAloneAreNamedOnce) {
  PerfFile f;
  f.Comm(300, 300, "loop");
  for (uint64_t i = 0; i < 40; ++i) f.SampleWithEmptyChain(300, 300, 1000 + i, 0x4000 + 4 * i);
  f.Comm(301, 301, "other");
  f.SampleWithEmptyChain(301, 301, 2000, 0x4000);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    ReadReport report;
    EXPECT_EQ(FoldFile(f.File(true), threads, TwoStageUnwinder::kByLoad, &report),
              "# pf-unit: nanoseconds\nloop 40\nother 1\n");
    EXPECT_EQ(report.samples, 41u);
    EXPECT_EQ(report.named_folds, 2u);
  }
}

// perf inject -b writes HEADER_BUILD_ID records into a file's data section: the reader hands
// them over as records (its build-id table stays the header's, for threads reading it while
// it reads) and the Session gives the build-id to the maps of that file.
TEST(Collapse, BuildIdRecordsInAFileGoToTheSession) {
  PerfFile f;
  std::string id(20, '\0');
  for (int i = 0; i < 20; ++i) id[i] = static_cast<char>(0xa0 + i);
  std::string path = "/nonexistent/libbuilt.so";
  path.append(8 - path.size() % 8, '\0');
  f.Record(67, 0, PerfFile::Words(uint32_t{4242}) + id + std::string(4, '\0') + path);
  // MMAP: pid, tid, start, len, pgoff, filename.
  f.Record(1, 2, PerfFile::Words(uint32_t{4242}, uint32_t{4242}, uint64_t{0x7000000},
                                 uint64_t{0x10000}, uint64_t{0}) + path);
  const std::string file = f.File(false);
  std::unique_ptr<ByteSource> src = MemoryInput(file, "made.data");
  PerfDataReader reader(*src);
  EXPECT_TRUE(reader.build_ids().empty());
  Symbolizer symbolizer(Symbolizer::Options{});
  Session session(symbolizer);
  Record r;
  std::vector<uint32_t> types;
  while (reader.Next(&r)) {
    types.push_back(r.type);
    session.OnRecord(reader, r);
  }
  EXPECT_EQ(types, (std::vector<uint32_t>{67, 1}));
  EXPECT_TRUE(reader.build_ids().empty());
  const MapTable* maps = session.MapsOf(4242);
  ASSERT_NE(maps, nullptr);
  ASSERT_EQ(maps->size(), 1u);
  EXPECT_EQ(maps->begin()->second.build_id, "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3");
}

// The folding thread maps pages ahead of the reading one in a file (io/page_ahead.h); a
// recording read from memory or a pipe has no pages to map (nor to give back).
TEST(Collapse, AMappedRecordingIsMappedWholeForPagesAhead) {
  PerfFile f;
  f.Record(1, 2, PerfFile::Words(uint32_t{1}, uint32_t{1}, uint64_t{0x7000000}, uint64_t{0x10000},
                                 uint64_t{0}) + std::string("/bin/x\0\0", 8));
  const std::string file = f.File(false);
  char path[] = "/tmp/pf-collapse-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, file.data(), file.size()), static_cast<ssize_t>(file.size()));
  close(fd);
  {
    std::unique_ptr<ByteSource> mapped = OpenInput(path);
    PerfDataReader reader(*mapped);
    EXPECT_EQ(reader.mapped().size(), file.size());
    std::unique_ptr<ByteSource> memory = MemoryInput(file, "made.data");
    PerfDataReader from_memory(*memory);
    EXPECT_TRUE(from_memory.mapped().empty());
  }
  unlink(path);
}

// A forked process starts with its parent's maps and each goes its own way after: a map one
// of them adds is not the other's. Until then they share one table (a shell's thousands of
// subshells would otherwise copy it thousands of times).
TEST(Collapse, ForkedProcessesShareMapsUntilOneMapsSomething) {
  PerfFile f;
  auto fork = [&f](uint32_t pid, uint32_t ppid) { f.Task(PerfFile::kFork, pid, ppid, pid, ppid); };
  f.Mmap(100, 0x7000000, "/nonexistent/liba.so");
  fork(200, 100);
  fork(300, 100);
  f.Mmap(200, 0x8000000, "/nonexistent/libb.so");
  fork(400, 200);
  f.Mmap(100, 0x9000000, "/nonexistent/libc.so");
  const std::string file = f.File(false);
  std::unique_ptr<ByteSource> src = MemoryInput(file, "made.data");
  PerfDataReader reader(*src);
  Symbolizer symbolizer(Symbolizer::Options{});
  Session session(symbolizer);
  Record r;
  while (reader.Next(&r)) session.OnRecord(reader, r);
  auto paths = [&](uint32_t pid) {
    std::vector<std::string_view> v;
    if (const MapTable* maps = session.MapsOf(pid)) {
      for (const auto& [start, m] : *maps) v.push_back(m.path);
    }
    return v;
  };
  using V = std::vector<std::string_view>;
  EXPECT_EQ(paths(100), (V{"/nonexistent/liba.so", "/nonexistent/libc.so"}));
  EXPECT_EQ(paths(200), (V{"/nonexistent/liba.so", "/nonexistent/libb.so"}));
  EXPECT_EQ(paths(300), (V{"/nonexistent/liba.so"}));
  EXPECT_EQ(paths(400), (V{"/nonexistent/liba.so", "/nonexistent/libb.so"}));
  EXPECT_EQ(session.MapsOf(400), session.MapsOf(200));  // not copied
  EXPECT_NE(session.MapsOf(300), session.MapsOf(100));  // the parent copied before it mapped
  EXPECT_NE(session.Generation(400), MapsGeneration{});
}

// ProcessMaps alone: a new map cuts away the parts of the older ones it overlaps (what is
// left of one keeps its file offsets), and a thread is named by its last COMM, its parent's
// comm, or as perf names a thread it never saw.
TEST(ProcessMaps, ANewMapCutsTheOldOnesAndThreadsTakeTheirParentsComm) {
  PerfFile f;
  f.Mmap(100, 0x10000, "/nonexistent/liba.so", 0x40000, 0x1000);
  f.Mmap(100, 0x20000, "/nonexistent/libb.so");
  f.Comm(100, 100, "parent");
  f.Task(PerfFile::kFork, 100, 100, 101, 100);  // a thread of it
  const std::string file = f.File(false);
  std::unique_ptr<ByteSource> src = MemoryInput(file, "made.data");
  PerfDataReader reader(*src);
  ProcessMaps maps;
  Record r;
  while (reader.Next(&r)) maps.OnRecord(reader, r);
  const MapTable* table = maps.MapsOf(100);
  ASSERT_NE(table, nullptr);
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t, std::string_view>> got;
  for (const auto& [start, m] : *table) got.emplace_back(m.start, m.end, m.pgoff, m.path);
  using T = std::tuple<uint64_t, uint64_t, uint64_t, std::string_view>;
  EXPECT_EQ(got, (std::vector<T>{{0x10000, 0x20000, 0x1000, "/nonexistent/liba.so"},
                                 {0x20000, 0x30000, 0, "/nonexistent/libb.so"},
                                 {0x30000, 0x50000, 0x21000, "/nonexistent/liba.so"}}));
  ASSERT_NE(maps.FindUser(100, 0x4ffff), nullptr);
  EXPECT_EQ(maps.FindUser(100, 0x4ffff)->path, "/nonexistent/liba.so");
  EXPECT_EQ(maps.FindUser(100, 0x50000), nullptr);
  EXPECT_EQ(maps.FindUser(200, 0x20000), nullptr);
  EXPECT_EQ(maps.Comm(101), "parent");
  EXPECT_EQ(maps.Comm(102), ":102");
  EXPECT_EQ(maps.Comm(0), "swapper");
}

// ProcessMaps keeps what it found for the last processes and threads asked about (eight, by
// pid and tid): after every record, for processes that share those places (pids 8 apart)
// and that fork, map, exit, come again and are renamed, each answer is the one a look-up in
// the tables gives.
TEST(ProcessMaps, KeptLookupsAnswerAsTheTables) {
  PerfFile f;
  constexpr uint32_t kFork = PerfFile::kFork, kExit = PerfFile::kExit;
  f.Mmap(100, 0x7000000, "/nonexistent/liba.so");
  f.Comm(100, 100, "first");
  f.Task(kFork, 108, 100, 108, 100);
  f.Mmap(108, 0x8000000, "/nonexistent/libb.so");
  f.Task(kFork, 116, 108, 116, 108);
  f.Comm(116, 116, "third");
  f.Mmap(116, 0x7000000, "/nonexistent/libc.so");
  f.Task(kExit, 108, 100, 108, 100);
  f.Task(kFork, 108, 116, 108, 116);  // the pid again, another parent
  f.Comm(108, 108, "again");
  f.Mmap(108, 0x9000000, "/nonexistent/libd.so");
  f.Task(kExit, 116, 108, 116, 108);
  f.Mmap(100, 0x9000000, "/nonexistent/libe.so");
  const std::string file = f.File(false);
  std::unique_ptr<ByteSource> src = MemoryInput(file, "made.data");
  PerfDataReader reader(*src);
  ProcessMaps maps;
  maps.ForgetExited(true);
  Record r;
  size_t records = 0;
  while (reader.Next(&r)) {
    maps.OnRecord(reader, r);
    ++records;
    for (int round = 0; round < 2; ++round) {
      // (108 first: the pid asked last before the record; 101 in a place of its own.)
      for (uint32_t pid : {108u, 101u, 100u, 116u, 124u, 108u}) {
        SCOPED_TRACE(testing::Message() << "record " << records << ", pid " << pid);
        MapsGeneration own;
        const MapTable* table = maps.MapsOf(pid, &own);
        for (uint64_t a : {0x7000010, 0x8000010, 0x9000010}) {
          const MapEntry* want = table ? FindMap(*table, a) : nullptr;
          EXPECT_EQ(maps.FindUser(pid, a), want);
        }
        EXPECT_EQ(maps.Generation(pid).value,
                  (maps.KernelGeneration() << 32) ^ (table ? own.value : 0));
      }
    }
  }
  EXPECT_EQ(records, 13u);
  EXPECT_EQ(maps.Comm(100), "first");
  EXPECT_EQ(maps.Comm(108), "again");
  EXPECT_EQ(maps.Comm(116), "third");
  EXPECT_EQ(maps.Comm(124), ":124");
  EXPECT_EQ(maps.Comm(108), "again");
  EXPECT_NE(maps.MapsOf(116), nullptr);  // exited, kept a while for late samples
}

// With ForgetExited, a process forked in the recording is forgotten once its last thread
// exits (its main thread may exit first; the EXIT of a thread no FORK named is not one): when its
// pid is used again, whose new process has other maps generations than it had. A process that ran
// before the recording is never forgotten: not all its threads are known.
TEST(Collapse, ExitedProcessesAreForgottenWhenAsked) {
  PerfFile f;
  constexpr uint32_t kFork = PerfFile::kFork, kExit = PerfFile::kExit;
  f.Mmap(100, 0x7000000, "/nonexistent/liba.so");
  f.Task(kFork, 200, 100, 200, 100);  // a process
  f.Task(kFork, 200, 200, 201, 200);  // and its second thread
  f.Mmap(200, 0x8000000, "/nonexistent/libb.so");
  f.Task(kExit, 200, 100, 200, 100);  // the main thread ends first
  f.Task(kExit, 200, 200, 202, 200);  // a thread whose FORK was lost: not counted
  const size_t main_thread_exited = f.data.size();
  f.Task(kExit, 200, 200, 201, 200);
  const size_t process_exited = f.data.size();
  f.Task(kExit, 100, 1, 100, 1);      // ran before: kept
  f.Task(kFork, 200, 100, 200, 100);  // the pid again
  f.Mmap(200, 0x9000000, "/nonexistent/libc.so");
  const std::string file = f.File(false);
  for (bool forget : {false, true}) {
    SCOPED_TRACE(forget ? "forget" : "keep");
    std::unique_ptr<ByteSource> src = MemoryInput(file, "made.data");
    PerfDataReader reader(*src);
    Symbolizer symbolizer(Symbolizer::Options{});
    Session session(symbolizer);
    session.ForgetExited(forget);
    Record r;
    MapsGeneration generation;
    size_t at = 0;
    while (reader.Next(&r)) {
      session.OnRecord(reader, r);
      at += 8 + r.body.size();
      if (at == main_thread_exited) {
        ASSERT_NE(session.MapsOf(200), nullptr);
        EXPECT_EQ(session.MapsOf(200)->size(), 2u);
        generation = session.Generation(200);
      }
      if (at == process_exited) {  // kept for samples of its exit
        ASSERT_NE(session.MapsOf(200), nullptr);
        EXPECT_EQ(session.MapsOf(200)->size(), 2u);
      }
    }
    ASSERT_NE(session.MapsOf(100), nullptr);
    ASSERT_NE(session.MapsOf(200), nullptr);
    EXPECT_EQ(session.MapsOf(200)->size(), 2u);  // its parent's liba.so and libc.so
    EXPECT_NE(session.Generation(200), generation);
  }
}

// An exited process stays for samples that come after its last EXIT (the kernel samples its
// exit path after writing the record; perf script names their frames), until kExitedKept more
// processes have exited; a pid used again names a new process, without the old one's maps even
// when its parent is not known.
TEST(ProcessMaps, ExitedProcessesStayAWhile) {
  PerfFile f;
  constexpr uint32_t kFork = PerfFile::kFork, kExit = PerfFile::kExit;
  f.Mmap(100, 0x7000000, "/nonexistent/liba.so");
  f.Task(kFork, 200, 100, 200, 100);
  f.Mmap(200, 0x8000000, "/nonexistent/libb.so");
  f.Task(kExit, 200, 100, 200, 100);
  f.Task(kFork, 300, 100, 300, 100);
  f.Mmap(300, 0x8000000, "/nonexistent/libc.so");
  f.Task(kExit, 300, 100, 300, 100);
  f.Task(kFork, 300, 999, 300, 999);  // the pid again, from a parent not known
  const size_t reused = f.data.size();
  for (uint32_t pid = 1000; pid < 1000 + ProcessMaps::kExitedKept; ++pid) {
    f.Task(kFork, pid, 100, pid, 100);
    f.Task(kExit, pid, 100, pid, 100);
  }
  const std::string file = f.File(false);
  std::unique_ptr<ByteSource> src = MemoryInput(file, "made.data");
  PerfDataReader reader(*src);
  ProcessMaps maps;
  maps.ForgetExited(true);
  Record r;
  size_t at = 0;
  while (reader.Next(&r)) {
    maps.OnRecord(reader, r);
    at += 8 + r.body.size();
    if (at == reused) {
      ASSERT_NE(maps.FindUser(200, 0x8000010), nullptr);  // exited, still named
      EXPECT_EQ(maps.FindUser(300, 0x8000010), nullptr);  // not the exited 300's libc.so
    }
  }
  EXPECT_EQ(maps.MapsOf(200), nullptr);  // forgotten after kExitedKept more
  EXPECT_NE(maps.MapsOf(1000 + ProcessMaps::kExitedKept - 1), nullptr);
  EXPECT_NE(maps.MapsOf(100), nullptr);
}

// perf record -z: the records as one zstd stream, flushed into COMPRESSED records (type 81,
// or 83 with its size and padding, as perf 6.15 writes) every `chunk` input bytes, so
// records straddle two of them.
std::string Compressed(const std::string& records, size_t chunk, bool second_kind) {
  ZSTD_CStream* z = ZSTD_createCStream();
  ZSTD_initCStream(z, 1);
  std::string out;
  for (size_t at = 0; at < records.size(); at += chunk) {
    ZSTD_inBuffer in{records.data() + at, std::min(chunk, records.size() - at), 0};
    std::string packed(ZSTD_compressBound(in.size) + 64, '\0');
    ZSTD_outBuffer o{packed.data(), packed.size(), 0};
    while (in.pos < in.size) ZSTD_compressStream(z, &o, &in);
    ZSTD_flushStream(z, &o);
    packed.resize(o.pos);
    PerfFile c;
    if (second_kind) {
      std::string body = PerfFile::Words(uint64_t{packed.size()}) + packed;
      body.append((8 - body.size() % 8) % 8, '\0');
      c.Record(83, 0, body);
    } else {
      c.Record(81, 0, packed);
    }
    out += c.data;
  }
  ZSTD_freeCStream(z);
  return out;
}

// The records a reader gives, as bytes (type, misc, body).
std::string ReadAll(const std::string& file, uint64_t* bad = nullptr) {
  std::unique_ptr<ByteSource> src = MemoryInput(file, "made.data");
  PerfDataReader reader(*src);
  std::string out;
  Record r;
  while (reader.Next(&r)) {
    out += PerfFile::Words(r.type, r.misc);
    out.append(reinterpret_cast<const char*>(r.body.data()), r.body.size());
  }
  if (bad) *bad = reader.bad_records();
  return out;
}

TEST(Collapse, CompressedRecordsReadAsThePlainOnes) {
  PerfFile f;
  // (Times 0, as the COMMs carry none: the records stay in file order.)
  f.Comm(100, 100, "foo");
  for (int i = 0; i < 300; ++i) f.Sample(100, 100, 0, true);
  f.Comm(100, 100, "bar");
  f.Sample(100, 100, 0, true);
  const std::string plain = f.File(true);
  const std::string records = ReadAll(plain);
  const std::string folded = FoldFile(plain, 1);
  EXPECT_EQ(folded, "# pf-unit: nanoseconds\nbar;[unknown] 1\nfoo;[unknown] 300\n");
  for (bool second_kind : {false, true}) {
    for (size_t chunk : {size_t{1}, size_t{100}, size_t{4096}, f.data.size()}) {
      SCOPED_TRACE(std::to_string(chunk) + (second_kind ? " COMPRESSED2" : " COMPRESSED"));
      PerfFile z;
      z.data = Compressed(f.data, chunk, second_kind);
      const std::string file = z.File(true);
      uint64_t bad = 1;
      EXPECT_EQ(ReadAll(file, &bad), records);
      EXPECT_EQ(bad, 0u);
      EXPECT_EQ(FoldFile(file, 1), folded);
      EXPECT_EQ(FoldFile(file, 2), folded);
    }
  }
}

// A compressed record that does not inflate is counted, and so is every one after it (the
// stream cannot be picked up again); the records before it are read. (zstd frames carry no
// checksum: only damage its decoder can see is caught, such as a reserved block type.)
TEST(Collapse, CorruptCompressedRecordsAreCountedNotRead) {
  PerfFile f;
  f.Comm(100, 100, "foo");
  for (uint64_t t = 1; t <= 50; ++t) f.Sample(100, 100, t, true);
  PerfFile z;
  z.data = Compressed(f.data, 256, false);
  // The third compressed record's data: all ones (a last block of the reserved type).
  size_t at = 0, records = 0;
  for (; at < z.data.size(); ++records) {
    uint16_t size;
    std::memcpy(&size, z.data.data() + at + 6, 2);
    if (records == 2) std::fill(z.data.begin() + at + 8, z.data.begin() + at + size, '\xff');
    at += size;
  }
  ASSERT_GT(records, 4u);
  uint64_t bad = 0;
  std::string read = ReadAll(z.File(true), &bad);
  EXPECT_EQ(bad, records - 2);
  // What the first two held: 512 bytes less the record that straddles their end.
  EXPECT_GT(read.size(), 512u - 80u);
  EXPECT_LE(read.size(), 512u);
  EXPECT_EQ(ReadAll(f.File(true)).substr(0, read.size()), read);
  // Both tools say so, once, with the count.
  const std::string path = ::testing::TempDir() + "/corrupt_z.data";
  { std::ofstream(path, std::ios::binary) << z.File(true); }
  const std::string warning = path + ": skipped " + std::to_string(records - 2) +
                              " malformed records (a bad size, a sample cut short or of an "
                              "unknown event, an unreadable event attribute, or compressed "
                              "data that does not inflate)";
  StringSink folded;
  ReadReport report;
  CollapseFiles({path}, {}, folded, &report);
  EXPECT_EQ(report.warnings, std::vector<std::string>{warning});
  StringSink text;
  ScriptReport script;
  RunScript(path, {}, text, &script);
  EXPECT_EQ(script.skipped, warning);
  EXPECT_FALSE(script.truncated);
  std::remove(path.c_str());
  // A COMPRESSED2 record whose size runs past its end.
  PerfFile lying;
  lying.Record(83, 0, PerfFile::Words(uint64_t{1000}) + std::string(8, '\0'));
  EXPECT_EQ(ReadAll(lying.File(true), &bad), "");
  EXPECT_EQ(bad, 1u);
}

// A recording holds the PID: --pid and --tid print it (not "prog-?"), as they do from the
// text of `pf-script -F +pid` (and stackcollapse-perf.pl --pid from perf script -F +pid). A
// ';' in the comm becomes ':', as in every other name, instead of splitting the first frame.
TEST(Collapse, RecordingsGiveThePidAndACommWithASemicolonStaysOneFrame) {
  PerfFile f;
  f.Comm(100, 100, "map;churn");
  f.Comm(100, 101, "map;churn");
  for (uint64_t t = 1; t <= 4; ++t) f.Sample(100, t % 2 ? 100 : 101, t, true);
  const std::string path = ::testing::TempDir() + "/pid." + std::to_string(getpid()) + ".data";
  { std::ofstream(path, std::ios::binary) << f.File(true); }
  StringSink text;
  ScriptOptions plus_pid;
  plus_pid.fields = {"+pid"};
  RunScript(path, plus_pid, text, nullptr);
  ASSERT_NE(text.data().find("map;churn   100/101 "), std::string::npos) << text.data();
  for (const char* o : {"", "pid", "tid"}) {
    const std::string from_text = test::Collapse(text.data(), OptionsFor(o));
    for (int threads : {1, 2}) {
      StringSink out;
      ReadReport report;
      CollapseFiles({path}, Staged(OptionsFor(o), threads), out, &report);
      EXPECT_EQ(test::StackLines(out.data()), from_text) << o << ", " << threads << " threads";
    }
  }
  EXPECT_EQ(test::Collapse(text.data()), "map:churn;[unknown] 4\n");
  EXPECT_EQ(test::Collapse(text.data(), OptionsFor("pid")), "map:churn-100;[unknown] 4\n");
  EXPECT_EQ(test::Collapse(text.data(), OptionsFor("tid")),
            "map:churn-100/100;[unknown] 2\nmap:churn-100/101;[unknown] 2\n");
  std::remove(path.c_str());
  // perf script's default text (the TID alone): the PID is unknown there, as in the Perl.
  EXPECT_EQ(test::Collapse("map;churn 101 1.0: 5 cpu-clock:\n\t1 f (x)\n\n", OptionsFor("pid")),
            "map:churn-?;f 5\n");
}

// A sample of a task the kernel no longer names (pid and tid -1, from the end of an exit):
// printed "-1" as perf prints it, comm ":-1", and folded as that text is (the Perl pattern's
// \d+ does not read "-1", so the line up to the period is the comm).
TEST(Collapse, IdsOfMinusOneArePrintedAndFoldedAsPerfPrintsThem) {
  PerfFile f;
  f.Sample(0xffffffff, 0xffffffff, 1000, true);
  f.Sample(0xffffffff, 0xffffffff, 2000, true);
  const std::string path = ::testing::TempDir() + "/minus." + std::to_string(getpid()) + ".data";
  { std::ofstream(path, std::ios::binary) << f.File(true); }
  StringSink text;
  RunScript(path, ScriptOptions{}, text, nullptr);
  EXPECT_NE(text.data().find(":-1    -1     0.000001: "), std::string::npos) << text.data();
  const std::string from_text = test::Collapse(text.data());
  EXPECT_EQ(from_text,
            ":-1____-1_____0.000001:;[unknown] 1\n:-1____-1_____0.000002:;[unknown] 1\n");
  for (int threads : {1, 2}) {
    StringSink out;
    ReadReport report;
    CollapseFiles({path}, Staged({}, threads), out, &report);
    EXPECT_EQ(test::StackLines(out.data()), from_text) << threads << " threads";
  }
  std::remove(path.c_str());
}

// A sample cut short (its body shorter than its attribute's fields) is skipped and counted,
// in one stage and in two.
TEST(Collapse, SamplesCutShortAreCounted) {
  PerfFile f;
  f.Comm(100, 100, "foo");
  f.Sample(100, 100, 0, true);
  f.Record(9, 2, PerfFile::Words(uint64_t{0x1234}, uint32_t{100}, uint32_t{100}));
  f.Sample(100, 100, 0, true);
  const std::string path = ::testing::TempDir() + "/short_sample.data";
  { std::ofstream(path, std::ios::binary) << f.File(true); }
  for (int threads : {1, 2}) {
    StringSink folded;
    ReadReport report;
    CollapseFiles({path}, Staged({}, threads), folded, &report);
    EXPECT_EQ(folded.data(), "# pf-unit: nanoseconds\nfoo;[unknown] 2\n") << threads;
    ASSERT_EQ(report.warnings.size(), 1u) << threads;
    EXPECT_NE(report.warnings[0].find(": skipped 1 malformed record ("), std::string::npos);
  }
  std::remove(path.c_str());
}

// perf record -c N without PERF_SAMPLE_PERIOD: each sample's period is the attribute's N,
// which perf script prints and stackcollapse-perf.pl sums; pf-script prints it, and the fold
// of the recording weighs it as the fold of that text does.
TEST(Collapse, AFixedPeriodOutsideTheSamplesIsTheirPeriod) {
  StringSink stream;
  {
    BufferedWriter out(stream);
    PerfStreamWriter w(out);
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 100000;  // (freq 0)
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    a.sample_id_all = 1;
    w.WriteHeader();
    w.WriteAttr(a, std::vector<uint64_t>{7});
    w.WriteEventDesc({{a, "cpu-clock", {7}}});
    w.WriteComm(5, 5, "prog", true, {5, 5, 1, 0});
    SampleFields s;
    s.pid = s.tid = 5;
    s.ip = 0x1234;
    s.callchain = {PERF_CONTEXT_USER, 0x1234};
    for (uint64_t t : {2000, 3000}) {
      s.time = t;
      w.WriteSample(s);
    }
    w.Flush();
  }
  const std::string path = ::testing::TempDir() + "/fixed." + std::to_string(getpid()) + ".pfs";
  { std::ofstream(path, std::ios::binary) << stream.data(); }
  StringSink text;
  RunScript(path, {}, text, nullptr);
  EXPECT_NE(text.data().find(":     100000 cpu-clock: \n"), std::string::npos) << text.data();
  StringSink folded;
  ReadReport report;
  CollapseFiles({path}, {}, folded, &report);
  EXPECT_EQ(test::StackLines(folded.data()), "prog;[unknown] 200000\n");
  EXPECT_EQ(test::StackLines(folded.data()), test::Collapse(text.data()));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pf
