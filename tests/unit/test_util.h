#pragma once
// Helpers shared by the unit tests.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "collapse/collapse.h"
#include "io/output.h"
#include "symbolize/dwarf_cache.h"

namespace pf::test {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The VmFlags of the mapping that holds `p`, from /proc/self/smaps ("" when none does).
inline std::string VmFlagsAt(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long begin, end;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(':') > 8) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

inline bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

/// Folded output without its first line when that is the unit's (`# pf-unit: ...`): the
/// stack lines, which the naming tests compare (the unit line has tests of its own).
inline std::string StackLines(std::string folded) {
  if (folded.starts_with("# pf-unit: ")) {
    size_t nl = folded.find('\n');
    folded.erase(0, nl == std::string::npos ? folded.size() : nl + 1);
  }
  return folded;
}

/// Folds `text` (perf script or folded) in memory and returns the folded output's stack
/// lines (StackLines).
inline std::string Collapse(std::string_view text, const CollapseOptions& opt = {},
                            ReadReport* report = nullptr) {
  std::vector<std::unique_ptr<ByteSource>> sources;
  sources.push_back(MemoryInput(text, "in.txt"));
  StringSink sink;
  ReadReport local;
  CollapseSources(std::move(sources), opt, sink, report ? report : &local);
  return StackLines(sink.data());
}

/// The collapse options of a peer corpus case's option: pid, tid, kernel, jit, all, addrs
/// or "" (FlameGraph's and inferno's flags).
inline CollapseOptions OptionsFor(const std::string& o) {
  CollapseOptions opt;
  opt.perf.include_pid = o == "pid";
  opt.perf.include_tid = o == "tid";
  opt.perf.annotate_kernel = o == "kernel" || o == "all";
  opt.perf.annotate_jit = o == "jit" || o == "all";
  opt.perf.include_addrs = o == "addrs";
  return opt;
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

/// A fresh directory under /tmp made the cache's (PF_CACHE_DIR) while the object lives;
/// PF_CACHE_DIR is put back and the directory removed however the test ends. `dir()` is
/// the directory (for the test's own files too), `cache()` the cache's, under it.
class ScopedCacheDir {
 public:
  ScopedCacheDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "pf-cache-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) dir_ = tmpl;
    if (const char* v = std::getenv("PF_CACHE_DIR")) saved_ = v;
    had_ = std::getenv("PF_CACHE_DIR") != nullptr;
    setenv("PF_CACHE_DIR", cache().c_str(), 1);
  }
  ~ScopedCacheDir() {
    FinishCacheStores();  // (none may write into the directory after it goes)
    if (had_) {
      setenv("PF_CACHE_DIR", saved_.c_str(), 1);
    } else {
      unsetenv("PF_CACHE_DIR");
    }
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  ScopedCacheDir(const ScopedCacheDir&) = delete;
  ScopedCacheDir& operator=(const ScopedCacheDir&) = delete;
  bool ok() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  std::string cache() const { return dir_ + "/cache"; }
  /// The entries in the cache, by path.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(cache() + "/dwarf", ec)) {
      // (Not the stamp of the last trim, TrimCacheNowAndThen's: no entry.)
      if (e.path().extension() == ".img") names.push_back(e.path().string());
    }
    return names;
  }

 private:
  std::string dir_, saved_;
  bool had_ = false;
};

}  // namespace pf::test
