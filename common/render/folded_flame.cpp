// Flame graphs of folded text in any order, without a stack tree (flame.h,
// DrawFoldedInAnyOrder; stacks/stack_list.h says why).
//
// Each line's frames are interned and its stack found in, or added to, a StackList; the
// mapped input's pages are given back as they are read. The list, sorted frame by frame,
// then streams into the frame merger as sorted text does: each stack given as the frames
// after those it shares with the one before. A first pass over the sorted list gives every
// frame its final width, so the frames too narrow to draw (most of a large profile's) reach
// the merger as gaps, never as frames it would build and prune (Plan). What only the tree's
// readers say right is left to them, by returning false before anything is drawn or warned.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "render/flame.h"
#include "stacks/folded.h"
#include "stacks/stack_list.h"

namespace pf {

namespace {

// A stack's change in a differential profile (AFTER - BEFORE); 0 in an ordinary one.
double Delta(const StackList& list, uint32_t s) {
  return list.columns() == 2
             ? static_cast<double>(list.count(s, 1)) - static_cast<double>(list.count(s, 0))
             : 0;
}

// The walk's plan, by position in the sorted order: how many frames each stack shares with
// the one drawn before it, and how many of the frames it opens (its frames past those)
// are wide enough to be drawn. Stacks without weight are passed over, as the walk does.
struct Walk {
  std::vector<uint32_t> shared;
  std::vector<uint32_t> opens_kept;
};

// Every frame's final width is known before a frame is drawn: a frame is the run of sorted
// stacks that share it, so a stack of open frames (each with the width summed so far)
// gives each its width when the run ends. A frame narrower than `prune_width` is one the
// frame merger would build and then prune; the walk hands those to it as gaps
// (FlowBuilder::AddPruned) instead, most of a large profile's frames.
Walk Plan(const StackList& list, const std::vector<uint32_t>& order, int wcol,
          double prune_width) {
  Walk walk{std::vector<uint32_t>(order.size(), 0), std::vector<uint32_t>(order.size(), 0)};
  struct Open {
    uint64_t width;
    uint32_t k;  // the position in `order` of the stack that opened it
  };
  std::vector<Open> open;  // open[depth]
  auto close_to = [&](size_t depth) {
    while (open.size() > depth) {
      const Open o = open.back();
      open.pop_back();
      if (!(static_cast<double>(o.width) < prune_width)) {
        uint32_t& kept = walk.opens_kept[o.k];
        const size_t above = open.size();  // the frames above o: o's depth
        kept = std::max<uint32_t>(kept, static_cast<uint32_t>(above + 1 - walk.shared[o.k]));
      }
      if (!open.empty()) open.back().width += o.width;
    }
  };
  std::span<const StrId> prev;
  for (size_t k = 0; k < order.size(); ++k) {
    list.FetchAhead(order, k);  // the sorted stacks lie anywhere in the list
    const uint32_t s = order[k];
    const uint64_t w = list.count(s, wcol);
    if (!w && !Delta(list, s)) continue;  // (as the tree's walk: nothing drawn)
    std::span<const StrId> frames = list.frames(s);
    size_t shared = 0;
    while (shared < prev.size() && shared < frames.size() && prev[shared] == frames[shared]) {
      ++shared;
    }
    walk.shared[k] = static_cast<uint32_t>(shared);
    close_to(shared);
    while (open.size() < frames.size()) open.push_back({0, static_cast<uint32_t>(k)});
    if (!open.empty()) open.back().width += w;
    prev = frames;
  }
  close_to(0);
  return walk;
}

}  // namespace

bool DrawFoldedInAnyOrder(std::span<ByteSource* const> sources, const FlameOptions& options,
                          std::vector<std::string>* warnings, FlameLayout* layout) {
  if (sources.empty() || !sources[0]->stable()) return false;
  const int columns = FoldedColumns(sources[0]->Peek());
  if (columns == 0) return false;
  StackList list(columns);
  WeightUnit unit = WeightUnit::kUnspecified;
  std::vector<std::string> comment_lines;
  if (!ListFoldedSources(sources, &list, &unit, &comment_lines)) return false;

  const int wcol = columns - 1;  // the width from AFTER in a differential profile
  uint64_t sum = 0;
  for (uint32_t s = 0; s < list.size(); ++s) {
    if (__builtin_add_overflow(sum, list.count(s, wcol), &sum)) return false;
  }
  if (sum == 0) return false;  // the tree path says why there is nothing to draw

  list.DoneAdding();
  const std::vector<uint32_t> order = list.SortedOrder();
  const Walk walk = Plan(list, order, wcol, FlamePruneWidth(options, sum));
  FlowBuilder flow(FlameThreshold(options), false, /*stable_names=*/true);  // the list's
  std::vector<std::string_view> tail;
  size_t kept = 0, fed = 0;  // frames of the current stack drawn; of the last stack fed
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t s = order[k];
    uint64_t w = list.count(s, wcol);
    double d = Delta(list, s);
    if (!w && !d) continue;
    const size_t shared = walk.shared[k], length = list.frames(s).size();
    // Frames kept: those of the chain up to `shared` (kept ones are a prefix: a frame is
    // never wider than its parent), then the ones this stack opens, if its chain is whole.
    kept = std::min(kept, shared);
    if (kept == shared) kept += walk.opens_kept[k];
    const size_t common = std::min({shared, fed, kept});  // shared with the stack fed before
    tail.clear();
    if (kept > common) {
      std::span<const StrId> frames = list.frames(s);
      for (size_t i = common; i < kept; ++i) tail.push_back(list.names().Name(frames[i]));
    }
    if (kept == length) {
      flow.AddAfter(common, tail, w, d, /*frame_order=*/true);
    } else {
      flow.AddAfter(common, tail, 0, 0, /*frame_order=*/true);
      flow.AddPruned(w, d);
    }
    fed = kept;
  }
  FlameOptions o = options;
  o.diff_names = DiffNames(comment_lines);
  *layout = FinishFlame(flow, columns == 2, unit, o, warnings);
  return true;
}

}  // namespace pf
