#pragma once
// Frame colours, computed as flamegraph.pl computes them so that graphs look the same and a
// function keeps its colour across graphs:
//   default   a pseudo-random value seeded by the sum of the name's code points, drawn from
//             Perl's drand48 (srand(seed); rand()), so every run gives the same colour;
//   --hash    flamegraph.pl's name hash (first characters weigh most);
//   --random  truly random (not reproducible, by request).
// Palettes: hot (default), mem, io, red, green, blue, aqua, yellow, purple, orange, and the
// multi palettes java, js, perl, wakeup, chain (FlameGraph) and python, rust (inferno), which
// pick a flat palette by the shape of the name. Differential graphs use ScaleColor.

#include <map>
#include <random>
#include <string>
#include <string_view>

#include "render/layout.h"

namespace pf {

enum class ColorMode { kDefault, kHash, kRandom };

/// True if `palette` is one this module knows.
bool IsKnownPalette(std::string_view palette);

/// flamegraph.pl's background gradient for `bgcolors` ("" picks the palette's default:
/// yellow, or green for mem, blue for io/wakeup/chain, grey for flat palettes), or a flat
/// "#rrggbb". Returns false for an unknown name.
bool BackgroundFor(std::string_view bgcolors, std::string_view palette, Rgb* top, Rgb* bottom);

class Colorer {
 public:
  Colorer(std::string palette, ColorMode mode, uint64_t random_seed = std::random_device{}());
  /// The colour of a frame named `name` (with its _[k]/_[j]/... annotation, as in the input).
  Rgb Color(std::string_view name);

 private:
  std::string palette_;
  ColorMode mode_;
  std::mt19937_64 rng_;
};

/// flamegraph.pl's differential colour: white for no change, red for growth, blue for a
/// reduction, saturated by |delta| / max_delta. `negate` swaps the hues.
Rgb ScaleColor(double delta, double max_delta, bool negate);

/// A consistent palette kept in a file (flamegraph.pl --cp): "name->rgb(r,g,b)" lines.
class PaletteMap {
 public:
  /// Reads `path` if it exists; returns the number of malformed lines skipped.
  size_t Load(const std::string& path);
  /// The colour stored for `name`, or `fallback` (which is then stored).
  Rgb Get(std::string_view name, Rgb fallback);
  /// Writes every entry, sorted by name (throws pf::Error on failure).
  void Save(const std::string& path) const;

 private:
  std::map<std::string, Rgb, std::less<>> map_;
};

std::string RgbText(Rgb c);  // "rgb(r,g,b)"

}  // namespace pf
