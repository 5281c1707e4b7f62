// Weights (weight.h): fixed-point parsing of folded counts (exact decimal digits, never a
// double), saturating sums, and the printing of a weight with its decimals as the input wrote
// it, so that integer input goes through byte-identical and decimal input sums exactly.

#include "stacks/weight.h"

#include <charconv>
#include <cstddef>
#include <cstdio>

namespace pf {

void AppendFixed(std::string* out, double v, int decimals) {
  char buf[400];  // DBL_MAX has 309 digits before the point
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (ec == std::errc()) {
    out->append(buf, end);
    return;
  }
  // Longer than the buffer (many decimals asked for): printf's own.
  const int n = std::snprintf(nullptr, 0, "%.*f", decimals, v);
  const size_t at = out->size();
  out->resize(at + static_cast<size_t>(n) + 1);
  std::snprintf(out->data() + at, static_cast<size_t>(n) + 1, "%.*f", decimals, v);
  out->resize(at + static_cast<size_t>(n));
}

std::string WithThousands(std::string digits) {
  size_t start = (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) ? 1 : 0;
  for (ptrdiff_t i = static_cast<ptrdiff_t>(digits.size()) - 3;
       i > static_cast<ptrdiff_t>(start); i -= 3) {
    digits.insert(static_cast<size_t>(i), 1, ',');
  }
  return digits;
}

uint64_t Pow10(int d) {
  uint64_t p = 1;
  for (int i = 0; i < d; ++i) p *= 10;
  return p;
}

int64_t SignedChange(uint64_t before, uint64_t after) {
  __int128 d = static_cast<__int128>(after) - static_cast<__int128>(before);
  if (d > INT64_MAX) return INT64_MAX;
  if (d < -static_cast<__int128>(INT64_MAX)) return -INT64_MAX;  // so that -d fits too
  return static_cast<int64_t>(d);
}

std::string FormatWeight(uint64_t w, int decimals) {
  if (decimals <= 0) return std::to_string(w);
  uint64_t p = Pow10(decimals);
  std::string s = std::to_string(w / p);
  uint64_t frac = w % p;
  if (frac == 0) return s;
  std::string f = std::to_string(frac);
  f.insert(0, static_cast<size_t>(decimals) - f.size(), '0');
  while (f.back() == '0') f.pop_back();
  return s + "." + f;
}

std::string_view UnitName(WeightUnit unit) {
  switch (unit) {
    case WeightUnit::kNanoseconds:
      return "ns";
    case WeightUnit::kEvents:
      return "events";
    case WeightUnit::kBytes:
      return "bytes";
    case WeightUnit::kObjects:
      return "objects";
    case WeightUnit::kInstructions:
      return "Ir";  // callgrind's name for instructions executed
    case WeightUnit::kUnspecified:
    case WeightUnit::kSamples:
      break;
  }
  return "samples";
}

namespace {

constexpr struct {
  WeightUnit unit;
  std::string_view keyword;
  std::string_view sample_type;
} kUnits[] = {
    {WeightUnit::kSamples, "samples", "samples"},
    {WeightUnit::kNanoseconds, "nanoseconds", "cpu"},
    {WeightUnit::kEvents, "events", "events"},
    {WeightUnit::kBytes, "bytes", "space"},
    {WeightUnit::kObjects, "objects", "objects"},
    {WeightUnit::kInstructions, "instructions", "instructions"},
};

}  // namespace

std::string_view UnitKeyword(WeightUnit unit) {
  for (const auto& u : kUnits) {
    if (u.unit == unit) return u.keyword;
  }
  return "";
}

bool ParseUnitKeyword(std::string_view keyword, WeightUnit* unit) {
  if (keyword == "count") keyword = "samples";  // pprof's name for it
  for (const auto& u : kUnits) {
    if (u.keyword == keyword) {
      *unit = u.unit;
      return true;
    }
  }
  return false;
}

SampleType DefaultSampleType(WeightUnit unit) {
  for (const auto& u : kUnits) {
    if (u.unit == unit) return SampleType{std::string(u.sample_type), unit};
  }
  return SampleType{"samples", unit};
}

SampleType CombineSampleTypes(const SampleType& a, const SampleType& b) {
  if (a == b || b.unit == WeightUnit::kUnspecified) return a;
  if (a.unit == WeightUnit::kUnspecified) return b;
  return DefaultSampleType(CombineUnits(a.unit, b.unit));
}

namespace {

// Bytes as pprof prints them: B, kB, MB, GB, TB, PB, EB in steps of 1024, the largest that
// keeps the value at least 1, with three significant digits and no trailing zeros
// ("4.1 MB", "512 B", "1.23 GB").
std::string HumanBytes(uint64_t w, int decimals) {
  double v = static_cast<double>(w) / static_cast<double>(Pow10(decimals));
  static const char* const kNames[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  size_t i = 0;
  while (v >= 1024 && i + 1 < std::size(kNames)) {
    v /= 1024;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", v >= 100 ? 0 : v >= 10 ? 1 : 2, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s + " " + kNames[i];
}

}  // namespace

std::string HumanWeight(uint64_t w, int decimals, WeightUnit unit) {
  if (unit == WeightUnit::kNanoseconds) {
    double ns = static_cast<double>(w) / static_cast<double>(Pow10(decimals));
    static const struct {
      double scale;
      const char* name;
    } kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    for (const auto& u : kUnits) {
      if (ns >= u.scale || u.scale == 1) {
        double v = ns / u.scale;
        char buf[64];
        if (u.scale == 1 && decimals == 0) {
          std::snprintf(buf, sizeof buf, "%.0f ns", v);
        } else {
          std::snprintf(buf, sizeof buf, "%.*f %s", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, u.name);
        }
        return buf;
      }
    }
  }
  if (unit == WeightUnit::kBytes) return HumanBytes(w, decimals);
  std::string s = FormatWeight(w, decimals);
  size_t dot = s.find('.');
  std::string whole = WithThousands(s.substr(0, dot));
  if (dot != std::string::npos) whole += s.substr(dot);
  return whole + " " + std::string(UnitName(unit));
}

std::string SaturationWarning(uint64_t n) {
  return "counts too large: " + std::to_string(n) + (n == 1 ? " sum" : " sums") +
         " reached 2^64-1 (18446744073709551615) and stopped there; sizes and percentages "
         "are approximate";
}

WeightUnit CombineUnits(WeightUnit a, WeightUnit b) {
  if (a == b || b == WeightUnit::kUnspecified) return a;
  if (a == WeightUnit::kUnspecified) return b;
  return WeightUnit::kUnspecified;
}

}  // namespace pf
