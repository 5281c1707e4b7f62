// Flame graphs of folded text in any order, without a stack tree (flame.h,
// DrawFoldedInAnyOrder; stacks/stack_list.h says why).
//
// Each line's frames are interned and its stack found in, or added to, a StackList; the
// mapped input's pages are given back as they are read. The list, sorted frame by frame,
// then streams into the frame merger as sorted text does: each stack given as the frames
// after those it shares with the one before. What only the tree's readers say right is left
// to them, by returning false before anything is drawn or warned.

#include <cstdint>
#include <string>
#include <vector>

#include "render/flame.h"
#include "stacks/folded.h"
#include "stacks/stack_list.h"

namespace pf {

namespace {

// Reads every source's folded lines into `list`; false on anything the tree path must say.
bool ReadAll(std::span<ByteSource* const> sources, StackList* list, WeightUnit* unit,
             std::vector<std::string>* comment_lines) {
  uint64_t lines = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    ByteSource* src = sources[i];
    if (!src->stable()) return false;
    std::string_view data = src->Next();
    if (FoldedColumns(data) != list->columns()) return false;
    FoldedUnit file_unit;
    // (pf-diff's line among several inputs: the tree path picks which.)
    if (!ListFolded(data, -1, src->releasable(), list, &file_unit,
                    sources.size() > 1 ? nullptr : comment_lines, &lines)) {
      return false;
    }
    if (i > 0 && file_unit.unit() != *unit) return false;  // the tree path says how
    *unit = file_unit.unit();
  }
  return true;
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
  if (!ReadAll(sources, &list, &unit, &comment_lines)) return false;

  const int wcol = columns - 1;  // the width from AFTER in a differential profile
  uint64_t sum = 0;
  for (uint32_t s = 0; s < list.size(); ++s) {
    if (__builtin_add_overflow(sum, list.count(s, wcol), &sum)) return false;
  }
  if (sum == 0) return false;  // the tree path says why there is nothing to draw

  FlowBuilder flow(FlameThreshold(options), false, /*stable_names=*/true);  // the list's
  std::vector<std::string_view> tail;
  std::span<const StrId> prev;
  const std::vector<uint32_t> order = list.SortedOrder();
  for (size_t k = 0; k < order.size(); ++k) {
    list.FetchAhead(order, k);  // the sorted stacks lie anywhere in the list
    std::span<const StrId> frames = list.frames(order[k]);
    const uint32_t s = order[k];
    uint64_t w = list.count(s, wcol);
    double d = columns == 2 ? static_cast<double>(list.count(s, 1)) -
                                  static_cast<double>(list.count(s, 0))
                            : 0;
    if (!w && !d) continue;  // (as the tree's walk: a stack without weight draws nothing)
    size_t shared = 0;
    while (shared < prev.size() && shared < frames.size() && prev[shared] == frames[shared]) {
      ++shared;
    }
    tail.clear();
    for (size_t i = shared; i < frames.size(); ++i) tail.push_back(list.names().Name(frames[i]));
    flow.AddAfter(shared, tail, w, d, /*frame_order=*/true);
    prev = frames;
  }
  FlameOptions o = options;
  o.diff_names = DiffNames(comment_lines);
  *layout = FinishFlame(flow, columns == 2, unit, o, warnings);
  return true;
}

}  // namespace pf
