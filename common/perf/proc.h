#pragma once
// What existed before the recording began, read from /proc (proc(5)) and written as the
// records the kernel would have written had it been watching: the "synthesized" records of
// perf record (tools/perf/util/synthetic-events.c).
//   - a COMM per thread (/proc/PID/task/TID/comm), preceded by a FORK for threads other
//     than the main one, so a reader knows which process each thread belongs to;
//   - an MMAP2 per executable mapping of each process (/proc/PID/maps), carrying the ELF
//     build-id of the file (PERF_RECORD_MISC_MMAP_BUILD_ID), read through
//     /proc/PID/root so that files in another mount namespace (containers) are found;
//   - for the kernel, PERF_RECORD_MMAP "[kernel.kallsyms]_text" from _text to _etext of
//     /proc/kallsyms, with pgoff = _text, exactly as perf synthesizes it.
// Threads and mappings may vanish while they are read: such entries are skipped.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "pfstream/perf_writer.h"

namespace pf {

/// One line of /proc/PID/maps.
struct MapsEntry {
  uint64_t start = 0, end = 0, pgoff = 0;
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0;
  char perms[4] = {'-', '-', '-', '-'};  // rwxp / rwxs
  std::string path;  // "" for anonymous memory; "[vdso]", "/usr/lib/... (deleted)", ...
  bool executable() const { return perms[2] == 'x'; }
};

/// Parses "start-end perms offset maj:min inode [path]"; false when the line is malformed.
bool ParseMapsLine(std::string_view line, MapsEntry* out);

/// The thread ids of process `pid` (/proc/PID/task), sorted; empty when it is gone.
std::vector<int> ListThreads(int pid);
/// Every process id in /proc, sorted.
std::vector<int> ListProcesses();
/// The comm of a thread ("" when it is gone).
std::string ReadComm(int pid, int tid);
/// The thread-group id and parent of a thread (/proc/TID/status); false when it is gone.
bool ReadTgidPpid(int tid, int* tgid, int* ppid);
/// The effective owner of a process (-1 when it is gone).
int64_t ProcessOwner(int pid);
/// Whether `pid` is a live (not zombie) process.
bool ProcessAlive(int pid);

/// The GNU build-id note of an ELF file (raw bytes), or "" when it has none.
std::string ReadElfBuildId(const std::string& path);

/// _text and _etext of the running kernel, from kallsyms-formatted text. Both are 0 when
/// they are missing or hidden (kptr_restrict prints zeros).
struct KernelText {
  uint64_t start = 0, end = 0;
  bool visible() const { return start != 0; }
};
KernelText ParseKernelText(std::string_view kallsyms);
/// The same for /proc/kallsyms (reading it takes ~50 ms: the kernel formats 100k+ lines).
KernelText ReadKernelText();

/// Writes the synthesized records of existing processes and of the kernel.
class ProcSynthesizer {
 public:
  /// With `data_maps`, readable file mappings that are not executable are synthesized too
  /// (flagged PERF_RECORD_MISC_MMAP_DATA, as perf does with mmap_data): perf's DWARF
  /// unwinders read .eh_frame_hdr through them.
  ProcSynthesizer(PerfStreamWriter& writer, bool build_ids, bool data_maps = false)
      : writer_(writer), build_ids_(build_ids), data_maps_(data_maps) {}

  /// COMM (+FORK) for `threads` of `pid` (all of its threads when empty), and MMAP2 for
  /// its executable mappings (and data ones). Returns false when the process is gone.
  bool Process(int pid, const std::vector<int>& threads = {});
  /// The kernel map; nothing when the kernel's addresses are not visible.
  void Kernel(const KernelText& text);

  uint64_t records() const { return records_; }

 private:
  const std::string& BuildIdFor(int pid, const MapsEntry& m);

  PerfStreamWriter& writer_;
  bool build_ids_;
  bool data_maps_;
  uint64_t records_ = 0;
  std::map<std::tuple<uint32_t, uint32_t, uint64_t>, std::string> build_id_cache_;
};

}  // namespace pf
