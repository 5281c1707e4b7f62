#pragma once
// What perf_script.cpp and perf_script_lines.cpp share, and nothing else includes: the pieces
// of the line scanners (the end of an indent, of a word, a stack line's greedy match) that the
// folder runs on every line of a sample, inline, and the parsing helpers both use. The scanners
// themselves (MatchEventHead, MatchEventTail, MatchStackLine, FindFirstEvent) are declared in
// perf_script.h and written in perf_script_lines.cpp.

#include <re2/re2.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "formats/frame_names.h"
#include "formats/perf_script.h"

namespace pf::script_lines {

using perl::IsDigit;
using perl::IsHex;
using perl::IsLowerHex;
using perl::IsSpace;
using perl::IsWord;

// The end of the whitespace at `i`; runs of blanks (a stack line's indent) 8 bytes at a time.
inline size_t SkipSpaces(std::string_view s, size_t i) {
  for (;;) {
    if constexpr (std::endian::native == std::endian::little) {
      for (uint64_t word; i + 8 <= s.size(); i += 8) {
        std::memcpy(&word, s.data() + i, 8);
        if (uint64_t other = word ^ 0x2020202020202020ull) {  // the first byte that is not ' '
          i += static_cast<size_t>(std::countr_zero(other)) / 8;
          break;
        }
      }
    }
    if (i == s.size() || !IsSpace(s[i])) return i;
    ++i;  // a tab (or another space character), or one of the last few blanks
  }
}

inline std::string_view TrimLeft(std::string_view s) { return s.substr(SkipSpaces(s, 0)); }

inline bool IsBlankLine(std::string_view s) {
  for (char c : s) {
    if (!IsSpace(c)) return false;
  }
  return true;
}

/// perf script's period: its digits as a number, UINT64_MAX when too large.
uint64_t ParsePeriod(std::string_view digits);

// An event line that also holds the sample's only frame (perf script without -g):
//   false 39654 19115.489713:   1 cycles:u:  ffffffff9b201293 [unknown] ([unknown])
// applied to what follows the pid/tid.
const re2::RE2& SingleLineRegex();

inline constexpr auto kWordChar = [] {  // IsWord as a table: the address is scanned per line
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  return t;
}();

// The end of the run of word characters (\w) at `i`; 8 bytes at a time (SWAR: each byte's
// classes from range tests that cannot carry into the next byte), as an address is scanned
// on every stack line.
inline size_t SkipWord(std::string_view s, size_t i) {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    // Per byte of x (each below 0x80): its high bit set when the byte is at least c.
    auto at_least = [](uint64_t x, unsigned c) { return (x + kOnes * (0x80 - c)) & kHigh; };
    for (uint64_t word; i + 8 <= s.size(); i += 8) {
      std::memcpy(&word, s.data() + i, 8);
      const uint64_t x = word & ~kHigh;
      const uint64_t is_word =
          ((at_least(x, '0') & ~at_least(x, '9' + 1)) | (at_least(x, 'A') & ~at_least(x, 'Z' + 1)) |
           (at_least(x, 'a') & ~at_least(x, 'z' + 1)) | (at_least(x, '_') & ~at_least(x, '_' + 1))) &
          ~word;  // a byte from 0x80 up is no word character
      if (uint64_t other = ~is_word & kHigh) {
        return i + static_cast<size_t>(std::countr_zero(other)) / 8;
      }
    }
  }
  while (i < s.size() && kWordChar[static_cast<unsigned char>(s[i])]) ++i;
  return i;
}

enum class LineMatch { kYes, kNo, kBacktrack };

// MatchStackLine's first, greedy try from `i`, the end of the line's leading whitespace:
// kBacktrack when only backtracking can match (re2 decides). Inline: it runs once per line.
inline LineMatch MatchStackLineFrom(std::string_view l, size_t i, StackLine* out) {
  size_t n = l.size();
  size_t j = SkipWord(l, i);
  if (j == i) return LineMatch::kNo;
  // The last ')' (usually the line's last byte), and the last " (" that ends before it.
  size_t r = n;
  while (r > j && l[r - 1] != ')') --r;
  if (r <= j || r < 3) return LineMatch::kNo;
  --r;
  size_t s = std::string_view::npos;
  for (size_t lim = r; lim > 1;) {  // the last '(' in [1, lim) after a space
    const void* q = memrchr(l.data() + 1, '(', lim - 1);
    if (!q) break;
    size_t pos = static_cast<const char*>(q) - l.data();
    if (l[pos - 1] == ' ') {
      s = pos - 1;
      break;
    }
    lim = pos;
  }
  if (s == std::string_view::npos) return LineMatch::kNo;
  size_t k = SkipSpaces(l, j);
  if (s <= k) return LineMatch::kBacktrack;
  out->pc = l.substr(i, j - i);
  out->func = l.substr(k, s - k);
  out->dso = l.substr(s + 2, r - s - 2);
  return LineMatch::kYes;
}

}  // namespace pf::script_lines
