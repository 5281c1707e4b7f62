// Fuzz target: the folded reader and writer (merge mode of pf-collapse), the format sniffer,
// the flame graph's readers of folded text without a tree (a sorted file streamed, any
// order listed) and pf-dot's (the text read in each pass). Must never crash, hang or leak;
// output must parse back to the same output, and a flame graph or call graph drawn without
// the tree must be the tree's.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "app/files.h"
#include "base/error.h"
#include "callgraph/call_graph.h"
#include "collapse/collapse.h"
#include "io/output.h"
#include "render/flame.h"
#include "render/svg_writer.h"

namespace {
std::string Run(std::string_view text, const char* format) {
  pf::CollapseOptions opt;
  opt.format = format;
  std::vector<std::unique_ptr<pf::ByteSource>> in;
  in.push_back(pf::MemoryInput(text, "fuzz"));
  pf::StringSink sink;
  pf::ReadReport report;
  pf::CollapseSources(std::move(in), opt, sink, &report);
  return sink.data();
}

// The SVG of a layout, or "" when drawing threw (nothing to draw, all zero after).
std::string Svg(const pf::FlameOptions& o, const std::function<pf::FlameLayout()>& draw) {
  try {
    pf::FlameLayout layout = draw();
    pf::StringSink sink;
    pf::BufferedWriter w(sink);
    pf::WriteSvg(layout, o, w);
    w.Flush();
    return sink.data();
  } catch (const pf::Error&) {
    return "";
  }
}

// Folded text drawn by the stream or the list, when they take it, as the tree draws it.
void CheckFlame(std::string_view text) {
  std::unique_ptr<pf::ByteSource> probe = pf::MemoryInput(text, "fuzz");
  if (!pf::IsMappedFolded(*probe)) return;
  pf::FlameOptions o;
  o.minwidth = text.size() % 2 ? 0.1 : 5;  // (a different pruning, by the input)
  const std::string tree = Svg(o, [&] {
    std::vector<std::unique_ptr<pf::ByteSource>> in;
    in.push_back(pf::MemoryInput(text, "fuzz"));
    pf::ReadReport report;
    pf::FlameOptions with_names = o;
    pf::StackTree t = pf::CollapseSourcesToTree(in, {}, &report);
    with_names.diff_names = pf::DiffNames(report.pf_comments);
    std::vector<std::string> w;
    return pf::BuildFlameGraph(t, with_names, &w, &report);
  });
  for (bool stream : {true, false}) {
    bool drawn = false, returned = false;
    const std::string svg = Svg(o, [&] {
      std::unique_ptr<pf::ByteSource> src = pf::MemoryInput(text, "fuzz");
      pf::ByteSource* sources[1] = {src.get()};
      std::vector<std::string> w;
      pf::FlameLayout layout;
      drawn = stream ? pf::StreamSortedFolded(*src, o, &w, &layout)
                     : pf::DrawFoldedInAnyOrder(sources, o, &w, &layout);
      returned = true;
      return layout;
    });
    // Drawn, it is the tree's picture; refused with an error, the tree refuses it too.
    if ((drawn || !returned) && svg != tree) std::abort();
  }
}
// DOT of a call graph, or the error's text.
std::string Dot(const std::function<pf::CallGraph()>& build) {
  try {
    const pf::CallGraph g = build();
    pf::StringSink sink;
    pf::BufferedWriter w(sink);
    pf::WriteDot(g, {}, w);
    w.Flush();
    return sink.data();
  } catch (const pf::Error& e) {
    return std::string("error: ") + e.what();
  }
}

// Folded text's call graph from the text read in each pass, when that reader takes it, as
// the tree's.
void CheckDot(std::string_view text) {
  std::unique_ptr<pf::ByteSource> probe = pf::MemoryInput(text, "fuzz");
  if (!pf::IsMappedFolded(*probe)) return;
  pf::Interner names;
  pf::WeightUnit unit = pf::WeightUnit::kUnspecified;
  const std::string_view texts[] = {text};
  if (!pf::NameFoldedTexts(texts, false, &names, &unit)) return;
  pf::CallGraph from_text;
  const std::string dot = Dot([&] {
    from_text = pf::BuildCallGraph(texts, names, unit, false, {});
    return from_text;
  });
  if (from_text.total == 0 || from_text.saturated) return;  // (pf-dot takes the tree then)
  const std::string tree = Dot([&] {
    std::vector<std::unique_ptr<pf::ByteSource>> in;
    in.push_back(pf::MemoryInput(text, "fuzz"));
    pf::ReadReport report;
    return pf::BuildCallGraph(pf::CollapseSourcesToTree(in, {}, &report), {});
  });
  if (dot != tree) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    Run(text, "auto");
    std::string once = Run(text, "folded");
    // Folding is idempotent: our own output reads back to itself.
    if (Run(once, "folded") != once) std::abort();
  } catch (const pf::Error&) {
  }
  CheckFlame(text);
  CheckDot(text);
  return 0;
}
