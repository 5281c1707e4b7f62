// JIT symbol maps (perf_map.h lists perf's quirks, reproduced here on purpose). Each line is
// parsed with a hand-written strtoull(..., 16) so that whatever perf accepts is accepted and
// names come out as perf prints them; the entries then go through the same range rules as an
// ELF table (SymbolRanges), so that overlapping entries of reused JIT memory resolve as in perf.

#include "symbolize/perf_map.h"

#include <elf.h>


#include "base/error.h"
#include "base/hex.h"
#include "base/regular_file.h"
#include "io/line_reader.h"

namespace pf {

namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// strtoull(s, &end, 16): returns the characters consumed (0 when there is no number).
size_t ParseHex(std::string_view s, uint64_t* value) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i + 1 < s.size() && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') && i + 2 < s.size() &&
      HexDigit(s[i + 2]) >= 0)
    i += 2;
  size_t digits = i;
  uint64_t v = 0;
  bool overflow = false;
  while (i < s.size() && HexDigit(s[i]) >= 0) {
    if (v >> 60) overflow = true;
    v = v << 4 | static_cast<uint64_t>(HexDigit(s[i]));
    ++i;
  }
  if (i == digits) {
    *value = 0;
    return 0;
  }
  if (overflow) v = UINT64_MAX;
  *value = negative && !overflow ? 0 - v : v;
  return i;
}

}  // namespace

std::unique_ptr<PerfMap> PerfMap::Parse(std::string_view text) {
  auto map = std::make_unique<PerfMap>();
  LineSplitter lines(text, LineSplitter::kKeepCr);
  std::string_view line;
  while (lines.Next(&line)) {
    // perf drops the line's last byte, newline or not.
    if (lines.position() == text.data() + text.size() && text.back() != '\n') {
      line.remove_suffix(1);
    }
    // A NUL ends the line for perf's C string functions.
    line = line.substr(0, line.find('\0'));

    uint64_t start = 0, size = 0;
    size_t len = ParseHex(line, &start) + 1;
    if (len + 2 >= line.size()) continue;
    len += ParseHex(line.substr(len), &size) + 1;
    if (len + 2 >= line.size()) continue;
    std::string_view name = line.substr(len);

    uint32_t id = static_cast<uint32_t>(map->entries_.size());
    map->entries_.push_back({start, size, static_cast<uint32_t>(map->names_.size()),
                             static_cast<uint32_t>(name.size())});
    map->names_.append(name);
    map->ranges_.Insert({start, start + size, id, STB_GLOBAL, false});
  }
  map->ranges_.Finish();
  return map;
}

std::unique_ptr<PerfMap> PerfMap::Load(const std::string& path) {
  std::string text;
  if (!ReadRegularFile(path, &text)) throw Error(path, "cannot read perf map");
  return Parse(text);
}

bool PerfMap::Lookup(uint64_t address, std::string_view* name, uint64_t* offset,
                     uint64_t map_start) const {
  uint32_t id;
  if (!ranges_.Find(address, &id)) return false;
  const Entry& e = entries_[id];
  *name = std::string_view(names_).substr(e.name_offset, e.name_size);
  // perf: an address at or past the symbol's end (only a zero-size one matches there) is
  // printed relative to the map's start as well.
  *offset = address < e.start + e.size ? address - e.start : address - map_start - e.start;
  return true;
}

}  // namespace pf
