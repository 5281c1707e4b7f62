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
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "formats/frame_names.h"
#include "formats/perf_script.h"

namespace pf::script_lines {

using perl::IsDigit;
using perl::IsHex;
using perl::IsLowerHex;
using perl::IsSpace;
using perl::IsWord;

// The end of the whitespace at `i`. A stack line's indent (a tab, then the blanks that
// right-align its address) is found 16 bytes at a time with SSE2: blanks and tabs are looked
// for together, and the first other byte ends the run unless it is another space character
// (then byte by byte near the line's end, and on machines without SSE2).
inline size_t SkipSpaces(std::string_view s, size_t i) {
  for (;;) {
#if defined(__SSE2__)
    const __m128i blank = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');
    for (; i + 16 <= s.size(); i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      const unsigned m = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, blank), _mm_cmpeq_epi8(v, tab))));
      if (m != 0xffff) {
        i += static_cast<size_t>(std::countr_one(m));
        break;
      }
    }
#endif
    if (i == s.size() || !IsSpace(s[i])) return i;
    ++i;  // another space character, or one of the last few blanks
  }
}

// The last '(' in [1, lim) with a space before it (npos when none): the " (" before a stack
// line's dso, which is near the line's end. 16 bytes at a time, backwards.
inline size_t LastSpaceParen(std::string_view l, size_t lim) {
#if defined(__SSE2__)
  const __m128i open = _mm_set1_epi8('('), blank = _mm_set1_epi8(' ');
  for (; lim >= 17; lim -= 16) {  // the 16 bytes before lim, and the byte before each
    const char* at = l.data() + lim - 16;
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    const __m128i before = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at - 1));
    const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_and_si128(_mm_cmpeq_epi8(v, open), _mm_cmpeq_epi8(before, blank))));
    if (m) return lim - 16 + static_cast<size_t>(std::bit_width(m)) - 2;  // the space
  }
#endif
  for (; lim > 1; --lim) {
    if (l[lim - 1] == '(' && l[lim - 2] == ' ') return lim - 2;
  }
  return std::string_view::npos;
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

// The end of the run of word characters (\w) at `i`, as an address is scanned on every stack
// line: 16 bytes at a time with SSE2 (signed compares: a byte from 0x80 up is below every
// range, so no word character, as Perl's \w on bytes), then byte by byte near the line's end
// (and on machines without SSE2).
inline size_t SkipWord(std::string_view s, size_t i) {
#if defined(__SSE2__)
  const __m128i below_0 = _mm_set1_epi8('0' - 1), above_9 = _mm_set1_epi8('9' + 1);
  const __m128i below_a = _mm_set1_epi8('a' - 1), above_z = _mm_set1_epi8('z' + 1);
  const __m128i lower = _mm_set1_epi8(0x20), underscore = _mm_set1_epi8('_');
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i l = _mm_or_si128(v, lower);  // A-Z to a-z, and no other byte into a-z
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, below_0), _mm_cmpgt_epi8(above_9, v));
    const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(l, below_a), _mm_cmpgt_epi8(above_z, l));
    const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_or_si128(_mm_or_si128(digit, letter), _mm_cmpeq_epi8(v, underscore))));
    if (m != 0xffff) return i + static_cast<size_t>(std::countr_one(m));
  }
#endif
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
  const size_t s = LastSpaceParen(l, r);
  if (s == std::string_view::npos) return LineMatch::kNo;
  size_t k = SkipSpaces(l, j);
  if (s <= k) return LineMatch::kBacktrack;
  out->pc = l.substr(i, j - i);
  out->func = l.substr(k, s - k);
  out->dso = l.substr(s + 2, r - s - 2);
  return LineMatch::kYes;
}

}  // namespace pf::script_lines
