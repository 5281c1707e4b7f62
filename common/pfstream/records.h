#pragma once
// The kernel's records other than samples, typed: one parser per record kind, over the body
// a PerfDataReader (or a RecordDecoder) hands out, so that every reader of a recording —
// the replay of threads and maps (session.h), perf script's --show-*-events text
// (script_output.h), pf-record's counters and its stream notes — decodes a record the same
// way, through the bounds-checked Cursor (base/byte_cursor.h). Samples are parsed by
// PerfDataReader::ParseSample, which needs the event's attributes; these records do not.
//
// A parser returns false when the body is shorter than the record's fixed fields (a corrupt
// record: callers skip it); strings are read up to their NUL or the body's end (the sample_id
// that may follow a string's padding is not read). Layouts: linux/perf_event.h.

#include <cstdint>
#include <span>
#include <string_view>

#include "pfstream/perf_data.h"

namespace pf {

/// PERF_RECORD_COMM: u32 pid, tid; char comm[].
struct CommRecord {
  uint32_t pid = 0, tid = 0;
  std::string_view comm;
  bool exec = false;  ///< PERF_RECORD_MISC_COMM_EXEC: the comm changed at an exec
};
bool ParseComm(const Record& r, CommRecord* out);

/// PERF_RECORD_FORK and PERF_RECORD_EXIT: u32 pid, ppid, tid, ptid.
struct ForkRecord {
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
};
bool ParseFork(const Record& r, ForkRecord* out);

/// PERF_RECORD_MMAP (u32 pid, tid; u64 start, len, pgoff; char filename[]) and
/// PERF_RECORD_MMAP2 (the same, then u32 maj, min; u64 ino, ino_generation — or, with
/// PERF_RECORD_MISC_MMAP_BUILD_ID, u8 build_id_size, 3 reserved, u8 build_id[20] —, u32 prot,
/// flags, before the file name).
struct MmapRecord {
  uint32_t pid = 0, tid = 0;
  uint64_t start = 0, len = 0, pgoff = 0;
  bool mmap2 = false;
  // MMAP2 only.
  bool has_build_id = false;   ///< the build-id is given instead of the device and inode
  std::string_view build_id;   ///< raw bytes (at most 20)
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  uint32_t prot = 0, flags = 0;
  std::string_view filename;
};
bool ParseMmap(const Record& r, MmapRecord* out);

/// PERF_RECORD_LOST (u64 id, lost) and PERF_RECORD_LOST_SAMPLES (u64 lost): the number lost.
bool ParseLost(const Record& r, uint64_t* lost);

/// PERF_RECORD_KSYMBOL: u64 addr; u32 len; u16 ksym_type, flags; char name[].
struct KsymbolRecord {
  uint64_t addr = 0;
  uint32_t len = 0;
  uint16_t ksym_type = 0, flags = 0;
  std::string_view name;
  bool unregister() const { return flags & 1; }  ///< PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER
};
bool ParseKsymbol(const Record& r, KsymbolRecord* out);

/// PERF_RECORD_HEADER_BUILD_ID: u32 pid; u8 build_id[24] (20 bytes, then, with
/// PERF_RECORD_MISC_BUILD_ID_SIZE, their number); char filename[].
bool ParseBuildIdRecord(const Record& r, PerfDataReader::BuildId* out);

/// The record at the start of `bytes` (header first, as a ring buffer, a writer or a feature
/// section holds them), its body as long as the header says. False when the header does not
/// fit, or its size is below 8 or beyond `bytes`.
bool RecordView(std::span<const uint8_t> bytes, Record* r);

}  // namespace pf
