#pragma once
// Helpers shared by the unit tests.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "collapse/collapse.h"
#include "io/output.h"

namespace pf::test {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

/// Folds `text` (perf script or folded) in memory and returns the folded output.
inline std::string Collapse(std::string_view text, const CollapseOptions& opt = {},
                            CollapseReport* report = nullptr) {
  std::vector<std::unique_ptr<ByteSource>> sources;
  sources.push_back(MemoryInput(text, "in.txt"));
  StringSink sink;
  CollapseReport local;
  CollapseSources(std::move(sources), opt, sink, report ? report : &local);
  return sink.data();
}

inline const std::string kCorpus = PF_CORPUS_DIR;

/// True when this process may open a user-space software event (recording tests skip
/// otherwise; errno says why).
inline bool PerfEventsUsable() {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace pf::test
