#pragma once
// Reading perf.data: the file format `perf record -o FILE` writes and the pipe format of
// `perf record -o -` and pf-record (see man/pf-stream.5). One reader serves both:
//   file mode: a 104-byte header ("PERFILE2") pointing at the attribute, data and feature
//              sections; records are read from the data section;
//   pipe mode: a 16-byte header, then records only; the event attributes arrive as
//              PERF_RECORD_HEADER_ATTR records and features as HEADER_FEATURE records.
// Records keep the kernel's layout (linux/perf_event.h). Every read is bounds-checked,
// record sizes are validated against the header and the data that remains, and a stream cut
// short ends at its last whole record with truncated() set. A pf-record stream announces, in a
// note at its start, that it ends with an end note ("pf-stream 1" ... "pf-end": KSYMBOL
// records perf treats as no-ops); one that stops at a record boundary without the end note
// was cut there too (missing_end()). Streams of other writers have no such mark.
// In file mode, what the constructor read (events, features, build-ids) never changes: a
// pipe's ATTR and FEATURE records in a file's data section are skipped, and its
// HEADER_BUILD_ID records are delivered as records. So another thread may read it while one
// thread reads the records.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/input.h"
#include "pfstream/trace_formats.h"
#include "symbolize/embedded.h"

namespace pf {

/// What pf needs from a perf_event_attr.
struct EventAttr {
  uint32_t type = 0;
  uint64_t config = 0;
  uint64_t sample_period = 0;  // or the frequency when freq
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t flags = 0;          // the bitfield word (disabled, inherit, ..., sample_id_all, ...)
  uint64_t sample_regs_user = 0;
  uint32_t sample_stack_user = 0;
  uint32_t user_regs = 0;  // registers in sample_regs_user (set by the reader)
  std::vector<uint64_t> ids;   // the sample ids that belong to this event
  std::string name;            // from the EVENT_DESC feature, or derived from type/config
  /// A tracepoint's formats (its name, its fields' printer), when the recording has them.
  const class TraceFormats* trace = nullptr;

  bool freq() const { return flags & (1ULL << 10); }
  /// Each sample has a period: in the sample (PERF_SAMPLE_PERIOD), or the attribute's fixed
  /// one (perf record -c without it), which perf script prints the same.
  bool has_period() const { return (sample_type & (1ULL << 8)) || (!freq() && sample_period); }
  bool sample_id_all() const { return flags & (1ULL << 18); }
  bool exclude_user() const { return flags & (1ULL << 4); }
  bool exclude_kernel() const { return flags & (1ULL << 5); }
  unsigned precise_ip() const { return (flags >> 15) & 3; }
};

/// A parsed PERF_RECORD_SAMPLE (fields present per the event's sample_type).
struct Sample {
  const EventAttr* attr = nullptr;
  uint16_t misc = 0;
  uint64_t ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t addr = 0;
  uint64_t id = 0;
  uint32_t cpu = 0;
  uint64_t period = 1;
  std::span<const uint64_t> callchain;  // with PERF_CONTEXT_* markers, as recorded
  uint64_t regs_abi = 0;
  std::span<const uint64_t> regs_user;
  std::span<const uint8_t> stack_user;  // the bytes the kernel filled (dyn_size)
  std::span<const uint8_t> raw;         // PERF_SAMPLE_RAW: a tracepoint's fields
  // Offsets in the record's body, for rewriting it: the callchain's nr, the REGS_USER abi,
  // the STACK_USER size, and the end of the STACK_USER field (0 where absent).
  uint32_t callchain_at = 0, regs_user_at = 0, stack_user_at = 0, stack_user_end = 0;
};

/// The sample_id fields at the end of a non-sample record (sample_id_all).
struct SampleId {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
  bool has_time = false;
};

struct Record {
  uint32_t type = 0;
  uint16_t misc = 0;
  std::span<const uint8_t> body;  // after the 8-byte header
  uint64_t offset = 0;            // of the record in the input (for messages)
  bool stable = false;            // body stays valid as long as the reader (a mapped file)
};

class PerfDataReader {
 public:
  /// Reads the header (and, in file mode, the attributes and features). Throws pf::Error
  /// when the input is not perf.data or its header is unusable.
  explicit PerfDataReader(ByteSource& source);
  ~PerfDataReader();

  bool pipe_mode() const { return pipe_; }
  /// The next record; false at the end. Attribute records (pipe mode) are absorbed.
  bool Next(Record* record);
  /// Set when the input ended inside a record or a section, or (missing_end()) a pf-record
  /// stream ended without its end note.
  bool truncated() const { return truncated_; }
  /// Set when a stream that promised an end note (pf-record's) ended, at a record boundary,
  /// without it: the recorder was killed, or the copy cut.
  bool missing_end() const { return missing_end_; }
  /// The offset in the input where the records stopped (for messages).
  uint64_t stopped_at() const { return consumed_ + pos_; }
  /// The end of the records in the input (in file mode, the end of the data section).
  uint64_t data_size() const { return end_; }
  /// The whole input as mapped (a mapped file: what ReleaseBefore gives back); empty for
  /// others.
  std::string_view mapped() const;
  /// Records skipped because they were malformed (bad size, an event attribute cut short,
  /// compressed records that do not inflate), and samples ParseSample could not decode (cut
  /// short, or of an event no attribute declares).
  uint64_t bad_records() const {
    return bad_records_ + bad_samples_.load(std::memory_order_relaxed);
  }

  const std::vector<EventAttr>& attrs() const { return attrs_; }
  /// The event a sample or sample_id belongs to (by id; the only event when there is one).
  const EventAttr* AttrFor(std::span<const uint8_t> body, bool is_sample) const;

  /// Gives the pages of a mapped input before `p` (records delivered and done with) back to
  /// the kernel, so that reading a large file keeps memory flat; a no-op for other inputs.
  /// Nothing is given back until at least `step` bytes can be (a small file costs no call).
  void ReleaseBefore(const uint8_t* p, size_t step = size_t{16} << 20);

  /// Decodes a PERF_RECORD_SAMPLE body; false (and counted in bad_records) when it is
  /// malformed. Call it once per sample.
  bool ParseSample(const Record& r, Sample* s) const;
  /// The time of a PERF_RECORD_SAMPLE (for ordering: the rest is not checked); false when
  /// it has none.
  bool SampleTime(const Record& r, uint64_t* time) const;
  /// Decodes the trailing sample_id of a non-sample record; false when absent or malformed.
  /// `any_event`: when the record's id matches no event, read it as the first event's.
  bool ParseSampleId(const Record& r, SampleId* id, bool any_event = false) const;

  /// Features read from the header (file mode) or HEADER_FEATURE records (pipe mode).
  const std::string& hostname() const { return hostname_; }
  /// The tracepoints' formats the recording took along (HEADER_TRACING_DATA); null if none.
  const TraceFormats* trace_formats() const { return trace_formats_.get(); }
  const std::string& os_release() const { return os_release_; }
  const std::string& cmdline() const { return cmdline_; }
  /// The SAMPLE_TIME feature (perf record writes it to files): the first and last sample's
  /// time; both 0 when the recording does not say.
  uint64_t first_sample_time() const { return first_sample_time_; }
  /// When no SAMPLE_TIME feature gave them (perf writes it only into files; pf-record's and
  /// perf's pipe streams have none) and the input is held whole (a mapped file): the first
  /// and last sample times, found by a pass over the records. False when it cannot be.
  bool ScanSampleTimes() const;
  uint64_t last_sample_time() const { return last_sample_time_; }
  /// Build-ids announced by the recorder (HEADER_BUILD_ID records, BUILD_ID feature).
  struct BuildId {
    uint32_t pid;
    std::string path;
    std::string id;  // raw bytes
  };
  /// In file mode only the header's (HEADER_BUILD_ID records are delivered by Next).
  const std::vector<BuildId>& build_ids() const { return build_ids_; }
  /// The entries of a BUILD_ID feature, or of a HEADER_BUILD_ID record (`data` from its
  /// header on), appended to *out.
  static void ParseBuildIdEntries(std::span<const uint8_t> data, std::vector<BuildId>* out);
  /// The symbols pf-record appended (known from the start for a file; for a stream, only
  /// once its end has been read).
  const EmbeddedSymbols& embedded_symbols() const { return embedded_; }

 private:
  bool Fill(size_t need);
  bool ParseSampleFields(const Record& r, Sample* s) const;
  // The next record inflated from perf record -z's COMPRESSED records, if a whole one is
  // there.
  bool NextUnpacked(const uint8_t** p, uint16_t* size);
  void Unpack(const Record& compressed);
  void ReadFileHeader();
  void ReadFeatures(uint64_t offset, uint64_t features_bits[4]);
  void AddAttr(std::span<const uint8_t> attr_bytes, std::span<const uint8_t> ids);
  void OnFeature(uint64_t feature, std::span<const uint8_t> data);
  void ParseBuildIds(std::span<const uint8_t> data);

  ByteSource& source_;
  bool pipe_ = false;
  bool truncated_ = false;
  bool end_promised_ = false;  // a "pf-stream" note was read
  bool end_seen_ = false;      // and its "pf-end" note
  bool missing_end_ = false;
  uint64_t bad_records_ = 0;
  mutable std::atomic<uint64_t> bad_samples_{0};  // (ParseSample is const, and may run aside)
  // The data being read: the whole data section (file mode), or a buffer over the stream.
  std::string_view all_;
  uint64_t pos_ = 0, end_ = 0;
  std::string buffer_;
  std::vector<uint64_t> aligned_;  // an aligned copy of a misaligned record
  Record pending_;                 // the first record after a pipe's headers
  // perf record -z: its COMPRESSED records are one zstd stream of records, which a
  // compressed record may end in the middle of.
  struct Inflater;
  std::unique_ptr<Inflater> inflater_;
  std::vector<uint64_t> unpacked_;  // inflated records (8-byte aligned), from unpacked_pos_
  size_t unpacked_pos_ = 0, unpacked_end_ = 0;  // in bytes
  uint64_t unpacked_offset_ = 0;  // of the compressed record they came from
  bool has_pending_ = false;
  bool stream_done_ = false;
  uint64_t consumed_ = 0;  // stream bytes dropped from the buffer
  size_t released_ = 0;    // bytes of all_ given back (ReleaseBefore)
  std::vector<EventAttr> attrs_;
  std::string hostname_, os_release_, cmdline_;
  std::unique_ptr<TraceFormats> trace_formats_;
  // Reads the tracing data, and names the tracepoint events after it.
  void OnTracingData(std::span<const uint8_t> data);
  // In a pipe: the tracing data that follows its record `r`; false when the input ends first.
  bool TakeTracingData(const Record& r);
  // Calls on_record for each record of the input held whole, from `pos` to `end`, stepping
  // over a pipe's tracing data.
  template <typename F>
  void WalkHeld(uint64_t pos, uint64_t end, F on_record) const;
  mutable uint64_t first_sample_time_ = 0, last_sample_time_ = 0;  // (ScanSampleTimes)
  std::vector<BuildId> build_ids_;
  EmbeddedSymbols embedded_;
  bool prescanned_ = false;
  void PrescanEmbedded();
  void TakeSymbolNote(std::span<const uint8_t> body);
  void TakeStreamNote(std::span<const uint8_t> body);
  void AtEnd();
};

/// The build-id (hex) the recording gives for the kernel image, or "".
std::string KernelBuildId(const PerfDataReader& reader);

/// True when some event of the recording samples the kernel and its build-id table, when it
/// has one, names the kernel: perf lists only the binaries its samples hit, so kernel symbols
/// will likely be needed (callers read them ahead; without a hit they are read on demand).
bool KernelSampled(const PerfDataReader& reader);

/// The warning for the records `reader` skipped as malformed, after the input's name; "" when
/// it skipped none.
std::string SkippedRecordsWarning(const std::string& name, const PerfDataReader& reader);

/// The warning for a recording cut short, after the input's name, with the number of samples
/// read and what was done with them ("folded", "printed"); "" when it was whole.
std::string TruncatedWarning(const std::string& name, const PerfDataReader& reader,
                             uint64_t samples, std::string_view done);

/// The KSYMBOL notes of pf-record's stream mark (perf processes them as no-ops): the first
/// says the stream ends with the second.
inline constexpr std::string_view kStreamNote = "pf-stream 1";
inline constexpr std::string_view kStreamEndNote = "pf-end";

/// The perf name of an event given its attribute ("cpu-clock", "cycles", ...), with the
/// modifiers perf appends (":u", ":k", ":ppp").
std::string EventName(const EventAttr& attr);

enum : uint32_t {
  kRecordMmap = 1,
  kRecordLost = 2,
  kRecordComm = 3,
  kRecordExit = 4,
  kRecordFork = 7,
  kRecordSample = 9,
  kRecordKsymbol = 17,
  kRecordMmap2 = 10,
  kRecordLostSamples = 13,
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordIdIndex = 69,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,
  kRecordFinishedInit = 82,
  kRecordCompressed2 = 83,
};

constexpr uint64_t kContextHv = static_cast<uint64_t>(-32);
constexpr uint64_t kContextKernel = static_cast<uint64_t>(-128);
constexpr uint64_t kContextUser = static_cast<uint64_t>(-512);
constexpr uint64_t kContextMax = static_cast<uint64_t>(-4095);

}  // namespace pf
