// The stack filters (stack_filter.h). Filters run once per distinct stack: the tree is walked
// and each stack rebuilt into a new tree, with --include/--exclude matched against the stack's
// folded text and --hide dropping the matching frames (their weight going to the caller). All
// patterns are re2, so a hostile pattern or frame name cannot make a run take exponential time.

#include "stacks/stack_filter.h"

#include <re2/re2.h>

#include <algorithm>

#include "base/error.h"

namespace pf {

namespace {

// The name without a trailing annotation (_[k], _[j], _[i], _[w]).
std::string_view WithoutAnnotation(std::string_view name) {
  size_t n = name.size();
  if (n >= 4 && name.substr(n - 4, 2) == "_[" && name[n - 1] == ']' &&
      std::string_view("kjiw").find(name[n - 2]) != std::string_view::npos) {
    return name.substr(0, n - 4);
  }
  return name;
}

}  // namespace

StackTree CutAtInnermost(const StackTree& in, const std::vector<std::string>& names,
                         bool ignore_annotation, bool drop_unmatched) {
  // from[n]: the innermost cut on the path to n, or the root when none.
  std::vector<NodeId> from(in.size(), StackTree::kRoot);
  for (NodeId n{1}; n.index() < in.size(); ++n) {
    std::string_view name = in.name(n);
    if (ignore_annotation) name = WithoutAnnotation(name);
    bool cut = std::find(names.begin(), names.end(), name) != names.end();
    from[n.index()] = cut ? n : from[in.parent(n).index()];
  }
  StackTree out = in.EmptyLike();
  std::vector<StrId> frames;
  in.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
    if (from[n.index()] == StackTree::kRoot && drop_unmatched) return;
    // The path from the cut on, named leaf first (the order the names are interned in).
    frames.clear();
    for (size_t i = path.size(); i-- > 0;) {
      frames.push_back(out.names().Intern(in.name(path[i])));
      if (path[i] == from[n.index()]) break;
    }
    std::reverse(frames.begin(), frames.end());
    NodeId leaf = out.AddStack(frames, 0);
    for (int c = 0; c < in.columns(); ++c) out.AddSelf(leaf, in.self(n, c), c);
  });
  return out;
}

PatternList::PatternList(const std::vector<std::string>& patterns, const char* option) {
  re2::RE2::Options o;
  o.set_log_errors(false);
  for (const std::string& p : patterns) {
    auto re = std::make_unique<re2::RE2>(p, o);
    if (!re->ok()) {
      throw UsageError(std::string("--") + option + ": bad regular expression '" + p +
                       "': " + re->error());
    }
    res_.push_back(std::move(re));
  }
}

PatternList::PatternList(PatternList&&) noexcept = default;
PatternList::~PatternList() = default;

bool PatternList::Matches(std::string_view s) const {
  for (const auto& re : res_) {
    if (re2::RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *re)) return true;
  }
  return false;
}

StackFilter::StackFilter(const StackFilterOptions& options)
    : include_(options.include, "include"),
      exclude_(options.exclude, "exclude"),
      hide_(options.hide, "hide") {}

StackFilter::~StackFilter() = default;

StackTree StackFilter::Apply(const StackTree& in) const {
  StackTree out = in.EmptyLike();
  // Per-name verdict of the hide patterns: 0 unknown, 1 keep, 2 hide.
  std::vector<uint8_t> hidden(in.names().size(), 0);
  std::vector<StrId> frames;
  std::string text;
  in.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
    if (!include_.empty() || !exclude_.empty()) {
      text.clear();
      for (size_t i = 0; i < path.size(); ++i) {
        if (i) text += ';';
        text += in.name(path[i]);
      }
      if (!include_.empty() && !include_.Matches(text)) return;
      if (exclude_.Matches(text)) return;
    }
    frames.clear();
    for (NodeId p : path) {
      StrId f = in.frame(p);
      if (!hide_.empty()) {
        uint8_t& v = hidden[f.value];
        if (v == 0) v = hide_.Matches(in.names().Name(f)) ? 2 : 1;
        if (v == 2) continue;
      }
      frames.push_back(out.names().Intern(in.names().Name(f)));
    }
    if (frames.empty()) return;
    NodeId leaf = out.AddStack(frames, 0);
    for (int c = 0; c < in.columns(); ++c) out.AddSelf(leaf, in.self(n, c), c);
  });
  return out;
}

}  // namespace pf
