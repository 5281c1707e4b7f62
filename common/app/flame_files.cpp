// pf-flamegraph's inputs (files.h): a single sorted folded file streams into the frame
// merger without a tree, and folded files in any other order go there through the list of
// their distinct stacks, sorted (render/folded_flame.cpp); anything else (recordings, perf
// script text, stdin, decimal folded text, a transform) is folded by the collapse module
// into a stack tree first. A flame chart keeps the input order, so its folded inputs are
// read whole.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "app/files.h"
#include "base/error.h"
#include "formats/sniff.h"
#include "io/input.h"
#include "stacks/folded.h"

namespace pf {

namespace {

// Whether the flame graph of `inputs` is that of folded text as it is (no tool transform,
// no choice of value): then it may be drawn without a stack tree, from files (not stdin).
bool FoldedAsItIs(const std::vector<std::string>& inputs, const FlameOptions& options,
                  const CollapseOptions& read) {
  if (inputs.empty() || options.reverse || !options.base.empty() || !read.value.empty() ||
      !read.filter.empty()) {
    return false;
  }
  if (read.format != "auto" && read.format != "folded") return false;
  return std::none_of(inputs.begin(), inputs.end(), [](const std::string& p) { return p == "-"; });
}

// Folded files drawn without a stack tree: one sorted file streamed, else every file's
// distinct stacks sorted (each source opened afresh). False when neither can say it all.
bool DrawWithoutTree(const std::vector<std::string>& inputs, const FlameOptions& options,
                     std::vector<std::string>* warnings, FlameLayout* layout) {
  std::vector<std::string> w;
  if (inputs.size() == 1) {
    std::unique_ptr<ByteSource> src = OpenInput(inputs[0]);
    if (!IsMappedFolded(*src)) return false;
    if (StreamSortedFolded(*src, options, &w, layout)) {
      warnings->insert(warnings->end(), w.begin(), w.end());
      return true;
    }
  }
  std::vector<std::unique_ptr<ByteSource>> sources;
  std::vector<ByteSource*> views;
  for (const std::string& path : inputs) {
    sources.push_back(OpenInput(path));
    if (!IsMappedFolded(*sources.back())) return false;
    views.push_back(sources.back().get());
  }
  if (!DrawFoldedInAnyOrder(views, options, &w, layout)) return false;
  warnings->insert(warnings->end(), w.begin(), w.end());
  return true;
}

}  // namespace

FlameLayout BuildFlameGraphFromFiles(const std::vector<std::string>& inputs,
                                     const FlameOptions& options,
                                     std::vector<std::string>* warnings,
                                     ReadReport* report, const CollapseOptions& read) {
  if (FoldedAsItIs(inputs, options, read)) {
    FlameLayout layout;
    if (DrawWithoutTree(inputs, options, warnings, &layout)) return layout;
  }
  StackTree tree = CollapseFilesToTree(inputs, read, report);
  FlameOptions o = options;
  o.diff_names = DiffNames(report->pf_comments);
  return BuildFlameGraph(tree, o, warnings, report);
}


FlameLayout BuildFlameChartFromFiles(const std::vector<std::string>& inputs,
                                     const FlameOptions& options,
                                     std::vector<std::string>* warnings,
                                     const CollapseOptions& read) {
  // A chart keeps the input order, so the inputs are read whole (charts are small).
  if (read.format != "auto" && read.format != "folded") {
    throw UsageError("--flamechart reads folded stacks only, not -f " + read.format);
  }
  std::vector<std::string> texts;
  for (const std::string& path : inputs.empty() ? std::vector<std::string>{"-"} : inputs) {
    std::unique_ptr<ByteSource> src = OpenInput(path);
    std::string text;
    for (std::string_view c = src->Next(); !c.empty(); c = src->Next()) text.append(c);
    std::string foreign;
    InputFormat format = SniffFormat(text, &foreign);
    if (format == InputFormat::kForeign || format == InputFormat::kBinary) {
      throw Error(src->name(), (format == InputFormat::kBinary ? std::string("binary data")
                                                               : "this looks like " + foreign) +
                                   ", not folded stacks (--flamechart reads folded stacks only)");
    }
    if (format != InputFormat::kFolded && format != InputFormat::kPerfScript &&
        format != InputFormat::kEmpty) {  // bpftrace maps, pprof, ...: no input order to keep
      throw Error(src->name(), std::string("this is ") + FormatName(format) +
                                   ", not folded stacks (--flamechart reads folded stacks only)");
    }
    texts.push_back(std::move(text));
  }
  if (std::all_of(texts.begin(), texts.end(), [](const std::string& t) { return t.empty(); })) {
    ReadReport r;
    r.inputs = r.empty_inputs = texts.size();
    throw Error(EmptyResultReason(r, ""));
  }
  std::vector<std::string_view> views(texts.begin(), texts.end());
  int columns = 0;  // the first parseable line decides: one count, or two (differential)
  for (std::string_view t : views) {
    if (columns == 0) columns = FoldedColumns(t);
  }
  return BuildFlameChart(views, columns ? columns : 1, options, warnings);
}

}  // namespace pf
