// pf-collapse's entry points (files.h): the inputs are opened one at a time, in order, and
// handed to the collapse module, which reads whatever format each holds; the tree is
// written as folded text, or as pprof's profile.proto or a callgrind file. Folded files
// merged as they are skip the tree (MergeFoldedFiles).

#include <memory>
#include <string>
#include <vector>

#include "app/files.h"
#include "callgraph/callgrind_writer.h"
#include "formats/pprof_writer.h"
#include "formats/sniff.h"
#include "io/input.h"
#include "stacks/folded.h"
#include "stacks/stack_list.h"

namespace pf {

StackTree CollapseFilesToTree(const std::vector<std::string>& inputs,
                              const CollapseOptions& options, ReadReport* report) {
  Collapser c(options, report);
  std::vector<std::string> paths = inputs.empty() ? std::vector<std::string>{"-"} : inputs;
  for (const std::string& p : paths) {
    std::unique_ptr<ByteSource> src = OpenInput(p);
    c.Add(*src);
  }
  return c.TakeTree();
}

StackTree CollapseSourcesToTree(std::vector<std::unique_ptr<ByteSource>>& sources,
                                const CollapseOptions& options, ReadReport* report) {
  Collapser c(options, report);
  for (std::unique_ptr<ByteSource>& src : sources) {
    c.Add(*src);
    src.reset();  // its mapping or buffers are not needed any more
  }
  return c.TakeTree();
}

bool IsMappedFolded(ByteSource& src) {
  return src.stable() && SniffFormat(src.Peek().substr(0, 64 << 10)) == InputFormat::kFolded;
}

namespace {

// Folded files merged as they are (no filter, choice or cut), from the list of their
// distinct stacks (stacks/stack_list.h) instead of a tree: a fleet's files, one per host,
// repeat each stack thousands of times. False, having written nothing, when the tree path
// has more to say (stdin, another format, decimals, units that disagree, nothing left).
bool MergeFoldedFiles(const std::vector<std::string>& inputs, const CollapseOptions& o,
                      ByteSink& out, ReadReport* report) {
  if (inputs.empty() || !o.filter.empty() || !o.value.empty() || !o.perf.skip_after.empty() ||
      !o.select.Names().empty() || (o.format != "auto" && o.format != "folded")) {
    return false;
  }
  StackList list(1);
  WeightUnit unit = WeightUnit::kUnspecified;
  uint64_t lines = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == "-") return false;
    std::unique_ptr<ByteSource> src = OpenInput(inputs[i]);
    if (!IsMappedFolded(*src)) return false;
    std::string_view data = src->Next();
    FoldedUnit file_unit;
    if (FoldedColumns(data) != 1 ||
        !ListFolded(data, 0, src->releasable(), &list, &file_unit, nullptr, &lines) ||
        (i > 0 && file_unit.unit() != unit)) {
      return false;
    }
    unit = file_unit.unit();
  }
  unsigned __int128 total = 0;
  for (uint32_t s = 0; s < list.size(); ++s) total += list.count(s, 0);
  if (total == 0 || total > UINT64_MAX) return false;
  BufferedWriter w(out);
  w.Append(PfUnitLine(unit));
  list.DoneAdding();
  for (uint32_t s : list.LineOrder()) {
    if (list.count(s, 0) == 0) continue;
    AppendStack(list, s, w);
    w.Append(' ');
    w.AppendU64(list.count(s, 0));
    w.Append('\n');
  }
  w.Flush();
  out.Commit();
  report->folded_lines += lines;
  return true;
}

}  // namespace

void CollapseFiles(const std::vector<std::string>& inputs, const CollapseOptions& options,
                   ByteSink& out, ReadReport* report) {
  if (MergeFoldedFiles(inputs, options, out, report)) return;
  WriteCollapsed(CollapseFilesToTree(inputs, options, report), out, report);
}

void CollapseFilesAs(const std::string& format, bool gzip,
                     const std::vector<std::string>& inputs, const CollapseOptions& options,
                     ByteSink& out, ReadReport* report) {
  StackTree tree = CollapseFilesToTree(inputs, options, report);
  if (tree.saturated()) report->warnings.push_back(SaturationWarning(tree.saturated()));
  if (format == "pprof") {
    WritePprof(tree, out, gzip);
    return;
  }
  BufferedWriter w(out);
  WriteCallgrind(tree, w, "pf-collapse");
  w.Flush();
  out.Commit();
}

}  // namespace pf
