#pragma once
// The stacks module (common/stacks/): the profile model every tool shares: the stack prefix
// tree (stack_tree.h) with its weights and unit (weight.h), the folded format (this file),
// and the filters over stacks (stack_filter.h).
//
// The folded stack format (man/pf-folded.5): one stack per line, frames root to leaf joined
// by ';', then whitespace and a count, or two counts for a differential profile. Readers sum
// repeated stacks; the writer prints stacks sorted bytewise, as `sort` with LC_ALL=C and
// stackcollapse-perf.pl do, so the output is deterministic. Folded text is a one-value view
// of a profile; what its counts are travels in a comment line, `# pf-unit: nanoseconds`,
// that pf writes first (after pf-diff's own line) when the unit is known and not samples:
// flamegraph.pl skips it as a line of invalid format (and says so on stderr), inferno
// silently; pf's readers take the unit from it.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/diagnostics.h"
#include "io/line_reader.h"
#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {

/// The frame a fold of on-CPU and off-CPU samples together (a wall-clock profile) puts on top
/// of each off-CPU stack, so the waits stand apart from the running (and are drawn blue).
inline constexpr std::string_view kOffCpuFrame = "[off-cpu]";

struct FoldedLine {
  std::string_view stack;
  uint64_t counts[2] = {0, 0};  // the integer parts
  uint64_t fracs[2] = {0, 0};   // the fractional parts' digits, trailing zeros dropped
  uint8_t frac_digits[2] = {0, 0};
  int ncounts = 0;
  bool fractional = false;  // a count had a fractional part (other than zeros)
  bool cut = false;         // a fraction had more than kMaxDecimals digits (the rest dropped)
  bool too_large = false;   // a count's integer part exceeded 2^64-1 (kept as 2^64-1)

  /// Digits after the point that the counts need.
  int decimals() const { return std::max(frac_digits[0], frac_digits[1]); }
  /// Count `i` times 10^decimals (decimals >= this->decimals()), saturating.
  uint64_t Scaled(int i, int decimals) const;
  /// True when a count does not fit, as is or scaled to `decimals`: the reader then notes
  /// a saturated sum, so the tools warn (a count is never cut silently).
  bool Saturates(int decimals) const {
    if (too_large) return true;
    if (decimals == 0) return false;
    for (int i = 0; i < ncounts; ++i) {
      if (Scaled(i, decimals) == UINT64_MAX) return true;
    }
    return false;
  }
};

/// Parses "STACK COUNT" or, when `want_counts` is 2 (or 0: either), "STACK COUNT COUNT".
/// Counts are decimal integers, optionally with a fraction (`12.5`, kept up to kMaxDecimals
/// digits), separated from the stack by spaces or tabs. Returns false for a malformed line.
bool ParseFoldedLine(std::string_view line, int want_counts, FoldedLine* out);

/// True for lines folded readers ignore: empty, whitespace only, or a `#` comment.
bool IsFoldedIgnorable(std::string_view line);

/// Comment lines pf writes into folded text start so ("# pf-diff: ..."); other readers skip
/// them as comments.
inline constexpr std::string_view kPfCommentPrefix = "# pf-";
/// pf-diff's which-is-which line: kPfDiffComment + "before=FILE after=FILE".
inline constexpr std::string_view kPfDiffComment = "# pf-diff: ";
/// What the counts are: kPfUnitComment + a unit keyword ("nanoseconds", UnitKeyword).
inline constexpr std::string_view kPfUnitComment = "# pf-unit: ";

/// The `# pf-unit:` line (with its '\n') the folded writers put first for `unit`; "" for
/// samples and an unspecified unit, which folded text leaves unsaid.
std::string PfUnitLine(WeightUnit unit);
/// True for a `# pf-unit: UNIT` line, with *unit the unit named (kUnspecified when pf does
/// not know the keyword).
bool ParsePfUnitLine(std::string_view line, WeightUnit* unit);

/// The unit folded text's `# pf-unit:` lines name, taken line by line: what every reader of
/// folded text takes them with.
class FoldedUnit {
 public:
  /// Takes a pf comment line (`line_number` of `file`); false when it is no unit line.
  bool Take(std::string_view line, const std::string& file, uint64_t line_number);
  /// The unit named; kUnspecified for none, or when the lines disagree.
  WeightUnit unit() const { return unit_; }
  /// A warning for the first unit line that names a unit pf does not know or disagrees with
  /// an earlier one (folded files concatenated); "" when none did.
  const std::string& warning() const { return warning_; }

 private:
  WeightUnit unit_ = WeightUnit::kUnspecified;
  bool disagree_ = false;
  std::string warning_;
};

/// The tree folded text with `counts` counts per line reads into: one value, or a
/// differential profile for two (FoldedColumns).
StackTree TreeForFolded(int counts);

/// The one reader of folded lines. A line ends at '\n', with a '\r' before it dropped;
/// blank lines and comments are skipped, except pf's own comments (kPfCommentPrefix), which
/// are handed out as such, as is a line that is not a stack (ParseFoldedLine) or longer
/// than BlockReader::kMaxLineBytes.
class FoldedLines {
 public:
  enum Kind { kStack, kPfComment, kMalformed };
  /// `want_counts` as for ParseFoldedLine; `first_line` numbers the first line of `data`.
  FoldedLines(std::string_view data, int want_counts, uint64_t first_line = 1)
      : lines_(data), want_counts_(want_counts), next_line_(first_line) {}
  /// Advances to the next line that is not blank or a foreign comment; false at the end.
  bool Next();
  Kind kind() const { return kind_; }
  /// The line, without its end.
  std::string_view line() const { return line_; }
  uint64_t line_number() const { return next_line_ - 1; }
  /// The parsed line, when kind() is kStack.
  const FoldedLine& folded() const { return fl_; }
  /// Where the next line starts.
  const char* position() const { return lines_.position(); }

 private:
  LineSplitter lines_;
  int want_counts_;
  uint64_t next_line_;
  std::string_view line_;
  Kind kind_ = kMalformed;
  FoldedLine fl_;
};

/// How many counts the first stack line of `data` has (1, or 2 for a differential profile);
/// 0 when it has no stack line.
int FoldedColumns(std::string_view data);

/// Calls f(frame) for each frame of a folded stack, root first (the text between ';'s).
template <typename F>
void ForEachFrame(std::string_view stack, F&& f) {
  // The ';'s are found 64 bytes at a time (four SSE2 compares, x86-64's baseline). Frames
  // are 30-40 bytes long: a call to memchr for each cost more than the search (pf-diff of
  // 300k new stacks: 8% of its instructions), and a loop over the ';'s of each 16 bytes
  // mispredicted its end four times as often.
  const char* start = stack.data();
  const char* p = start;
  const char* const end = start + stack.size();
  auto hand_out = [&](uint64_t m) {
    for (; m != 0; m &= m - 1) {
      const char* at = p + std::countr_zero(m);
      f(std::string_view(start, static_cast<size_t>(at - start)));
      start = at + 1;
    }
  };
#ifdef __SSE2__
  const __m128i semi = _mm_set1_epi8(';');
  auto mask16 = [&](const char* q) -> uint64_t {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    return static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, semi)));
  };
  for (; end - p >= 64; p += 64) {
    hand_out(mask16(p) | mask16(p + 16) << 16 | mask16(p + 32) << 32 | mask16(p + 48) << 48);
  }
  for (; end - p >= 16; p += 16) hand_out(mask16(p));
#endif
  for (; p < end; ++p) hand_out(*p == ';');
  f(std::string_view(start, static_cast<size_t>(end - start)));
}

/// Reads folded text into a tree, block by block.
class FoldedReader {
 public:
  /// The tree (one value per stack, or differential) fixes how many counts each line must
  /// have: one, or two for a differential tree. Its unit is the caller's to set from unit().
  explicit FoldedReader(StackTree& tree) : tree_(tree) {}
  void AddBlock(std::string_view data, uint64_t first_line, const std::string& file);

  const SkipCount& malformed() const { return malformed_; }
  uint64_t fractional_lines() const { return fractional_; }
  /// Counts whose fraction had more digits than kept (kMaxDecimals).
  uint64_t cut_fractions() const { return cut_; }
  uint64_t stacks_read() const { return stacks_; }
  /// Comment lines pf itself wrote ("# pf-..."), e.g. pf-diff's which-is-which line (not
  /// the unit lines: unit()).
  const std::vector<std::string>& pf_comments() const { return pf_comments_; }
  /// The unit its `# pf-unit:` lines name (FoldedUnit).
  const FoldedUnit& unit() const { return unit_; }

 private:
  StackTree& tree_;
  std::vector<StrId> frames_;
  SkipCount malformed_;
  uint64_t fractional_ = 0;
  uint64_t cut_ = 0;
  uint64_t stacks_ = 0;
  std::vector<std::string> pf_comments_;
  FoldedUnit unit_;
};

/// Writes every stack with a non-zero weight as "a;b;c N" (or "a;b;c N M" for a
/// differential tree), sorted bytewise, after the unit's line (PfUnitLine; none without a
/// stack); a tree with decimals prints them as needed ("1.5", "3"). A tree of several
/// values per stack is written as its default one-value view (OneValueView).
void WriteFolded(const StackTree& tree, BufferedWriter& out);

}  // namespace pf
