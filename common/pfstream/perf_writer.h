#pragma once
// Writing the perf.data pipe format, the pfs stream of pf-record (man/pf-stream.5).
//
// A pipe-format stream is a 16-byte header ("PERFILE2", u64 16) followed by records, each
// an 8-byte perf_event_header and its body. The recorder writes, in order:
//   HEADER_ATTR records     the perf_event_attr of each event and the sample ids it owns;
//   HEADER_FEATURE records  what perf record puts in its header (host, kernel release, event
//                           names, command line, ...), one feature per record;
//   EVENT_UPDATE records    the name of each event, for perf script;
//   synthesized records     COMM/FORK/MMAP/MMAP2 for what existed before recording began
//                           (read from /proc), then FINISHED_INIT;
//   kernel records          copied unchanged from the ring buffers (SAMPLE, MMAP2, COMM,
//                           FORK, EXIT, LOST, ...), with a FINISHED_ROUND after each pass
//                           over the buffers: perf sorts records by time between two rounds.
// The layouts are the kernel's (linux/perf_event.h, "enum perf_event_type") and perf's
// (tools/perf/util/event.h, header.h); see
// https://github.com/torvalds/linux/blob/master/tools/perf/Documentation/perf.data-file-format.txt
//
// Records are padded to a multiple of 8 bytes, so every record of the stream starts
// 8-byte aligned (the kernel's records already are; perf's own feature records are not).
// Synthesized records end with the sample_id fields that `sample_id_all` promises
// (PERF_SAMPLE_TID/TIME/ID/STREAM_ID/CPU/IDENTIFIER, in that order): without them a
// reader would take the tail of a file name for a time stamp.

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/output.h"

namespace pf {

/// Feature numbers of the perf.data header (tools/perf/util/header.h, HEADER_*).
enum PerfFeature : uint64_t {
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCpuId = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
};

/// The sample_id trailer of a synthesized record (zeros are what perf writes).
struct SynthId {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
};

/// The fields of a PERF_RECORD_SAMPLE that pf-record's sample types use (tests, tools).
struct SampleFields {
  uint16_t misc = PERF_RECORD_MISC_USER;
  uint64_t id = 0;
  uint64_t ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
  uint64_t period = 1;
  std::vector<uint64_t> callchain;  // with PERF_CONTEXT_* markers
};

/// An event as named in the EVENT_DESC feature.
struct EventDesc {
  perf_event_attr attr;
  std::string name;
  std::vector<uint64_t> ids;
};

/// Writes one pipe-format stream, record by record, through a BufferedWriter.
class PerfStreamWriter {
 public:
  /// Writes to `out`; nothing is written until WriteHeader().
  explicit PerfStreamWriter(BufferedWriter& out) : out_(out) {}

  /// The 16-byte pipe header.
  void WriteHeader();
  /// A HEADER_ATTR record. The first call also fixes the sample_id layout of synthesized
  /// records (every event of a stream has the same sample_type) and the id they carry.
  void WriteAttr(const perf_event_attr& attr, std::span<const uint64_t> ids);
  /// A HEADER_FEATURE record with raw feature data (padded to 8 bytes).
  void WriteFeature(uint64_t feature, std::string_view data);
  /// A feature that is one perf_header_string (HOSTNAME, OSRELEASE, VERSION, ARCH, ...).
  void WriteStringFeature(uint64_t feature, std::string_view text);
  /// CMDLINE: the recorder's argv.
  void WriteCmdline(const std::vector<std::string>& argv);
  /// NRCPUS: CPUs configured and online.
  void WriteNrCpus(uint32_t available, uint32_t online);
  /// TOTAL_MEM in KiB.
  void WriteTotalMem(uint64_t kib);
  /// EVENT_DESC: each event's attribute, name and ids (shown by perf script --header).
  void WriteEventDesc(const std::vector<EventDesc>& events);
  /// A PERF_RECORD_EVENT_UPDATE naming the event that owns sample id `id`. perf script
  /// names events from these in pipe mode (it fixes a name from the attribute before the
  /// EVENT_DESC feature arrives); perf record writes one per event after its features.
  void WriteEventName(uint64_t id, std::string_view name);

  /// A PERF_RECORD_COMM (misc COMM_EXEC when `exec`).
  void WriteComm(uint32_t pid, uint32_t tid, std::string_view comm, bool exec = false,
                 const SynthId& id = {});
  /// A PERF_RECORD_FORK: thread `tid` of `pid` created by `ptid` of `ppid`.
  void WriteFork(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time = 0,
                 const SynthId& id = {});
  /// A PERF_RECORD_MMAP (perf uses it for the kernel map: pid -1, misc KERNEL).
  void WriteMmap(uint16_t misc, uint32_t pid, uint32_t tid, uint64_t start, uint64_t len,
                 uint64_t pgoff, std::string_view filename, const SynthId& id = {});
  /// The fields of a PERF_RECORD_MMAP2.
  struct Mmap2 {
    uint16_t misc = PERF_RECORD_MISC_USER;
    uint32_t pid = 0, tid = 0;
    uint64_t start = 0, len = 0, pgoff = 0;
    uint32_t maj = 0, min = 0;
    uint64_t ino = 0, ino_generation = 0;
    std::string build_id;  // raw bytes (<= 20); when set, replaces maj/min/ino
    uint32_t prot = 0, flags = 0;
    std::string filename;
  };
  /// A PERF_RECORD_MMAP2, with PERF_RECORD_MISC_MMAP_BUILD_ID when build_id is set.
  void WriteMmap2(const Mmap2& m, const SynthId& id = {});
  /// A PERF_RECORD_SAMPLE laid out for `sample_type` (0: the first attribute's).
  void WriteSample(const SampleFields& s, uint64_t sample_type = 0);
  /// PERF_RECORD_HEADER_TRACING_DATA: the record, then the tracepoints' formats
  /// (pfstream/trace_formats.h) outside it, padded to 8 bytes, as perf writes them in a pipe.
  void WriteTracingData(std::string_view data);
  /// A PERF_RECORD_KSYMBOL that perf treats as a no-op (an unregistration of an address no
  /// kernel map holds): pf's carrier for the symbols a stream takes along
  /// (symbolize/embedded.h). `name` is NUL-terminated and padded.
  void WriteSymbolNote(uint64_t addr, uint32_t len, std::string_view name, const SynthId& id);
  /// PERF_RECORD_FINISHED_ROUND: the records before it may be sorted by time.
  void WriteFinishedRound();
  /// PERF_RECORD_FINISHED_INIT: the synthesized records end here.
  void WriteFinishedInit();
  /// A record exactly as the kernel wrote it (header included).
  void WriteRaw(std::span<const uint8_t> record) {
    out_.Append(std::string_view(reinterpret_cast<const char*>(record.data()), record.size()));
    bytes_ += record.size();
    if (observer_) observer_(record);
  }
  /// Also hands every record written (header included) to `observer` (pf-record's address
  /// collector); the 16-byte stream header is not a record and is not passed.
  void SetObserver(std::function<void(std::span<const uint8_t>)> observer) {
    observer_ = std::move(observer);
  }
  /// Hands everything written so far to the sink (after each round: pipes see it).
  void Flush() { out_.Flush(); }
  /// Bytes of stream written so far.
  uint64_t bytes_written() const { return bytes_; }

 private:
  std::function<void(std::span<const uint8_t>)> observer_;

 public:

  /// Encodes a perf_header_string: u32 length (NUL included, padded to 64), then the text.
  static std::string HeaderString(std::string_view text);

 private:
  // Starts a record: reserves its header in rec_, to be completed by Emit().
  void Begin(uint32_t type, uint16_t misc);
  void Put32(uint32_t v);
  void Put64(uint64_t v);
  void PutBytes(std::string_view b);
  void PutPaddedString(std::string_view s);  // NUL-terminated, padded to 8
  void PutSampleId(const SynthId& id);
  void Emit();

  BufferedWriter& out_;
  std::string rec_;
  uint64_t sample_type_ = 0;
  bool sample_id_all_ = false;
  bool have_attr_ = false;
  uint64_t first_id_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace pf
