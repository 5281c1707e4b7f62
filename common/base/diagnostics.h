#pragma once
// Counted warnings: readers skip what they cannot use and count it, remembering where the
// first one was; the tool prints one summary line per kind at the end.

#include <cstdint>
#include <string>

namespace pf {

/// "1 line", "2 lines": `n` and the noun that goes with it.
inline std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

struct SkipCount {
  uint64_t count = 0;
  std::string first_file;
  uint64_t first_line = 0;

  void Add(const std::string& file, uint64_t line) {
    if (count++ == 0 || (file == first_file && line < first_line)) {
      first_file = file;
      first_line = line;
    }
  }
  /// Adds another count (e.g. a worker's); keeps the earliest location within one file.
  void Merge(const SkipCount& o) {
    if (!o.count) return;
    if (!count || (o.first_file == first_file && o.first_line < first_line)) {
      first_file = o.first_file;
      first_line = o.first_line;
    }
    count += o.count;
  }
};

}  // namespace pf
