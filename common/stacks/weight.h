#pragma once
// What a stack's weight is and how it is shown.
//
// Weights are unsigned 64-bit fixed-point numbers: a tree with `decimals` d holds each
// weight times 10^d, so folded input with decimal counts (`a;b 1.25`, which flamegraph.pl
// accepts) is summed exactly, and integer input (d = 0, by far the common case) is handled
// as it always was, with no conversion and byte-identical output. Sums saturate at
// UINT64_MAX instead of wrapping; the tools say so once.
//
// The unit is what was summed: samples (one per sample), or the samples' periods, which are
// nanoseconds for the cpu-clock and task-clock events and event counts for the others; the
// other profilers' values add bytes, objects (heap profiles) and instructions (callgrind).
// Plain folded text carries no unit (kUnspecified, shown as "samples", as flamegraph.pl
// does); pf's folded output names it in a `# pf-unit:` line (stacks/folded.h).
//
// A sample type is pprof's ValueType: what one value per stack is (its name) and its unit,
// e.g. {"cpu", nanoseconds}, {"alloc_space", bytes}; a profile holds one or several.

#include <cstdint>
#include <string>
#include <string_view>

namespace pf {

enum class WeightUnit : uint8_t {
  kUnspecified,  // not known (plain folded text): shown as samples
  kSamples,      // one per sample (pprof's "count")
  kNanoseconds,  // time: cpu-clock and task-clock periods, off-CPU time
  kEvents,       // other events' periods (page faults, cycles, ...)
  kBytes,        // heap profiles' space
  kObjects,      // heap profiles' allocations
  kInstructions, // callgrind's Ir
};

/// What one value per stack is: pprof's ValueType (sample type): a name ("samples", "cpu",
/// "alloc_space", ...) and a unit.
struct SampleType {
  std::string name = "samples";
  WeightUnit unit = WeightUnit::kUnspecified;
  bool operator==(const SampleType&) const = default;
};

/// The sample type a reader that knows only the unit gives its values: "samples" for
/// samples (and unspecified), "cpu" for nanoseconds, "events", "space", "objects",
/// "instructions".
SampleType DefaultSampleType(WeightUnit unit);

/// The sample type of two profiles summed or compared: `a` when they are the same, the one
/// whose unit is specified when the other's is not, else the default one of their units
/// combined (CombineUnits).
SampleType CombineSampleTypes(const SampleType& a, const SampleType& b);

/// The most decimals a weight keeps (more are rounded away, with a warning).
constexpr int kMaxDecimals = 9;

/// 10^d for d in [0, 19].
uint64_t Pow10(int d);

/// a + b, or UINT64_MAX when that does not fit.
inline uint64_t AddSat(uint64_t a, uint64_t b) {
  uint64_t s;
  return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}
/// a * b, or UINT64_MAX when that does not fit.
inline uint64_t MulSat(uint64_t a, uint64_t b) {
  uint64_t p;
  return __builtin_mul_overflow(a, b, &p) ? UINT64_MAX : p;
}
/// (int64) a - b, clamped to the int64 range.
int64_t SignedChange(uint64_t before, uint64_t after);

/// `w` (scaled by 10^decimals) as an exact decimal without trailing zeros: "12", "1.5".
std::string FormatWeight(uint64_t w, int decimals);

/// "1234567" -> "1,234,567"; a leading sign stays in front ("-1,234").
std::string WithThousands(std::string digits);

/// Appends `v` with `decimals` digits after the point, as printf's "%.*f" writes it (the same
/// correctly rounded digits, without printf's cost: a flame graph prints millions).
void AppendFixed(std::string* out, double v, int decimals);
inline std::string Fixed(double v, int decimals) {
  std::string s;
  AppendFixed(&s, v, decimals);
  return s;
}

/// The unit's name after a count: "samples", "ns", "events", "bytes", "objects", "Ir"
/// (instructions, as callgrind names them).
std::string_view UnitName(WeightUnit unit);

/// The unit's keyword in folded text's `# pf-unit:` line and in pprof's ValueType.unit:
/// "samples", "nanoseconds", "events", "bytes", "objects", "instructions"; "" for
/// kUnspecified.
std::string_view UnitKeyword(WeightUnit unit);
/// The unit a keyword names (UnitKeyword; pprof's "count" is samples); false if none.
bool ParseUnitKeyword(std::string_view keyword, WeightUnit* unit);

/// `w` for people: "1,234 samples", "1.5 samples", "12.3 ms", "4,100 events", "4.1 MB",
/// "1,000 Ir". Nanoseconds are shown in the largest unit (ns, us, ms, s) that keeps the value
/// at least 1, with three significant digits; bytes likewise in steps of 1024 (B, kB, MB, GB,
/// ..., as pprof), without trailing zeros.
std::string HumanWeight(uint64_t w, int decimals, WeightUnit unit);

/// The warning the tools print once when `n` sums saturated.
std::string SaturationWarning(uint64_t n);

/// The unit of two profiles summed or compared: the same, or the one that is specified when
/// the other is not; kUnspecified when they disagree.
WeightUnit CombineUnits(WeightUnit a, WeightUnit b);

}  // namespace pf
