#pragma once
// Sample filters over folded stacks, with re2 (linear time, so a hostile pattern or name
// cannot hang a run):
//   include  keep only the stacks whose folded text ("comm;f1;...;leaf") matches one pattern
//   exclude  drop the stacks whose folded text matches one pattern
//   hide     remove the frames whose name matches; their weight stays with the caller
// include/exclude look at the stack as it was recorded; hide applies afterwards. Filters run
// once per distinct stack, after folding, so their cost does not grow with the input.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "stacks/stack_tree.h"

namespace re2 {
class RE2;
}

namespace pf {

/// The patterns given to one filter option (--include, --hide, --focus, ...): re2, each
/// matching anywhere in the text. The one regex engine of every stack and frame filter.
class PatternList {
 public:
  /// Compiles `patterns`; throws pf::UsageError naming `option` and the pattern that does
  /// not compile.
  PatternList(const std::vector<std::string>& patterns, const char* option);
  PatternList(PatternList&&) noexcept;
  ~PatternList();
  bool empty() const { return res_.empty(); }
  /// Whether one of the patterns matches part of `s`.
  bool Matches(std::string_view s) const;

 private:
  std::vector<std::unique_ptr<re2::RE2>> res_;
};

struct StackFilterOptions {
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::vector<std::string> hide;
  bool empty() const { return include.empty() && exclude.empty() && hide.empty(); }
};

class StackFilter {
 public:
  /// Compiles the patterns; throws pf::UsageError naming a pattern that does not compile.
  explicit StackFilter(const StackFilterOptions& options);
  ~StackFilter();
  /// A new tree holding what passes the filters.
  StackTree Apply(const StackTree& in) const;

 private:
  PatternList include_, exclude_, hide_;
};

/// Cuts every stack of `in` at its innermost frame (the one nearest the leaf) named one of
/// `names`: the stack then starts there. What pf-flamegraph's --base and pf-collapse's
/// --skip-after on folded input do. With `ignore_annotation`, a frame's `_[k]`-style suffix
/// is not part of its name here. A stack without such a frame is kept whole, or dropped
/// with `drop_unmatched`. One pass over the tree (a parent's id is below its child's).
StackTree CutAtInnermost(const StackTree& in, const std::vector<std::string>& names,
                         bool ignore_annotation, bool drop_unmatched);

}  // namespace pf
