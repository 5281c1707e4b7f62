// From a stack tree to a flame graph's layout (flame.h). The stacks are merged into frames as
// flamegraph.pl's flow() merges them (FlowBuilder, flow.cpp), visited in sorted order, or in
// the input's order with --flamechart; a single sorted folded file streams into the merger
// line by line (StreamSortedFolded). The layout then gives each frame its box in pixels, its
// colour and its details line, for the SVG and Cairo writers to draw without further decisions.

#include "render/flame.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "base/error.h"
#include "io/input.h"
#include "render/palette.h"
#include "render/text_measure.h"
#include "stacks/folded.h"
#include "stacks/read_report.h"
#include "stacks/stack_filter.h"
#include "stacks/weight.h"

namespace pf {

namespace {

// The name shown for a frame: flamegraph.pl strips one trailing annotation.
std::string_view Display(std::string_view name) {
  if (name.size() >= 4 && name[name.size() - 4] == '_' && name[name.size() - 3] == '[' &&
      name.back() == ']') {
    char k = name[name.size() - 2];
    if (k == 'k' || k == 'w' || k == 'i' || k == 'j') return name.substr(0, name.size() - 4);
  }
  return name;
}

double ThresholdPerTotal(const FlameOptions& o) {
  if (o.minwidth_percent) return o.minwidth / 100;
  double usable = o.width - 20;
  return usable > 0 ? o.minwidth / usable : 0;
}

// What the weights are: their decimals (stacks/weight.h), unit, and the sums of the input
// that saturated before the flow saw them.
struct WeightInfo {
  int decimals = 0;
  WeightUnit unit = WeightUnit::kUnspecified;
  uint64_t saturated = 0;
};

WeightInfo InfoOf(const StackTree& tree) {
  return WeightInfo{tree.decimals(), tree.unit(), tree.saturated()};
}

// flamegraph.pl's margins: left and right, between frames, above the frames (the title, and
// the subtitle when there is one) and below them (the details line).
constexpr double kXpad = 10, kFramepad = 1;
double Ypad1(double fontsize) { return fontsize * 3; }
double Ypad2(double fontsize) { return fontsize * 2 + 10; }
double Ypad3(double fontsize) { return fontsize * 2; }

}  // namespace

void FlameTitles(const FlameOptions& o, bool differential, std::string* title,
                 std::string* subtitle) {
  *subtitle = o.subtitle;
  // Input from pf-diff says which profile is which: the graph then says it too, with what
  // its colours mean. (Other differential input keeps flamegraph.pl's plain title.)
  const bool from_pf_diff = differential && !o.diff_names.empty();
  *title = !o.title.empty()  ? o.title
           : o.flamechart    ? "Flame Chart"
           : o.inverted      ? "Icicle Graph"
           : from_pf_diff    ? "Differential Flame Graph"
                             : "Flame Graph";
  if (from_pf_diff && o.subtitle.empty()) {
    *subtitle = o.diff_names + " \u00b7 widths: after \u00b7 " +
                (o.negate ? "blue: grew, red: shrank" : "red: grew, blue: shrank");
  }
}

namespace {

// The page around the frames: its size, titles and background, and what the counts are.
FlameLayout LayPage(const std::vector<FlowBuilder::Frame>& frames, uint64_t timemax,
                    bool differential, const FlameOptions& o, const WeightInfo& wi) {
  FlameLayout L;
  // The counts are shown as flamegraph.pl shows them ("N samples", rounded), with the
  // profile's unit unless --countname names one; nanoseconds read as times ("12.3 ms").
  const std::string countname = o.countname.empty() ? std::string(UnitName(wi.unit)) : o.countname;
  const double fs = o.fontsize;
  L.width = o.width;
  L.xpad = kXpad;
  L.fontsize = fs;
  L.fonttype = o.fonttype;
  L.countname = countname;
  L.inverted = o.inverted;
  L.differential = differential;
  L.total = timemax;
  FlameTitles(o, differential, &L.title, &L.subtitle);
  if (!BackgroundFor(o.bgcolors, o.palette, &L.bg_top, &L.bg_bottom)) {
    throw UsageError("--bgcolors: unknown colour '" + o.bgcolors +
                     "' (yellow, blue, green, grey or #rrggbb)");
  }
  uint32_t depthmax = 0;
  for (const auto& f : frames) depthmax = std::max(depthmax, f.depth);
  L.height = (depthmax + 1) * o.frameheight + Ypad1(fs) + Ypad2(fs) +
             (L.subtitle.empty() ? 0 : Ypad3(fs));
  return L;
}

// How each frame is drawn: its box, its title (name, count, percentage, and the change in a
// differential graph), its colour, --nameattr's attributes, and its label fitted with the
// font's metrics. Frames are drawn on the page LayPage laid out.
class FrameDrawer {
 public:
  FrameDrawer(const FlameOptions& o, const WeightInfo& wi, double max_abs_delta, FlameLayout* L,
              std::vector<std::string>* warnings)
      : o_(o),
        wi_(wi),
        L_(*L),
        unscale_(1.0 / static_cast<double>(Pow10(wi.decimals))),
        as_time_(o.countname.empty() &&
                 (wi.unit == WeightUnit::kNanoseconds || wi.unit == WeightUnit::kBytes)),
        top_(Ypad1(o.fontsize) + (L->subtitle.empty() ? 0 : Ypad3(o.fontsize))),
        wpt_((o.width - 2 * kXpad) / static_cast<double>(L->total)),
        total_scaled_(static_cast<double>(L->total) * unscale_ * o.factor),
        max_abs_delta_(max_abs_delta),
        colorer_(o.palette, static_cast<ColorMode>(o.color_mode)),
        use_map_(LoadPaletteMap(warnings)),
        nameattr_(o.nameattr_file.empty() ? std::unordered_map<std::string, FrameAttrs>()
                                          : ReadNameAttrs(o.nameattr_file, warnings)),
        measure_(o.fonttype, o.fontsize) {}

  FrameBox Draw(const FlowBuilder::Frame& f) {
    FrameBox b;
    bool root = f.depth == 0;
    std::string_view shown = root ? std::string_view("all") : Display(f.name);
    b.name = std::string(shown);
    b.depth = f.depth;
    b.start = f.start;
    b.count = root ? L_.total : f.width;
    b.delta = f.delta;
    double x1 = kXpad + static_cast<double>(f.start) * wpt_;
    double x2 = kXpad + (static_cast<double>(f.start) + static_cast<double>(b.count)) * wpt_;
    b.x = x1;
    b.w = x2 - x1;
    b.h = o_.frameheight - kFramepad;
    b.y = o_.inverted ? top_ + f.depth * o_.frameheight
                      : L_.height - Ypad2(o_.fontsize) - (f.depth + 1) * o_.frameheight + kFramepad;
    Title(f, &b);
    b.fill = Fill(f);
    // --nameattr, by the name as in the input (annotation included), as flamegraph.pl.
    if (!nameattr_.empty() && !root) {
      auto it = nameattr_.find(std::string(f.name));
      if (it != nameattr_.end()) {
        auto [at, fresh] = attr_index_.emplace(it->first, static_cast<int32_t>(L_.attrs.size()));
        if (fresh) L_.attrs.push_back(it->second);
        b.attrs = at->second;
      }
    }
    // Label fitted with the font's metrics: 3 px of padding each side.
    b.text_width = measure_.Width(b.name);
    double room = b.w - 6;
    if (b.text_width <= room) {
      b.label = b.name;
    } else if (room > 0) {
      size_t n = measure_.FitPrefix(b.name, room, "..");
      if (n > 0) b.label = b.name.substr(0, n) + "..";
    }
    return b;
  }

  /// Keeps the colours chosen (--cp, --palette-file).
  void Finish() {
    if (use_map_) pmap_.Save(o_.palette_file);
  }

 private:
  // Title: flamegraph.pl's "NAME (N samples, P%)" with thousands separators.
  void Title(const FlowBuilder::Frame& f, FrameBox* b) {
    const double count_shown = static_cast<double>(b->count) * unscale_ * o_.factor;
    // (Integers print exactly: a double has 53 bits.)
    std::string samples = wi_.decimals == 0 && o_.factor == 1 ? std::to_string(b->count)
                                                              : Fixed(count_shown, 0);
    std::string samples_txt =
        as_time_ ? HumanWeight(static_cast<uint64_t>(std::min(count_shown, 1.8e19)), 0, wi_.unit)
                 : WithThousands(samples) + " " + L_.countname;
    if (f.depth == 0) {
      b->title = "all (" + samples_txt + ", 100%)";
      L_.total_text = samples_txt;
      return;
    }
    // A part is at most the whole, whatever rounding and saturation did.
    double part = as_time_ ? count_shown : std::strtod(samples.c_str(), nullptr);
    std::string pct = Fixed(std::min(100.0, 100 * part / total_scaled_), 2);
    b->title = b->name + " (" + samples_txt + ", " + pct + "%";
    if (L_.differential) {
      double d = (o_.negate ? -f.delta : f.delta) * unscale_ * o_.factor + 0.0;  // no "-0.00"
      std::string dp = Fixed(100 * d / total_scaled_, 2);
      if (d > 0) dp = "+" + dp;
      b->title += "; " + dp + "%";
    }
    b->title += ")";
  }

  // --cp, --palette-file: the colours chosen before; false without.
  bool LoadPaletteMap(std::vector<std::string>* warnings) {
    if (o_.palette_file.empty()) return false;
    size_t bad = pmap_.Load(o_.palette_file);
    if (bad && warnings) {
      warnings->push_back(o_.palette_file + ": ignored " + std::to_string(bad) +
                          " lines with invalid format");
    }
    return true;
  }

  Rgb Fill(const FlowBuilder::Frame& f) {
    if (f.name == "--") return Rgb{160, 160, 160};
    if (f.name == "-") return Rgb{200, 200, 200};
    if (L_.differential) {
      return ScaleColor(f.delta * unscale_, std::max(1.0, max_abs_delta_ * unscale_), o_.negate);
    }
    if (use_map_) return pmap_.Get(f.name, colorer_.Color(f.name));
    return colorer_.Color(f.name);
  }

  const FlameOptions& o_;
  const WeightInfo& wi_;
  FlameLayout& L_;
  const double unscale_;
  const bool as_time_;  // weights shown scaled, with their unit: times, bytes (HumanWeight)
  const double top_, wpt_, total_scaled_, max_abs_delta_;
  Colorer colorer_;
  PaletteMap pmap_;
  const bool use_map_;
  std::unordered_map<std::string, FrameAttrs> nameattr_;
  std::unordered_map<std::string_view, int32_t> attr_index_;  // name -> index in L.attrs
  TextMeasurer measure_;
};

FlameLayout Lay(FlowBuilder& flow, uint64_t timemax, bool differential, const FlameOptions& o,
                const WeightInfo& wi, std::vector<std::string>* warnings) {
  if (warnings && (wi.saturated || flow.saturated())) {
    warnings->push_back(SaturationWarning(wi.saturated + flow.saturated()));
  }
  const auto& frames = flow.frames();
  FlameLayout L = LayPage(frames, timemax, differential, o, wi);
  FrameDrawer draw(o, wi, flow.max_abs_delta(), &L, warnings);
  L.frames.reserve(frames.size());
  for (const auto& f : frames) L.frames.push_back(draw.Draw(f));
  draw.Finish();
  return L;
}

// Nothing to draw: say why (collapse.h's EmptyResultReason, shared by every tool).
// `parsed`: stacks read when no collapse report is at hand (folded text read here).
Error NothingToDraw(const ReadReport* report, uint64_t parsed) {
  ReadReport r;
  if (report) {
    r = *report;
  } else {
    r.inputs = 1;
    r.folded_lines = r.stacks_read = parsed;
  }
  r.empty = true;
  return Error(EmptyResultReason(r, ""));
}

// A differential profile whose AFTER counts are all 0 has nothing to draw either.
Error AfterAllZero() {
  return Error("every AFTER count of the differential profile is 0, and the widths come from "
               "AFTER (swap the profiles to draw what was there before)");
}

uint64_t TimeMax(uint64_t sum, const FlameOptions& o, int decimals,
                 std::vector<std::string>* warnings) {
  if (o.total) {
    uint64_t total = MulSat(o.total, Pow10(decimals));  // --total is in the input's units
    if (total >= sum) return total;
    if (warnings && static_cast<double>(total) / static_cast<double>(sum) > 0.02) {
      warnings->push_back("--total " + std::to_string(o.total) + " is less than the actual total " +
                          FormatWeight(sum, decimals) + ", so ignored");
    }
  }
  return sum;
}

// Reverse or re-root stacks when asked; otherwise the tree as it is.
//
// --base re-roots each stack at its innermost base frame (the one nearest the leaf), as
// inferno does: a base is usually a runtime's dispatch point (a task's poll, a thread pool's
// job, a query), which nests when one job waits on another, and the graph is meant to show
// the jobs, not the runtime between them. (inferno never takes the leaf as the base, as it
// compares the base with the line's last field, count included: a stack whose leaf is the
// base goes to the next base out, or is dropped; we keep it as time in the base.)
const StackTree& Transformed(const StackTree& in, const FlameOptions& o, StackTree* storage) {
  if (!o.reverse && o.base.empty()) return in;
  StackTree based;
  if (!o.base.empty()) based = CutAtInnermost(in, o.base, false, true);
  const StackTree& from = o.base.empty() ? in : based;
  if (!o.reverse) {
    *storage = std::move(based);
    return *storage;
  }
  *storage = from.EmptyLike();
  std::vector<StrId> frames;
  from.ForEachStack([&](NodeId n, std::span<const NodeId> path) {
    frames.clear();  // leaf first
    for (size_t i = path.size(); i-- > 0;) {
      frames.push_back(storage->names().Intern(from.name(path[i])));
    }
    NodeId leaf = storage->AddStack(frames, 0);
    for (int c = 0; c < from.columns(); ++c) storage->AddSelf(leaf, from.self(n, c), c);
  });
  return *storage;
}

// Whether any stack of `tree` weighs something in `column` (Total would count a saturated
// sum once more).
bool HasWeight(const StackTree& tree, int column) {
  for (NodeId n; n.index() < tree.size(); ++n) {
    if (tree.self(n, column)) return true;
  }
  return false;
}

}  // namespace

double FlameThreshold(const FlameOptions& o) { return ThresholdPerTotal(o); }

double FlamePruneWidth(const FlameOptions& o, uint64_t sum) {
  // As FinishFlame: its total, the threshold of Finish's last pruning.
  return ThresholdPerTotal(o) * static_cast<double>(TimeMax(sum, o, 0, nullptr));
}

FlameLayout FinishFlame(FlowBuilder& flow, bool differential, WeightUnit unit,
                        const FlameOptions& o, std::vector<std::string>* warnings) {
  uint64_t timemax = TimeMax(flow.weight_sum(), o, 0, warnings);
  flow.Finish(timemax);
  return Lay(flow, timemax, differential, o, WeightInfo{0, unit, 0}, warnings);
}

const StackTree& FlameTree(const StackTree& profile, const FlameOptions& o, StackTree* view,
                           StackTree* storage, const ReadReport* report) {
  // A profile of several values per stack is drawn by its default one (OneValue).
  const StackTree& input = OneValueView(profile, view);
  const StackTree& tree = Transformed(input, o, storage);
  const bool diff = tree.differential();
  const int wcol = diff ? 1 : 0;  // width from AFTER
  if (HasWeight(tree, wcol)) return tree;
  if (diff && HasWeight(tree, 0)) throw AfterAllZero();
  ReadReport r = report ? *report : ReadReport{};
  if (!r.empty) NoteEmptyResult(input, &r);  // (the collapse noted what its filters had)
  if (!report) r.folded_lines = r.stacks_read;  // a tree from elsewhere: its stacks
  if (!HasWeight(input, wcol) || o.base.empty()) throw NothingToDraw(&r, 0);
  // --base left nothing
  std::string bases;
  for (const std::string& b : o.base) bases += (bases.empty() ? "--base=" : ", --base=") + b;
  throw Error(EmptyResultReason(r, bases));
}

FlameLayout BuildFlameGraph(const StackTree& profile, const FlameOptions& o,
                            std::vector<std::string>* warnings, const ReadReport* report) {
  StackTree view, storage;
  const StackTree& tree = FlameTree(profile, o, &view, &storage, report);
  const bool diff = tree.differential();
  const int wcol = diff ? 1 : 0;  // width from AFTER
  uint64_t sum = tree.Total(wcol);
  uint64_t timemax = TimeMax(sum, o, tree.decimals(), warnings);

  // Visit the stacks depth first with children sorted by name: frame-by-frame order.
  FlowBuilder flow(ThresholdPerTotal(o), false);
  StackTree::Children ch = tree.SortedChildren();
  std::vector<std::string_view> path;
  struct Item {
    NodeId node;
    uint32_t depth;
  };
  std::vector<Item> todo;
  const size_t root = StackTree::kRoot.index();
  for (uint32_t i = ch.first[root + 1]; i-- > ch.first[root];) {
    todo.push_back({ch.child_index[i], 0});
  }
  while (!todo.empty()) {
    Item it = todo.back();
    todo.pop_back();
    path.resize(it.depth);
    path.push_back(tree.name(it.node));
    uint64_t w = tree.self(it.node, wcol);
    double d = diff ? static_cast<double>(tree.self(it.node, 1)) -
                          static_cast<double>(tree.self(it.node, 0))
                    : 0;
    if (w || d) flow.Add(path, w, d);
    for (uint32_t i = ch.first[it.node.index() + 1]; i-- > ch.first[it.node.index()];) {
      todo.push_back({ch.child_index[i], it.depth + 1});
    }
  }
  flow.Finish(timemax);
  return Lay(flow, timemax, diff, o, InfoOf(tree), warnings);
}

FlameLayout BuildFlameChart(const std::vector<std::string_view>& data, int columns,
                            const FlameOptions& o, std::vector<std::string>* warnings) {
  FlowBuilder flow(ThresholdPerTotal(o), true);
  std::vector<std::string_view> frames;
  // Decimal counts: the most digits after the point any line has sets the fixed point.
  // The unit: the one the inputs' `# pf-unit:` lines name.
  WeightInfo wi;
  FoldedUnit unit;
  for (std::string_view block : data) {
    FoldedLines lines(block, columns);
    while (lines.Next()) {
      if (lines.kind() == FoldedLines::kStack) {
        wi.decimals = std::max(wi.decimals, lines.folded().decimals());
      } else if (lines.kind() == FoldedLines::kPfComment) {
        unit.Take(lines.line(), "", lines.line_number());
      }
    }
  }
  wi.unit = unit.unit();
  if (!unit.warning().empty() && warnings) warnings->push_back(unit.warning());
  uint64_t parsed = 0;
  for (std::string_view block : data) {
    FoldedLines lines(block, columns);
    while (lines.Next()) {
      if (lines.kind() != FoldedLines::kStack) continue;
      const FoldedLine& fl = lines.folded();
      frames.clear();
      ForEachFrame(fl.stack, [&](std::string_view f) { frames.push_back(f); });
      uint64_t w = fl.Scaled(fl.ncounts - 1, wi.decimals);
      double d = fl.ncounts == 2 ? static_cast<double>(w) -
                                       static_cast<double>(fl.Scaled(0, wi.decimals))
                                 : 0;
      if (fl.Saturates(wi.decimals)) flow.NoteSaturated();
      flow.Add(frames, w, d);
      ++parsed;
    }
  }
  if (flow.weight_sum() == 0) throw NothingToDraw(nullptr, parsed);
  uint64_t timemax = TimeMax(flow.weight_sum(), o, wi.decimals, warnings);
  flow.Finish(timemax);
  return Lay(flow, timemax, columns == 2, o, wi, warnings);
}

namespace {

// The length of the common prefix of `a` and `b`, eight bytes at a time.
size_t Mismatch(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return i + static_cast<size_t>(__builtin_ctzll(x ^ y) / 8);
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Splits the lines of a sorted folded file into frames: those each shares with the line
// before, and its own. The bytes shared with the line before prove the order, and the frames
// they hold completely need neither splitting nor comparing again.
class SortedSplitter {
 public:
  // False when `cur` sorts before the line before (or is a prefix of it, after it).
  bool Next(std::string_view cur, size_t* shared, std::vector<std::string_view>* frames) {
    const size_t m = Mismatch(prev_, cur);
    if (m < cur.size() && m < prev_.size() &&
        static_cast<unsigned char>(cur[m]) < static_cast<unsigned char>(prev_[m])) {
      return false;
    }
    if (m == cur.size() && m < prev_.size()) return false;  // a prefix after its extension
    size_t n = 0;
    while (n < prev_ends_.size() &&
           (prev_ends_[n] < m ||
            (prev_ends_[n] == prev_.size() && m == prev_.size() && m < cur.size() &&
             cur[m] == ';') ||
            (m == cur.size() && m == prev_.size()))) {
      ++n;
    }
    ends_.assign(prev_ends_.begin(), prev_ends_.begin() + static_cast<ptrdiff_t>(n));
    frames->clear();
    const size_t from = n == 0 ? 0 : ends_.back() + 1;
    if (from <= cur.size() && !(n > 0 && ends_.back() == cur.size())) {
      for (size_t at = from;;) {
        const size_t semi = cur.find(';', at);
        if (semi == std::string_view::npos) {
          frames->push_back(cur.substr(at));
          ends_.push_back(cur.size());
          break;
        }
        frames->push_back(cur.substr(at, semi - at));
        ends_.push_back(semi);
        at = semi + 1;
      }
    }
    prev_ = cur;
    prev_ends_.swap(ends_);
    *shared = n;
    return true;
  }

 private:
  std::string_view prev_;
  std::vector<size_t> ends_, prev_ends_;  // where each frame of the line ends (';' or the end)
};

// The last line read, not yet given to the flow: whether the frames it opened are made
// at all depends on the next line (FlushPending).
struct PendingLine {
  size_t shared = 0;                     // frames shared with the line before
  std::vector<std::string_view> frames;  // the frames after them
  uint64_t weight = 0;
  double delta = 0;
  bool any = false;
};

// Gives the flow the pending line, of whose frames the next line shares `next_shared`; the
// next line's first frame after those is `next_first` (null: there is no next line). The
// line's frames that the next one does not share close at once with the line's weight as
// their width. When that is narrower than what the flow prunes at its sum so far (the
// final threshold is higher still), they are never made: their width is a gap
// (AddPruned), as pruning leaves it. Not when the next line's frame extends the first of
// them, its sibling ("foo" then "foo.cold"): a later line may reopen it ("foo;bar").
void FlushPending(FlowBuilder& flow, const FlameOptions& o, const PendingLine& p,
                  size_t next_shared, const std::string_view* next_first) {
  const size_t depth = p.shared + p.frames.size();
  const size_t kept = std::max(next_shared, p.shared);  // frames made (shared ones, at least)
  bool gap = kept < depth &&
             static_cast<double>(p.weight) < FlamePruneWidth(o, flow.weight_sum());
  if (gap && next_first && kept == next_shared) {
    std::string_view first = p.frames[kept - p.shared];
    gap = !next_first->starts_with(first);
  }
  if (!gap) {
    flow.AddAfter(p.shared, p.frames, p.weight, p.delta);
    return;
  }
  std::span<const std::string_view> frames(p.frames);
  flow.AddAfter(p.shared, frames.first(kept - p.shared), 0, 0);
  if (!flow.AddPruned(p.weight, p.delta, &frames[kept - p.shared])) {
    flow.AddAfter(kept, frames.subspan(kept - p.shared), p.weight, p.delta);  // reopened
  }
}

}  // namespace

std::string DiffNames(const std::vector<std::string>& comments) {
  for (const std::string& c : comments) {
    std::string_view v = c;
    if (!v.starts_with(kPfDiffComment)) continue;
    v.remove_prefix(kPfDiffComment.size());
    size_t a = v.find(" after=");
    if (v.substr(0, 7) != "before=" || a == std::string_view::npos) continue;
    return std::string(v.substr(7, a - 7)) + " \u2192 " + std::string(v.substr(a + 7));
  }
  return "";
}

bool StreamSortedFolded(ByteSource& src, const FlameOptions& options,
                  std::vector<std::string>* warnings, FlameLayout* layout) {
  FlameOptions o = options;
  std::vector<std::string> comment_lines;
  std::string_view data = src.Next();
  int columns = FoldedColumns(data);
  if (columns == 0) return false;
  FlowBuilder flow(ThresholdPerTotal(o), false);
  const bool prunes = ThresholdPerTotal(o) > 0;
  FoldedLines lines(data, columns);
  SortedSplitter split;
  std::vector<std::string_view> frames;
  PendingLine pending;
  SkipCount bad;
  uint64_t parsed = 0;
  bool before_any = false;  // a differential profile with BEFORE counts
  const char* released = data.data();
  constexpr size_t kReleaseEvery = 8 << 20;
  FoldedUnit unit;
  while (lines.Next()) {
    if (lines.kind() == FoldedLines::kPfComment) {
      if (unit.Take(lines.line(), src.name(), lines.line_number())) {
        if (!unit.warning().empty()) return false;  // the tree path warns
      } else if (comment_lines.size() < 16) {
        comment_lines.emplace_back(lines.line());
      }
      continue;
    }
    if (lines.kind() == FoldedLines::kMalformed) {
      bad.Add(src.name(), lines.line_number());
      continue;
    }
    const FoldedLine& fl = lines.folded();
    if (fl.fractional) return false;  // decimal counts: the tree keeps them exact
    // With --minwidth 0 a stack of no weight would leave empty frames, which the tree
    // does not hold.
    if (!prunes && fl.counts[fl.ncounts - 1] == 0 &&
        (fl.ncounts == 1 || fl.counts[0] == 0)) {
      return false;
    }
    size_t shared;
    if (!split.Next(fl.stack, &shared, &frames)) return false;  // not sorted: a tree instead
    const uint64_t w = fl.counts[fl.ncounts - 1];
    const double d = fl.ncounts == 2
                         ? static_cast<double>(fl.counts[1]) - static_cast<double>(fl.counts[0])
                         : 0;
    if (fl.too_large) flow.NoteSaturated();
    if (pending.any && frames.empty()) {
      // The same stack again: one stack, as in the tree (a differential's colours are
      // scaled by the largest change of a stack).
      if (__builtin_add_overflow(pending.weight, w, &pending.weight)) return false;
      pending.delta += d;
    } else {
      if (pending.any) FlushPending(flow, o, pending, shared, &frames[0]);
      pending.shared = shared;
      pending.frames.swap(frames);
      pending.weight = w;
      pending.delta = d;
      pending.any = true;
    }
    ++parsed;
    before_any |= fl.ncounts == 2 && fl.counts[0] != 0;
    const char* line = fl.stack.data();
    if (src.releasable() && line - released > static_cast<ptrdiff_t>(kReleaseEvery)) {
      ReleaseInput(std::string_view(released, line - released));
      released = line;
    }
  }
  if (pending.any) FlushPending(flow, o, pending, 0, nullptr);
  if (bad.count && warnings) {
    warnings->push_back(std::to_string(bad.count) + (bad.count == 1 ? " line" : " lines") +
                        " skipped (not `stack count`), first at " +
                        Where(bad.first_file, bad.first_line));
  }
  if (flow.weight_sum() == 0) throw before_any ? AfterAllZero() : NothingToDraw(nullptr, parsed);
  o.diff_names = DiffNames(comment_lines);
  *layout = FinishFlame(flow, columns == 2, unit.unit(), o, warnings);
  return true;
}

}  // namespace pf
