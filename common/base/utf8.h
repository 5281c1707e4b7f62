#pragma once
// The one UTF-8 decoder. Frame names are bytes: usually UTF-8, sometimes not (a mangled
// name cut mid-character, Latin-1 from an old map file, Java's modified UTF-8). Each writer
// decides what an invalid byte becomes (U+FFFD in SVG, '?' in DOT, the byte itself for
// flamegraph.pl's colour hash), but they all cut the bytes into characters here.
//
// Two checks: kStrict is RFC 3629 (no overlong form, no surrogate, nothing past U+10FFFF),
// what XML and Cairo accept; kStructure only checks the lead byte (0xc2..0xf7) and the
// continuation bytes, as Perl's lax `utf8` and Graphviz do, so a surrogate or an overlong
// three-byte form decodes to its value.

#include <cstddef>
#include <string_view>

namespace pf {

enum class Utf8Check { kStrict, kStructure };

struct Utf8Char {
  char32_t cp;  // the code point; meaningless when !valid
  size_t len;   // bytes taken: the character's, or 1 for an invalid byte
  bool valid;
};

/// Decodes the character at s[i] (i < s.size()). An invalid or truncated sequence takes one
/// byte, so the caller resynchronises on the next.
inline Utf8Char DecodeUtf8(std::string_view s, size_t i, Utf8Check check = Utf8Check::kStrict) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return {b0, 1, true};
  size_t len;
  char32_t c;
  if (b0 < 0xc2) {
    return {b0, 1, false};  // a stray continuation byte, or an overlong two-byte lead
  } else if (b0 < 0xe0) {
    len = 2;
    c = b0 & 0x1f;
  } else if (b0 < 0xf0) {
    len = 3;
    c = b0 & 0x0f;
  } else if (b0 < (check == Utf8Check::kStrict ? 0xf5 : 0xf8)) {
    len = 4;
    c = b0 & 0x07;
  } else {
    return {b0, 1, false};
  }
  if (s.size() - i < len) return {b0, 1, false};
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return {b0, 1, false};
    c = (c << 6) | (b & 0x3f);
  }
  if (check == Utf8Check::kStrict &&
      ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
       (c >= 0xd800 && c <= 0xdfff))) {
    return {b0, 1, false};
  }
  return {c, len, true};
}

}  // namespace pf
