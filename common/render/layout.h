#pragma once
// A flame graph laid out in pixels: what the SVG writer and the Cairo renderer (PNG, PDF)
// both draw. Built by render/flame.h from a stack tree; nothing here knows about input.

#include <cstdint>
#include <string>
#include <vector>

#include "render/name_attrs.h"

namespace pf {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

/// One frame (a rectangle with its label) as drawn.
struct FrameBox {
  std::string name;      // the frame's full name, annotation (_[k] ...) stripped
  std::string title;     // tooltip text, e.g. "main (1,234 samples, 12.34%)"
  std::string label;     // the text fitted into the box at generation time (may be empty)
  double x = 0, y = 0;   // top-left corner, pixels
  double w = 0, h = 0;   // size, pixels
  uint32_t depth = 0;    // 0 = the root frame "all"
  uint64_t start = 0;    // offset of the frame in count units (left edge)
  uint64_t count = 0;    // the frame's weight (its width in count units)
  double delta = 0;      // differential graphs: the change (after - before) it carries
  double text_width = 0; // width in pixels of the full name at the font size (measured)
  Rgb fill;
  int32_t attrs = -1;    // --nameattr: index into FlameLayout::attrs, or -1
};

struct FlameLayout {
  double width = 1200;   // image size, pixels
  double height = 0;
  double xpad = 10;      // left and right padding
  double fontsize = 12;
  std::string fonttype = "Verdana";
  std::string title;     // plain text; writers escape it
  std::string subtitle;  // may be empty
  std::string countname = "samples";
  Rgb bg_top{0xee, 0xee, 0xee};   // background gradient (flamegraph.pl's yellow by default)
  Rgb bg_bottom{0xee, 0xee, 0xb0};
  bool inverted = false; // icicle: the root at the top
  bool differential = false;
  uint64_t total = 0;    // the count that is 100% (fixed-point: see stacks/weight.h)
  std::string total_text;  // that count as shown, with its unit: "1,234 samples", "12.3 ms"
  std::vector<FrameBox> frames;  // in drawing order; frames[0] is the root "all"
  std::vector<FrameAttrs> attrs; // --nameattr: the attributes frames refer to
};

}  // namespace pf
