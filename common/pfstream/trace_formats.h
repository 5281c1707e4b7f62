#pragma once
// Tracepoints in recordings: the kernel gives a tracepoint sample's fields as raw bytes
// (PERF_SAMPLE_RAW), laid out as the event's format file in tracefs says, and printed as its
// "print fmt" says. perf record takes every recorded tracepoint's format file along in the
// recording ("tracing data": HEADER_TRACING_DATA, a feature in a file, a record followed by
// the data in a pipe), and perf script prints the fields with libtraceevent. pf does both
// the same way, with the same library (Debian's libtraceevent-dev), so the lines are perf's:
//   - TracingData: the tracing data of some tracepoints, read from tracefs as perf writes it
//     (trace-event-info.c's layout: magic, version 0.6, endianness, long and page sizes,
//     header_page, header_event, ftrace formats, each system's formats, kallsyms (empty, as
//     perf writes it), printk formats, saved cmdlines);
//   - TraceFormats: the formats read back from it, naming each tracepoint id ("sched:
//     sched_switch") and printing a sample's fields.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct tep_handle;

namespace pf {

/// Where tracefs is mounted ("/sys/kernel/tracing", or debugfs's "tracing"); "" when neither.
std::string TracefsDir();

/// The id of tracepoint SYSTEM:NAME, from tracefs; false with `*why` set when it cannot be
/// read (no such tracepoint, tracefs not mounted, or not readable by this user).
bool TracepointId(std::string_view system, std::string_view name, uint64_t* id, std::string* why);

/// The files the tracing data carries.
struct TracingFiles {
  std::string header_page, header_event;
  std::vector<std::pair<std::string, std::string>> formats;  // (system, format file)
  std::string printk_formats;
};
/// The tracing data of `files`, laid out as perf record writes it.
std::string TracingDataOf(const TracingFiles& files);
/// The tracing data perf record writes for these tracepoints ("system:name" each), read from
/// tracefs; throws pf::Error when a format file cannot be read.
std::string TracingData(const std::vector<std::string>& tracepoints);

class TraceFormats {
 public:
  /// The formats in `tracing_data`; null when it is not tracing data libtraceevent reads.
  static std::unique_ptr<TraceFormats> Parse(std::span<const uint8_t> tracing_data);
  ~TraceFormats();

  /// "system:name" of tracepoint `id`; "" when the data has no format for it.
  std::string Name(uint64_t id) const;
  /// Appends the fields of a sample of tracepoint `id` as perf script prints them (its
  /// print fmt, through libtraceevent); false when the data has no format for it.
  bool Print(uint64_t id, uint32_t cpu, std::span<const uint8_t> raw, std::string* out) const;

 private:
  TraceFormats() = default;
  static constexpr size_t kMaxRaw = 1 << 16;       // a sample's raw data fits its 16-bit size
  static constexpr size_t kReach = 2 * (1 << 16);  // a 16-bit offset and a 16-bit length
  tep_handle* tep_ = nullptr;
  mutable std::vector<uint8_t> scratch_;  // Print's copy of the raw data, zeros after it
};

}  // namespace pf
