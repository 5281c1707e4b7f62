// The HTML page (html_page.h). Its data is built in three passes over the stack tree:
// subtree weights (ids in reverse: a parent's id is below its children's), so that stacks
// that weigh nothing are left out; a preorder walk with children sorted by name, which
// numbers the frame names in the order they first appear (deterministic, whatever order
// the names were interned in) and writes each node's depth, name and self weights; then
// one colour per name. The page around it is fixed text, the script and styles of share/,
// and the data in a <script type="application/json"> element, which the browser parses
// with JSON.parse (much faster than as a script literal). JsonString escapes '<', so no
// frame name can end that element.

#include "render/html_page.h"

#include <cstdio>

#include "base/error.h"
#include "base/version.h"
#include "render/palette.h"
#include "render/svg_writer.h"
#include "stacks/weight.h"

namespace pf {

extern const char kFlamegraphModelJs[];
extern const size_t kFlamegraphModelJsSize;
extern const char kFlamegraphPageJs[];
extern const size_t kFlamegraphPageJsSize;
extern const char kFlamegraphPageCss[];
extern const size_t kFlamegraphPageCssSize;

namespace {

// Numbers a browser adds exactly: integers up to 2^53.
constexpr uint64_t kExactInBrowser = uint64_t{1} << 53;

std::string Num(const char* fmt, double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string Hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

// Sum of the self weights of each node's subtree, per column (saturating).
std::vector<uint64_t> SubtreeWeights(const StackTree& tree) {
  const size_t cols = static_cast<size_t>(tree.columns());
  std::vector<uint64_t> sub(tree.size() * cols);
  for (uint32_t i = static_cast<uint32_t>(tree.size()); i-- > 0;) {
    const NodeId n{i};
    for (size_t c = 0; c < cols; ++c) {
      uint64_t& s = sub[i * cols + c];
      s = AddSat(s, tree.self(n, static_cast<int>(c)));
      if (i > 0) {
        uint64_t& p = sub[tree.parent(n).index() * cols + c];
        p = AddSat(p, s);
      }
    }
  }
  return sub;
}

// The tree in preorder, children sorted by name, nodes whose subtrees weigh nothing left
// out: "depth", "frame" (index into "names", numbered as first met), "self" and, when
// differential, "before" arrays, appended to `json`. Returns the names in their order.
std::vector<StrId> AppendTree(const StackTree& tree, std::string* json) {
  const std::vector<uint64_t> sub = SubtreeWeights(tree);
  const size_t cols = static_cast<size_t>(tree.columns());
  const bool diff = tree.differential();
  auto weighs = [&](NodeId n) {
    for (size_t c = 0; c < cols; ++c) {
      if (sub[n.index() * cols + c]) return true;
    }
    return false;
  };
  std::vector<int64_t> index(tree.names().size(), -1);  // name id -> page name index
  std::vector<StrId> names;
  std::string depth = "\"depth\":[", frame = "\"frame\":[", self = "\"self\":[",
              before = "\"before\":[";
  StackTree::Children ch = tree.SortedChildren();
  struct Item {
    NodeId node;
    uint32_t depth;
  };
  std::vector<Item> todo;
  auto push_children = [&](NodeId n, uint32_t d) {
    for (uint32_t i = ch.first[n.index() + 1]; i-- > ch.first[n.index()];) {
      if (weighs(ch.child_index[i])) todo.push_back({ch.child_index[i], d});
    }
  };
  push_children(StackTree::kRoot, 1);
  bool first = true;
  while (!todo.empty()) {
    const Item it = todo.back();
    todo.pop_back();
    int64_t& k = index[tree.frame(it.node).value];
    if (k < 0) {
      k = static_cast<int64_t>(names.size());
      names.push_back(tree.frame(it.node));
    }
    const char* sep = first ? "" : ",";
    first = false;
    depth.append(sep).append(std::to_string(it.depth));
    frame.append(sep).append(std::to_string(k));
    self.append(sep).append(std::to_string(tree.self(it.node, diff ? 1 : 0)));
    if (diff) before.append(sep).append(std::to_string(tree.self(it.node, 0)));
    push_children(it.node, it.depth + 1);
  }
  *json += depth + "],\n" + frame + "],\n" + self + "]";
  if (diff) *json += ",\n" + before + "]";
  return names;
}

// One colour per name, as the SVG colours its frames (FrameDrawer::Fill): the separators
// grey, the palette (and --cp's file) for the others. Differential pages colour by change
// in the browser instead, and have none.
std::string NameColors(const StackTree& tree, const std::vector<StrId>& names,
                       const FlameOptions& o, std::vector<std::string>* warnings) {
  Colorer colorer(o.palette, static_cast<ColorMode>(o.color_mode));
  PaletteMap pmap;
  const bool use_map = !o.palette_file.empty();
  if (use_map) {
    size_t bad = pmap.Load(o.palette_file);
    if (bad && warnings) {
      warnings->push_back(o.palette_file + ": ignored " + std::to_string(bad) +
                          " lines with invalid format");
    }
  }
  std::string out = "\"colors\":[";
  for (size_t i = 0; i < names.size(); ++i) {
    std::string_view name = tree.names().Name(names[i]);
    Rgb c = name == "--"  ? Rgb{160, 160, 160}
            : name == "-" ? Rgb{200, 200, 200}
            : use_map     ? pmap.Get(name, colorer.Color(name))
                          : colorer.Color(name);
    out += (i ? ",\"" : "\"") + Hex(c) + "\"";
  }
  if (use_map) pmap.Save(o.palette_file);
  // The root's, as the SVG's: the colour of the name "" ("all" is its label, not its name).
  return out + "],\"rootcolor\":\"" + Hex(colorer.Color("")) + "\"";
}

// The options the page reads, as the first members of the data object.
std::string Settings(const StackTree& tree, const FlameOptions& o) {
  const bool diff = tree.differential();
  std::string title, subtitle;
  FlameTitles(o, diff, &title, &subtitle);
  Rgb top, bottom;
  if (!BackgroundFor(o.bgcolors, o.palette, &top, &bottom)) {
    throw UsageError("--bgcolors: unknown colour '" + o.bgcolors +
                     "' (yellow, blue, green, grey or #rrggbb)");
  }
  const WeightUnit unit = tree.unit(diff ? 1 : 0);
  // Times and sizes are shown scaled, with their unit ("12.3 ms"), unless --countname names
  // what the counts are; other counts as "1,234 samples" (render/flame.cpp's titles).
  const bool scaled = o.countname.empty() &&
                      (unit == WeightUnit::kNanoseconds || unit == WeightUnit::kBytes);
  const std::string countname = o.countname.empty() ? std::string(UnitName(unit)) : o.countname;
  return "\"version\":1,\n\"generator\":" + JsonString(std::string("pf-flamegraph ") + kVersion) +
         ",\n\"title\":" + JsonString(title) + ",\"subtitle\":" + JsonString(subtitle) +
         ",\"nametype\":" + JsonString(o.nametype) + ",\n\"countname\":" + JsonString(countname) +
         ",\"unit\":" + JsonString(UnitKeyword(unit)) +
         ",\"scaled\":" + (scaled ? "true" : "false") +
         ",\"decimals\":" + std::to_string(tree.decimals()) +
         ",\"factor\":" + Num("%.17g", o.factor) +
         ",\"total\":" + std::to_string(o.total ? MulSat(o.total, Pow10(tree.decimals())) : 0) +
         ",\n\"differential\":" + (diff ? "true" : "false") + ",\"negate\":" +
         (o.negate ? "true" : "false") + ",\"inverted\":" + (o.inverted ? "true" : "false") +
         ",\n\"font\":" + JsonString(o.fonttype) + ",\"fontsize\":" + Num("%g", o.fontsize) +
         ",\"frameheight\":" + Num("%g", o.frameheight) + ",\"minwidth\":" + Num("%g", o.minwidth) +
         ",\"minwidthPercent\":" + (o.minwidth_percent ? "true" : "false") +
         ",\n\"searchcolor\":" + JsonString(o.search_color) + ",\"background\":[" +
         JsonString(RgbText(top)) + "," + JsonString(RgbText(bottom)) + "],\n";
}

}  // namespace

std::string HtmlPageData(const StackTree& tree, const FlameOptions& o,
                         std::vector<std::string>* warnings) {
  std::string json = "{";
  json += Settings(tree, o);
  std::string arrays;
  const std::vector<StrId> names = AppendTree(tree, &arrays);
  json += "\"names\":[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) json += ',';
    json += JsonString(tree.names().Name(names[i]));
  }
  json += "],\n";
  if (!tree.differential()) json += NameColors(tree, names, o, warnings) + ",\n";
  json += arrays + "}";
  if (warnings && tree.saturated()) warnings->push_back(SaturationWarning(tree.saturated()));
  for (int c = 0; c < tree.columns(); ++c) {
    uint64_t total = 0;
    for (NodeId n; n.index() < tree.size(); ++n) total = AddSat(total, tree.self(n, c));
    if (total > kExactInBrowser && warnings) {
      warnings->push_back("the profile's total is above 2^53, where a browser's numbers stop "
                          "being exact: the page's sums are approximate");
      break;
    }
  }
  return json;
}

HtmlPage BuildHtmlPage(const StackTree& tree, const FlameOptions& o,
                       std::vector<std::string>* warnings) {
  HtmlPage page;
  std::string subtitle;
  FlameTitles(o, tree.differential(), &page.title, &subtitle);
  page.notes = o.notes;
  page.data = HtmlPageData(tree, o, warnings);
  return page;
}

void WriteHtmlPage(const HtmlPage& page, BufferedWriter& w) {
  w.Append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
  w.Append(std::string("<meta name=\"generator\" content=\"pf-flamegraph ") + kVersion + "\">\n");
  if (!page.notes.empty()) {
    w.Append("<meta name=\"description\" content=\"" + XmlEscape(page.notes) + "\">\n");
  }
  w.Append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
  w.Append("<title>" + XmlEscape(page.title) + "</title>\n<style>\n");
  w.Append(std::string_view(kFlamegraphPageCss, kFlamegraphPageCssSize));
  w.Append("</style>\n</head>\n<body>\n<noscript>This flame graph needs JavaScript.</noscript>\n");
  w.Append("<script type=\"application/json\" id=\"pf-data\">\n");
  w.Append(page.data);
  w.Append("\n</script>\n<script>\n");
  w.Append(std::string_view(kFlamegraphModelJs, kFlamegraphModelJsSize));
  w.Append(std::string_view(kFlamegraphPageJs, kFlamegraphPageJsSize));
  w.Append("</script>\n</body>\n</html>\n");
}

}  // namespace pf
