#pragma once
// The stacks module (common/stacks/): the profile model every tool shares: the stack prefix
// tree (stack_tree.h) with its weights and unit (weight.h), the folded format (this file),
// and the filters over stacks (stack_filter.h).
//
// The folded stack format (man/pf-folded.5): one stack per line, frames root to leaf joined
// by ';', then whitespace and a count, or two counts for a differential profile. Readers sum
// repeated stacks; the writer prints stacks sorted bytewise, as `sort` with LC_ALL=C and
// stackcollapse-perf.pl do, so the output is deterministic.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostics.h"
#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {

struct FoldedLine {
  std::string_view stack;
  uint64_t counts[2] = {0, 0};  // the integer parts
  uint64_t fracs[2] = {0, 0};   // the fractional parts' digits, trailing zeros dropped
  uint8_t frac_digits[2] = {0, 0};
  int ncounts = 0;
  bool fractional = false;  // a count had a fractional part (other than zeros)
  bool cut = false;         // a fraction had more than kMaxDecimals digits (the rest dropped)

  /// Digits after the point that the counts need.
  int decimals() const { return std::max(frac_digits[0], frac_digits[1]); }
  /// Count `i` times 10^decimals (decimals >= this->decimals()), saturating.
  uint64_t Scaled(int i, int decimals) const;
};

/// Parses "STACK COUNT" or, when `want_counts` is 2 (or 0: either), "STACK COUNT COUNT".
/// Counts are decimal integers, optionally with a fraction (`12.5`, kept up to kMaxDecimals
/// digits), separated from the stack by spaces or tabs. Returns false for a malformed line.
bool ParseFoldedLine(std::string_view line, int want_counts, FoldedLine* out);

/// True for lines folded readers ignore: empty, whitespace only, or a `#` comment.
bool IsFoldedIgnorable(std::string_view line);

/// Reads folded text into a tree, block by block.
class FoldedReader {
 public:
  /// `tree.columns()` fixes how many counts each line must have.
  explicit FoldedReader(StackTree& tree) : tree_(tree) {}
  void AddBlock(std::string_view data, uint64_t first_line, const std::string& file);

  const SkipCount& malformed() const { return malformed_; }
  uint64_t fractional_lines() const { return fractional_; }
  /// Counts whose fraction had more digits than kept (kMaxDecimals).
  uint64_t cut_fractions() const { return cut_; }
  uint64_t stacks_read() const { return stacks_; }
  /// Comment lines pf itself wrote ("# pf-..."), e.g. pf-diff's which-is-which line.
  const std::vector<std::string>& pf_comments() const { return pf_comments_; }

 private:
  StackTree& tree_;
  std::vector<StrId> frames_;
  SkipCount malformed_;
  uint64_t fractional_ = 0;
  uint64_t cut_ = 0;
  uint64_t stacks_ = 0;
  std::vector<std::string> pf_comments_;
};

/// Writes every stack with a non-zero weight as "a;b;c N" (or "a;b;c N M"), sorted bytewise;
/// a tree with decimals prints them as needed ("1.5", "3").
void WriteFolded(const StackTree& tree, BufferedWriter& out);

}  // namespace pf
