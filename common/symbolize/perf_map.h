#pragma once
// JIT symbol maps, /tmp/perf-PID.map: one "START SIZE NAME" line per function, START and SIZE
// in hex, written by JIT runtimes (V8 --perf-basic-prof, the JVM's perf-map-agent, .NET,
// Python 3.12's -X perf). perf reads them for samples in executable anonymous memory; it
// parses them with its own quirks, kept here so names match:
//  - the last byte of every line is dropped (meant for the '\n', so a final line without one
//    loses its last character);
//  - numbers are read like strtoull(…, 16): leading blanks, a sign and "0x" are accepted;
//  - a line whose name would be shorter than 3 characters is skipped;
//  - names are used as written (not demangled); a zero-size entry matches its own address
//    only, and perf then prints a strange offset (see PerfMap::Lookup);
//  - entries are not merged: when they overlap (reused JIT memory), the answer is the one
//    perf's symbol tree gives (see SymbolRanges).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "symbolize/elf_symbols.h"

namespace pf {

class PerfMap {
 public:
  /// Parses perf map text.
  static std::unique_ptr<PerfMap> Parse(std::string_view text);
  /// Reads a perf map file. Throws pf::Error when it cannot be read.
  static std::unique_ptr<PerfMap> Load(const std::string& path);

  /// The entry containing `address`: its name and the offset from its start. For a zero-size
  /// entry perf prints address - map_start - entry start (wrapping), so `map_start`, the
  /// start of the anonymous mapping, is needed to print the same.
  bool Lookup(uint64_t address, std::string_view* name, uint64_t* offset,
              uint64_t map_start = 0) const;
  /// Number of entries read.
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t start;
    uint64_t size;
    uint32_t name_offset;
    uint32_t name_size;
  };
  std::string names_;
  std::vector<Entry> entries_;
  SymbolRanges ranges_;
};

}  // namespace pf
