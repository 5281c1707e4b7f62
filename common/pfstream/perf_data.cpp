// The perf.data reader (perf_data.h). A file's header is checked as perf checks it and a
// little further before any offset in it is trusted; file mode needs random access, so a file
// is used mapped (a stream is read whole first), while a pipe's records are read as they come.
// Every record's size is checked against what remains, and a record that does not fit ends
// the reading with truncated() set, since a cut stream is the common case of a Ctrl-C.
// Samples are parsed field by field by the event's sample_type (perf_sample.cpp); the events,
// features and build-ids are read into plain structs once.

#include "pfstream/perf_data.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "base/byte_cursor.h"
#include "base/error.h"
#include "pfstream/records.h"
#include "pfstream/sample_layout.h"

namespace pf {

using namespace sample_layout;  // the sample_type and read_format bits fields are read by

struct PerfDataReader::Inflater {
  ZSTD_DStream* z = ZSTD_createDStream();
  bool failed = false;  // a compressed record did not inflate: the stream cannot go on
  ~Inflater() { ZSTD_freeDStream(z); }
};

namespace {

// The bytes of tracing data that follow a pipe's HEADER_TRACING_DATA record (outside any
// record; its first field says how many, padded to 8).
size_t TracingDataBytes(const Record& r) {
  if (r.type != kRecordHeaderTracingData || r.body.size() < 4) return 0;
  uint32_t size;
  std::memcpy(&size, r.body.data(), 4);
  return (static_cast<size_t>(size) + 7) / 8 * 8;
}

constexpr uint64_t kMagic = 0x32454c4946524550ULL;  // "PERFILE2" read as little-endian
constexpr uint64_t kMagicSwapped = 0x50455246494c4532ULL;
constexpr size_t kFileHeaderSize = 104;
constexpr size_t kPipeHeaderSize = 16;
constexpr size_t kMaxRecord = 1 << 16;  // record sizes are u16

std::span<const uint8_t> Bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A perf_header_string: u32 length (with padding), then NUL-terminated text.
bool ReadString(Cursor* c, std::string* out) {
  uint32_t len;
  std::span<const uint8_t> b;
  if (!c->U32(&len) || !c->Bytes(len, &b)) return false;
  const char* p = reinterpret_cast<const char*>(b.data());
  out->assign(p, strnlen(p, b.size()));
  return true;
}

}  // namespace

std::string KernelBuildId(const PerfDataReader& reader) {
  static const char kHex[] = "0123456789abcdef";
  for (const PerfDataReader::BuildId& b : reader.build_ids()) {
    if (b.path != "[kernel.kallsyms]") continue;
    std::string hex;
    for (unsigned char c : b.id) {
      hex += kHex[c >> 4];
      hex += kHex[c & 15];
    }
    return hex;
  }
  return "";
}

bool KernelSampled(const PerfDataReader& reader) {
  bool sampled = false;
  for (const EventAttr& a : reader.attrs()) sampled |= !a.exclude_kernel();
  if (!sampled || reader.build_ids().empty()) return sampled;
  for (const PerfDataReader::BuildId& b : reader.build_ids()) {
    if (b.path == "[kernel.kallsyms]") return true;
  }
  return false;
}

std::string EventName(const EventAttr& a) {
  static const char* kHardware[] = {"cycles", "instructions", "cache-references",
                                    "cache-misses", "branch-instructions", "branch-misses",
                                    "bus-cycles", "stalled-cycles-frontend",
                                    "stalled-cycles-backend", "ref-cycles"};
  static const char* kSoftware[] = {"cpu-clock", "task-clock", "page-faults",
                                    "context-switches", "cpu-migrations", "minor-faults",
                                    "major-faults", "alignment-faults", "emulation-faults",
                                    "dummy", "bpf-output", "cgroup-switches"};
  std::string name;
  if (a.type == 0 && a.config < std::size(kHardware)) {
    name = kHardware[a.config];
  } else if (a.type == 1 && a.config < std::size(kSoftware)) {
    name = kSoftware[a.config];
  } else {
    name = "raw 0x" + std::to_string(a.type) + ":" + std::to_string(a.config);
  }
  std::string mods;
  if (a.exclude_user() || a.exclude_kernel()) {
    if (!a.exclude_kernel()) mods += 'k';
    if (!a.exclude_user()) mods += 'u';
  }
  mods.append(a.precise_ip(), 'p');
  if (!mods.empty()) name += ":" + mods;
  return name;
}

PerfDataReader::PerfDataReader(ByteSource& source) : source_(source) {
  std::string_view head = source_.Peek();
  if (head.size() < 8) throw Error(source_.name(), "not a perf.data file (too short)");
  uint64_t magic;
  std::memcpy(&magic, head.data(), 8);
  if (magic == kMagicSwapped) {
    throw Error(source_.name(), "perf.data from a big-endian machine is not supported");
  }
  if (magic != kMagic) throw Error(source_.name(), "not a perf.data file (no PERFILE2 magic)");
  uint64_t size = head.size() >= 16 ? Load64(reinterpret_cast<const uint8_t*>(head.data()) + 8) : 0;
  if (size == kPipeHeaderSize) {
    pipe_ = true;
    if (source_.stable()) {
      all_ = source_.Next();
      pos_ = kPipeHeaderSize;
      end_ = all_.size();
    } else {
      buffer_.assign(source_.Next());
      all_ = buffer_;
      pos_ = kPipeHeaderSize;
      end_ = all_.size();
    }
    if (source_.stable()) {
      PrescanEmbedded();
      prescanned_ = true;
    }
    // Attributes and features come first in a pipe: read them now, so attrs() and the
    // features are known before the first record is asked for.
    has_pending_ = Next(&pending_);
    return;
  }
  if (size != kFileHeaderSize) {
    throw Error(source_.name(), "perf.data header of unknown size " + std::to_string(size));
  }
  // File mode needs random access: map it, or read a stream whole.
  if (source_.stable()) {
    all_ = source_.Next();
  } else {
    for (std::string_view c = source_.Next(); !c.empty(); c = source_.Next()) buffer_.append(c);
    all_ = buffer_;
    stream_done_ = true;
  }
  ReadFileHeader();
}

PerfDataReader::~PerfDataReader() = default;

std::string_view PerfDataReader::mapped() const {
  if (!source_.stable() || !source_.releasable() || all_.data() == buffer_.data()) return {};
  return all_;
}

void PerfDataReader::ReleaseBefore(const uint8_t* p, size_t step) {
  if (mapped().empty()) return;
  const char* c = reinterpret_cast<const char*>(p);
  if (c < all_.data() + released_ || c > all_.data() + all_.size()) return;
  size_t upto = static_cast<size_t>(c - all_.data());
  if (upto - released_ < step || upto == released_) return;
  ReleaseInput(all_.substr(released_, upto - released_));
  released_ = upto;
}

namespace {

// The sizes of struct perf_event_attr that perf knows (PERF_ATTR_SIZE_VER0 to VER8,
// linux/perf_event.h); 0 in an attribute is VER0 (perf's read_attr).
bool KnownAttrSize(uint64_t size) {
  for (uint64_t known : {0, 64, 72, 80, 96, 104, 112, 120, 128, 136}) {
    if (size == known) return true;
  }
  return false;
}

}  // namespace

// The header of a perf.data file, checked as perf checks it before trusting it
// (tools/perf/util/header.c: perf_session__read_header, read_attr) and a little further: an
// attribute entry's size is one perf knows, and the attribute it holds is of that size (perf
// reads an attribute by its own size field and refuses one larger than it knows: an entry
// that points at the file header reads "PERFILE2" as the type and a size of 843 MB); the
// attribute and data sections lie inside the file after the header; each event's ids lie
// inside the file. A data section that runs past the end is a recording cut short (read to
// the end, as perf does), not an error.
void PerfDataReader::ReadFileHeader() {
  Cursor c(Bytes(all_));
  uint64_t magic, size, attr_size, attrs_off, attrs_size, data_off, data_size, et_off, et_size;
  uint64_t features[4];
  if (!c.U64(&magic) || !c.U64(&size) || !c.U64(&attr_size) || !c.U64(&attrs_off) ||
      !c.U64(&attrs_size) || !c.U64(&data_off) || !c.U64(&data_size) || !c.U64(&et_off) ||
      !c.U64(&et_size) || !c.U64(&features[0]) || !c.U64(&features[1]) ||
      !c.U64(&features[2]) || !c.U64(&features[3])) {
    throw Error(source_.name(), "perf.data header is truncated");
  }
  const uint64_t n = all_.size();
  const std::string& name = source_.name();
  if (attr_size < 16 + 64 || !KnownAttrSize(attr_size - 16)) {
    throw Error(name, "perf.data attribute entries of " + std::to_string(attr_size) +
                          " bytes: not a size perf writes (corrupt header?)");
  }
  if (attrs_off < kFileHeaderSize || attrs_off > n || attrs_size > n - attrs_off) {
    throw Error(name, "perf.data attribute section (" + std::to_string(attrs_size) +
                          " bytes at " + std::to_string(attrs_off) +
                          ") is not inside the file after its header");
  }
  for (uint64_t off = attrs_off; off + attr_size <= attrs_off + attrs_size; off += attr_size) {
    std::span<const uint8_t> attr = Bytes(all_).subspan(off, attr_size - 16);
    uint32_t own_size;
    std::memcpy(&own_size, attr.data() + 4, 4);
    if ((own_size == 0 ? 64 : own_size) != attr.size()) {  // (perf reads it by own_size)
      throw Error(Where(name, off), "perf.data event attribute of " + std::to_string(own_size) +
                                        " bytes in an entry of " + std::to_string(attr_size) +
                                        " (corrupt header?)");
    }
    uint64_t ids_off = Load64(attr.data() + attr.size());
    uint64_t ids_size = Load64(attr.data() + attr.size() + 8);
    if (ids_off > n || ids_size > n - ids_off) {
      throw Error(Where(name, off), "perf.data event ids (" + std::to_string(ids_size) +
                                        " bytes at " + std::to_string(ids_off) +
                                        ") are not inside the file");
    }
    AddAttr(attr, Bytes(all_).subspan(ids_off, ids_size));
  }
  if (attrs_.empty()) throw Error(name, "perf.data has no events");
  if (data_off < kFileHeaderSize || data_off > n) {
    throw Error(name, "perf.data data section (at " + std::to_string(data_off) +
                          ") is not inside the file after its header");
  }
  pos_ = data_off;
  end_ = data_off + data_size;
  if (data_size == 0 || end_ > n) {
    // A recording that was not finished (perf killed): read what is there.
    end_ = n;
    truncated_ = data_size != 0;
  } else {
    ReadFeatures(data_off + data_size, features);
  }
}

void PerfDataReader::ReadFeatures(uint64_t offset, uint64_t bits[4]) {
  const uint64_t n = all_.size();
  uint64_t index = 0;
  for (uint64_t f = 0; f < 256; ++f) {
    if (!(bits[f / 64] & (1ULL << (f % 64)))) continue;
    uint64_t sec = offset + 16 * index++;
    if (sec > n || n - sec < 16) return;
    uint64_t off = Load64(reinterpret_cast<const uint8_t*>(all_.data()) + sec);
    uint64_t size = Load64(reinterpret_cast<const uint8_t*>(all_.data()) + sec + 8);
    if (off > n || size > n - off) continue;
    OnFeature(f, Bytes(all_).subspan(off, size));
  }
}

bool PerfDataReader::TakeTracingData(const Record& r) {
  const size_t bytes = TracingDataBytes(r);
  if (!Fill(bytes)) {
    truncated_ = true;
    return false;
  }
  OnTracingData(Bytes(all_).subspan(pos_, bytes));
  pos_ += bytes;
  return true;
}

void PerfDataReader::OnTracingData(std::span<const uint8_t> data) {
  trace_formats_ = TraceFormats::Parse(data);
  if (!trace_formats_) return;
  for (EventAttr& a : attrs_) {
    if (a.type != 2) continue;  // PERF_TYPE_TRACEPOINT
    a.trace = trace_formats_.get();
    std::string name = trace_formats_->Name(a.config);
    if (!name.empty() && (a.name.empty() || a.name.starts_with("raw 0x"))) a.name = name;
  }
}

void PerfDataReader::OnFeature(uint64_t feature, std::span<const uint8_t> data) {
  Cursor c(data);
  switch (feature) {
    case 2:  // BUILD_ID
      ParseBuildIds(data);
      break;
    case 3:  // HOSTNAME
      ReadString(&c, &hostname_);
      break;
    case 4:  // OSRELEASE
      ReadString(&c, &os_release_);
      break;
    case 11: {  // CMDLINE
      uint32_t nr;
      if (!c.U32(&nr)) break;
      cmdline_.clear();
      for (uint32_t i = 0; i < nr && i < 4096; ++i) {
        std::string s;
        if (!ReadString(&c, &s)) break;
        cmdline_ += (i ? " " : "") + s;
      }
      break;
    }
    case 1:  // TRACING_DATA: the tracepoints' formats
      OnTracingData(data);
      break;
    case 21:  // SAMPLE_TIME: the first and the last sample's time
      if (!c.U64(&first_sample_time_) || !c.U64(&last_sample_time_)) {
        first_sample_time_ = last_sample_time_ = 0;
      }
      break;
    case 12: {  // EVENT_DESC: names for the events
      uint32_t nr, attr_size;
      if (!c.U32(&nr) || !c.U32(&attr_size)) break;
      for (uint32_t i = 0; i < nr && i < 4096; ++i) {
        std::span<const uint8_t> attr;
        uint32_t nr_ids;
        std::string name;
        if (!c.Bytes(attr_size, &attr) || !c.U32(&nr_ids) || !ReadString(&c, &name)) break;
        // The ids are read, not viewed: the section need not be 8-byte aligned (perf record
        // -z's compressed data, which the features follow, ends anywhere).
        uint64_t first_id = 0;
        if (nr_ids > 0 && !c.U64(&first_id)) break;
        if (nr_ids > 1 && !c.Skip(8 * (uint64_t{nr_ids} - 1))) break;
        for (EventAttr& a : attrs_) {
          bool match = nr_ids > 0 && !a.ids.empty() &&
                       std::find(a.ids.begin(), a.ids.end(), first_id) != a.ids.end();
          if (match || (attrs_.size() == 1 && nr == 1)) a.name = name;
        }
      }
      break;
    }
    default:
      break;
  }
}

namespace {

// Whether a KSYMBOL record (its body) is one of pf-record's notes (symbolize/embedded.h, and
// the stream mark): an unregistering one whose name starts with "pf-".
bool ParseNote(std::span<const uint8_t> body, KsymbolRecord* note) {
  Record r;
  r.type = kRecordKsymbol;
  r.body = body;
  return ParseKsymbol(r, note) && note->unregister() && note->name.rfind("pf-", 0) == 0;
}

}  // namespace

void PerfDataReader::TakeSymbolNote(std::span<const uint8_t> body) {
  KsymbolRecord note;
  if (ParseNote(body, &note)) embedded_.AddNote(note.addr, note.len, note.name);
}

void PerfDataReader::TakeStreamNote(std::span<const uint8_t> body) {
  KsymbolRecord note;
  if (!ParseNote(body, &note)) return;
  if (note.name == kStreamNote) end_promised_ = true;
  if (note.name == kStreamEndNote) end_seen_ = true;
}

// The records ended at a record boundary: a pipe stream that promised its end note and did
// not give it was cut there.
void PerfDataReader::AtEnd() {
  if (pipe_ && end_promised_ && !end_seen_ && !truncated_) {
    truncated_ = true;
    missing_end_ = true;
  }
}

template <typename F>
void PerfDataReader::WalkHeld(uint64_t pos, uint64_t end, F on_record) const {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(all_.data());
  Record r;
  while (RecordView(std::span<const uint8_t>(base + pos, end - pos), &r)) {
    pos += 8 + r.body.size() + (pipe_ ? TracingDataBytes(r) : 0);
    if (pos > end) break;
    on_record(r);
  }
}

// A recording saved to a file carries its symbol table at the end; find it before the first
// sample needs it (record headers only: cheap).
void PerfDataReader::PrescanEmbedded() {
  WalkHeld(pos_, end_, [this](const Record& r) {
    if (r.type == kRecordKsymbol) TakeSymbolNote(r.body);
  });
}

bool PerfDataReader::ScanSampleTimes() const {
  if (first_sample_time_ || last_sample_time_) return true;
  if (!pipe_ || !source_.stable() || all_.size() < kPipeHeaderSize) return false;
  uint64_t first = UINT64_MAX, last = 0;
  WalkHeld(kPipeHeaderSize, all_.size(), [&](const Record& r) {
    uint64_t t;
    if (r.type == kRecordSample && SampleTime(r, &t) && t != 0) {
      first = std::min(first, t);
      last = std::max(last, t);
    }
  });
  if (first > last) return false;
  first_sample_time_ = first;
  last_sample_time_ = last;
  return true;
}

void PerfDataReader::ParseBuildIds(std::span<const uint8_t> data) {
  ParseBuildIdEntries(data, &build_ids_);
}

void PerfDataReader::ParseBuildIdEntries(std::span<const uint8_t> data,
                                         std::vector<BuildId>* out) {
  size_t pos = 0;
  Record r;
  BuildId b;
  while (RecordView(data.subspan(pos), &r) && ParseBuildIdRecord(r, &b)) {
    out->push_back(std::move(b));
    pos += 8 + r.body.size();
  }
}

void PerfDataReader::AddAttr(std::span<const uint8_t> bytes, std::span<const uint8_t> ids) {
  EventAttr a;
  Cursor c(bytes);
  uint32_t size;
  uint64_t config1, config2, branch;
  if (!c.U32(&a.type) || !c.U32(&size) || !c.U64(&a.config) || !c.U64(&a.sample_period) ||
      !c.U64(&a.sample_type) || !c.U64(&a.read_format) || !c.U64(&a.flags)) {
    ++bad_records_;
    return;
  }
  c.Skip(8);  // wakeup_events, bp_type
  if (c.U64(&config1) && c.U64(&config2) && c.U64(&branch) && c.U64(&a.sample_regs_user)) {
    c.U32(&a.sample_stack_user);
  }
  for (size_t i = 0; i + 8 <= ids.size(); i += 8) a.ids.push_back(Load64(ids.data() + i));
  a.name = EventName(a);
  a.user_regs = static_cast<uint32_t>(Popcount(a.sample_regs_user));
  attrs_.push_back(std::move(a));
}

// Makes `need` bytes from pos_ available; false at the end of the input.
bool PerfDataReader::Fill(size_t need) {
  if (end_ - pos_ >= need) return true;
  if (!pipe_ || source_.stable() || stream_done_) return false;
  // Drop what was read, then append chunks until there is enough.
  buffer_.erase(0, pos_);
  consumed_ += pos_;
  pos_ = 0;
  while (buffer_.size() < need) {
    std::string_view chunk = source_.Next();
    if (chunk.empty()) {
      stream_done_ = true;
      break;
    }
    buffer_.append(chunk);
  }
  all_ = buffer_;
  end_ = buffer_.size();
  return end_ - pos_ >= need;
}

// perf record -z writes the ring buffers' records as one zstd stream cut into COMPRESSED
// records (perf's zstd_compress_stream_to_records, flushed at each); a record of the stream
// may straddle two of them. At most this many inflated bytes wait at once: perf's own limit
// is its ring buffer's size.
constexpr size_t kMaxUnpacked = size_t{256} << 20;

void PerfDataReader::Unpack(const Record& c) {
  if (!inflater_) inflater_ = std::make_unique<Inflater>();
  std::span<const uint8_t> in = c.body;
  if (c.type == kRecordCompressed2) {  // (perf 6.15) the size, then the data padded to 8
    uint64_t n = in.size() >= 8 ? Load64(in.data()) : UINT64_MAX;
    if (n > in.size() - 8) {
      ++bad_records_;
      return;
    }
    in = in.subspan(8, n);
  }
  if (inflater_->failed) {
    ++bad_records_;
    return;
  }
  // Keep the part of a record the last one ended in, at the start.
  const size_t left = unpacked_end_ - unpacked_pos_;
  auto* bytes = reinterpret_cast<uint8_t*>(unpacked_.data());
  if (left > 0 && unpacked_pos_ > 0) std::memmove(bytes, bytes + unpacked_pos_, left);
  unpacked_pos_ = 0;
  unpacked_end_ = left;
  unpacked_offset_ = c.offset;
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  for (;;) {
    if (unpacked_.size() * 8 - unpacked_end_ < (size_t{64} << 10)) {
      unpacked_.resize(std::max<size_t>(unpacked_.size() * 2, (size_t{128} << 10) / 8));
    }
    ZSTD_outBuffer output{unpacked_.data(), unpacked_.size() * 8, unpacked_end_};
    size_t ret = ZSTD_decompressStream(inflater_->z, &output, &input);
    unpacked_end_ = output.pos;
    if (ZSTD_isError(ret) || unpacked_end_ > kMaxUnpacked) {
      inflater_->failed = true;
      ++bad_records_;
      unpacked_pos_ = unpacked_end_ = 0;
      return;
    }
    if (input.pos == input.size && output.pos < output.size) return;
  }
}

bool PerfDataReader::NextUnpacked(const uint8_t** p, uint16_t* size) {
  if (unpacked_end_ - unpacked_pos_ < 8) return false;
  const uint8_t* at = reinterpret_cast<const uint8_t*>(unpacked_.data()) + unpacked_pos_;
  std::memcpy(size, at + 6, 2);
  if (*size < 8) {  // the rest cannot be told apart
    ++bad_records_;
    unpacked_pos_ = unpacked_end_ = 0;
    return false;
  }
  if (*size > unpacked_end_ - unpacked_pos_) return false;  // its end is in the next one
  *p = at;
  return true;
}

bool PerfDataReader::Next(Record* r) {
  if (has_pending_) {
    *r = pending_;
    has_pending_ = false;
    return true;
  }
  for (;;) {
    const uint8_t* p;
    uint16_t size;
    const bool unpacked = NextUnpacked(&p, &size);
    if (!unpacked) {
      if (!Fill(8)) {
        if (end_ != pos_ || unpacked_end_ != unpacked_pos_) truncated_ = true;
        AtEnd();
        return false;
      }
      p = reinterpret_cast<const uint8_t*>(all_.data()) + pos_;
      std::memcpy(&size, p + 6, 2);
      if (size < 8) {  // cannot advance: the rest is unusable
        ++bad_records_;
        truncated_ = true;
        return false;
      }
      if (!Fill(size)) {
        truncated_ = true;
        return false;
      }
      p = reinterpret_cast<const uint8_t*>(all_.data()) + pos_;
    }
    uint32_t type;
    uint16_t misc;
    std::memcpy(&type, p, 4);
    std::memcpy(&misc, p + 4, 2);
    r->type = type;
    r->misc = misc;
    r->body = std::span<const uint8_t>(p + 8, size - 8);
    r->stable = !unpacked && source_.stable() && buffer_.empty();
    if (reinterpret_cast<uintptr_t>(p) % 8 != 0) {
      r->stable = false;
      // perf's own feature records have sizes that are not multiples of 8, so what follows
      // them in a pipe is misaligned: hand out an aligned copy.
      aligned_.resize((size + 7) / 8);
      std::memcpy(aligned_.data(), p, size);
      r->body = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(aligned_.data()) + 8,
                                         size - 8);
    }
    if (unpacked) {
      r->offset = unpacked_offset_;
      unpacked_pos_ += size;
    } else {
      r->offset = consumed_ + pos_;
      pos_ += size;
    }
    if (type == kRecordCompressed || type == kRecordCompressed2) {
      if (!unpacked) Unpack(*r);
      continue;
    }
    if (!pipe_ && (type == kRecordHeaderAttr || type == kRecordHeaderFeature)) {
      continue;  // a pipe's records: a file has its events and features in its header
    }
    // In a file (perf inject -b writes them there), build-ids are records like others, for
    // the Session (build_ids() keeps the header's).
    if (!pipe_ && type == kRecordHeaderBuildId) return true;
    if (type == kRecordHeaderAttr) {
      if (r->body.size() >= 8) {
        uint32_t attr_size;
        std::memcpy(&attr_size, r->body.data() + 4, 4);
        if (attr_size < 64 || attr_size > r->body.size()) attr_size = 64;
        if (attr_size > r->body.size()) attr_size = static_cast<uint32_t>(r->body.size());
        AddAttr(r->body.subspan(0, attr_size), r->body.subspan(attr_size));
      }
      continue;
    }
    if (type == kRecordHeaderFeature) {
      if (r->body.size() >= 8) OnFeature(Load64(r->body.data()), r->body.subspan(8));
      continue;
    }
    if (type == kRecordHeaderTracingData && pipe_ && !unpacked) {
      if (!TakeTracingData(*r)) return false;
      continue;
    }
    if (type == kRecordKsymbol && pipe_) {
      if (!prescanned_) TakeSymbolNote(r->body);
      TakeStreamNote(r->body);
    }
    if (type == kRecordHeaderBuildId) {
      // The same layout as a BUILD_ID feature entry, header included.
      ParseBuildIds(std::span<const uint8_t>(p, size));
      continue;
    }
    return true;
  }
}

std::string SkippedRecordsWarning(const std::string& name, const PerfDataReader& reader) {
  const uint64_t n = reader.bad_records();
  if (n == 0) return "";
  return name + ": skipped " + std::to_string(n) + " malformed record" + (n == 1 ? "" : "s") +
         " (a bad size, a sample cut short or of an unknown event, an unreadable event "
         "attribute, or compressed data that does not inflate)";
}

std::string TruncatedWarning(const std::string& name, const PerfDataReader& reader,
                             uint64_t samples, std::string_view done) {
  if (!reader.truncated()) return "";
  std::string n = std::to_string(samples) + " sample" + (samples == 1 ? "" : "s");
  if (reader.missing_end()) {
    return name + ": the recording stops at byte " + std::to_string(reader.stopped_at()) +
           " without pf-record's end record (the recorder was killed, or the copy cut); " +
           std::string(done) + " the " + n + " read";
  }
  return name + ": the recording ends early (cut short?) near byte " +
         std::to_string(reader.stopped_at()) + "; " + std::string(done) + " the " + n +
         " that are whole";
}

}  // namespace pf
