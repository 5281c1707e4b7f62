#pragma once
// The stacks of a stack tree or a stack list as the call graph and the reports walk them
// (internal to the callgraph module): each weighted node's root-first path (a listed
// stack's frames), less the process frame with skip_process, filtered by --focus,
// --ignore, --show-from and --hide (each pattern run once per distinct frame name).

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "callgraph/call_graph.h"
#include "base/intern.h"
#include "stacks/stack_filter.h"
#include "stacks/stack_tree.h"

namespace pf {

enum FrameFlag : uint8_t { kFocus = 1, kIgnore = 2, kHide = 4, kShowFrom = 8 };

/// Rebuilds and filters the stacks of a tree, or filters given ones; hands out root-first
/// frame ids.
class PathWalker {
 public:
  /// `match_name`, when given, is the part of a frame's name the filters match (a source
  /// line's frame "f:file.c:12" is matched as "f").
  PathWalker(const StackTree& tree, const CallGraphOptions& o,
             std::string_view (*match_name)(std::string_view) = nullptr)
      : PathWalker(tree.names(), o, match_name) {
    tree_ = &tree;
  }
  /// For stacks given by their frames (Path(span)), named in `names`.
  PathWalker(const Interner& names, const CallGraphOptions& o,
             std::string_view (*match_name)(std::string_view) = nullptr)
      : skip_process_(o.skip_process) {
    PatternList focus(o.focus, "focus"), ignore(o.ignore, "ignore"), hide(o.hide, "hide"),
        show_from(o.show_from, "show-from");
    any_focus_ = !focus.empty();
    any_ignore_ = !ignore.empty();
    any_hide_ = !hide.empty();
    any_show_from_ = !show_from.empty();
    if (any_focus_ || any_ignore_ || any_hide_ || any_show_from_) {
      // One regex pass per distinct name, not per frame.
      flags_.resize(names.size());
      for (size_t i = 0; i < names.size(); ++i) {
        std::string_view s = names.Name(StrId{static_cast<uint32_t>(i)});
        if (match_name) s = match_name(s);
        uint8_t f = 0;
        if (focus.Matches(s)) f |= kFocus;
        if (ignore.Matches(s)) f |= kIgnore;
        if (hide.Matches(s)) f |= kHide;
        if (show_from.Matches(s)) f |= kShowFrom;
        flags_[i] = f;
      }
    }
  }

  /// The filtered root-first path of `node` (frame name ids); false when the sample is dropped.
  bool Path(NodeId node, std::vector<uint32_t>* path) {
    raw_.clear();
    for (NodeId m = node; m != StackTree::kRoot; m = tree_->parent(m)) {
      raw_.push_back(tree_->frame(m).value);
    }
    std::reverse(raw_.begin(), raw_.end());
    return Walk(path);
  }
  /// The same for a stack given by its root-first frames.
  bool Path(std::span<const StrId> frames, std::vector<uint32_t>* path) {
    raw_.clear();
    for (StrId f : frames) raw_.push_back(f.value);
    return Walk(path);
  }

  /// Whether any filter is given (else a path is the stack, less the process with
  /// skip_process).
  bool filters() const { return !flags_.empty(); }

  /// Throws when --focus or --show-from matched no function of the samples walked, as -z and
  /// -l do: an empty graph would not say why.
  void CheckMatched(const CallGraphOptions& o) const {
    auto fail = [](const char* option, const std::vector<std::string>& patterns) {
      std::string list;
      for (const std::string& p : patterns) list += (list.empty() ? "'" : ", '") + p + "'";
      throw Error(std::string("--") + option + ": no function matches " + list);
    };
    if (any_focus_ && !focus_matched_) fail("focus", o.focus);
    if (any_show_from_ && !show_from_matched_) fail("show-from", o.show_from);
  }

 private:
  // raw_, less the process with skip_process, filtered into *path.
  bool Walk(std::vector<uint32_t>* path) {
    if (skip_process_ && !raw_.empty()) raw_.erase(raw_.begin());
    path->clear();
    if (flags_.empty()) {
      path->assign(raw_.begin(), raw_.end());
      return !path->empty();
    }
    bool focused = !any_focus_, ignored = false;
    size_t start = raw_.size();
    for (size_t i = 0; i < raw_.size(); ++i) {
      uint8_t f = flags_[raw_[i]];
      if (f & kIgnore) ignored = true;
      if (f & kFocus) focused = true;
      if ((f & kShowFrom) && start == raw_.size()) start = i;
    }
    if (any_focus_ && focused) focus_matched_ = true;
    if (any_show_from_ && start < raw_.size()) show_from_matched_ = true;
    if (ignored || !focused) return false;
    if (!any_show_from_) start = 0;
    for (size_t i = start; i < raw_.size(); ++i) {
      if (!(flags_[raw_[i]] & kHide)) path->push_back(raw_[i]);
    }
    return !path->empty();
  }

  const StackTree* tree_ = nullptr;  // for Path(NodeId)
  bool skip_process_;
  bool focus_matched_ = false, show_from_matched_ = false;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> raw_;
  bool any_focus_ = false, any_ignore_ = false, any_hide_ = false, any_show_from_ = false;
};

}  // namespace pf
