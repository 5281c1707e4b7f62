// Decoding pf-record's own output as it is written (record_decoder.h): the HEADER_ATTR records
// give the events, and every later record is copied into an aligned buffer shaped as the
// PerfDataReader hands records out, so that the same sample parser serves both.

#include "pfstream/record_decoder.h"

#include <cstring>

#include "io/output.h"
#include "pfstream/perf_writer.h"
#include "pfstream/records.h"

namespace pf {

RecordDecoder::RecordDecoder() {
  static constexpr char kHeader[16] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2',
                                       16,  0,   0,   0,   0,   0,   0,   0};
  headers_.assign(kHeader, sizeof kHeader);
}

RecordDecoder::~RecordDecoder() = default;

void RecordDecoder::AddAttr(const perf_event_attr& attr, std::span<const uint64_t> ids) {
  StringSink sink;
  BufferedWriter out(sink);
  PerfStreamWriter writer(out);
  writer.WriteAttr(attr, ids);
  writer.Flush();
  headers_ += sink.data();
}

bool RecordDecoder::Decode(std::span<const uint8_t> rec, Record* r) {
  Record view;
  if (!RecordView(rec, &view)) return false;
  const uint32_t type = view.type;
  if (!reader_) {
    if (type == kRecordHeaderAttr) {
      headers_.append(reinterpret_cast<const char*>(rec.data()), rec.size());
      return false;
    }
    if (type >= kRecordHeaderAttr) return false;  // other header records: not needed
    // The first kernel-kind record: the attributes are complete.
    source_ = MemoryInput(headers_, "<stream>");
    reader_ = std::make_unique<PerfDataReader>(*source_);
  }
  if (type >= kRecordHeaderAttr) return false;
  // An aligned copy of the body (the ring's records may sit anywhere).
  copy_.resize((rec.size() + 7) / 8);
  std::memcpy(copy_.data(), rec.data(), rec.size());
  r->type = type;
  r->misc = view.misc;
  r->body = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(copy_.data()) + 8,
                                     view.body.size());
  return true;
}

}  // namespace pf
