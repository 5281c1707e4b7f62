#pragma once
// Text measurement for flame graph labels, with Cairo's font metrics.
//
// The layout measures every frame name (up to ~50,000 per graph, names up to thousands of
// bytes) and fits a label into each box, so measuring must cost a table lookup per character,
// not a trip through Cairo. TextMeasurer asks Cairo for each distinct code point's advance
// once and sums cached advances afterwards. That is exact for what pf draws: Cairo's toy text
// API (the one the PNG/PDF renderer uses) places glyphs by their advances, with no kerning or
// shaping, and both sides use unhinted metrics.
//
// Cairo refuses strings that are not valid UTF-8 or that contain a Unicode noncharacter
// (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF), and a refused string leaves the cairo_t *and the shared,
// cached scaled font* in a permanent error state. Frame names come from arbitrary binaries, so
// everything handed to Cairo goes through CairoSafeUtf8() first, and the measurer counts each
// offending byte or character as U+FFFD, which is exactly what the renderer draws.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

struct _cairo_scaled_font;  // cairo_scaled_font_t, without including <cairo.h> here

namespace pf {

/// Measures UTF-8 text with Cairo's font metrics for one font family and size.
/// Thread-compatible: use one instance per thread.
class TextMeasurer {
 public:
  /// `family` is a fontconfig family ("Verdana", "monospace", ...); a family that is not
  /// installed falls back to fontconfig's best match, silently. `size` is in pixels.
  /// Throws pf::Error if the size is not positive or Cairo cannot load any font.
  TextMeasurer(const std::string& family, double size);
  ~TextMeasurer();
  TextMeasurer(const TextMeasurer&) = delete;
  TextMeasurer& operator=(const TextMeasurer&) = delete;

  /// Width in pixels of `text` (UTF-8; invalid bytes count as U+FFFD).
  double Width(std::string_view text);

  /// The length in bytes of the label to draw for `text` in `max_width` pixels: text.size()
  /// when the whole text fits; otherwise the longest prefix (whole UTF-8 characters) whose
  /// width plus the width of `suffix` fits, which is 0 when nothing fits.
  size_t FitPrefix(std::string_view text, double max_width, std::string_view suffix = "..");

 private:
  double Measure(char32_t cp);  // asks Cairo: the slow path, once per code point
  double NonAscii(char32_t cp) {
    auto it = other_.find(cp);
    if (it == other_.end()) it = other_.emplace(cp, Measure(cp)).first;
    return it->second;
  }

  _cairo_scaled_font* font_ = nullptr;
  double ascii_[128];  // advances of U+0000..U+007F (U+0000 counts as U+FFFD)
  std::unordered_map<char32_t, double> other_;
};

/// Returns `text` as a NUL-terminated string Cairo accepts: text.c_str() itself when it is
/// valid UTF-8 without NULs or noncharacters (the common case, no copy), otherwise a copy in
/// `*scratch` in which each invalid byte, NUL and noncharacter is replaced by U+FFFD.
const char* CairoSafeUtf8(const std::string& text, std::string* scratch);

}  // namespace pf
