// Colours as flamegraph.pl picks them (palette.h). Each palette (hot, mem, io, java, js, ...)
// is its Perl function reproduced, down to the random numbers: Perl's srand and rand are
// emulated (drand48 seeded as Perl seeds it), so that --hash and the name-hash colours are the
// very ones the Perl script draws, and plain random colours come from a seeded generator. The
// language palettes choose a hue from the frame's annotation and name. A consistent palette
// (--cp) keeps the colour each name got in palette.map, in the Perl script's format.

#include "render/palette.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "base/error.h"
#include "base/utf8.h"
#include "io/output.h"
#include "stacks/folded.h"

namespace pf {

namespace {

// Decodes UTF-8 into code points, as Perl does with `use open qw(:std :utf8)`: leniently (a
// surrogate or an overlong form is a character), but with no lead byte past 0xf4; an invalid
// byte stands for itself.
template <typename F>
void ForEachCodePoint(std::string_view s, F&& f) {
  for (size_t i = 0; i < s.size();) {
    Utf8Char c = DecodeUtf8(s, i, Utf8Check::kStructure);
    if (!c.valid || static_cast<unsigned char>(s[i]) > 0xf4) {
      f(static_cast<uint32_t>(static_cast<unsigned char>(s[i])));
      ++i;
    } else {
      f(static_cast<uint32_t>(c.cp));
      i += c.len;
    }
  }
}

// Perl's srand(seed) followed by rand(1): drand48 seeded as Perl seeds it.
double PerlRandAfterSrand(uint32_t seed) {
  uint64_t x = (static_cast<uint64_t>(seed) << 16) + 0x330e;
  x = (0x5deece66dULL * x + 0xb) & ((1ULL << 48) - 1);
  return std::ldexp(static_cast<double>(x), -48);
}

// flamegraph.pl's random_namehash: srand(sum of code points); rand(1).
double RandomNameHash(std::string_view name) {
  uint32_t sum = 0;
  ForEachCodePoint(name, [&](uint32_t cp) { sum += cp; });
  return PerlRandAfterSrand(sum);
}

// flamegraph.pl's namehash: early characters weigh most; a "module`" prefix is ignored.
double NameHash(std::string_view name) {
  size_t tick = name.size() > 1 ? name.find('`', 1) : std::string_view::npos;
  if (tick != std::string_view::npos) name.remove_prefix(tick + 1);
  double vector = 0, weight = 1, max = 1;
  int mod = 10;
  ForEachCodePoint(name, [&](uint32_t cp) {
    if (mod > 12) return;
    int i = static_cast<int>(cp % static_cast<uint32_t>(mod));
    vector += (static_cast<double>(i) / (mod++ - 1)) * weight;
    max += weight;
    weight *= 0.70;
  });
  return 1 - vector / max;
}

bool EndsWith(std::string_view s, std::string_view t) {
  return s.size() >= t.size() && s.substr(s.size() - t.size()) == t;
}
bool Contains(std::string_view s, std::string_view t) { return s.find(t) != std::string_view::npos; }

// The flat palette a multi palette picks for `name`.
std::string_view Resolve(std::string_view palette, std::string_view name) {
  if (palette == "java") {
    if (EndsWith(name, "_[j]")) return "green";
    if (EndsWith(name, "_[i]")) return "aqua";
    std::string_view n = name;
    if (!n.empty() && n[0] == 'L') n.remove_prefix(1);
    for (std::string_view p : {"java/", "javax/", "jdk/", "net/", "org/", "com/", "io/", "sun/"}) {
      if (n.substr(0, p.size()) == p) return "green";
    }
    if (Contains(name, ":::")) return "green";
    if (Contains(name, "::")) return "yellow";
    if (EndsWith(name, "_[k]")) return "orange";
    return "red";
  }
  if (palette == "perl") {
    if (Contains(name, "::")) return "yellow";
    if (Contains(name, "Perl") || Contains(name, ".pl")) return "green";
    if (EndsWith(name, "_[k]")) return "orange";
    return "red";
  }
  if (palette == "js") {
    if (EndsWith(name, "_[j]")) return Contains(name, "/") ? "green" : "aqua";
    if (Contains(name, "::")) return "yellow";
    size_t slash = name.find('/');
    if (slash != std::string_view::npos && name.find(".js", slash) != std::string_view::npos) {
      return "green";
    }
    if (Contains(name, ":")) return "aqua";
    if (name == " ") return "green";
    if (Contains(name, "_[k]")) return "orange";
    return "red";
  }
  if (palette == "wakeup") return "aqua";
  if (palette == "chain") return Contains(name, "_[w]") ? "aqua" : "blue";
  if (palette == "python") {  // inferno's rules
    auto any_part = [&](auto pred) {
      size_t start = 0;
      for (;;) {
        size_t end = name.find_first_of("/\\", start);
        if (pred(name.substr(start, end - start))) return true;
        if (end == std::string_view::npos) return false;
        start = end + 1;
      }
    };
    if (any_part([](std::string_view p) { return p == "site-packages"; })) return "aqua";
    bool stdlib = any_part([](std::string_view p) {
      for (std::string_view pre : {"python", "Python"}) {
        if (p.substr(0, pre.size()) == pre) {
          for (char c : p.substr(pre.size())) {
            if (!((c >= '0' && c <= '9') || c == '.')) return false;
          }
          return true;
        }
      }
      return false;
    });
    if (stdlib || name.substr(0, 9) == "<built-in" || name.substr(0, 7) == "<method" ||
        name.substr(0, 7) == "<frozen") {
      return "yellow";
    }
    return "red";
  }
  if (palette == "rust") {  // inferno's rules
    size_t tick = name.find('`');
    std::string_view n = tick == std::string_view::npos ? name : name.substr(tick + 1);
    auto starts = [&](std::string_view p) { return n.substr(0, p.size()) == p; };
    if (starts("core::") || starts("std::") || starts("alloc::") ||
        (starts("<core::") && !starts("<core::future::from_generator::GenFuture<T>")) ||
        starts("<std::") || starts("<alloc::")) {
      return "orange";
    }
    if (Contains(n, "::")) return "aqua";
    return "yellow";
  }
  return palette;
}

Rgb Make(int r, int g, int b) {
  return Rgb{static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b)};
}

}  // namespace

bool IsKnownPalette(std::string_view p) {
  for (std::string_view k : {"hot", "mem", "io", "wakeup", "chain", "java", "js", "perl",
                             "python", "rust", "red", "green", "blue", "aqua", "yellow",
                             "purple", "orange"}) {
    if (p == k) return true;
  }
  return false;
}

bool BackgroundFor(std::string_view bg, std::string_view palette, Rgb* top, Rgb* bottom) {
  std::string_view choice = bg;
  if (choice.empty()) {
    if (palette == "mem") {
      choice = "green";
    } else if (palette == "io" || palette == "wakeup" || palette == "chain") {
      choice = "blue";
    } else if (palette == "red" || palette == "green" || palette == "blue" || palette == "aqua" ||
               palette == "yellow" || palette == "purple" || palette == "orange") {
      choice = "grey";
    } else {
      choice = "yellow";
    }
  }
  if (choice == "yellow") {
    *top = Make(0xee, 0xee, 0xee), *bottom = Make(0xee, 0xee, 0xb0);
  } else if (choice == "blue") {
    *top = Make(0xee, 0xee, 0xee), *bottom = Make(0xe0, 0xe0, 0xff);
  } else if (choice == "green") {
    *top = Make(0xee, 0xf2, 0xee), *bottom = Make(0xe0, 0xff, 0xe0);
  } else if (choice == "grey" || choice == "gray") {
    *top = Make(0xf8, 0xf8, 0xf8), *bottom = Make(0xe8, 0xe8, 0xe8);
  } else if (choice.size() == 7 && choice[0] == '#') {
    unsigned v = 0;
    for (char c : choice.substr(1)) {
      int d = (c >= '0' && c <= '9') ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (d < 0) return false;
      v = v * 16 + static_cast<unsigned>(d);
    }
    *top = *bottom = Make(v >> 16, (v >> 8) & 0xff, v & 0xff);
  } else {
    return false;
  }
  return true;
}

Colorer::Colorer(std::string palette, ColorMode mode, uint64_t random_seed)
    : palette_(std::move(palette)), mode_(mode), rng_(random_seed) {}

Rgb Colorer::Color(std::string_view name) {
  double v1, v2, v3;
  if (mode_ == ColorMode::kHash) {
    v1 = NameHash(name);
    std::string rev(name.rbegin(), name.rend());
    v2 = v3 = NameHash(rev);
  } else if (mode_ == ColorMode::kRandom) {
    std::uniform_real_distribution<double> u(0, 1);
    v1 = u(rng_), v2 = u(rng_), v3 = u(rng_);
  } else {
    v1 = v2 = v3 = RandomNameHash(name);
  }
  auto I = [](double x) { return static_cast<int>(x); };
  std::string_view type = palette_;
  if (name == kOffCpuFrame) type = "blue";  // a wall-clock profile's waits
  if (type == "hot") return Make(205 + I(50 * v3), I(230 * v1), I(55 * v2));
  if (type == "mem") return Make(0, 190 + I(50 * v2), I(210 * v1));
  if (type == "io") return Make(80 + I(60 * v1), 80 + I(60 * v1), 190 + I(55 * v2));
  type = Resolve(type, name);
  if (type == "red") return Make(200 + I(55 * v1), 50 + I(80 * v1), 50 + I(80 * v1));
  if (type == "green") return Make(50 + I(60 * v1), 200 + I(55 * v1), 50 + I(60 * v1));
  if (type == "blue") return Make(80 + I(60 * v1), 80 + I(60 * v1), 205 + I(50 * v1));
  if (type == "yellow") return Make(175 + I(55 * v1), 175 + I(55 * v1), 50 + I(20 * v1));
  if (type == "purple") return Make(190 + I(65 * v1), 80 + I(60 * v1), 190 + I(65 * v1));
  if (type == "aqua") return Make(50 + I(60 * v1), 165 + I(55 * v1), 165 + I(55 * v1));
  if (type == "orange") return Make(190 + I(65 * v1), 90 + I(65 * v1), 0);
  return Make(0, 0, 0);
}

Rgb ScaleColor(double delta, double max_delta, bool negate) {
  int r = 255, g = 255, b = 255;
  double v = static_cast<double>(negate ? -delta : delta);
  double max = static_cast<double>(max_delta > 0 ? max_delta : 1);
  if (v > 0) {
    g = b = static_cast<int>(210 * (max - v) / max);
  } else if (v < 0) {
    r = g = static_cast<int>(210 * (max + v) / max);
  }
  return Make(r, g, b);
}

std::string RgbText(Rgb c) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", c.r, c.g, c.b);
  return buf;
}

size_t PaletteMap::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return 0;
  size_t bad = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t arrow = line.rfind("->");
    int r, g, b;
    char tail;
    if (arrow == std::string::npos ||
        std::sscanf(line.c_str() + arrow + 2, "rgb(%d,%d,%d)%c", &r, &g, &b, &tail) != 3 ||
        r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255) {
      ++bad;
      continue;
    }
    map_[line.substr(0, arrow)] = Make(r, g, b);
  }
  return bad;
}

Rgb PaletteMap::Get(std::string_view name, Rgb fallback) {
  auto it = map_.find(name);
  if (it != map_.end()) return it->second;
  map_.emplace(std::string(name), fallback);
  return fallback;
}

void PaletteMap::Save(const std::string& path) const {
  std::unique_ptr<ByteSink> out = OpenOutput(path);
  BufferedWriter w(*out);
  for (const auto& [name, c] : map_) {
    w.Append(name);
    w.Append("->");
    w.Append(RgbText(c));
    w.Append('\n');
  }
  w.Flush();
  out->Commit();
}

}  // namespace pf
