// pf-record's library: the advice texts, CPU lists, event names, /proc parsing, ring-buffer
// record extraction (on a fake buffer, wrap-around included), the pipe writer read back by
// PerfDataReader, and one real recording (skipped when perf_event_open is refused).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "app/files.h"
#include "base/error.h"
#include "io/input.h"
#include "io/output.h"
#include "perf/advice.h"
#include "perf/call_graph_option.h"
#include "base/cpu_list.h"
#include "perf/events.h"
#include "pfstream/trace_formats.h"
#include "perf/proc.h"
#include "perf/recorder.h"
#include "perf/ring_buffer.h"
#include "elf/elf_image.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/kallsyms.h"
#include "pfstream/perf_data.h"
#include "pfstream/records.h"
#include "pfstream/script_output.h"
#include "test_util.h"
#include "pfstream/perf_writer.h"

namespace pf {
namespace {

// Whether `text` contains `part`, saying what it was when it does not.
::testing::AssertionResult Has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) {
    return ::testing::AssertionSuccess() << "\"" << text << "\" contains \"" << part << "\"";
  }
  return ::testing::AssertionFailure() << "\"" << text << "\" lacks \"" << part << "\"";
}

// --- advice -----------------------------------------------------------------------------

PerfEnvironment Env(int paranoid, bool privileged = false, bool container = false) {
  PerfEnvironment env;
  env.paranoid = paranoid;
  env.paranoid_known = true;
  env.cap_perfmon = privileged;
  env.in_container = container;
  return env;
}

OpenAttempt Attempt(int err, int pid = 1234) {
  OpenAttempt a;
  a.err = err;
  a.event = "cpu-clock";
  a.pid = pid;
  a.cpu = 0;
  return a;
}

TEST(RecordAdvice, ParanoidLevelsAreExplained) {
  std::set<std::string> seen;
  for (int level = -1; level <= 4; ++level) {
    std::string m = ParanoidMeaning(level);
    EXPECT_EQ(m.rfind(std::to_string(level) + ": ", 0), 0u) << m;
    seen.insert(m.substr(m.find(':')));
  }
  EXPECT_EQ(seen.size(), 6u);  // every level says something different
  EXPECT_TRUE(Has(ParanoidMeaning(-1), "no restrictions"));
  EXPECT_TRUE(Has(ParanoidMeaning(1), "not CPU-wide"));
  EXPECT_TRUE(Has(ParanoidMeaning(2), "no kernel"));
  EXPECT_TRUE(Has(ParanoidMeaning(3), "Debian"));
  EXPECT_TRUE(Has(ParanoidMeaning(4), "Ubuntu"));
  EXPECT_EQ(SysctlParanoidCommand(1), "sysctl -w kernel.perf_event_paranoid=1");
}

TEST(RecordAdvice, WhatTheKernelAllows) {
  EXPECT_TRUE(KernelSamplingAllowed(Env(1)));
  EXPECT_FALSE(KernelSamplingAllowed(Env(2)));
  EXPECT_TRUE(KernelSamplingAllowed(Env(2, true)));
  EXPECT_TRUE(KernelSamplingAllowed(Env(-1)));
  EXPECT_TRUE(CpuWideAllowed(Env(0)));
  EXPECT_FALSE(CpuWideAllowed(Env(1)));
  EXPECT_TRUE(CpuWideAllowed(Env(4, true)));
  PerfEnvironment sysadmin = Env(3);
  sysadmin.cap_sys_admin = true;
  EXPECT_TRUE(sysadmin.privileged());
}

TEST(RecordAdvice, CpuWideNeedsParanoidZero) {
  OpenAttempt a = Attempt(EACCES, -1);
  std::string m = OpenErrorAdvice(a, Env(2));
  EXPECT_TRUE(Has(m, "all processes on CPU 0"));
  EXPECT_TRUE(Has(m, "EACCES"));
  EXPECT_TRUE(Has(m, "kernel.perf_event_paranoid is 2"));
  EXPECT_TRUE(Has(m, "sysctl -w kernel.perf_event_paranoid=0"));
  EXPECT_TRUE(Has(m, "-p PID"));
  EXPECT_FALSE(Has(m, "container"));
}

TEST(RecordAdvice, DistributionParanoidLevels) {
  std::string m3 = OpenErrorAdvice(Attempt(EACCES), Env(3));
  EXPECT_TRUE(Has(m3, "kernel.perf_event_paranoid is 3"));
  EXPECT_TRUE(Has(m3, "sysctl -w kernel.perf_event_paranoid=1"));
  EXPECT_TRUE(Has(m3, "-1 lifts every restriction"));
  std::string m4 = OpenErrorAdvice(Attempt(EACCES), Env(4));
  EXPECT_TRUE(Has(m4, "is 4"));
  EXPECT_TRUE(Has(m4, "Ubuntu"));
}

TEST(RecordAdvice, KernelProfilingAndOtherUsers) {
  OpenAttempt k = Attempt(EACCES);
  k.kernel_included = true;
  std::string m = OpenErrorAdvice(k, Env(2));
  EXPECT_TRUE(Has(m, "kernel profiling needs perf_event_paranoid <= 1"));
  EXPECT_TRUE(Has(m, "--user-only"));
  EXPECT_TRUE(Has(m, "sysctl -w kernel.perf_event_paranoid=1"));

  OpenAttempt other = Attempt(EACCES, 1);
  other.other_user = true;
  std::string o = OpenErrorAdvice(other, Env(2, false, true));
  EXPECT_TRUE(Has(o, "process 1 belongs to another user"));
  EXPECT_FALSE(Has(o, "container"));  // ownership is not a container matter
}

TEST(RecordAdvice, PrivilegedButRefusedMeansSeccompOrLsm) {
  std::string m = OpenErrorAdvice(Attempt(EPERM), Env(2, true, true));
  EXPECT_TRUE(Has(m, "CAP_PERFMON"));
  EXPECT_TRUE(Has(m, "seccomp"));
  EXPECT_TRUE(Has(m, "--cap-add PERFMON"));
  std::string bare = OpenErrorAdvice(Attempt(EPERM), Env(1));
  EXPECT_TRUE(Has(bare, "EPERM"));
  EXPECT_TRUE(Has(bare, "seccomp"));
}

TEST(RecordAdvice, OtherErrnos) {
  EXPECT_TRUE(Has(OpenErrorAdvice(Attempt(ESRCH, 4321), Env(2)), "no process or thread 4321"));
  OpenAttempt hw = Attempt(ENOENT);
  hw.event = "cycles";
  hw.hardware = true;
  EXPECT_TRUE(Has(OpenErrorAdvice(hw, Env(2)), "-e cpu-clock"));
  EXPECT_TRUE(Has(OpenErrorAdvice(Attempt(EOPNOTSUPP), Env(2)), "does not support"));
  OpenAttempt files = Attempt(EMFILE);
  files.fds_needed = 1500;
  files.fd_limit = 1024;
  std::string f = OpenErrorAdvice(files, Env(2));
  EXPECT_TRUE(Has(f, "ulimit -n 2048"));
  EXPECT_TRUE(Has(f, "the limit is 1024"));
  OpenAttempt fast = Attempt(EINVAL);
  fast.frequency = 200000;
  EXPECT_TRUE(
      Has(OpenErrorAdvice(fast, Env(2)), "sysctl -w kernel.perf_event_max_sample_rate=200000"));
  EXPECT_TRUE(Has(OpenErrorAdvice(Attempt(EOVERFLOW), Env(2)), "perf_event_max_stack (127)"));
  EXPECT_TRUE(Has(OpenErrorAdvice(Attempt(ENOSYS), Env(2)), "CONFIG_PERF_EVENTS"));
  EXPECT_TRUE(Has(OpenErrorAdvice(Attempt(EBUSY), Env(2)), "exclusive"));
  EXPECT_TRUE(Has(MmapErrorAdvice(EPERM, 1 << 20, Env(2)), "perf_event_mlock_kb"));
}

TEST(RecordAdvice, Notices) {
  EXPECT_TRUE(Has(KernelExcludedNotice(Env(2)), "user space only"));
  EXPECT_TRUE(Has(KernelExcludedNotice(Env(2)), "sysctl -w kernel.perf_event_paranoid=1"));
  const std::string needed = KernelNeededAdvice(Env(2), "a tracepoint");
  EXPECT_EQ(needed.rfind("a tracepoint needs samples taken in the kernel, and "
                         "kernel.perf_event_paranoid is 2",
                         0),
            0u)
      << needed;
  EXPECT_TRUE(Has(needed, "Run as root, or: sysctl -w kernel.perf_event_paranoid=1"));
  PerfEnvironment env = Env(2);
  env.kptr_restrict = 1;
  EXPECT_EQ(KptrRestrictNotice(env, true), "");
  EXPECT_TRUE(Has(KptrRestrictNotice(env, false), "kernel.kptr_restrict is 1"));
}

// --- CPU lists, events, /proc -----------------------------------------------------------

TEST(RecordCpuList, Parses) {
  EXPECT_EQ(ParseCpuList("0"), (std::vector<int>{0}));
  EXPECT_EQ(ParseCpuList("0,2-3"), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(ParseCpuList("3,1,1-2"), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(ParseCpuList("5-5\n"), (std::vector<int>{5}));
  for (const char* bad : {"", "a", "1-", "-1", "3-1", "1,,2", "70000", "1 2", "0x1"}) {
    EXPECT_THROW(ParseCpuList(bad), UsageError) << bad;
  }
  std::vector<int> online = OnlineCpus();
  ASSERT_FALSE(online.empty());
  EXPECT_GE(ConfiguredCpus(), online.back() + 1);
}

TEST(RecordEvents, NamesAndModifiers) {
  EventSpec c = ParseEventSpec("cycles:u");
  EXPECT_EQ(c.type, static_cast<uint32_t>(PERF_TYPE_HARDWARE));
  EXPECT_EQ(c.config, static_cast<uint64_t>(PERF_COUNT_HW_CPU_CYCLES));
  EXPECT_TRUE(c.exclude_kernel);
  EXPECT_FALSE(c.exclude_user);
  EXPECT_EQ(ParseEventSpec("cs").name, "context-switches");
  EXPECT_EQ(ParseEventSpec("page-faults").config, static_cast<uint64_t>(PERF_COUNT_SW_PAGE_FAULTS));
  EXPECT_EQ(ParseEventSpec("instructions:ppp").precise, 3);
  EXPECT_THROW(ParseEventSpec("nosuch"), UsageError);
  EXPECT_THROW(ParseEventSpec("cpu-clock:x"), UsageError);
  // SYSTEM:NAME is a tracepoint, not the event "sched" with modifiers; one that does not
  // exist is a usage error that says where to look (where tracefs can be read).
  if (!TracefsDir().empty() && access((TracefsDir() + "/events/sched/sched_switch/id").c_str(), R_OK) == 0) {
    EventSpec tp = ParseEventSpec("sched:sched_switch");
    EXPECT_TRUE(tp.tracepoint());
    EXPECT_EQ(tp.name, "sched:sched_switch");
    EXPECT_GT(tp.config, 0u);
    try {
      ParseEventSpec("sched:no_such_event");
      ADD_FAILURE() << "accepted a tracepoint that does not exist";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "no tracepoint sched:no_such_event (pf-record -l lists them)");
    }
  }
  perf_event_attr t{};
  t.type = PERF_TYPE_TRACEPOINT;
  EXPECT_EQ(PerfEventName("sched:sched_switch", t), "sched:sched_switch");

  perf_event_attr a{};
  EXPECT_EQ(PerfEventName("cpu-clock", a), "cpu-clock");
  a.precise_ip = 3;
  EXPECT_EQ(PerfEventName("cpu-clock", a), "cpu-clock:ppp");  // perf's default recording
  a.precise_ip = 0;
  a.exclude_kernel = a.exclude_hv = 1;
  EXPECT_EQ(PerfEventName("cpu-clock", a), "cpu-clock:u");
  EXPECT_EQ(DefaultEventSpec().precise, 3);
}

TEST(RecordProc, MapsLines) {
  MapsEntry m;
  ASSERT_TRUE(ParseMapsLine(
      "55d0c0a00000-55d0c0a01000 r-xp 00001000 fe:00 5309183    /opt/my app/bin", &m));
  EXPECT_EQ(m.start, 0x55d0c0a00000u);
  EXPECT_EQ(m.end, 0x55d0c0a01000u);
  EXPECT_EQ(m.pgoff, 0x1000u);
  EXPECT_EQ(m.maj, 0xfeu);
  EXPECT_EQ(m.min, 0u);
  EXPECT_EQ(m.ino, 5309183u);
  EXPECT_TRUE(m.executable());
  EXPECT_EQ(m.path, "/opt/my app/bin");
  ASSERT_TRUE(ParseMapsLine("7ffd1000-7ffd3000 rw-p 00000000 00:00 0 ", &m));
  EXPECT_FALSE(m.executable());
  EXPECT_EQ(m.path, "");
  ASSERT_TRUE(ParseMapsLine("1000-2000 r-xs 0 08:01 12 /tmp/x (deleted)\n", &m));
  EXPECT_EQ(m.path, "/tmp/x (deleted)");
  EXPECT_EQ(m.perms[3], 's');
  EXPECT_FALSE(ParseMapsLine("garbage", &m));
  EXPECT_FALSE(ParseMapsLine("2000-1000 r-xp 0 08:01 12 /x", &m));
  EXPECT_FALSE(ParseMapsLine("1000-2000 r-x 0 08:01 12 /x", &m));
}

TEST(RecordProc, KernelText) {
  KernelText k = ParseKernelText(
      "0000000000000000 A fixed_percpu_data\n"
      "ffffffff81000000 T _stext\n"
      "ffffffff81000000 T _text\n"
      "ffffffff81000010 t helper\n"
      "ffffffff8220bb08 T _etext\n");
  EXPECT_TRUE(k.visible());
  EXPECT_EQ(k.start, 0xffffffff81000000u);
  EXPECT_EQ(k.end, 0xffffffff8220bb08u);
  // kptr_restrict: every address reads as zero.
  KernelText hidden = ParseKernelText("0000000000000000 T _text\n0000000000000000 T _etext\n");
  EXPECT_FALSE(hidden.visible());
  EXPECT_EQ(hidden.end, 0u);
  // A module's symbol of the same name is not the kernel's; lines end with \r\n or none.
  KernelText crlf = ParseKernelText(
      "ffffffffc0000000 t _text\t[mod]\r\n"
      "ffffffff81000000 T _text\r\n"
      "ffffffff8220bb08 T _etext");
  EXPECT_EQ(crlf.start, 0xffffffff81000000u);
  EXPECT_EQ(crlf.end, 0xffffffff8220bb08u);
  // The same parser as the kernel's symbol table.
  KallsymsLine line;
  ASSERT_TRUE(ParseKallsymsLine("ffffffffc0000000 t name\t[mod]", &line));
  EXPECT_EQ(line.address, 0xffffffffc0000000u);
  EXPECT_EQ(line.type, 't');
  EXPECT_EQ(line.field, "name\t[mod]");
  EXPECT_FALSE(ParseKallsymsLine("ffffffffc0000000 t", &line));
  EXPECT_FALSE(ParseKallsymsLine("zz t name", &line));
}

TEST(RecordProc, BuildIdsAndThreads) {
  std::string self = ReadElfBuildId("/proc/self/exe");
  EXPECT_EQ(self.size(), 20u) << "the test binary should carry a GNU build-id (ld --build-id)";
  // The one ELF reader's answer, as the symbolizer reads it.
  EXPECT_EQ(elf::Hex(self), elf::ElfImage::Open("/proc/self/exe")->BuildId());
  EXPECT_EQ(ReadElfBuildId("/proc/self/status"), "");
  EXPECT_EQ(ReadElfBuildId("/nonexistent"), "");
  std::vector<int> tids = ListThreads(getpid());
  ASSERT_FALSE(tids.empty());
  EXPECT_EQ(tids[0], getpid());
  int tgid = 0, ppid = 0;
  ASSERT_TRUE(ReadTgidPpid(getpid(), &tgid, &ppid));
  EXPECT_EQ(tgid, getpid());
  EXPECT_EQ(ppid, getppid());
  EXPECT_TRUE(ProcessAlive(getpid()));
  EXPECT_FALSE(ReadComm(getpid(), getpid()).empty());
}

// --- ring buffer extraction --------------------------------------------------------------

// Writes a record of `size` bytes (header + a fill byte) at counter `at` of `ring`.
void PutRecord(std::vector<uint8_t>* ring, uint64_t at, uint16_t size, uint32_t type,
               uint8_t fill) {
  std::vector<uint8_t> rec(size, fill);
  std::memcpy(rec.data(), &type, 4);
  uint16_t misc = 0;
  std::memcpy(rec.data() + 4, &misc, 2);
  std::memcpy(rec.data() + 6, &size, 2);
  for (size_t i = 0; i < size; ++i) (*ring)[(at + i) % ring->size()] = rec[i];
}

struct Seen {
  uint32_t type;
  uint16_t size;
  bool filled;
};

std::vector<Seen> Extract(const std::vector<uint8_t>& ring, uint64_t tail, uint64_t head,
                          bool* corrupt, uint64_t* new_tail = nullptr) {
  std::vector<Seen> seen;
  std::vector<uint8_t> scratch;
  uint64_t t = ExtractRecords(
      std::span<const uint8_t>(ring), tail, head, &scratch,
      [&](std::span<const uint8_t> rec) {
        Seen s;
        std::memcpy(&s.type, rec.data(), 4);
        std::memcpy(&s.size, rec.data() + 6, 2);
        s.filled = true;
        for (size_t i = 8; i < rec.size(); ++i) s.filled &= rec[i] == static_cast<uint8_t>(s.type);
        EXPECT_EQ(rec.size(), s.size);
        seen.push_back(s);
      },
      corrupt);
  if (new_tail) *new_tail = t;
  return seen;
}

TEST(RecordRingBuffer, ExtractsRecordsIncludingOneThatWraps) {
  // Counters far past the first lap, as after a long recording: 1000 laps + 40 bytes.
  // Three records fill the 64-byte ring from byte 40: the second one wraps.
  std::vector<uint8_t> ring(64, 0xee);
  const uint64_t base = 64 * 1000;
  PutRecord(&ring, base + 40, 16, 9, 9);    // bytes 40..55
  PutRecord(&ring, base + 56, 24, 10, 10);  // bytes 56..63, then 0..15
  PutRecord(&ring, base + 80, 24, 3, 3);    // bytes 16..39
  bool corrupt = false;
  uint64_t tail = 0;
  std::vector<Seen> seen = Extract(ring, base + 40, base + 104, &corrupt, &tail);
  EXPECT_FALSE(corrupt);
  EXPECT_EQ(tail, base + 104);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].type, 9u);
  EXPECT_EQ(seen[1].type, 10u);
  EXPECT_EQ(seen[1].size, 24);
  EXPECT_TRUE(seen[1].filled) << "the wrapped record must be reassembled in order";
  EXPECT_EQ(seen[2].type, 3u);
  for (const Seen& s : seen) EXPECT_TRUE(s.filled);
}

TEST(RecordRingBuffer, HeaderSplitAcrossTheEnd) {
  // Not something the kernel does (records are 8-byte aligned), but the walk copes.
  std::vector<uint8_t> ring(64, 0);
  PutRecord(&ring, 60, 16, 7, 7);  // header bytes 60..63 and 0..3
  bool corrupt = false;
  std::vector<Seen> seen = Extract(ring, 60, 76, &corrupt);
  EXPECT_FALSE(corrupt);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].type, 7u);
  EXPECT_TRUE(seen[0].filled);
}

TEST(RecordRingBuffer, EmptyAndCorrupt) {
  std::vector<uint8_t> ring(64, 0);
  bool corrupt = false;
  EXPECT_TRUE(Extract(ring, 8, 8, &corrupt).empty());
  EXPECT_FALSE(corrupt);
  // A size of zero would never advance: the rest is skipped and flagged.
  uint64_t tail = 0;
  EXPECT_TRUE(Extract(ring, 0, 32, &corrupt, &tail).empty());
  EXPECT_TRUE(corrupt);
  EXPECT_EQ(tail, 32u);
  // A size beyond head.
  PutRecord(&ring, 0, 48, 9, 9);
  corrupt = false;
  EXPECT_TRUE(Extract(ring, 0, 40, &corrupt).empty());
  EXPECT_TRUE(corrupt);
}

TEST(RecordRingBuffer, Sizing) {
  const bool unlimited = true;
  EXPECT_EQ(RingPagesFor(99, 1024, 2, 2, 516, unlimited), 128u);  // 512 KiB
  EXPECT_EQ(RingPagesFor(999, 1024, 2, 2, 516, unlimited), 128u);
  EXPECT_EQ(RingPagesFor(10000, 1024, 2, 2, 516, unlimited), 2048u);  // 8 MiB
  EXPECT_EQ(RingPagesFor(1000000, 1024, 2, 2, 516, unlimited), 16384u);
  // Unprivileged: 516 KiB per CPU holds one 512 KiB ring (+ its metadata page) per CPU.
  EXPECT_EQ(RingPagesFor(10000, 1024, 2, 2, 516, false), 128u);
  EXPECT_EQ(RingPagesFor(99, 1024, 10, 2, 516, false), 16u);
  // DWARF samples (an 8 KiB stack copy each) at 999 Hz: 8 MiB, half a second and more.
  EXPECT_EQ(RingPagesFor(999, 8192 + 1536, 2, 2, 516, unlimited), 2048u);
  EXPECT_EQ(RingPagesFor(999, 16384 + 1536, 2, 2, 516, unlimited), 4096u);
}

// --- the pipe writer, read back -----------------------------------------------------------

perf_event_attr TestAttr(uint64_t sample_type) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.freq = 1;
  a.sample_freq = 999;
  a.sample_type = sample_type;
  a.sample_id_all = 1;
  a.mmap = a.mmap2 = a.comm = a.task = 1;
  a.precise_ip = 3;
  return a;
}

TEST(RecordWriter, StreamReadsBackWithPerfDataReader) {
  StringSink sink;
  BufferedWriter out(sink);
  PerfStreamWriter w(out);
  const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
                      PERF_SAMPLE_PERIOD;
  perf_event_attr attr = TestAttr(st);
  const std::vector<uint64_t> ids = {71, 72};
  w.WriteHeader();
  w.WriteAttr(attr, ids);
  w.WriteStringFeature(kFeatHostname, "testhost");
  w.WriteStringFeature(kFeatOsRelease, "6.1.0-test");
  w.WriteCmdline({"pf-record", "-g", "--", "./prog"});
  w.WriteNrCpus(4, 2);
  w.WriteTotalMem(1024);
  w.WriteEventDesc({{attr, "cpu-clock:ppp", ids}});
  w.WriteEventName(71, "cpu-clock:ppp");
  w.WriteMmap(PERF_RECORD_MISC_KERNEL, 0xffffffffu, 0, 0xffffffff81000000ull, 0x120bb08,
              0xffffffff81000000ull, "[kernel.kallsyms]_text");
  w.WriteFork(100, 100, 101, 100, 0, {100, 101, 0, 0});
  w.WriteComm(100, 101, "worker", false, {100, 101, 0, 0});
  PerfStreamWriter::Mmap2 m;
  m.pid = m.tid = 100;
  m.start = 0x400000;
  m.len = 0x1000;
  m.pgoff = 0x1000;
  m.build_id = std::string(
      "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"
      "\x11\x12\x13\x14",
      20);
  m.prot = 5;
  m.flags = 2;
  m.filename = "/usr/bin/prog";
  w.WriteMmap2(m, {100, 100, 0, 0});
  w.WriteFinishedInit();
  SampleFields s;
  s.ip = 0x400123;
  s.pid = 100;
  s.tid = 101;
  s.time = 123456789;
  s.period = 1001001;
  s.callchain = {kContextUser, 0x400123, 0x400456};
  w.WriteSample(s);
  w.WriteFinishedRound();
  w.Flush();
  const std::string& data = sink.data();
  EXPECT_EQ(data.size() % 8, 0u);
  EXPECT_EQ(data.substr(0, 8), "PERFILE2");
  EXPECT_EQ(w.bytes_written(), data.size());

  std::unique_ptr<ByteSource> src = MemoryInput(data, "stream");
  PerfDataReader r(*src);
  EXPECT_TRUE(r.pipe_mode());
  std::vector<Record> records;
  std::vector<std::string> bodies;
  Record rec;
  while (r.Next(&rec)) {
    EXPECT_EQ(rec.offset % 8, 0u) << "record type " << rec.type << " is misaligned";
    records.push_back(rec);
    bodies.emplace_back(reinterpret_cast<const char*>(rec.body.data()), rec.body.size());
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(r.bad_records(), 0u);
  ASSERT_EQ(r.attrs().size(), 1u);
  EXPECT_EQ(r.attrs()[0].sample_type, st);
  EXPECT_EQ(r.attrs()[0].ids, ids);
  EXPECT_TRUE(r.attrs()[0].sample_id_all());
  EXPECT_EQ(r.attrs()[0].precise_ip(), 3u);
  EXPECT_EQ(r.attrs()[0].name, "cpu-clock:ppp");
  EXPECT_EQ(r.hostname(), "testhost");
  EXPECT_EQ(r.os_release(), "6.1.0-test");
  EXPECT_EQ(r.cmdline(), "pf-record -g -- ./prog");

  std::vector<uint32_t> types;
  for (const Record& x : records) types.push_back(x.type);
  const std::vector<uint32_t> want = {
      78,           kRecordMmap,         kRecordFork,   kRecordComm,
      kRecordMmap2, kRecordFinishedInit, kRecordSample, kRecordFinishedRound};
  ASSERT_EQ(types, want);

  // The kernel map.
  const Record& kmap = records[1];
  EXPECT_EQ(kmap.misc, PERF_RECORD_MISC_KERNEL);
  MmapRecord km;
  ASSERT_TRUE(ParseMmap(kmap, &km));
  EXPECT_FALSE(km.mmap2);
  EXPECT_EQ(km.pid, 0xffffffffu);
  EXPECT_EQ(km.start, 0xffffffff81000000ull);
  EXPECT_EQ(km.len, 0x120bb08u);
  EXPECT_EQ(km.pgoff, km.start);
  EXPECT_EQ(km.filename, "[kernel.kallsyms]_text");

  // FORK: pid, ppid, tid, ptid.
  ForkRecord fork;
  ASSERT_TRUE(ParseFork(records[2], &fork));
  EXPECT_EQ(fork.pid, 100u);
  EXPECT_EQ(fork.ppid, 100u);
  EXPECT_EQ(fork.tid, 101u);
  EXPECT_EQ(fork.ptid, 100u);

  // COMM: pid, tid, name; its sample_id carries the thread.
  const Record& comm = records[3];
  CommRecord c;
  ASSERT_TRUE(ParseComm(comm, &c));
  EXPECT_EQ(c.pid, 100u);
  EXPECT_EQ(c.tid, 101u);
  EXPECT_EQ(c.comm, "worker");
  EXPECT_FALSE(c.exec);
  SampleId sid;
  ASSERT_TRUE(r.ParseSampleId(comm, &sid));
  EXPECT_EQ(sid.pid, 100u);
  EXPECT_EQ(sid.tid, 101u);
  EXPECT_TRUE(sid.has_time);
  EXPECT_EQ(sid.time, 0u);

  // MMAP2 with a build-id.
  const Record& mm = records[4];
  EXPECT_TRUE(mm.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
  MmapRecord m2;
  ASSERT_TRUE(ParseMmap(mm, &m2));
  EXPECT_TRUE(m2.mmap2);
  EXPECT_TRUE(m2.has_build_id);
  EXPECT_EQ(m2.build_id, m.build_id);
  EXPECT_EQ(m2.start, 0x400000u);
  EXPECT_EQ(m2.len, 0x1000u);
  EXPECT_EQ(m2.pgoff, 0x1000u);
  EXPECT_EQ(m2.prot, 5u);
  EXPECT_EQ(m2.flags, 2u);
  EXPECT_EQ(m2.filename, "/usr/bin/prog");

  // The sample.
  Sample smp;
  ASSERT_TRUE(r.ParseSample(records[6], &smp));
  EXPECT_EQ(smp.ip, 0x400123u);
  EXPECT_EQ(smp.pid, 100u);
  EXPECT_EQ(smp.tid, 101u);
  EXPECT_EQ(smp.time, 123456789u);
  EXPECT_EQ(smp.period, 1001001u);
  ASSERT_EQ(smp.callchain.size(), 3u);
  EXPECT_EQ(smp.callchain[0], kContextUser);
  EXPECT_EQ(smp.callchain[2], 0x400456u);
}

// A record of `type` whose body is `body`.
Record RecordOf(uint32_t type, const std::vector<uint8_t>& body, uint16_t misc = 0) {
  Record r;
  r.type = type;
  r.misc = misc;
  r.body = std::span<const uint8_t>(body);
  return r;
}

TEST(RecordParsers, RefuseBodiesShorterThanTheirFixedFields) {
  std::vector<uint8_t> body(80, 0);
  CommRecord c;
  ForkRecord f;
  MmapRecord m;
  uint64_t lost;
  KsymbolRecord k;
  PerfDataReader::BuildId b;
  // Long enough: the strings run to the end when they have no NUL.
  std::vector<uint8_t> comm = {1, 0, 0, 0, 2, 0, 0, 0, 'a', 'b'};
  ASSERT_TRUE(ParseComm(RecordOf(kRecordComm, comm, 1 << 13), &c));
  EXPECT_EQ(c.comm, "ab");
  EXPECT_TRUE(c.exec);
  EXPECT_TRUE(ParseFork(RecordOf(kRecordExit, std::vector<uint8_t>(16, 0)), &f));
  EXPECT_TRUE(ParseMmap(RecordOf(kRecordMmap, std::vector<uint8_t>(32, 0)), &m));
  EXPECT_EQ(m.filename, "");
  EXPECT_TRUE(ParseMmap(RecordOf(kRecordMmap2, std::vector<uint8_t>(64, 0)), &m));
  EXPECT_TRUE(ParseLost(RecordOf(kRecordLost, std::vector<uint8_t>(16, 0)), &lost));
  EXPECT_TRUE(ParseLost(RecordOf(kRecordLostSamples, std::vector<uint8_t>(8, 0)), &lost));
  EXPECT_TRUE(ParseKsymbol(RecordOf(kRecordKsymbol, std::vector<uint8_t>(16, 0)), &k));
  EXPECT_TRUE(ParseBuildIdRecord(RecordOf(kRecordHeaderBuildId, std::vector<uint8_t>(28, 0)), &b));
  // One byte short.
  EXPECT_FALSE(ParseComm(RecordOf(kRecordComm, std::vector<uint8_t>(7, 0)), &c));
  EXPECT_FALSE(ParseFork(RecordOf(kRecordFork, std::vector<uint8_t>(15, 0)), &f));
  EXPECT_FALSE(ParseMmap(RecordOf(kRecordMmap, std::vector<uint8_t>(31, 0)), &m));
  EXPECT_FALSE(ParseMmap(RecordOf(kRecordMmap2, std::vector<uint8_t>(63, 0)), &m));
  EXPECT_FALSE(ParseLost(RecordOf(kRecordLost, std::vector<uint8_t>(15, 0)), &lost));
  EXPECT_FALSE(ParseLost(RecordOf(kRecordLostSamples, std::vector<uint8_t>(7, 0)), &lost));
  EXPECT_FALSE(ParseLost(RecordOf(kRecordComm, body), &lost));  // not a LOST record
  EXPECT_FALSE(ParseKsymbol(RecordOf(kRecordKsymbol, std::vector<uint8_t>(15, 0)), &k));
  EXPECT_FALSE(
      ParseBuildIdRecord(RecordOf(kRecordHeaderBuildId, std::vector<uint8_t>(27, 0)), &b));
}

TEST(RecordParsers, LostCountsAndRecordViews) {
  // LOST: u64 id, u64 lost; LOST_SAMPLES: u64 lost.
  std::vector<uint8_t> rec(8 + 16 + 8, 0);  // header, body, a sample_id
  const uint32_t type = kRecordLost;
  const uint16_t size = static_cast<uint16_t>(rec.size());
  std::memcpy(rec.data(), &type, 4);
  std::memcpy(rec.data() + 6, &size, 2);
  rec[16] = 42;
  Record r;
  ASSERT_TRUE(RecordView(rec, &r));
  EXPECT_EQ(r.type, kRecordLost);
  EXPECT_EQ(r.body.size(), 24u);
  uint64_t lost = 0;
  ASSERT_TRUE(ParseLost(r, &lost));
  EXPECT_EQ(lost, 42u);
  // A header whose size is beyond the bytes, or below its own 8 bytes, is no record.
  EXPECT_FALSE(RecordView(std::span<const uint8_t>(rec).first(rec.size() - 8), &r));
  const uint16_t tiny = 4;
  std::memcpy(rec.data() + 6, &tiny, 2);
  EXPECT_FALSE(RecordView(rec, &r));
  EXPECT_FALSE(RecordView(std::span<const uint8_t>(rec).first(7), &r));
}

namespace {

// A pipe: `data` in chunks of 40 bytes that do not stay valid.
class ChunkedSource : public ByteSource {
 public:
  explicit ChunkedSource(std::string data) : ByteSource("pipe"), data_(std::move(data)) {}
  std::string_view Next() override {
    std::string_view c = Peek();
    pos_ += c.size();
    return c;
  }
  std::string_view Peek() override {
    chunk_ = data_.substr(pos_, 40);
    return chunk_;
  }

 private:
  std::string data_, chunk_;
  size_t pos_ = 0;
};

// A pf-record stream: header, attribute, the stream mark, samples, and (when `whole`) the end
// note. `mark`: whether the mark at the start is written at all (older writers, perf).
std::string MarkedStream(bool mark, bool whole) {
  StringSink sink;
  BufferedWriter out(sink);
  PerfStreamWriter w(out);
  perf_event_attr attr = TestAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
  w.WriteHeader();
  w.WriteAttr(attr, std::vector<uint64_t>{7});
  if (mark) w.WriteSymbolNote(0, 0, kStreamNote, {});
  w.WriteFinishedInit();
  for (uint64_t t = 1; t <= 3; ++t) {
    SampleFields s;
    s.ip = 0x400000 + t;
    s.pid = s.tid = 100;
    s.time = t;
    w.WriteSample(s);
  }
  w.WriteFinishedRound();
  if (mark && whole) w.WriteSymbolNote(0, 0, kStreamEndNote, {});
  w.Flush();
  return sink.data();
}

// Reads `data` to its end; the number of samples.
int ReadAll(PerfDataReader& r) {
  int samples = 0;
  Record rec;
  while (r.Next(&rec)) samples += rec.type == kRecordSample;
  return samples;
}

}  // namespace

TEST(RecordWriter, StreamCutAtARecordBoundaryIsReportedWhenItPromisedAnEnd) {
  const std::string cut = MarkedStream(true, false);
  for (bool stable : {true, false}) {  // a file, and a pipe
    std::unique_ptr<ByteSource> src =
        stable ? MemoryInput(cut, "cut") : std::make_unique<ChunkedSource>(cut);
    PerfDataReader r(*src);
    EXPECT_EQ(ReadAll(r), 3);
    EXPECT_TRUE(r.truncated());
    EXPECT_TRUE(r.missing_end());
    EXPECT_EQ(r.stopped_at(), cut.size());
    std::string w = TruncatedWarning("cut", r, 3, "folded");
    EXPECT_NE(w.find("cut: the recording stops at byte " + std::to_string(cut.size()) +
                     " without pf-record's end record"),
              std::string::npos)
        << w;
    EXPECT_NE(w.find("folded the 3 samples read"), std::string::npos) << w;
  }
  // Whole, it is not; nor is a stream without the mark (perf's, an older pf-record's).
  for (bool mark : {true, false}) {
    const std::string data = MarkedStream(mark, mark);
    std::unique_ptr<ByteSource> src = MemoryInput(data, "whole");
    PerfDataReader r(*src);
    EXPECT_EQ(ReadAll(r), 3);
    EXPECT_FALSE(r.truncated()) << mark;
    EXPECT_FALSE(r.missing_end());
    EXPECT_EQ(TruncatedWarning("whole", r, 3, "folded"), "");
  }
  // Cut inside a record: truncated as before, not "missing its end".
  const std::string mid = cut.substr(0, cut.size() - 4);
  std::unique_ptr<ByteSource> src = MemoryInput(mid, "mid");
  PerfDataReader r(*src);
  ReadAll(r);
  EXPECT_TRUE(r.truncated());
  EXPECT_FALSE(r.missing_end());
}

TEST(RecordWriter, SeveralEventsAreToldApartByIdentifier) {
  StringSink sink;
  BufferedWriter out(sink);
  PerfStreamWriter w(out);
  const uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                      PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  perf_event_attr clock = TestAttr(st);
  perf_event_attr faults = TestAttr(st);
  faults.config = PERF_COUNT_SW_PAGE_FAULTS;
  faults.precise_ip = 0;
  w.WriteHeader();
  w.WriteAttr(clock, std::vector<uint64_t>{1, 2});
  w.WriteAttr(faults, std::vector<uint64_t>{3, 4});
  w.WriteComm(5, 5, "prog", true, {5, 5, 10, 1});
  SampleFields s;
  s.id = 4;
  s.ip = 0x1234;
  s.pid = s.tid = 5;
  s.cpu = 1;
  w.WriteSample(s);
  w.Flush();

  std::unique_ptr<ByteSource> src = MemoryInput(sink.data(), "stream");
  PerfDataReader r(*src);
  Record rec;
  ASSERT_TRUE(r.Next(&rec));
  EXPECT_EQ(rec.type, kRecordComm);
  EXPECT_EQ(rec.misc, PERF_RECORD_MISC_COMM_EXEC);
  SampleId sid;
  ASSERT_TRUE(r.ParseSampleId(rec, &sid));  // carries the first event's id
  EXPECT_EQ(sid.cpu, 1u);
  EXPECT_EQ(sid.time, 10u);
  ASSERT_TRUE(r.Next(&rec));
  Sample smp;
  ASSERT_TRUE(r.ParseSample(rec, &smp));
  ASSERT_NE(smp.attr, nullptr);
  EXPECT_EQ(smp.attr->config, static_cast<uint64_t>(PERF_COUNT_SW_PAGE_FAULTS));
  EXPECT_EQ(smp.cpu, 1u);
  EXPECT_EQ(smp.ip, 0x1234u);
  EXPECT_FALSE(r.Next(&rec));
}

// Folding a recording equals folding its perf script text, even where the Perl script's
// event-line pattern takes the time into the comm (a one-letter comm before a five-digit
// thread id): there every sample is a stack of its own, where a longer comm merges them.
TEST(RecordFold, OneLetterCommsFoldAsTheirText) {
  // `c  8261  8425.338890:` matches with the comm `c ` (the same for every sample): one line.
  const std::pair<std::string, uint32_t> cases[] = {{"w", 19375}, {"worker", 19375}, {"c", 8261}};
  for (const auto& [comm, tid] : cases) {
    SCOPED_TRACE(comm + " " + std::to_string(tid));
    StringSink sink;
    BufferedWriter out(sink);
    PerfStreamWriter w(out);
    const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                        PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
    perf_event_attr attr = TestAttr(st);
    w.WriteHeader();
    w.WriteAttr(attr, std::vector<uint64_t>{1});
    w.WriteEventName(1, "cpu-clock:ppp");
    w.WriteComm(tid, tid, comm, true, {tid, tid, 1, 0});
    for (int i = 0; i < 3; ++i) {
      SampleFields s;
      s.ip = 0x400123;
      s.pid = s.tid = tid;
      s.time = 8425338890000ull + i * 1000000ull;
      s.period = 1001001;
      s.callchain = {kContextUser, 0x400123, 0x400456};
      w.WriteSample(s);
    }
    w.Flush();
    const std::string dir = ::testing::TempDir();
    const std::string path = dir + "/one_letter_" + comm + ".data";
    { std::ofstream(path, std::ios::binary) << sink.data(); }
    StringSink text;
    RunScript(path, {}, text, nullptr);
    StringSink folded;
    ReadReport report;
    CollapseFiles({path}, {}, folded, &report);
    const std::string stacks = test::StackLines(folded.data());
    EXPECT_EQ(stacks, test::Collapse(text.data()));
    size_t lines = std::count(stacks.begin(), stacks.end(), '\n');
    EXPECT_EQ(lines, comm.size() == 1 && tid > 9999 ? 3u : 1u) << stacks;
    std::remove(path.c_str());
  }
}

// A stream of one cpu-clock event (IP, TID, TIME, CALLCHAIN, PERIOD) whose process 4242 is
// named "prog", for a test to add records to and Save as a file.
struct ProgStream {
  StringSink sink;
  BufferedWriter out{sink};
  PerfStreamWriter w{out};
  ProgStream() {
    const uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                        PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
    w.WriteHeader();
    w.WriteAttr(TestAttr(st), std::vector<uint64_t>{1});
    w.WriteEventName(1, "cpu-clock:ppp");
    w.WriteComm(4242, 4242, "prog", true, {4242, 4242, 1, 0});
  }
  std::string Save(const std::string& name) {
    w.Flush();
    const std::string path = ::testing::TempDir() + "/" + name;
    std::ofstream(path, std::ios::binary) << sink.data();
    return path;
  }
};

// A sample whose call chain field is empty (a DWARF sample of a user-mode fault on a stack
// the kernel could not copy: no kernel part, no user frames) is printed as perf script prints
// it, an event line and no frames, not as a sample without a chain (the ip on the event
// line); so it folds to its comm alone, as stackcollapse-perf.pl folds perf's text.
TEST(RecordFold, AnEmptyCallchainStaysEmpty) {
  ProgStream p;
  PerfStreamWriter& w = p.w;
  for (uint64_t time : {10, 11}) {
    SampleFields s;
    s.ip = 0x400123;
    s.pid = s.tid = 4242;
    s.time = time * 1000;
    s.period = 1000;
    if (time == 11) s.callchain = {kContextUser, 0x400123};
    w.WriteSample(s);
  }
  const std::string path = p.Save("empty_chain.data");
  StringSink text;
  RunScript(path, {}, text, nullptr);
  EXPECT_EQ(text.data(),
            "prog  4242     0.000010:       1000 cpu-clock:ppp: \n\n"
            "prog  4242     0.000011:       1000 cpu-clock:ppp: \n"
            "\t          400123 [unknown] ([unknown])\n\n");
  StringSink folded;
  ReadReport report;
  CollapseFiles({path}, {}, folded, &report);
  EXPECT_EQ(test::StackLines(folded.data()), test::Collapse(text.data()));
  EXPECT_EQ(folded.data(), "# pf-unit: nanoseconds\nprog 1000\nprog;[unknown] 1000\n");
  std::remove(path.c_str());
}

// pf-collapse folds a recording's samples by the names the fold reads, not their addresses:
// two leaf addresses in one function make one line; with --addrs, which prints unknown
// symbols' addresses, two. A library mapped over another at the same addresses is the new
// library from then on.
TEST(RecordFold, SamplesFoldByNamesUnlessAddressesArePrinted) {
  ProgStream p;
  PerfStreamWriter& w = p.w;
  w.WriteMmap(PERF_RECORD_MISC_USER, 4242, 4242, 0x7000000, 0x10000, 0, "/nonexistent/libx.so",
              {4242, 4242, 2, 0});
  auto sample = [&](uint64_t leaf, uint64_t time) {
    SampleFields s;
    s.ip = leaf;
    s.pid = s.tid = 4242;
    s.time = time;
    s.period = 1000;
    s.callchain = {kContextUser, leaf, 0x7000500};
    w.WriteSample(s);
  };
  sample(0x7000100, 10);
  sample(0x7000104, 11);
  sample(0x7000100, 12);
  w.WriteMmap(PERF_RECORD_MISC_USER, 4242, 4242, 0x7000000, 0x10000, 0, "/nonexistent/liby.so",
              {4242, 4242, 20, 0});
  sample(0x7000100, 30);
  const std::string path = p.Save("named_fold.data");
  StringSink text;
  RunScript(path, {}, text, nullptr);
  for (bool addrs : {false, true}) {
    SCOPED_TRACE(addrs ? "--addrs" : "");
    CollapseOptions o;
    o.perf.include_addrs = addrs;
    StringSink folded;
    ReadReport report;
    CollapseFiles({path}, o, folded, &report);
    const std::string stacks = test::StackLines(folded.data());
    EXPECT_EQ(stacks, test::Collapse(text.data(), o));
    if (!addrs) {
      EXPECT_EQ(stacks, "prog;[libx.so];[libx.so] 3000\nprog;[liby.so];[liby.so] 1000\n");
    } else {
      EXPECT_EQ(std::count(stacks.begin(), stacks.end(), '\n'), 3) << stacks;
    }
  }
  std::remove(path.c_str());
}

// pf-collapse folds a recording from its samples' fields, and where perf script's text is
// ambiguous (record_fold.cpp lists the cases), from that text: either way as pf-collapse folds
// pf-script's text of it (`-F +pid` for --pid and --tid, `-F +srcline` for --srcline), with
// every naming option. Samples of
// three events (the second without a time, the third without a call chain), comms with
// spaces, digits, one letter, a '#' or a ';', kernel frames, a library whose name holds " (",
// and a run of samples whose comm takes the time (so each is folded on its own).
TEST(RecordFold, EqualsTheFoldOfItsTextWhereTheTextIsAmbiguous) {
  StringSink sink;
  BufferedWriter out(sink);
  PerfStreamWriter w(out);
  const uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                      PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD;
  perf_event_attr clock = TestAttr(st);
  perf_event_attr faults = TestAttr(st & ~uint64_t{PERF_SAMPLE_TIME});
  faults.config = PERF_COUNT_SW_PAGE_FAULTS;
  perf_event_attr flat = TestAttr(st & ~uint64_t{PERF_SAMPLE_CALLCHAIN});
  flat.config = PERF_COUNT_SW_TASK_CLOCK;
  w.WriteHeader();
  w.WriteAttr(clock, std::vector<uint64_t>{1});
  w.WriteAttr(faults, std::vector<uint64_t>{2});
  w.WriteAttr(flat, std::vector<uint64_t>{3});
  w.WriteEventName(1, "cpu-clock:ppp");
  w.WriteEventName(2, "page-faults");
  w.WriteEventName(3, "task-clock");
  const std::pair<uint32_t, std::string> threads[] = {
      {4242, "prog"},     {4243, "Web Content"}, {4244, "Thread 2"}, {4245, "a 12 b"},
      {19375, "w"},       {8261, "c"},           {4246, "#hash"},    {4247, "x;y"},
      {4248, "12345"},    {4249, "java"},        {0, "swapper"},     {4250, "tab\there"}};
  for (const auto& [tid, comm] : threads) {
    w.WriteComm(tid, tid, comm, true, {tid, tid, 1, 0});
    w.WriteMmap(PERF_RECORD_MISC_USER, tid, tid, 0x7000000, 0x10000, 0, "/nonexistent/libx.so",
                {tid, tid, 2, 0});
    w.WriteMmap(PERF_RECORD_MISC_USER, tid, tid, 0x8000000, 0x10000, 0,
                "/nonexistent/liby (deleted).so", {tid, tid, 2, 0});
  }
  uint64_t time = 10;
  for (const auto& [tid, comm] : threads) {
    for (uint64_t id : {1, 2, 3, 1}) {
      for (int kernel = 0; kernel < 2; ++kernel) {
        SampleFields s;
        s.id = id;
        s.ip = 0x7000100 + 4 * (time % 3);
        s.pid = s.tid = tid;
        s.time = 8425338890000ull + time * 1000003ull;
        s.period = 1000 + time;
        s.callchain = {PERF_CONTEXT_USER, s.ip, 0x8000200, 0x7000500};
        if (kernel) {
          s.misc = PERF_RECORD_MISC_KERNEL;
          s.ip = 0xffffffff81000100;
          s.callchain.insert(s.callchain.begin(), {PERF_CONTEXT_KERNEL, s.ip, 0xffffffff81000200});
        }
        ++time;
        w.WriteSample(s);
      }
    }
  }
  w.Flush();
  const std::string path = ::testing::TempDir() + "/ambiguous_text.data";
  { std::ofstream(path, std::ios::binary) << sink.data(); }
  for (int fields = 0; fields < 3; ++fields) {
    const bool pid_field = fields == 1, srcline = fields == 2;
    ScriptOptions so;
    if (pid_field) so.fields = {"+pid"};
    if (srcline) so.fields = {"+srcline"};
    StringSink text;
    RunScript(path, so, text, nullptr);
    for (int options = 0; options < 8; ++options) {
      for (const char* filter : {"", "page-faults", "task-clock"}) {
        CollapseOptions o;
        o.perf.include_tid = pid_field && (options & 1);
        o.perf.include_pid = pid_field && !(options & 1);
        o.perf.annotate_kernel = o.perf.annotate_jit = options & 2;
        o.perf.include_addrs = options & 4;
        o.perf.annotate_inline = options & 4;
        o.perf.event_filter = filter;
        o.perf.srcline = srcline;
        SCOPED_TRACE(testing::Message() << "fields " << fields << ", options " << options
                                        << ", filter " << filter);
        StringSink folded;
        ReadReport report;
        CollapseFiles({path}, o, folded, &report);
        EXPECT_EQ(test::StackLines(folded.data()), test::Collapse(text.data(), o));
        if (options == 0 && fields == 0 && *filter == '\0') {
          // The one-letter comm before a five-digit thread id takes each sample's time; the
          // Perl pattern reads `[unknown] (/nonexistent/liby (deleted).so)` as the function
          // `[unknown] (/nonexistent/liby` of the dso `deleted).so`.
          EXPECT_NE(folded.data().find("\nw_19375__8425.3"), std::string::npos) << folded.data();
          EXPECT_NE(folded.data().find(";[unknown] ;"), std::string::npos) << folded.data();
          EXPECT_NE(folded.data().find("\nThread;"), std::string::npos) << folded.data();
        }
      }
    }
  }
  std::remove(path.c_str());
}

// Frames are named once per (binary, file offset) for all processes, and samples fold by
// what their text shows: the threads and processes of one comm, whatever their ids and
// wherever they map the library, are named and folded once, unless the ids are printed
// (perf script -F +pid, for --pid and --tid) or the Perl pattern may take them into the comm
// (a one-letter comm): each way as the fold of the recording's text.
TEST(RecordFold, ThreadsAndProcessesOfOneCommFoldOnce) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == nullptr) GTEST_SKIP() << "no libc.so.6";
  void* fn = dlsym(libc, "write");
  dlclose(libc);
  Dl_info info;
  ASSERT_NE(dladdr(fn, &info), 0);
  const std::string lib = info.dli_fname;
  uint64_t off = 0;
  ASSERT_TRUE(ElfSymbols::Load(lib, {})->VaddrToFileOffset(
      reinterpret_cast<uintptr_t>(fn) - reinterpret_cast<uintptr_t>(info.dli_fbase), &off));
  ProgStream p;
  PerfStreamWriter& w = p.w;
  struct Thread {
    uint32_t pid, tid;
    const char* comm;
    uint64_t start;  // where the process maps the library
  };
  const Thread threads[] = {{4242, 4242, "prog", 0x7000000}, {4242, 4243, "prog", 0x7000000},
                            {5000, 5000, "prog", 0x9000000}, {8261, 8261, "c", 0x7000000},
                            {8262, 8262, "c", 0xa000000}};
  uint64_t time = 10;
  for (const Thread& t : threads) {
    if (t.pid == t.tid) {
      w.WriteComm(t.pid, t.tid, t.comm, true, {t.pid, t.tid, time, 0});
      w.WriteMmap(PERF_RECORD_MISC_USER, t.pid, t.tid, t.start, 0x1000000, 0, lib,
                  {t.pid, t.tid, time, 0});
    } else {
      w.WriteComm(t.pid, t.tid, t.comm, false, {t.pid, t.tid, time, 0});
    }
    ++time;
  }
  for (int round = 0; round < 2; ++round) {
    for (const Thread& t : threads) {
      SampleFields s;
      s.ip = t.start + off + 4 * round;  // in write, as is its "caller" (16 bytes on)
      s.pid = t.pid;
      s.tid = t.tid;
      s.time = time++;
      s.period = 1000;
      // Its caller's caller at an address no map holds (a frame-pointer walk gone astray).
      s.callchain = {kContextUser, s.ip, t.start + off + 16, 0x1000 + 8 * static_cast<uint64_t>(round)};
      w.WriteSample(s);
    }
  }
  const std::string path = p.Save("one_comm.data");
  for (int ids = 0; ids < 4; ++ids) {
    SCOPED_TRACE(ids);
    ScriptOptions so;
    if (ids == 1 || ids == 2) so.fields = {"+pid"};
    StringSink text;
    RunScript(path, so, text, nullptr);
    CollapseOptions o;
    o.perf.include_pid = ids == 1;
    o.perf.include_tid = ids == 2;
    o.perf.include_addrs = ids == 3;  // "[unknown] <addr>": by round
    StringSink folded;
    ReadReport report;
    CollapseFiles({path}, o, folded, &report);
    EXPECT_EQ(test::StackLines(folded.data()), test::Collapse(text.data(), o));
    EXPECT_NE(folded.data().find("write"), std::string::npos) << folded.data();
    EXPECT_EQ(report.samples, 10u);
    // prog's three threads are named and folded once (with the ids printed, once each); "c"
    // once in each process, as the Perl pattern may take its ids into the comm.
    EXPECT_EQ(report.named_folds, ids == 0 ? 3u : ids == 3 ? 6u : 5u);
  }
  std::remove(path.c_str());
}

TEST(RecordWriter, HeaderStringsArePerfs) {
  std::string s = PerfStreamWriter::HeaderString("abc");
  ASSERT_EQ(s.size(), 4u + 64u);
  uint32_t len;
  std::memcpy(&len, s.data(), 4);
  EXPECT_EQ(len, 64u);
  EXPECT_EQ(s.substr(4, 4), std::string("abc\0", 4));
  EXPECT_EQ(PerfStreamWriter::HeaderString(std::string(64, 'x')).size(), 4u + 128u);
}

// --- a real recording ----------------------------------------------------------------------

TEST(RecordLive, RecordsACommand) {
  if (!test::PerfEventsUsable()) {
    GTEST_SKIP() << "perf_event_open is refused here (" << std::strerror(errno)
                 << "); see pf-record(1), PERMISSIONS";
  }
  RecordOptions o;
  o.command = {"/bin/sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exit 7"};
  o.frequency = 999;
  o.call_graph = CallChainMode::kFramePointer;
  o.handle_signals = false;
  std::vector<std::string> notices;
  o.notice = [&notices](const std::string& n) { notices.push_back(n); };
  StringSink sink;
  RecordReport report;
  RunRecord(o, sink, &report);
  EXPECT_TRUE(report.command_ran);
  EXPECT_EQ(report.exit_status, 7);
  EXPECT_GT(report.samples, 0u);
  EXPECT_EQ(report.bytes, sink.data().size());
  EXPECT_LT(report.startup_ms, 1000.0);

  std::unique_ptr<ByteSource> src = MemoryInput(sink.data(), "live");
  PerfDataReader r(*src);
  uint64_t samples = 0, with_chain = 0, exec_comms = 0, rounds = 0;
  Record rec;
  while (r.Next(&rec)) {
    if (rec.type == kRecordSample) {
      Sample s;
      ASSERT_TRUE(r.ParseSample(rec, &s));
      ++samples;
      with_chain += !s.callchain.empty();
    } else if (rec.type == kRecordComm && (rec.misc & PERF_RECORD_MISC_COMM_EXEC)) {
      ++exec_comms;
    } else if (rec.type == kRecordFinishedRound) {
      ++rounds;
    }
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(r.bad_records(), 0u);
  ASSERT_EQ(r.attrs().size(), 1u);  // pipe mode: known once the records were read
  EXPECT_EQ(r.attrs()[0].name.rfind("cpu-clock", 0), 0u);
  EXPECT_TRUE(r.attrs()[0].sample_type & PERF_SAMPLE_CALLCHAIN);
  EXPECT_EQ(samples, report.samples);
  EXPECT_EQ(with_chain, samples);
  EXPECT_GE(exec_comms, 1u);
  EXPECT_GE(rounds, 1u);
}

TEST(RecordLive, RefusesBadTargets) {
  RecordOptions none;
  StringSink sink;
  RecordReport report;
  EXPECT_THROW(RunRecord(none, sink, &report), UsageError);
  RecordOptions both;  // (-p with a command is perf's "record PID while it runs")
  both.pids = {1};
  both.system_wide = true;
  EXPECT_THROW(RunRecord(both, sink, &report), UsageError);
  RecordOptions missing;
  missing.command = {"pf-no-such-command-here"};
  missing.handle_signals = false;
  try {
    RunRecord(missing, sink, &report);
    ADD_FAILURE() << "a missing command must fail";
  } catch (const Error& e) {
    EXPECT_TRUE(Has(std::string(e.what()), "command not found"));
  }
}

}  // namespace
}  // namespace pf

namespace pf {
namespace {

// -g, --call-graph and --no-call-graph in the order given, as perf record 6.1 reads them.
CallChainMode Mode(std::vector<CallGraphOption> options, uint32_t* stack_bytes = nullptr) {
  RecordOptions o;
  ApplyCallGraphOptions(options, &o);
  if (stack_bytes) *stack_bytes = o.stack_bytes;
  return o.call_graph;
}

TEST(CallGraphOptions, InTheOrderPerfTakesThem) {
  using C = CallGraphOption;
  EXPECT_EQ(Mode({}), CallChainMode::kFramePointer);  // pf's default: call graphs
  EXPECT_EQ(Mode({{C::kG, ""}}), CallChainMode::kFramePointer);
  uint32_t bytes = 0;
  EXPECT_EQ(Mode({{C::kG, ""}, {C::kMode, "dwarf"}}, &bytes), CallChainMode::kDwarf);
  EXPECT_EQ(bytes, 8192u);
  EXPECT_EQ(Mode({{C::kMode, "dwarf,16384"}, {C::kG, ""}}, &bytes), CallChainMode::kDwarf);
  EXPECT_EQ(bytes, 16384u);
  EXPECT_EQ(Mode({{C::kMode, "dwarf"}, {C::kMode, "fp"}}), CallChainMode::kFramePointer);
  EXPECT_EQ(Mode({{C::kG, ""}, {C::kNone, ""}}), CallChainMode::kNone);
  EXPECT_EQ(Mode({{C::kMode, "none"}}), CallChainMode::kNone);
  EXPECT_EQ(Mode({{C::kMode, "dwarf"}, {C::kNone, ""}, {C::kG, ""}}), CallChainMode::kFramePointer);
  EXPECT_EQ(Mode({{C::kNone, ""}, {C::kMode, "dwarf"}}), CallChainMode::kDwarf);
  EXPECT_THROW(Mode({{C::kMode, "lbr"}}), UsageError);
  EXPECT_THROW(Mode({{C::kMode, "dwarf,12"}}), UsageError);
}

}  // namespace

namespace {

// A stream of rounds, each of `runs` runs of samples in time order (as perf reads each CPU's
// buffer in turn), whose times reach back into the rounds before and tie across runs. Each
// sample's ip is its place in the stream; `expected` gets the ips in perf's order: at each
// FINISHED_ROUND, the samples up to the round before's latest time, by time then place.
std::string RoundsStream(size_t runs, std::vector<uint64_t>* expected) {
  StringSink sink;
  BufferedWriter out(sink);
  PerfStreamWriter w(out);
  w.WriteHeader();
  w.WriteAttr(TestAttr(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME),
              std::vector<uint64_t>{7});
  std::vector<std::pair<uint64_t, uint64_t>> queued;  // time, ip
  uint64_t seq = 0, round_max = 0, limit = 0, rng = 12345;
  auto next = [&](uint64_t n) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (rng >> 33) % n;
  };
  auto deliver = [&](bool all) {
    std::stable_sort(queued.begin(), queued.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    size_t n = 0;
    while (n < queued.size() && (all || queued[n].first <= limit)) {
      expected->push_back(queued[n++].second);
    }
    queued.erase(queued.begin(), queued.begin() + static_cast<std::ptrdiff_t>(n));
  };
  for (uint64_t round = 1; round <= 8; ++round) {
    for (size_t run = 0; run < runs; ++run) {
      uint64_t t = round * 100 - next(150);  // back into the round before
      for (uint64_t k = next(12); k > 0; --k) {
        t += next(3);  // ties within a run and across runs
        SampleFields s;
        s.ip = 0x400000 + seq++;
        s.pid = s.tid = 100;
        s.time = t;
        w.WriteSample(s);
        queued.emplace_back(t, s.ip);
        round_max = std::max(round_max, t);
      }
    }
    w.WriteFinishedRound();
    deliver(false);
    limit = round_max;
  }
  deliver(true);
  w.Flush();
  return sink.data();
}

}  // namespace

// ReplayOrdered merges the runs of a round (or sorts them, when there are many) with the
// records an earlier round left queued: the order is perf's, for a file and for a pipe.
TEST(ReplayOrdered, DeliversInTimeThenStreamOrder) {
  for (size_t runs : {1, 3, 7, 64, 65, 200}) {
    std::vector<uint64_t> expected;
    const std::string data = RoundsStream(runs, &expected);
    for (bool stable : {true, false}) {
      std::unique_ptr<ByteSource> src =
          stable ? MemoryInput(data, "file") : std::make_unique<ChunkedSource>(data);
      PerfDataReader reader(*src);
      std::vector<uint64_t> got;
      ReplayOrdered(reader, [&](const Record& r) {
        Sample s;
        if (r.type == kRecordSample && reader.ParseSample(r, &s)) got.push_back(s.ip);
      });
      EXPECT_EQ(got, expected) << runs << " runs, " << (stable ? "file" : "pipe");
    }
  }
}

}  // namespace pf
