#pragma once
// Unwinding a sampled user stack with elfutils' libdw (dwfl_getthread_frames), as perf's
// libdw backend does: the fallback for rows the compiled tables cannot express, and the
// oracle the tests hold the tables to.
//
// One Dwfl per process, kept and reused (its modules are reported again only when the
// process's maps change): building a Dwfl per sample costs 300-600 us, reusing one 15-20 us.
// dwfl_attach_state() can be called once per Dwfl, so the sample being unwound is reached
// through a pointer its callbacks read. Addresses are reported as the table unwinder reports
// them (dwfl_frame_pc: the pc minus one unless the frame is an activation).

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "unwind/unwinder.h"

namespace pf {

/// A file mapped into the process: the path to read, and its load bias (runtime address
/// minus ELF address). A file is reported once, with its first entry's bias.
struct LibdwMap {
  std::string file;
  uint64_t bias = 0;
};

class LibdwUnwinder {
 public:
  LibdwUnwinder();
  ~LibdwUnwinder();
  LibdwUnwinder(const LibdwUnwinder&) = delete;
  LibdwUnwinder& operator=(const LibdwUnwinder&) = delete;

  /// Unwinds `in` for thread `tid` of process `pid`, whose file mappings are `maps` (reported
  /// to libdw again when `generation` changes). Appends at most `max_frames` addresses.
  UnwindEnd Unwind(uint32_t pid, uint32_t tid, uint64_t generation,
                   const std::vector<LibdwMap>& maps, const UserStack& in, size_t max_frames,
                   std::vector<uint64_t>* ips);

 private:
  struct Process;
  std::unordered_map<uint32_t, std::unique_ptr<Process>> procs_;
};

}  // namespace pf
