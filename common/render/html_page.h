#pragma once
// The flame graph as one self-contained HTML page (pf-flamegraph --format=html): a canvas
// flame graph, a table of functions, and the callers and callees of the one selected. The
// browser side is share/flamegraph_page.js and .css, embedded at build time; this module
// writes the page around them and the profile it explores, as compact JSON.
//
// The page needs every stack, not the frames an SVG would draw: a function's total counts
// each stack once (recursion included), so no frame may be pruned. The JSON holds the stack
// tree in preorder, children sorted by name (the SVG's frame order, so the page and the SVG
// agree on every frame's offset): a table of distinct frame names and, per node, its depth,
// its name's index and its self weight (and, for a differential profile, its BEFORE self
// weight). Totals, callers and callees are computed in the browser from these. Weights stay
// the tree's fixed-point integers; the page divides by 10^decimals to show them.

#include <string>
#include <vector>

#include "io/output.h"
#include "render/flame.h"
#include "stacks/stack_tree.h"

namespace pf {

/// What the page holds besides its code: the profile as JSON (HtmlPageData).
struct HtmlPage {
  std::string title;  // the <title>, plain text
  std::string notes;  // --notes, plain text
  std::string data;   // the JSON object of HtmlPageData
};

/// The JSON object the page reads: the options that shape it (title, unit, colours, ...)
/// and the stack tree `tree` (a FlameTree: one value per stack, or differential) in the
/// form the file comment describes. Every string is escaped with JsonString, so the result
/// can stand inside a <script> element. Same tree and options, same bytes (except
/// --random colours). `warnings` collects notes (palette file lines, sums too large for
/// the browser's numbers).
std::string HtmlPageData(const StackTree& tree, const FlameOptions& options,
                         std::vector<std::string>* warnings);

/// The page of `tree` (see HtmlPageData), built whole before anything is written, so a
/// failure leaves no output. Saves the palette file of --cp / --palette-file.
HtmlPage BuildHtmlPage(const StackTree& tree, const FlameOptions& options,
                       std::vector<std::string>* warnings);

/// Writes the page: its head, its styles and script (share/), and its data.
void WriteHtmlPage(const HtmlPage& page, BufferedWriter& out);

}  // namespace pf
