#pragma once
// Flame graphs: from stacks to a laid-out FlameLayout (render/layout.h), drawn by the SVG
// writer or Cairo.
//
// Frames are merged as flamegraph.pl merges them ("flow"): stacks are visited in order, and a
// frame stays open while consecutive stacks share it. Two orders exist:
//   - a flame graph visits stacks sorted frame by frame (a depth-first walk of the stack
//     tree), so every function appears once under a given parent. flamegraph.pl sorts whole
//     lines instead, and so splits `foo` in two when `foo::bar` sorts between `foo` and
//     `foo;baz`; we do not;
//   - a flame chart (--flamechart) keeps the input order and merges only neighbours.
// Frames narrower than --minwidth are removed with their descendants and leave their gap,
// as flamegraph.pl does (0.1 pixel by default, or a percentage of the total). Pruning starts
// while stacks are still being read: a closed frame narrower than the threshold for the
// total seen so far will be narrower still for the final total, so it can go at once; what
// remains is pruned again with the final total. Memory then follows the frames drawn, not
// the input.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/intern.h"
#include "io/input.h"
#include "render/layout.h"
#include "stacks/stack_tree.h"

namespace pf {

struct ReadReport;

struct FlameOptions {
  std::string title;      // empty: "Flame Graph" ("Icicle Graph", "Flame Chart")
  std::string subtitle;
  std::string countname;          // empty: the profile's unit ("samples" for folded text)
  std::string nametype = "Function:";
  std::string notes;
  std::string fonttype = "Verdana";
  double width = 1200;
  double frameheight = 16;
  double fontsize = 12;
  double fontwidth = 0.59;
  double minwidth = 0.1;          // pixels, or a percentage when minwidth_percent
  bool minwidth_percent = false;
  std::string palette = "hot";
  std::string bgcolors;           // empty: the palette's default
  int color_mode = 0;             // ColorMode
  std::string palette_file;       // --cp / --palette-file: consistent colours kept there
  std::string search_color = "rgb(230,0,230)";
  bool reverse = false;
  bool inverted = false;
  bool flamechart = false;
  bool negate = false;
  double factor = 1;
  uint64_t total = 0;             // --total: 100% (when at least the real total)
  std::vector<std::string> base; // --base: re-root at these functions
  std::string diff_names;        // pf-diff's "before=A after=B", for a differential's subtitle
  std::string nameattr_file;     // --nameattr: per-function SVG attributes (name_attrs.h)
  std::string encoding;          // --encoding: the XML declaration's, when given
};

/// Merges stacks into frames (see the file comment). Add stacks in the order the graph is
/// to be laid out. Frame names are copied only for frames that survive their parent's
/// close; until then they view the caller's strings, which must stay valid (readable) until
/// Finish (a mapped file, a stack tree's names).
class FlowBuilder {
 public:
  /// `threshold_per_total`: a frame is pruned when width < threshold_per_total * total
  /// (0 disables pruning). `flamechart`: keep input order and recorded start offsets.
  /// `stable_names`: the names given live as long as the builder (a StackList's, a tree's),
  /// so a frame drawn keeps the caller's view instead of a copy.
  FlowBuilder(double threshold_per_total, bool flamechart, bool stable_names = false);
  ~FlowBuilder();

  /// One stack, root first, with its weight (the width) and, for differential input, the
  /// change it carries (after - before).
  void Add(std::span<const std::string_view> frames, uint64_t weight, double delta);
  /// The same when the caller knows the stack begins with the first `shared` frames of the
  /// previous one: only `tail`, the frames after them, is given. `frame_order`: the stacks
  /// come sorted frame by frame (StackList::SortedOrder) and `shared` is all they share, so
  /// no open frame continues and no closed one reopens (text order's "foo", "foo::bar",
  /// "foo;baz"): neither is looked for.
  void AddAfter(size_t shared, std::span<const std::string_view> tail, uint64_t weight,
                double delta, bool frame_order = false);
  /// A stack whose frames past the open ones (those of the stack before, up to the last
  /// AddAfter) are all too narrow to draw: as if they had been added and pruned, its
  /// weight is a gap in the deepest open frame. For a caller that knows every frame's final
  /// width ahead (a StackList's walk: see DrawFoldedInAnyOrder), or that a frame closed
  /// narrow for good (a sorted stream, in text order). `first`, in text order: the first
  /// frame removed, so that its gap goes before the siblings extending its name, and a
  /// later sibling that it extends goes before it. Returns false, having added nothing,
  /// when the flow would reopen a sibling named `first` instead: add the stack then.
  bool AddPruned(uint64_t weight, double delta, const std::string_view* first = nullptr);
  /// Closes every frame. `total`: the count that is 100% (>= the sum of weights).
  void Finish(uint64_t total);

  struct Frame {
    std::string_view name;  // with its annotation
    uint32_t depth;
    uint64_t start, width;
    double delta;
  };
  /// The frames that survived, depth first (the root "all" first, name ""), after Finish.
  const std::vector<Frame>& frames() const { return out_; }
  uint64_t weight_sum() const { return sum_; }
  double max_abs_delta() const { return max_delta_; }
  /// Sums that reached UINT64_MAX and stopped there.
  uint64_t saturated() const { return saturated_; }
  /// Counts a weight that was too large before it was added (folded text's count).
  void NoteSaturated() { ++saturated_; }

 private:
  struct Node;
  uint32_t NewNode(StrId name, std::string_view view, uint32_t depth);
  void Close(uint32_t n);
  void PruneChildren(uint32_t n, double threshold);
  void FreeSubtree(uint32_t n);
  void Link(uint32_t parent, uint32_t child);  // as its last child
  uint32_t FindSibling(uint32_t parent, std::string_view frame, uint32_t* first_extension) const;
  void Place(uint32_t parent, uint32_t child, uint32_t first_extension);
  // A frame removed in text order whose name may extend a later sibling's (it holds a byte
  // that sorts before ';'): its width, and the kept sibling just before it (kNone: none).
  struct PrunedName {
    std::string_view name;
    uint64_t width;
    uint32_t after;
  };
  void Emit(uint32_t n, uint64_t start);

  double threshold_per_total_;
  bool flamechart_;
  bool stable_names_;
  Interner names_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> todo_;  // FreeSubtree's
  std::vector<uint32_t> open_;  // open_[d]: the open frame at depth d; open_[0] is the root
  std::vector<std::vector<PrunedName>> pruned_names_;  // [d]: of open_[d]'s children
  uint64_t sum_ = 0;
  double max_delta_ = 1;
  uint64_t saturated_ = 0;
  std::vector<Frame> out_;
};

/// The title and subtitle of a flame graph drawn with `options`: --title, else "Flame
/// Graph", "Icicle Graph", "Flame Chart", or for pf-diff's input "Differential Flame Graph"
/// with a subtitle naming both profiles and what the colours mean.
void FlameTitles(const FlameOptions& options, bool differential, std::string* title,
                 std::string* subtitle);

/// The tree a flame graph of `profile` draws: its one-value view (OneValueView, kept in
/// *view), reversed or re-rooted as `options` ask (--reverse, --base; kept in *storage).
/// Throws pf::Error saying why when it has nothing to draw (with `report`, what reading
/// found). What BuildFlameGraph lays out and the HTML page (render/html_page.h) embeds.
const StackTree& FlameTree(const StackTree& profile, const FlameOptions& options,
                           StackTree* view, StackTree* storage,
                           const ReadReport* report = nullptr);

/// Lays out a flame graph of `tree` (one or two count columns; with two, a differential
/// graph: width from the second, colour from the change). `frameheight` etc. from options;
/// counts are shown in the tree's unit unless options.countname names one.
/// Throws pf::Error saying why when there is nothing to draw (with `report`, what reading
/// found, when the tree comes from CollapseFilesToTree). `warnings` collects notes.
FlameLayout BuildFlameGraph(const StackTree& tree, const FlameOptions& options,
                            std::vector<std::string>* warnings,
                            const ReadReport* report = nullptr);

/// The same for a flame chart: stacks in input order, given as folded lines (`data`, one
/// or more blocks of folded text); merges only neighbours.
FlameLayout BuildFlameChart(const std::vector<std::string_view>& data, int columns,
                            const FlameOptions& options, std::vector<std::string>* warnings);

/// Streams one folded file whose lines are sorted (as pf-collapse, stackcollapse-*.pl and
/// inferno write them) into the frame merger, releasing its pages as it goes, so memory
/// follows the frames drawn, not the file. A line's own frames that the next line does not
/// share close at once: too narrow, they are never built. Returns false, having drawn nothing, when the
/// lines are not sorted (or hold decimals): the caller folds a stack tree instead.
bool StreamSortedFolded(ByteSource& src, const FlameOptions& options,
                        std::vector<std::string>* warnings, FlameLayout* layout);

/// Draws folded files whose lines come in any order (profile-bpfcc -f, bpftrace, files of
/// many hosts) without a stack tree: their distinct stacks are listed (StackList), sorted
/// frame by frame and streamed into the frame merger, which gives what BuildFlameGraph
/// gives for their tree. Each source must be stable(). Returns false, having drawn nothing,
/// when the inputs hold what the tree's readers have more to say about (decimal counts,
/// malformed lines, sums that saturate, units that disagree, nothing to draw): the caller
/// folds a stack tree instead.
bool DrawFoldedInAnyOrder(std::span<ByteSource* const> sources, const FlameOptions& options,
                          std::vector<std::string>* warnings, FlameLayout* layout);

/// The flow's pruning threshold for a flame graph of `options` (--minwidth over the width).
double FlameThreshold(const FlameOptions& options);
/// The width below which FinishFlame prunes a frame of a flow whose weights sum to `sum`
/// (0: none is pruned).
double FlamePruneWidth(const FlameOptions& options, uint64_t sum);
/// Finishes a flame graph's flow (its stacks added, integer weights of `unit`) at its total
/// (or --total) and lays it out.
FlameLayout FinishFlame(FlowBuilder& flow, bool differential, WeightUnit unit,
                        const FlameOptions& options, std::vector<std::string>* warnings);

/// "before=A after=B" from pf-diff's comment line among `comments`, as "A \u2192 B" (the
/// differential graph's title names both profiles); empty when there is none.
std::string DiffNames(const std::vector<std::string>& comments);

}  // namespace pf
