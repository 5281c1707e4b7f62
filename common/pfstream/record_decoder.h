#pragma once
// Decoding records as they are written to a stream (pf-record watches its own output): the
// HEADER_ATTR records come first and are kept; from the first kernel record on, each record
// is handed back as a PerfDataReader would give it — 8-byte aligned, body after the header —
// so ParseSample and ParseSampleId work on it.

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/input.h"
#include "pfstream/perf_data.h"

namespace pf {

class RecordDecoder {
 public:
  RecordDecoder();
  ~RecordDecoder();
  /// Decodes one record (header included). False for attribute and other header records,
  /// which are absorbed. `r->body` stays valid until the next call.
  bool Decode(std::span<const uint8_t> record, Record* r);
  /// An event's attribute and ids, as a HEADER_ATTR record would give them (before the first
  /// kernel record).
  void AddAttr(const perf_event_attr& attr, std::span<const uint64_t> ids);
  /// The reader of the attributes seen (null before the first kernel record).
  const PerfDataReader* reader() const { return reader_.get(); }

 private:
  std::string headers_;  // the stream's header and attribute records
  std::unique_ptr<ByteSource> source_;
  std::unique_ptr<PerfDataReader> reader_;
  std::vector<uint64_t> copy_;
};

}  // namespace pf
