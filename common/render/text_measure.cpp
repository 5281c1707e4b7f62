// How wide a label is (text_measure.h). flamegraph.pl guesses from a fixed average character
// width; pf measures the text in the font the SVG names, with Cairo's unhinted metrics (as a
// browser lays the SVG out), so a label is cut where it really stops fitting. ASCII advances
// are measured up front into a table, so the width of a typical frame name is one lookup per
// byte; other characters are measured once and cached, and bytes Cairo would refuse count as
// U+FFFD, as they are drawn.

#include "render/text_measure.h"

#include <cairo.h>

#include <cmath>

#include "base/error.h"
#include "base/utf8.h"

namespace pf {

namespace {

// What DecodeChar() reports for a byte or character Cairo would refuse; drawn as U+FFFD.
// Outside Unicode, so it can share the advance cache with real code points.
constexpr char32_t kRefused = 0x110000;
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Decodes the UTF-8 character at p[0..n), n > 0, and returns its length in bytes. The code
// point goes to *cp, or kRefused when Cairo would refuse it: an invalid byte (length 1: every
// byte of a broken sequence is its own replacement), an overlong form, a surrogate, a code
// point past U+10FFFF, a noncharacter (whole character), or NUL (cairo_show_text would stop).
size_t DecodeChar(const unsigned char* p, size_t n, char32_t* cp) {
  Utf8Char c = DecodeUtf8(std::string_view(reinterpret_cast<const char*>(p), n), 0);
  // Noncharacters are valid UTF-8, but Cairo's UNICODE_VALID rejects them.
  bool nonchar = (c.cp >= 0xFDD0 && c.cp <= 0xFDEF) || (c.cp & 0xFFFE) == 0xFFFE;
  *cp = !c.valid || c.cp == 0 || nonchar ? kRefused : c.cp;
  return c.len;
}

// Writes the UTF-8 form of `cp` (a valid scalar value) and a NUL to `out`.
void EncodeUtf8(char32_t cp, char out[5]) {
  size_t n = 0;
  if (cp < 0x80) {
    out[n++] = static_cast<char>(cp);
  } else if (cp < 0x800) {
    out[n++] = static_cast<char>(0xC0 | (cp >> 6));
    out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[n++] = static_cast<char>(0xE0 | (cp >> 12));
    out[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out[n++] = static_cast<char>(0xF0 | (cp >> 18));
    out[n++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  }
  out[n] = '\0';
}

}  // namespace

const char* CairoSafeUtf8(const std::string& text, std::string* scratch) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  // Usually valid: scan first, copy only when something must be replaced.
  size_t i = 0;
  char32_t cp;
  while (i < n) {
    if (p[i] >= 0x80 || p[i] == 0) {
      size_t len = DecodeChar(p + i, n - i, &cp);
      if (cp == kRefused) break;
      i += len;
    } else {
      ++i;
    }
  }
  if (i == n) return text.c_str();

  scratch->assign(text, 0, i);
  while (i < n) {
    size_t len = DecodeChar(p + i, n - i, &cp);
    if (cp == kRefused) {
      scratch->append(kReplacement);
    } else {
      scratch->append(text, i, len);
    }
    i += len;
  }
  return scratch->c_str();
}

TextMeasurer::TextMeasurer(const std::string& family, double size) {
  if (!(size > 0) || !std::isfinite(size)) {
    throw Error("font size must be a positive number, not " + std::to_string(size));
  }
  // The toy font face resolves `family` through fontconfig when the font is first used, and
  // falls back to the closest installed font (or Cairo's built-in one) rather than failing.
  std::string scratch;
  cairo_font_face_t* face = cairo_toy_font_face_create(
      CairoSafeUtf8(family, &scratch), CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_matrix_t font_matrix, ctm;
  cairo_matrix_init_scale(&font_matrix, size, size);
  cairo_matrix_init_identity(&ctm);
  // Unhinted metrics: advances scale linearly with the size (as in a browser showing the
  // SVG) instead of being rounded to whole pixels. The renderer sets the same option, so the
  // two share one cached scaled font.
  cairo_font_options_t* options = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
  font_ = cairo_scaled_font_create(face, &font_matrix, &ctm, options);
  cairo_font_options_destroy(options);
  cairo_font_face_destroy(face);  // the scaled font holds its own reference

  cairo_status_t status = cairo_scaled_font_status(font_);
  if (status != CAIRO_STATUS_SUCCESS) {
    cairo_scaled_font_destroy(font_);
    throw Error("cannot load font '" + family + "': " + cairo_status_to_string(status));
  }
  // ASCII is nearly all of what frame names contain: measure it up front so Width() has a
  // branch-free table lookup per byte (128 glyphs, well under a millisecond).
  for (char32_t c = 0; c < 128; ++c) ascii_[c] = Measure(c == 0 ? kRefused : c);
}

TextMeasurer::~TextMeasurer() { cairo_scaled_font_destroy(font_); }

double TextMeasurer::Measure(char32_t cp) {
  char utf8[5];
  EncodeUtf8(cp == kRefused ? 0xFFFD : cp, utf8);
  cairo_text_extents_t extents;
  cairo_scaled_font_text_extents(font_, utf8, &extents);
  cairo_status_t status = cairo_scaled_font_status(font_);
  if (status != CAIRO_STATUS_SUCCESS) {
    throw Error(std::string("cannot measure text: ") + cairo_status_to_string(status));
  }
  return extents.x_advance;
}

double TextMeasurer::Width(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  double width = 0;
  char32_t cp;
  for (size_t i = 0; i < n;) {
    if (p[i] < 0x80) {
      width += ascii_[p[i++]];
    } else {
      i += DecodeChar(p + i, n - i, &cp);
      width += NonAscii(cp);
    }
  }
  return width;
}

size_t TextMeasurer::FitPrefix(std::string_view text, double max_width, std::string_view suffix) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  // One pass: `width` is the width of text[0, i), summed in the same order as Width(), so
  // Width(prefix) + Width(suffix) <= max_width holds exactly for the prefix returned. Stop as
  // soon as the prefix alone overflows: the rest of a long name is never looked at.
  double suffix_width = Width(suffix);
  double width = 0;
  size_t fit = 0;  // the longest prefix seen that fits with the suffix
  char32_t cp;
  for (size_t i = 0; i < n;) {
    if (p[i] < 0x80) {
      width += ascii_[p[i++]];
    } else {
      i += DecodeChar(p + i, n - i, &cp);
      width += NonAscii(cp);
    }
    if (!(width <= max_width)) return fit;  // also when max_width is NaN
    if (width + suffix_width <= max_width) fit = i;
  }
  return n;  // the whole text fits (an empty text always does)
}

}  // namespace pf
