// CPU lists (cpu_list.h): the kernel's "0,2-3" notation parsed strictly (a malformed list is a
// usage error naming the bad part), and the online and configured CPU counts read from sysfs,
// which pf-record needs to open one event per CPU and to describe the machine in the stream's
// header as perf does.

#include "base/cpu_list.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "base/error.h"

namespace pf {

namespace {

constexpr int kMaxCpu = 65535;

int ParseCpu(std::string_view s, std::string_view whole) {
  int v = -1;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0 || v > kMaxCpu) {
    throw UsageError("bad CPU list '" + std::string(whole) +
                     "': expected numbers and ranges such as 0,2-3");
  }
  return v;
}

}  // namespace

std::vector<int> ParseCpuList(std::string_view text) {
  std::string_view whole = text;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) throw UsageError("empty CPU list");
  std::vector<int> cpus;
  for (;;) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      cpus.push_back(ParseCpu(item, whole));
    } else {
      int lo = ParseCpu(item.substr(0, dash), whole);
      int hi = ParseCpu(item.substr(dash + 1), whole);
      if (hi < lo) {
        throw UsageError("bad CPU list '" + std::string(whole) + "': range " + std::string(item) +
                         " is reversed");
      }
      for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> OnlineCpus() {
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string line;
  if (std::getline(in, line)) {
    try {
      return ParseCpuList(line);
    } catch (const UsageError&) {
      // fall through to the configured count
    }
  }
  std::vector<int> cpus(ConfiguredCpus());
  for (size_t i = 0; i < cpus.size(); ++i) cpus[i] = static_cast<int>(i);
  return cpus;
}

int ConfiguredCpus() {
  std::ifstream in("/sys/devices/system/cpu/possible");
  std::string line;
  if (std::getline(in, line)) {
    try {
      std::vector<int> all = ParseCpuList(line);
      if (!all.empty()) return all.back() + 1;
    } catch (const UsageError&) {
    }
  }
  long n = sysconf(_SC_NPROCESSORS_CONF);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace pf
