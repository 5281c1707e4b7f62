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

void Compile(const std::vector<std::string>& patterns, const char* option,
             std::vector<std::unique_ptr<re2::RE2>>* out) {
  for (const std::string& p : patterns) {
    re2::RE2::Options o;
    o.set_log_errors(false);
    auto re = std::make_unique<re2::RE2>(p, o);
    if (!re->ok()) {
      throw UsageError(std::string("--") + option + ": bad regular expression '" + p +
                       "': " + re->error());
    }
    out->push_back(std::move(re));
  }
}

bool AnyMatch(const std::vector<std::unique_ptr<re2::RE2>>& res, std::string_view s) {
  for (const auto& re : res) {
    if (re2::RE2::PartialMatch(s, *re)) return true;
  }
  return false;
}

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
  for (NodeId n = 1; n < in.size(); ++n) {
    std::string_view name = in.name(n);
    if (ignore_annotation) name = WithoutAnnotation(name);
    bool cut = std::find(names.begin(), names.end(), name) != names.end();
    from[n] = cut ? n : from[in.parent(n)];
  }
  StackTree out(in.columns());
  out.SetDecimals(in.decimals());
  out.set_unit(in.unit());
  out.NoteSaturated(in.saturated());
  std::vector<StrId> frames;
  for (NodeId n = 1; n < in.size(); ++n) {
    if (!in.has_self(n)) continue;
    if (from[n] == StackTree::kRoot && drop_unmatched) continue;
    NodeId stop = from[n] == StackTree::kRoot ? StackTree::kRoot : in.parent(from[n]);
    frames.clear();
    for (NodeId p = n; p != stop; p = in.parent(p)) {
      frames.push_back(out.names().Intern(in.name(p)));
    }
    std::reverse(frames.begin(), frames.end());
    NodeId leaf = out.AddStack(frames, 0);
    for (int c = 0; c < in.columns(); ++c) out.AddSelf(leaf, in.self(n, c), c);
  }
  return out;
}

StackFilter::StackFilter(const StackFilterOptions& options) {
  Compile(options.include, "include", &include_);
  Compile(options.exclude, "exclude", &exclude_);
  Compile(options.hide, "hide", &hide_);
}

StackFilter::~StackFilter() = default;

StackTree StackFilter::Apply(const StackTree& in) const {
  StackTree out(in.columns());
  out.SetDecimals(in.decimals());
  out.set_unit(in.unit());
  out.NoteSaturated(in.saturated());
  // Per-name verdict of the hide patterns: 0 unknown, 1 keep, 2 hide.
  std::vector<uint8_t> hidden(in.names().size(), 0);
  std::vector<NodeId> path_nodes;
  std::vector<StrId> frames;
  std::string text;
  for (NodeId n = 1; n < in.size(); ++n) {
    if (!in.has_self(n)) continue;
    path_nodes.clear();
    for (NodeId p = n; p != StackTree::kRoot; p = in.parent(p)) path_nodes.push_back(p);
    if (!include_.empty() || !exclude_.empty()) {
      text.clear();
      for (size_t i = path_nodes.size(); i-- > 0;) {
        text += in.name(path_nodes[i]);
        if (i) text += ';';
      }
      if (!include_.empty() && !AnyMatch(include_, text)) continue;
      if (AnyMatch(exclude_, text)) continue;
    }
    frames.clear();
    for (size_t i = path_nodes.size(); i-- > 0;) {
      StrId f = in.frame(path_nodes[i]);
      if (!hide_.empty()) {
        uint8_t& v = hidden[f.value];
        if (v == 0) v = AnyMatch(hide_, in.names().Name(f)) ? 2 : 1;
        if (v == 2) continue;
      }
      frames.push_back(out.names().Intern(in.names().Name(f)));
    }
    if (frames.empty()) continue;
    NodeId leaf = out.AddStack(frames, 0);
    for (int c = 0; c < in.columns(); ++c) out.AddSelf(leaf, in.self(n, c), c);
  }
  return out;
}

}  // namespace pf
