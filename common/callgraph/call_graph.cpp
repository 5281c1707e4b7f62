// pf-dot's call graph: exact totals from the stack tree, pprof-style pruning with residual
// edges, and a deterministic gprof2dot-style DOT writer.
//
// Each weighted tree node stands for one distinct stack. Its root-first path is rebuilt by
// walking parents, filtered (ignore, focus, show-from, hide; regex results are cached per
// interned frame name, so a pattern runs once per distinct name), and then reduced to the
// distinct functions and distinct (caller, callee) pairs by sorting two small vectors; the
// stack's weight is added once to each. That is what makes recursion safe: `a;b;b;b 10`
// gives b a total of 10, not 30, and the self-edge b->b 10.
//
// Pruning keeps the nodes allowed by --root/--leaf (breadth-first within --depth over the
// unpruned edges), above the node threshold, and then the --nodecount largest. A second walk
// over the stacks links each kept frame to the next kept frame below it; a link that skipped
// removed frames in every sample is "residual" and drawn dotted, so removing a node never
// splits the graph (pprof does the same; gprof2dot lets the graph fall apart).
//
// Colours follow gprof2dot's themes: a weight w in [0,1] picks a point between two HSL
// colours (optionally skewed as (skew^w - 1)/(skew - 1)), converted with the CSS3 HSL
// algorithm and raised to the theme's gamma; font sizes and pen widths grow with w.

#include "callgraph/call_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include "base/error.h"
#include "base/flat_map.h"
#include "base/intern.h"
#include "base/utf8.h"
#include "callgraph/graph_select.h"
#include "callgraph/names.h"
#include "callgraph/path_walker.h"
#include "stacks/stack_filter.h"
#include "stacks/stack_list.h"  // ForEachFoldedLine

namespace pf {
namespace {

using graph_select::PairKey;

// A PairKey's hash for FlatMap, whose slot is the hash's low bits: mixed (the murmur3
// finaliser), as a pair's low half, the callee, is shared by all its callers.
struct MixHash {
  size_t operator()(uint64_t x) const {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return static_cast<size_t>(x);
  }
};

struct Theme {
  double min_h, min_s, min_l, max_h, max_s, max_l, gamma;
  double min_font, max_font, min_pen, max_pen;
  bool filled;
};

const Theme& FindTheme(const std::string& name) {
  static const Theme kColor{2.0 / 3, 0.80, 0.25, 0.0, 1.0, 0.5, 1.0, 10, 10, 0.5, 4.0, true};
  static const Theme kPink{0.0, 1.0, 0.9, 0.0, 1.0, 0.5, 2.2, 10, 10, 0.5, 4.0, true};
  static const Theme kGray{0.0, 0.0, 0.85, 0.0, 0.0, 0.0, 2.2, 10, 10, 0.5, 4.0, true};
  static const Theme kBw{0, 0, 0, 0, 0, 0, 2.2, 8, 24, 0.1, 8.0, true};
  static const Theme kPrint{0, 0, 0, 0, 0, 0, 2.2, 18, 30, 0.1, 8.0, false};
  if (name == "color" || name == "colour") return kColor;
  if (name == "pink") return kPink;
  if (name == "gray" || name == "grey") return kGray;
  if (name == "bw") return kBw;
  if (name == "print") return kPrint;
  throw UsageError("--colormap must be color, pink, gray, bw or print, not '" + name + "'");
}

double HueToRgb(double m1, double m2, double h) {
  if (h < 0) h += 1;
  if (h > 1) h -= 1;
  if (h * 6 < 1) return m1 + (m2 - m1) * h * 6;
  if (h * 2 < 1) return m2;
  if (h * 3 < 2) return m1 + (m2 - m1) * (2.0 / 3 - h) * 6;
  return m1;
}

/// The colour at weight w of a theme, as r, g, b in [0,1].
void ThemeRgb(const Theme& t, double w, double skew, double rgb[3]) {
  w = std::clamp(std::isfinite(w) ? w : 0.0, 0.0, 1.0);
  double pos = (skew == 1.0) ? w : (std::pow(skew, w) - 1) / (skew - 1);
  double h = t.min_h + (t.max_h - t.min_h) * pos;
  double s = t.min_s + (t.max_s - t.min_s) * pos;
  double l = t.min_l + (t.max_l - t.min_l) * pos;
  double m2 = l <= 0.5 ? l * (s + 1) : l + s - l * s;
  double m1 = 2 * l - m2;
  rgb[0] = HueToRgb(m1, m2, h + 1.0 / 3);
  rgb[1] = HueToRgb(m1, m2, h);
  rgb[2] = HueToRgb(m1, m2, h - 1.0 / 3);
  for (int i = 0; i < 3; ++i) rgb[i] = std::pow(std::clamp(rgb[i], 0.0, 1.0), t.gamma);
}

std::string RgbHex(const double rgb[3]) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(rgb[0] * 255)),
                static_cast<int>(std::lround(rgb[1] * 255)),
                static_cast<int>(std::lround(rgb[2] * 255)));
  return buf;
}

// A part of the whole: never above 100%.
std::string Percent(uint64_t part, uint64_t total) {
  double p = total ? 100.0 * static_cast<double>(part) / static_cast<double>(total) : 0.0;
  return Fixed(std::min(p, 100.0), 2) + "%";
}

/// At most `max` bytes of `s`, cut at a character boundary, with "..." when cut.
std::string Truncate(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) >> 6) == 2) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

/// Breaks `s` into lines of about `width` characters, after "::", spaces or commas when it can.
std::string Wrap(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  std::string out;
  size_t line_start = 0;
  while (s.size() - line_start > width) {
    size_t brk = std::string::npos;
    for (size_t i = line_start + 1; i <= line_start + width && i < s.size(); ++i) {
      char p = s[i - 1];
      if (p == ' ' || p == ',' || (p == ':' && i >= 2 && s[i - 2] == ':')) brk = i;
    }
    if (brk == std::string::npos || brk - line_start < width / 3) {
      brk = line_start + width;
      while (brk > line_start + 1 && (static_cast<unsigned char>(s[brk]) >> 6) == 2) --brk;
    }
    out.append(s, line_start, brk - line_start);
    out += '\n';
    line_start = brk;
  }
  out.append(s, line_start, std::string::npos);
  return out;
}

/// The name a node's box shows, before elision: stripped with --strip, and an unresolved frame
/// "[libx.so <7f00aa>]" as gprof2dot's "7f00aa" (under the module line "libx.so").
std::string ShownName(const CallGraph::Node& n, const CallGraphOptions& o) {
  std::string name = o.strip ? StripFunctionName(n.name) : n.name;
  std::string_view v = n.name;
  std::string_view m = n.module == "[unknown]" ? std::string_view("unknown") : n.module;
  if (!m.empty() && v.size() > m.size() + 4 && v[0] == '[' && v.substr(1, m.size()) == m &&
      v.substr(1 + m.size(), 2) == " <" && v.substr(v.size() - 2) == ">]") {
    name = std::string(v.substr(m.size() + 3, v.size() - m.size() - 5));
  }
  return name;
}

/// A call count on a line of its own, as gprof2dot labels callgrind's nodes and edges:
/// "12×" (nothing when the input does not count calls).
void AppendCalls(uint64_t calls, std::string* label) {
  if (calls) label->append("\n").append(std::to_string(calls)).append("\u00d7");
}

/// A node's label; `name` is its shown name, elided and distinct (DistinctLabels).
std::string NodeLabel(const CallGraph& g, const CallGraph::Node& n, const CallGraphOptions& o,
                      std::string name) {
  if (o.wrap) name = Wrap(name, 32);
  // gprof2dot's first line: the module the function came from (perf input).
  std::string label = n.module.empty() ? name : Truncate(n.module, o.max_label) + "\n" + name;
  static const std::vector<std::string> kDefault = {"total-time-percentage",
                                                    "self-time-percentage"};
  for (const std::string& m : o.node_labels.empty() ? kDefault : o.node_labels) {
    // (append, not "\n" + ...: g++ 12 warns falsely of an overlapping memcpy, GCC PR105329)
    if (m == "total-time-percentage") label.append("\n").append(Percent(n.total, g.total));
    if (m == "self-time-percentage") label.append("\n(").append(Percent(n.self, g.total)) += ')';
    if (m == "total-time") label.append("\n").append(FormatWeight(n.total, g.decimals));
    if (m == "self-time") label.append("\n(").append(FormatWeight(n.self, g.decimals)) += ')';
  }
  if (o.show_samples) {
    label.append("\n").append(FormatWeight(n.total, g.decimals)).append(" (");
    label.append(FormatWeight(n.self, g.decimals)) += ')';
  }
  AppendCalls(n.calls, &label);
  return label;
}

}  // namespace

std::string StripFunctionName(std::string_view name) {
  static constexpr std::string_view kAnon = "(anonymous namespace)";
  static constexpr std::string_view kOperator = "operator";
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (depth == 0 && out.size() >= kOperator.size() &&
        std::string_view(out).substr(out.size() - kOperator.size()) == kOperator) {
      // operator<, operator<<=, operator(), operator[], operator-> keep their symbol.
      if (c == '(' && i + 1 < name.size() && name[i + 1] == ')') {
        out += "()";
        ++i;
        continue;
      }
      if (std::string_view("<>=!+-*/%^&|~,[]").find(c) != std::string_view::npos) {
        while (i < name.size() &&
               std::string_view("<>=!+-*/%^&|~,[]").find(name[i]) != std::string_view::npos) {
          out += name[i++];
        }
        --i;
        continue;
      }
    }
    if (depth == 0 && name.substr(i, kAnon.size()) == kAnon) {
      out += kAnon;
      i += kAnon.size() - 1;
      continue;
    }
    if (depth == 0 && c == '{') {  // "{lambda(int)#1}", "{unnamed type#1}": kept whole
      size_t close = name.find('}', i);
      if (close == std::string_view::npos) close = name.size() - 1;
      out.append(name.substr(i, close - i + 1));
      i = close;
      continue;
    }
    if (c == '(' || c == '<') {
      ++depth;
    } else if ((c == ')' || c == '>') && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() >= 6 && out.compare(out.size() - 6, 6, " const") == 0) out.resize(out.size() - 6);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? std::string(name) : out;
}

std::string DotQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    // Graphviz checks only the structure of UTF-8 (lead and continuation bytes).
    size_t n = DecodeUtf8(s, i, Utf8Check::kStructure).len;
    if (n == 1 && c >= 0x80) {
      out += '?';
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.substr(i, n));
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += static_cast<char>(c);
    }
    i += n;
  }
  out += '"';
  return out;
}

std::string CallGraphColor(const std::string& colormap, double w, double skew) {
  double rgb[3];
  ThemeRgb(FindTheme(colormap), w, skew, rgb);
  return RgbHex(rgb);
}

namespace {

// The function of frame name `frame` in `fs`, numbered when first met.
uint32_t FunctionOf(const StackTree& tree, uint32_t frame, CallCounts* fs) {
  if (fs->func_of[frame] < 0) {
    fs->func_of[frame] = static_cast<int32_t>(fs->names.size());
    fs->names.push_back(tree.names().Name(StrId{frame}));
    fs->name_ids.push_back(frame);
    fs->totals.push_back(0);
    fs->selfs.push_back(0);
  }
  return static_cast<uint32_t>(fs->func_of[frame]);
}

// Sorts (key, weight) pairs by key, stably: a radix sort, a byte of the key a pass from the
// lowest, that skips the bytes all keys share. The keys are PairKeys of two function
// indexes, so most of their bytes are zero: 100k pairs of 40k functions take 4 passes, a
// third of std::sort's time.
void SortByKey(std::vector<std::pair<uint64_t, uint64_t>>* pairs) {
  std::vector<std::pair<uint64_t, uint64_t>>& v = *pairs;
  if (v.size() < 1024) {
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    return;
  }
  std::vector<std::array<uint32_t, 256>> counts(8);
  for (const auto& p : v) {
    for (int d = 0; d < 8; ++d) ++counts[d][(p.first >> (8 * d)) & 255];
  }
  std::vector<std::pair<uint64_t, uint64_t>> out(v.size());
  for (int d = 0; d < 8; ++d) {
    std::array<uint32_t, 256>& c = counts[d];
    if (c[(v[0].first >> (8 * d)) & 255] == v.size()) continue;  // every key has this byte
    uint32_t at = 0;
    for (uint32_t& n : c) at += std::exchange(n, at);
    for (const auto& p : v) out[c[(p.first >> (8 * d)) & 255]++] = p;
    v.swap(out);
  }
}

// Sorts (key, weight) pairs and sums the weights of each key into one pair.
void SumByKey(std::vector<std::pair<uint64_t, uint64_t>>* pairs) {
  std::vector<std::pair<uint64_t, uint64_t>>& v = *pairs;
  SortByKey(&v);
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (out > 0 && v[out - 1].first == v[i].first) {
      v[out - 1].second = AddSat(v[out - 1].second, v[i].second);
    } else {
      v[out++] = v[i];
    }
  }
  v.resize(out);
}

// Pass 1 without filters, in one walk down the tree rather than one walk up from each stack:
// a function's total is the weight under the nodes where it first appears on the path from
// the root, a pair's the weight under the nodes where it first appears (the same sums as
// counting each stack's distinct functions and pairs once, in one visit of each node). Only
// the subtrees that hold weight are walked, so the functions and pairs met are those of the
// weighted stacks.
CallCounts CountFunctionsDown(const StackTree& tree, const CallGraphOptions& o, CallGraph* graph,
                              int column) {
  CallGraph& g = *graph;
  CallCounts fs;
  fs.func_of.assign(tree.names().size(), -1);
  const size_t n = tree.size();
  // Each node's weight, then its subtree's (children have larger ids than their parents).
  // A sample of the process alone (skip_process) has no call chain: left out, as gprof2dot.
  std::vector<uint64_t> under(n, 0);
  for (NodeId m{1}; m.index() < n; ++m) {
    uint64_t w = tree.self(m, column);
    if (w == 0 || (o.skip_process && tree.parent(m) == StackTree::kRoot)) continue;
    under[m.index()] = w;
    if (__builtin_add_overflow(g.total, w, &g.total)) {
      g.total = UINT64_MAX;
      ++g.saturated;
    }
  }
  g.kept_weight = g.total;
  for (size_t m = n; m-- > 1;) {
    size_t p = tree.parent(NodeId(static_cast<uint32_t>(m))).index();
    under[p] = AddSat(under[p], under[m]);
  }
  // Children lists, then a depth-first walk that counts each function and pair on the path.
  std::vector<uint32_t> first_child(n, 0), next_sibling(n, 0);
  for (size_t m = n; m-- > 1;) {
    if (under[m] == 0) continue;
    size_t p = tree.parent(NodeId(static_cast<uint32_t>(m))).index();
    next_sibling[m] = first_child[p];
    first_child[p] = static_cast<uint32_t>(m);
  }
  std::vector<uint32_t> on_path;   // by function: how often it is on the path
  std::vector<int32_t> path;       // the functions on the path (-1: the process left out)
  std::vector<uint32_t> visiting;  // the nodes on the path
  // (pair, weight) where a pair first appears on its path, summed by pair at the end (a
  // sort runs through memory in order; a hash map of the pairs would miss the cache).
  // Summed whenever it doubles past what summing left, so it holds at most about twice the
  // distinct pairs (a tree of millions of unshared paths has a pair a node).
  std::vector<std::pair<uint64_t, uint64_t>> firsts;
  size_t sum_at = 1 << 20;
  auto enter = [&](uint32_t m) {
    const int32_t caller = path.empty() ? -1 : path.back();
    int32_t func = -1;
    if (!(o.skip_process && tree.parent(NodeId(m)) == StackTree::kRoot)) {
      const uint32_t f = FunctionOf(tree, tree.frame(NodeId(m)).value, &fs);
      if (f >= on_path.size()) on_path.resize(fs.names.size(), 0);
      const bool recursive = on_path[f]++ > 0;
      if (!recursive) fs.totals[f] = AddSat(fs.totals[f], under[m]);
      const uint64_t w = tree.self(NodeId(m), column);
      if (w) fs.selfs[f] = AddSat(fs.selfs[f], w);
      if (caller >= 0) {
        // The pair can be on the path already only if f is (recursion): look up the path.
        bool seen = false;
        for (size_t i = 1; recursive && !seen && i < path.size(); ++i) {
          seen = path[i] == static_cast<int32_t>(f) && path[i - 1] == caller;
        }
        if (!seen) firsts.emplace_back(PairKey(static_cast<uint32_t>(caller), f), under[m]);
        if (firsts.size() >= sum_at) {
          SumByKey(&firsts);
          sum_at = std::max<size_t>(sum_at, 2 * firsts.size());
        }
      }
      func = static_cast<int32_t>(f);
    }
    path.push_back(func);
    visiting.push_back(m);
  };
  for (uint32_t c = first_child[0]; c; c = next_sibling[c]) {
    enter(c);
    while (!visiting.empty()) {
      // Descend to the next unvisited child of the node on top, or leave it.
      uint32_t& next = first_child[visiting.back()];  // consumed as the walk goes
      if (next) {
        uint32_t child = next;
        next = next_sibling[child];
        enter(child);
        continue;
      }
      if (path.back() >= 0) --on_path[static_cast<uint32_t>(path.back())];
      path.pop_back();
      visiting.pop_back();
    }
  }
  SumByKey(&firsts);
  fs.direct = std::move(firsts);
  g.saturated += tree.saturated();
  g.decimals = tree.decimals();
  g.unit = tree.unit();
  g.all_nodes = fs.names.size();
  g.all_edges = fs.direct.size();
  fs.total = g.total;
  return fs;
}

// The weighted stacks the passes walk: a tree's weighted nodes, or the lines of folded
// text, read again for each pass (no tree, no list of stacks: pf-dot's folded files).
class Stacks {
 public:
  Stacks(const StackTree& tree, int column) : tree_(&tree), column_(column) {}
  Stacks(std::span<const std::string_view> texts, const Interner& names, WeightUnit unit,
         bool release)
      : texts_(texts), names_(&names), unit_(unit), release_(release) {}
  const StackTree* tree() const { return tree_; }
  int column() const { return column_; }
  const Interner& names() const { return tree_ ? tree_->names() : *names_; }
  uint64_t saturated() const { return tree_ ? tree_->saturated() : 0; }
  int decimals() const { return tree_ ? tree_->decimals() : 0; }
  WeightUnit unit() const { return tree_ ? tree_->unit() : unit_; }

  /// Calls f(weight, path) for each stack of weight: `path` its frames as walker.Path
  /// gives them, or null when the walker drops the stack. With skip_process, a stack of the
  /// process alone has no call chain and is left out, as gprof2dot leaves it.
  template <typename F>
  void Walk(PathWalker& walker, bool skip_process, F&& f) const {
    std::vector<uint32_t> path;
    if (tree_) {
      for (NodeId n{1}; n.index() < tree_->size(); ++n) {
        const uint64_t w = tree_->self(n, column_);
        if (w == 0 || (skip_process && tree_->parent(n) == StackTree::kRoot)) continue;
        f(w, walker.Path(n, &path) ? &path : nullptr);
      }
      return;
    }
    // Folded text, read again (as it was read before: every name is in names_).
    std::vector<StrId> frames;
    for (std::string_view data : texts_) {
      FoldedUnit unit;
      uint64_t lines = 0;
      const bool read = ForEachFoldedLine(data, 1, release_, &unit, nullptr, &lines,
                                          [&](const FoldedLine& fl) {
        const uint64_t w = fl.counts[0];
        if (w == 0) return;
        frames.clear();
        ForEachFrame(fl.stack, [&](std::string_view name) {
          StrId id;
          if (!names_->Find(name, &id)) throw Error("a folded input changed while being read");
          frames.push_back(id);
        });
        if (skip_process && frames.size() <= 1) return;
        f(w, walker.Path(frames, &path) ? &path : nullptr);
      });
      if (!read) throw Error("a folded input changed while being read");
    }
  }

 private:
  const StackTree* tree_ = nullptr;
  std::span<const std::string_view> texts_;
  const Interner* names_ = nullptr;
  int column_ = 0;
  WeightUnit unit_ = WeightUnit::kUnspecified;
  bool release_ = false;
};

// Pass 1: exact totals, self weights and direct edges (and the graph's total and counts).
CallCounts CountFunctions(const Stacks& stacks, const CallGraphOptions& o, PathWalker& walker,
                          CallGraph* graph) {
  // The walk down holds 16 bytes a node and a pair a node: past a million nodes (a profile
  // of millions of unshared paths) the walk up each stack costs less time and memory.
  constexpr size_t kWalkDownNodes = 1 << 20;
  if (stacks.tree() && !walker.filters() && stacks.tree()->size() <= kWalkDownNodes) {
    return CountFunctionsDown(*stacks.tree(), o, graph, stacks.column());
  }
  CallGraph& g = *graph;
  CallCounts fs;
  std::vector<int32_t>& func_of = fs.func_of;
  std::vector<std::string_view>& names = fs.names;
  std::vector<uint32_t>& name_ids = fs.name_ids;
  std::vector<uint64_t>& totals = fs.totals;
  std::vector<uint64_t>& selfs = fs.selfs;
  std::vector<std::pair<uint64_t, uint64_t>>& direct = fs.direct;
  FlatMap<uint64_t, uint32_t, MixHash> direct_at;  // pair -> its index in `direct`
  func_of.assign(stacks.names().size(), -1);
  std::vector<uint32_t> funcs;
  std::vector<uint64_t> pairs;
  stacks.Walk(walker, o.skip_process, [&](uint64_t w, std::vector<uint32_t>* found) {
    if (__builtin_add_overflow(g.total, w, &g.total)) {
      g.total = UINT64_MAX;
      ++g.saturated;
    }
    if (found == nullptr) return;
    std::vector<uint32_t>& path = *found;
    g.kept_weight = AddSat(g.kept_weight, w);
    for (uint32_t& frame : path) {
      if (func_of[frame] < 0) {
        func_of[frame] = static_cast<int32_t>(names.size());
        names.push_back(stacks.names().Name(StrId{frame}));
        name_ids.push_back(frame);
        totals.push_back(0);
        selfs.push_back(0);
      }
      frame = static_cast<uint32_t>(func_of[frame]);
    }
    selfs[path.back()] = AddSat(selfs[path.back()], w);
    pairs.clear();
    for (size_t i = 1; i < path.size(); ++i) pairs.push_back(PairKey(path[i - 1], path[i]));
    funcs = path;
    std::sort(funcs.begin(), funcs.end());
    funcs.erase(std::unique(funcs.begin(), funcs.end()), funcs.end());
    for (uint32_t f : funcs) totals[f] = AddSat(totals[f], w);
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    for (uint64_t p : pairs) {
      bool added;
      uint32_t at = direct_at.TryEmplace(p, static_cast<uint32_t>(direct.size()), &added);
      if (added) direct.emplace_back(p, 0);
      direct[at].second = AddSat(direct[at].second, w);
    }
  });
  std::sort(direct.begin(), direct.end());
  if (g.total > 0) walker.CheckMatched(o);
  g.saturated += stacks.saturated();
  g.decimals = stacks.decimals();
  g.unit = stacks.unit();
  g.all_nodes = names.size();
  g.all_edges = direct.size();
  fs.total = g.total;
  return fs;
}

// Pass 2: link each kept frame to the next kept frame below it, once per sample; a link that
// skipped dropped frames in every sample is residual (dotted). Links below the edge
// threshold are dropped.
void LinkNodes(const Stacks& stacks, const CallGraphOptions& o, PathWalker& walker,
               const CallCounts& fs, const std::vector<int32_t>& node_of, CallGraph* graph) {
  CallGraph& g = *graph;
  struct Link {
    uint64_t weight = 0;
    bool direct = false;
  };
  std::vector<std::pair<uint64_t, Link>> links;  // PairKey(node, node), and its link
  FlatMap<uint64_t, uint32_t, MixHash> link_at;   // a pair -> its index in `links`
  auto link = [&](uint64_t pair) -> Link& {
    bool added;
    uint32_t at = link_at.TryEmplace(pair, static_cast<uint32_t>(links.size()), &added);
    if (added) links.emplace_back(pair, Link{});
    return links[at].second;
  };
  std::vector<std::pair<uint64_t, bool>> hops;
  stacks.Walk(walker, o.skip_process, [&](uint64_t w, const std::vector<uint32_t>* path) {
    if (path == nullptr) return;
    hops.clear();
    int32_t prev = -1;
    bool skipped = false;
    for (uint32_t frame : *path) {
      int32_t node = node_of[fs.func_of[frame]];
      if (node < 0) {
        skipped = true;
        continue;
      }
      if (prev >= 0) hops.emplace_back(PairKey(prev, node), !skipped);
      prev = node;
      skipped = false;
    }
    std::sort(hops.begin(), hops.end());
    for (size_t i = 0; i < hops.size(); ++i) {
      bool last_of_key = i + 1 == hops.size() || hops[i + 1].first != hops[i].first;
      if (!hops[i].second && !last_of_key) continue;
      Link& l = link(hops[i].first);
      if (hops[i].second) l.direct = true;
      if (last_of_key) l.weight = AddSat(l.weight, w);
    }
  });
  size_t solid = 0;
  for (const auto& [key, link] : links) {
    if (!graph_select::EdgeKept(link.weight, g.total, o)) continue;
    g.edges.push_back(
        {static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key), link.weight, !link.direct});
    if (link.direct) ++solid;
  }
  // Node indexes follow id order, so sorting by index sorts by id.
  std::sort(g.edges.begin(), g.edges.end(), [](const CallGraph::Edge& a, const CallGraph::Edge& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  g.dropped_edges = g.all_edges > solid ? g.all_edges - solid : 0;
}

// The call graph of `stacks`: pass 1, the choice of nodes, pass 2.
CallGraph BuildFromStacks(const Stacks& stacks, const CallGraphOptions& o, PathWalker& walker) {
  CallGraph g;
  // Pass 1: exact totals, self weights and direct edges.
  CallCounts functions = CountFunctions(stacks, o, walker, &g);
  // Choose the nodes, and number them in id order.
  std::vector<int32_t> node_of = graph_select::AddNodes(
      stacks.tree(), functions, graph_select::ChooseNodes(functions, o, g.total, &g), &g);
  // Pass 2: link each kept frame to the next kept frame below it, once per sample.
  LinkNodes(stacks, o, walker, functions, node_of, &g);
  return g;
}

}  // namespace

CallGraph BuildCallGraph(const StackTree& profile, const CallGraphOptions& o) {
  if (profile.differential()) {
    throw Error("differential input (two count columns) cannot be drawn as a call graph");
  }
  graph_select::CheckGraphOptions(o);
  // A profile of several values per stack is drawn by its default one (OneValue).
  StackTree view;
  const StackTree& tree = OneValueView(profile, &view);
  PathWalker walker(tree, o);
  return BuildFromStacks(Stacks(tree, 0), o, walker);
}

CallGraph BuildCallGraph(std::span<const std::string_view> texts, const Interner& names,
                         WeightUnit unit, bool release, const CallGraphOptions& o) {
  graph_select::CheckGraphOptions(o);
  PathWalker walker(names, o);
  return BuildFromStacks(Stacks(texts, names, unit, release), o, walker);
}

bool NameFoldedTexts(std::span<const std::string_view> texts, bool release, Interner* names,
                     WeightUnit* unit) {
  for (size_t i = 0; i < texts.size(); ++i) {
    FoldedUnit text_unit;
    uint64_t lines = 0;
    if (FoldedColumns(texts[i]) != 1 ||
        !ForEachFoldedLine(texts[i], 1, release, &text_unit, nullptr, &lines,
                           [&](const FoldedLine& fl) {
                             ForEachFrame(fl.stack, [&](std::string_view f) { names->Intern(f); });
                           })) {
      return false;
    }
    if (i > 0 && text_unit.unit() != *unit) return false;  // the tree path says how
    *unit = text_unit.unit();
  }
  return true;
}

CallCounts CountCalls(const StackTree& tree, int column) {
  if (tree.differential()) {
    throw Error("differential input (two count columns) has no call graph");
  }
  CallGraphOptions o;
  PathWalker walker(tree, o);
  CallGraph g;
  return CountFunctions(Stacks(tree, column), o, walker, &g);
}

void WriteDot(const CallGraph& g, const CallGraphOptions& o, BufferedWriter& out) {
  const Theme& theme = FindTheme(o.colormap);
  double total = g.total ? static_cast<double>(g.total) : 1.0;
  uint64_t max_self = 1;
  for (const auto& n : g.nodes) max_self = std::max(max_self, n.self);

  out.Append("digraph \"pf-dot\" {\n");
  out.Append("\tgraph [fontname=Arial, nodesep=0.125, ranksep=0.25, tooltip=\" \"];\n");
  out.Append(theme.filled ? "\tnode [fontcolor=white, fontname=Arial, height=0, shape=box, "
                            "style=filled, width=0];\n"
                          : "\tnode [fontcolor=black, fontname=Arial, height=0, shape=box, "
                            "style=solid, width=0];\n");
  out.Append("\tedge [fontname=Arial];\n");

  // The legend: what 100% is, and what the pruning removed.
  size_t residual = 0;
  for (const auto& e : g.edges) residual += e.residual;
  std::string legend = g.from_call_edges ? "pf-dot: inclusive costs of the calls (call edges)\n"
                                         : "pf-dot: exact totals (callstacks)\n";
  // Integer sample counts as they always were; other units and decimals say what they are.
  const bool plain = g.decimals == 0 && (g.unit == WeightUnit::kUnspecified ||
                                         g.unit == WeightUnit::kSamples);
  auto weight = [&](uint64_t v) {
    return plain ? std::to_string(v) : HumanWeight(v, g.decimals, g.unit);
  };
  legend += "total weight " + weight(g.total);
  if (g.kept_weight != g.total)
    legend += "; filters kept " + weight(g.kept_weight) + " (" +
              Percent(g.kept_weight, g.total) + ")";
  legend += "\nshowing " + std::to_string(g.nodes.size()) + " of " + std::to_string(g.all_nodes) +
            " nodes (total >= " + Fixed(o.node_thres, 2) + "%" +
            (o.nodecount ? ", at most " + std::to_string(o.nodecount) : std::string()) + "), " +
            std::to_string(g.dropped_nodes) + " dropped\n";
  legend += "showing " + std::to_string(g.edges.size() - residual) + " of " +
            std::to_string(g.all_edges) + " edges (>= " + Fixed(o.edge_thres, 2) + "%), " +
            std::to_string(g.dropped_edges) + " dropped";
  if (residual) legend += ", " + std::to_string(residual) + " dotted residual";
  legend += "\n";
  std::string quoted = DotQuote(legend);
  // Left-justify the legend's lines: \n -> \l.
  for (size_t i = 0; i + 1 < quoted.size(); ++i) {
    if (quoted[i] == '\\' && quoted[i + 1] == 'n')
      quoted[++i] = 'l';
    else if (quoted[i] == '\\')
      ++i;
  }
  out.Append("\tlegend [fontcolor=black, fontsize=\"10.00\", label=" + quoted +
             ", shape=plaintext, style=solid];\n");

  // Labels elided in the middle and distinct per module (names.h).
  std::vector<std::string> shown, modules;
  for (const auto& n : g.nodes) {
    shown.push_back(ShownName(n, o));
    modules.push_back(n.module);
  }
  std::vector<std::string> names = DistinctLabels(shown, modules, o.max_label);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const CallGraph::Node& n = g.nodes[i];
    double w = o.color_nodes_by_selftime
                   ? static_cast<double>(n.self) / static_cast<double>(max_self)
                   : static_cast<double>(n.total) / total;
    double rgb[3];
    ThemeRgb(theme, w, o.skew, rgb);
    std::string color = RgbHex(rgb);
    double luminance = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2];
    std::string font = !theme.filled ? "#000000" : luminance > 0.6 ? "#000000" : "#ffffff";
    double fontsize = std::max(w * w * theme.max_font, theme.min_font);
    out.Append("\t" + n.id + " [color=\"" + color + "\", fontcolor=\"" + font + "\", fontsize=\"" +
               Fixed(fontsize, 2) +
               "\", label=" + DotQuote(NodeLabel(g, n, o, std::move(names[i]))) +
               ", tooltip=" + DotQuote(ElideName(n.name, 1000)) + "];\n");
  }
  for (const auto& e : g.edges) {
    double w = static_cast<double>(e.weight) / total;
    std::string color = CallGraphColor(o.colormap, w, o.skew);
    double pen = std::max(w * theme.max_pen, theme.min_pen);
    double fontsize = std::max(w * w * theme.max_font, theme.min_font);
    std::string label = Percent(e.weight, g.total);
    if (o.show_samples) label.append("\n").append(FormatWeight(e.weight, g.decimals));
    AppendCalls(e.calls, &label);
    out.Append("\t" + g.nodes[e.from].id + " -> " + g.nodes[e.to].id + " [arrowsize=\"" +
               Fixed(0.5 * std::sqrt(pen), 2) + "\", color=\"" + color + "\", fontcolor=\"" +
               color + "\", fontsize=\"" + Fixed(fontsize, 2) + "\", label=" + DotQuote(label) +
               ", labeldistance=\"" + Fixed(pen, 2) + "\", penwidth=\"" + Fixed(pen, 2) + "\"" +
               (e.residual ? ", style=dotted" : "") + "];\n");
  }
  out.Append("}\n");
}

}  // namespace pf
