#pragma once
// The callgraph module (common/callgraph/): pf-dot's call graph, built from a stack tree,
// filtered and pruned as gprof2dot and pprof do, and written as DOT (call_graph.h); label
// elision (names.h); rendering through Graphviz's library when the build has it (graphviz.h).
//
// pf-dot's model: a call graph of functions built from a stack tree, pruned, and written as
// Graphviz DOT in the manner of gprof2dot.
//
// The numbers are exact, as pprof computes them, not gprof's call-ratio estimates: a
// function's total is the weight of the samples whose stack contains it (once per sample,
// however deep the recursion), its self weight is the weight of the samples where it is the
// leaf, and an edge caller->callee weighs the samples that contain that adjacency (once per
// sample). Every weighted tree node is one "sample" (a distinct stack with its weight); its
// path is walked once and the distinct functions and pairs on it collected in small sorted
// vectors.
//
// Passes: filter each stack (--ignore, --focus, --show-from, --hide) -> count totals, self
// weights and edges -> choose the nodes to keep (--root/--leaf within --depth, the node
// threshold, --nodecount) -> walk the stacks again to connect the kept nodes, marking an edge
// "residual" (drawn dotted) when it only ever skipped removed frames -> edge threshold ->
// write sorted DOT.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/intern.h"
#include "io/output.h"
#include "stacks/function_graph.h"
#include "stacks/stack_tree.h"

namespace pf {

struct CallGraphOptions {
  double node_thres = 0.5;         ///< percent of the total; nodes below are dropped
  double edge_thres = 0.1;         ///< percent of the total; edges below are dropped
  std::string colormap = "color";  ///< color, pink, gray, bw or print
  double skew = 1.0;               ///< gamma on the colour position (< 1 spreads low percentages)
  bool strip = false;              ///< strip C++ argument lists and template arguments in labels
  bool wrap = false;               ///< wrap labels longer than 32 characters
  bool color_nodes_by_selftime = false;
  bool show_samples = false;           ///< add the raw weights to the labels
  /// gprof2dot's --node-label measures, in order: total-time-percentage, self-time-percentage,
  /// total-time, self-time (the raw weights). Empty: the two percentages.
  std::vector<std::string> node_labels;
  std::vector<std::string> root;       ///< -z: fnmatch globs; keep what they reach downwards
  std::vector<std::string> leaf;       ///< -l: fnmatch globs; keep what leads to them
  int depth = -1;                      ///< edges from a root or leaf; -1 is unlimited
  std::vector<std::string> focus;      ///< re2: keep samples with a matching frame
  std::vector<std::string> ignore;     ///< re2: drop samples with a matching frame
  std::vector<std::string> hide;       ///< re2: remove matching frames
  std::vector<std::string> show_from;  ///< re2: drop the callers of the outermost match
  bool skip_process = false;  ///< drop each stack's root frame (perf's comm), as gprof2dot does
  size_t nodecount = 80;   ///< keep at most this many nodes (largest totals); 0 = no cap
  size_t max_label = 200;  ///< characters of a name shown before "..."
  /// Text reports (text_report.h) keep the nodes pprof keeps: those whose total reaches
  /// int(total × node_thres / 100), then the --nodecount first in the report's order (by
  /// self weight, or by total with `cum_order`); edges below int(total × edge_thres / 100)
  /// are dropped alike.
  bool pprof_selection = false;
  bool cum_order = false;
};

/// The pruned graph, ready to write.
struct CallGraph {
  struct Node {
    std::string name;
    std::string id;  ///< "N" + 16 hex digits of HashBytes(name)
    uint64_t total = 0;
    uint64_t self = 0;
    std::string module;  ///< the binary it came from, when the input said (perf samples)
    uint64_t calls = 0;  ///< calls into it, when the input counts them (callgrind); else 0
  };
  struct Edge {
    uint32_t from = 0, to = 0;  ///< indexes into nodes
    uint64_t weight = 0;
    bool residual = false;  ///< only connects kept nodes across removed ones
    uint64_t calls = 0;     ///< calls made, when the input counts them (callgrind); else 0
  };
  uint64_t total = 0;        ///< weight of the whole profile (100%)
  uint64_t kept_weight = 0;  ///< weight of the samples that passed the filters
  std::vector<Node> nodes;   ///< sorted by id
  std::vector<Edge> edges;   ///< sorted by (from id, to id)
  size_t all_nodes = 0;      ///< functions before pruning
  size_t all_edges = 0;      ///< caller->callee pairs before pruning
  size_t dropped_nodes = 0;
  size_t above_cutoff = 0;   ///< functions that passed the node threshold (before --nodecount)
  uint64_t node_cutoff = 0;  ///< with pprof_selection: the least total kept
  size_t dropped_edges = 0;  ///< direct pairs not drawn as a solid edge
  uint64_t saturated = 0;    ///< sums that reached UINT64_MAX and stopped there
  int decimals = 0;          ///< weights are fixed-point with this many decimals
  WeightUnit unit = WeightUnit::kUnspecified;
  bool from_call_edges = false;  ///< built from a FunctionGraph, not from stacks
};

/// The exact numbers of a call graph before any filter or pruning: the functions (distinct
/// frame names, numbered as first met in node order), each one's total (the weight of the
/// samples whose stack holds it, once per sample) and self weight, and each direct
/// caller->callee pair's weight (once per sample; a->a included). What pf-dot prunes and
/// draws, and what a callgrind file holds (callgrind_writer.h).
struct CallCounts {
  std::vector<int32_t> func_of;         ///< frame name id -> function, -1 when not met
  std::vector<std::string_view> names;  ///< function -> name
  std::vector<uint32_t> name_ids;       ///< function -> frame name id
  std::vector<uint64_t> totals, selfs;  ///< by function
  /// (caller << 32 | callee, weight), sorted by the pair, each pair once.
  std::vector<std::pair<uint64_t, uint64_t>> direct;
  uint64_t total = 0;                             ///< weight of the whole profile
  std::vector<std::string_view> modules;  ///< function -> module, when not from a tree
  std::vector<uint64_t> called;           ///< function -> calls into it, when known
};

/// The exact counts of column `column` of `tree` (no filter: every stack, every frame).
/// Throws pf::Error for a differential tree.
CallCounts CountCalls(const StackTree& tree, int column = 0);

/// Builds the call graph of `tree` (not a differential one; of a tree of several values per
/// stack, its default one: OneValue). Throws pf::UsageError for a bad pattern or option,
/// pf::Error for a differential tree or when --root/--leaf match no function.
CallGraph BuildCallGraph(const StackTree& tree, const CallGraphOptions& options);

/// The same graph as of their tree, for folded texts (one count a line, as
/// ForEachFoldedLine takes them; weights in `unit`) read again for each pass instead of
/// being kept, the names of all their frames in `names` (read once before): memory follows
/// the functions and edges, as gprof2dot's does, not the stacks; each line costs a look-up
/// per frame in each pass. With `release` (mapped files), the pages read are given back as
/// each pass goes.
CallGraph BuildCallGraph(std::span<const std::string_view> texts, const Interner& names,
                         WeightUnit unit, bool release, const CallGraphOptions& options);

/// The first reading of those texts: every frame's name into *names, their unit into *unit.
/// False where the tree's readers have more to say (ForEachFoldedLine's cases, a text of
/// two counts a line, texts of different units).
bool NameFoldedTexts(std::span<const std::string_view> texts, bool release, Interner* names,
                     WeightUnit* unit);

/// Builds the call graph of a profile of call edges (callgrind), of its sample type `value`
/// (FunctionGraph::FindSampleType: "" is the first): a function's total is its inclusive
/// cost, an edge's weight the call's inclusive cost, with its call count. The nodes are
/// chosen as BuildCallGraph chooses them (--root/--leaf, thresholds, --nodecount); an edge is
/// drawn when both ends are (no residual edges: there are no stacks to find them on). Throws
/// pf::UsageError for the filters that need stacks (--focus, --ignore, --hide, --show-from)
/// or an unknown `value`, pf::Error when --root/--leaf match no function.
CallGraph BuildFunctionCallGraph(const FunctionGraph& graph, const CallGraphOptions& options,
                                 std::string_view value = "");

/// Writes `graph` as a DOT digraph (deterministic: sorted nodes, edges and attributes).
void WriteDot(const CallGraph& graph, const CallGraphOptions& options, BufferedWriter& out);

/// Strips argument lists, template arguments and a trailing " const" from a C++ name:
/// "ns::f<int>(char const*) const" -> "ns::f".
std::string StripFunctionName(std::string_view name);

/// `s` as a quoted DOT string: `"` and `\` escaped, newlines as `\n`, other control bytes
/// and invalid UTF-8 replaced.
std::string DotQuote(std::string_view s);

/// The "#rrggbb" colour of weight `w` in [0,1] under a colormap (throws UsageError if unknown).
std::string CallGraphColor(const std::string& colormap, double w, double skew);

}  // namespace pf
