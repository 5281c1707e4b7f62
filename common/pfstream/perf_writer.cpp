// Writing the pipe format (perf_writer.h). Each record is built in one buffer: Begin writes a
// header whose size Emit fills in once the body is known, padding the record to 8 bytes; the
// synthesized records end with the sample_id fields their event promises. Feature records are
// written in the layouts perf's header.c reads (strings with their padded length, the event
// descriptions with their ids), so `perf script -i -` reads a pf-record stream as one of its
// own.

#include "pfstream/perf_writer.h"

#include <cstring>

#include "base/error.h"

namespace pf {

namespace {

constexpr uint32_t kRecordHeaderAttr = 64;
constexpr uint32_t kRecordFinishedRound = 68;
constexpr uint32_t kRecordEventUpdate = 78;
constexpr uint64_t kEventUpdateName = 2;  // PERF_EVENT_UPDATE__NAME
constexpr uint32_t kRecordHeaderFeature = 80;
constexpr uint32_t kRecordFinishedInit = 82;
constexpr size_t kMaxRecord = 0xffff & ~size_t{7};  // header.size is a u16

}  // namespace

std::string PerfStreamWriter::HeaderString(std::string_view text) {
  // perf's do_write_string(): the length includes the NUL and is aligned to NAME_ALIGN (64).
  uint32_t len = static_cast<uint32_t>((text.size() + 1 + 63) & ~size_t{63});
  std::string out(4, '\0');
  std::memcpy(out.data(), &len, 4);
  out.append(text);
  out.append(len - text.size(), '\0');
  return out;
}

void PerfStreamWriter::WriteHeader() {
  static constexpr char kHeader[16] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2',
                                       16,  0,   0,   0,   0,   0,   0,   0};
  out_.Append(std::string_view(kHeader, sizeof kHeader));
  bytes_ += sizeof kHeader;
}

void PerfStreamWriter::Begin(uint32_t type, uint16_t misc) {
  rec_.clear();
  Put32(type);
  uint16_t m = misc, size = 0;
  PutBytes(std::string_view(reinterpret_cast<const char*>(&m), 2));
  PutBytes(std::string_view(reinterpret_cast<const char*>(&size), 2));
}

void PerfStreamWriter::Put32(uint32_t v) { PutBytes({reinterpret_cast<const char*>(&v), 4}); }
void PerfStreamWriter::Put64(uint64_t v) { PutBytes({reinterpret_cast<const char*>(&v), 8}); }
void PerfStreamWriter::PutBytes(std::string_view b) { rec_.append(b); }

void PerfStreamWriter::PutPaddedString(std::string_view s) {
  rec_.append(s);
  rec_.append(8 - s.size() % 8, '\0');  // at least one NUL
}

void PerfStreamWriter::PutSampleId(const SynthId& id) {
  if (!sample_id_all_) return;
  const uint64_t st = sample_type_;
  if (st & PERF_SAMPLE_TID) {
    Put32(id.pid);
    Put32(id.tid);
  }
  if (st & PERF_SAMPLE_TIME) Put64(id.time);
  if (st & PERF_SAMPLE_ID) Put64(first_id_);
  if (st & PERF_SAMPLE_STREAM_ID) Put64(first_id_);
  if (st & PERF_SAMPLE_CPU) {
    Put32(id.cpu);
    Put32(0);
  }
  if (st & PERF_SAMPLE_IDENTIFIER) Put64(first_id_);
}

void PerfStreamWriter::Emit() {
  rec_.append((8 - rec_.size() % 8) % 8, '\0');
  if (rec_.size() > kMaxRecord) throw Error("a perf record would exceed 64 KiB");
  uint16_t size = static_cast<uint16_t>(rec_.size());
  std::memcpy(rec_.data() + 6, &size, 2);
  out_.Append(rec_);
  bytes_ += rec_.size();
  if (observer_) {
    observer_(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(rec_.data()), rec_.size()));
  }
}

void PerfStreamWriter::WriteAttr(const perf_event_attr& attr, std::span<const uint64_t> ids) {
  if (!have_attr_) {
    have_attr_ = true;
    sample_type_ = attr.sample_type;
    sample_id_all_ = attr.sample_id_all;
    first_id_ = ids.empty() ? 0 : ids[0];
  }
  Begin(kRecordHeaderAttr, 0);
  // The attribute as the kernel knows it: attr.size bytes (perf reads the size from it).
  perf_event_attr copy = attr;
  copy.size = sizeof(perf_event_attr);
  PutBytes({reinterpret_cast<const char*>(&copy), sizeof copy});
  for (uint64_t id : ids) Put64(id);
  Emit();
}

void PerfStreamWriter::WriteFeature(uint64_t feature, std::string_view data) {
  Begin(kRecordHeaderFeature, 0);
  Put64(feature);
  // A feature larger than a record (a huge command line) is cut: it is informational.
  size_t room = kMaxRecord - rec_.size();
  PutBytes(data.substr(0, room));
  Emit();
}

void PerfStreamWriter::WriteStringFeature(uint64_t feature, std::string_view text) {
  WriteFeature(feature, HeaderString(text.substr(0, 4000)));
}

void PerfStreamWriter::WriteCmdline(const std::vector<std::string>& argv) {
  std::string data(4, '\0');
  uint32_t nr = 0;
  for (const std::string& a : argv) {
    std::string s = HeaderString(a.substr(0, 4000));
    if (data.size() + s.size() > 60000) break;
    data += s;
    ++nr;
  }
  std::memcpy(data.data(), &nr, 4);
  WriteFeature(kFeatCmdline, data);
}

void PerfStreamWriter::WriteNrCpus(uint32_t available, uint32_t online) {
  char b[8];
  std::memcpy(b, &available, 4);
  std::memcpy(b + 4, &online, 4);
  WriteFeature(kFeatNrCpus, std::string_view(b, 8));
}

void PerfStreamWriter::WriteTotalMem(uint64_t kib) {
  WriteFeature(kFeatTotalMem, std::string_view(reinterpret_cast<const char*>(&kib), 8));
}

void PerfStreamWriter::WriteEventDesc(const std::vector<EventDesc>& events) {
  // u32 nr, u32 attr_size, then per event: attr, u32 nr_ids, name, u64 ids[nr_ids].
  std::string data;
  auto put32 = [&](uint32_t v) { data.append(reinterpret_cast<const char*>(&v), 4); };
  put32(static_cast<uint32_t>(events.size()));
  put32(sizeof(perf_event_attr));
  for (const EventDesc& e : events) {
    perf_event_attr copy = e.attr;
    copy.size = sizeof(perf_event_attr);
    data.append(reinterpret_cast<const char*>(&copy), sizeof copy);
    put32(static_cast<uint32_t>(e.ids.size()));
    data += HeaderString(e.name);
    for (uint64_t id : e.ids) data.append(reinterpret_cast<const char*>(&id), 8);
  }
  WriteFeature(kFeatEventDesc, data);
}

void PerfStreamWriter::WriteEventName(uint64_t id, std::string_view name) {
  // struct perf_record_event_update { header; u64 type; u64 id; char name[]; }
  // (tools/lib/perf/include/perf/event.h)
  Begin(kRecordEventUpdate, 0);
  Put64(kEventUpdateName);
  Put64(id);
  PutPaddedString(name.substr(0, 1000));
  Emit();
}

void PerfStreamWriter::WriteComm(uint32_t pid, uint32_t tid, std::string_view comm, bool exec,
                                 const SynthId& id) {
  Begin(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
  Put32(pid);
  Put32(tid);
  PutPaddedString(comm.substr(0, 15));  // TASK_COMM_LEN - 1
  PutSampleId(id);
  Emit();
}

void PerfStreamWriter::WriteFork(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
                                 uint64_t time, const SynthId& id) {
  Begin(PERF_RECORD_FORK, 0);
  Put32(pid);
  Put32(ppid);
  Put32(tid);
  Put32(ptid);
  Put64(time);
  PutSampleId(id);
  Emit();
}

void PerfStreamWriter::WriteMmap(uint16_t misc, uint32_t pid, uint32_t tid, uint64_t start,
                                 uint64_t len, uint64_t pgoff, std::string_view filename,
                                 const SynthId& id) {
  Begin(PERF_RECORD_MMAP, misc);
  Put32(pid);
  Put32(tid);
  Put64(start);
  Put64(len);
  Put64(pgoff);
  PutPaddedString(filename.substr(0, 4095));  // PATH_MAX
  PutSampleId(id);
  Emit();
}

void PerfStreamWriter::WriteMmap2(const Mmap2& m, const SynthId& id) {
  const bool with_build_id = !m.build_id.empty();
  Begin(PERF_RECORD_MMAP2,
        static_cast<uint16_t>(m.misc | (with_build_id ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0)));
  Put32(m.pid);
  Put32(m.tid);
  Put64(m.start);
  Put64(m.len);
  Put64(m.pgoff);
  if (with_build_id) {
    // u8 build_id_size, u8 reserved, u16 reserved, u8 build_id[20]: the same 24 bytes as
    // maj, min, ino and ino_generation.
    char b[24] = {};
    size_t n = std::min<size_t>(m.build_id.size(), 20);
    b[0] = static_cast<char>(n);
    std::memcpy(b + 4, m.build_id.data(), n);
    PutBytes(std::string_view(b, sizeof b));
  } else {
    Put32(m.maj);
    Put32(m.min);
    Put64(m.ino);
    Put64(m.ino_generation);
  }
  Put32(m.prot);
  Put32(m.flags);
  PutPaddedString(std::string_view(m.filename).substr(0, 4095));
  PutSampleId(id);
  Emit();
}

void PerfStreamWriter::WriteTracingData(std::string_view data) {
  constexpr uint32_t kTracingData = 66;  // PERF_RECORD_HEADER_TRACING_DATA
  std::string padded(data);
  padded.append((8 - data.size() % 8) % 8, '\0');
  Begin(kTracingData, 0);
  Put32(static_cast<uint32_t>(padded.size()));  // (perf checks the padded size)
  Put32(0);
  Emit();
  out_.Append(padded);
  bytes_ += padded.size();
}

void PerfStreamWriter::WriteSample(const SampleFields& s, uint64_t sample_type) {
  const uint64_t st = sample_type ? sample_type : sample_type_;
  constexpr uint64_t kKnown = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                              PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                              PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                              PERF_SAMPLE_CALLCHAIN;
  if (st & ~kKnown) throw Error("WriteSample: sample_type has fields it cannot write");
  Begin(PERF_RECORD_SAMPLE, s.misc);
  if (st & PERF_SAMPLE_IDENTIFIER) Put64(s.id);
  if (st & PERF_SAMPLE_IP) Put64(s.ip);
  if (st & PERF_SAMPLE_TID) {
    Put32(s.pid);
    Put32(s.tid);
  }
  if (st & PERF_SAMPLE_TIME) Put64(s.time);
  if (st & PERF_SAMPLE_ADDR) Put64(0);
  if (st & PERF_SAMPLE_ID) Put64(s.id);
  if (st & PERF_SAMPLE_STREAM_ID) Put64(s.id);
  if (st & PERF_SAMPLE_CPU) {
    Put32(s.cpu);
    Put32(0);
  }
  if (st & PERF_SAMPLE_PERIOD) Put64(s.period);
  if (st & PERF_SAMPLE_CALLCHAIN) {
    Put64(s.callchain.size());
    for (uint64_t a : s.callchain) Put64(a);
  }
  Emit();
}

void PerfStreamWriter::WriteSymbolNote(uint64_t addr, uint32_t len, std::string_view name,
                                       const SynthId& id) {
  constexpr uint32_t kKsymbol = 17;      // PERF_RECORD_KSYMBOL
  constexpr uint16_t kUnregister = 1;    // PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER
  Begin(kKsymbol, 0);
  Put64(addr);
  Put32(len);
  uint16_t type_and_flags[2] = {0, kUnregister};
  PutBytes(std::string_view(reinterpret_cast<const char*>(type_and_flags), 4));
  PutPaddedString(name);
  PutSampleId(id);
  Emit();
}

void PerfStreamWriter::WriteFinishedRound() {
  Begin(kRecordFinishedRound, 0);
  Emit();
}

void PerfStreamWriter::WriteFinishedInit() {
  Begin(kRecordFinishedInit, 0);
  Emit();
}

}  // namespace pf
