#pragma once
// The pfstream module (common/pfstream/): the perf.data / pfs stream: its reader
// (perf_data.h) and writer (perf_writer.h), the replay of a recording's threads and maps to
// name samples (session.h), perf script's text (script_output.h), sample selection, and
// pf-record's processing of its own stream (this file, online_unwind.h, record_decoder.h).
//
// What pf-record needs to make a recording portable: it watches every record it writes,
// keeps the threads and maps (a Session) and the distinct addresses samples hit, and at the
// end resolves them, where the binaries and the kernel are, into the symbol table that
// travels with the stream (symbolize/embedded.h).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>

#include "pfstream/perf_data.h"
#include "pfstream/record_decoder.h"
#include "pfstream/session.h"
#include "symbolize/embedded.h"
#include "symbolize/symbolizer.h"

namespace pf {

class AddressCollector {
 public:
  AddressCollector();
  ~AddressCollector();
  /// One record as written to the stream, header included (HEADER_ATTR records first).
  void OnRecord(std::span<const uint8_t> record);
  /// The symbols that name every distinct address seen.
  EmbeddedSymbols Resolve();
  /// The latest time seen in any record (the symbol records are stamped with it).
  uint64_t last_time() const { return last_time_; }

 private:
  struct Key {
    uint32_t pid;
    bool kernel;
    uint64_t ip;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.ip * 31 + k.pid * 2 + (k.kernel ? 1 : 0));
    }
  };
  RecordDecoder decoder_;
  std::vector<uint64_t> chain_;
  Symbolizer symbolizer_;
  Session session_;
  std::unordered_set<Key, KeyHash> seen_;
  uint64_t last_time_ = 0;
};

}  // namespace pf
