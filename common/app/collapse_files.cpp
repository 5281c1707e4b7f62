// pf-collapse's entry points (files.h): the inputs are opened one at a time, in order, and
// handed to the collapse module, which reads whatever format each holds; the tree is
// written as folded text, or as pprof's profile.proto or a callgrind file. Folded files
// merged as they are skip the tree (MergeFoldedFiles).

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/files.h"
#include "callgraph/callgrind_writer.h"
#include "formats/pprof_writer.h"
#include "formats/sniff.h"
#include "io/input.h"
#include "io/line_reader.h"
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

// A one-column list's stacks as folded lines, in the order of their lines (WriteFolded's),
// leaving out those of no weight when `skip_empty`; flushes `w`.
void WriteListed(StackList& list, bool skip_empty, BufferedWriter& w) {
  list.DoneAdding();
  for (uint32_t s : list.LineOrder()) {
    if (skip_empty && list.count(s, 0) == 0) continue;
    AppendStack(list, s, w);
    w.Append(' ');
    w.AppendU64(list.count(s, 0));
    w.Append('\n');
  }
  w.Flush();
}

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
  WriteListed(list, /*skip_empty=*/true, w);
  out.Commit();
  report->folded_lines += lines;
  return true;
}

// One file of `perf script` text folded on one thread (with -j1, or a file of one block, as
// Collapser's fold would take it), into the list of its distinct stacks (stacks/stack_list.h)
// instead of a tree, and written in the order of their lines, which is WriteFolded's: the
// tree's node per distinct prefix cost a hash probe per frame of each new stack and a walk
// to write it, a third of the fold of text whose stacks do not repeat. False, having read
// nothing, when the tree path is needed (stdin, another format, several inputs or threads,
// the options that read or change a tree).
bool FoldScriptFile(const std::vector<std::string>& inputs, const CollapseOptions& o,
                    ByteSink& out, ReadReport* report) {
  if (inputs.size() != 1 || inputs[0] == "-" || !o.filter.empty() || !o.value.empty() ||
      !o.select.Names().empty() || o.format != "auto" || o.perf.note_modules) {
    return false;
  }
  std::unique_ptr<ByteSource> src = OpenInput(inputs[0]);
  if (!src->stable() || SniffFormat(src->Peek()) != InputFormat::kPerfScript) return false;
  const unsigned threads = o.threads ? o.threads : std::thread::hardware_concurrency();
  if (threads > 1 && src->Peek().size() > BlockReader::kDefaultBlockBytes) return false;
  StackList list(1);
  Collapser c(o, report);
  const WeightUnit unit = c.AddPerfScriptToList(*src, &list);
  src.reset();
  // As WriteCollapsed warns of the tree's sums that saturated, and TakeTree's total.
  uint64_t saturated = list.saturated(), total = 0;
  for (uint32_t s = 0; s < list.size(); ++s) {
    if (__builtin_add_overflow(total, list.count(s, 0), &total)) {
      ++saturated;
      break;
    }
  }
  if (saturated) report->warnings.push_back(SaturationWarning(saturated));
  if (list.size() == 0) NoteEmptyResult(StackTree(), report);
  BufferedWriter w(out);
  if (list.size() > 0) w.Append(PfUnitLine(unit));
  WriteListed(list, /*skip_empty=*/false, w);
  out.Commit();
  return true;
}

}  // namespace

// --time-order: one recording's samples as a timeline (collapse/time_order.h).
void CollapseTimeline(const std::vector<std::string>& inputs, const CollapseOptions& options,
                      ByteSink& out, ReadReport* report) {
  Collapser c(options, report);
  for (const std::string& p : inputs.empty() ? std::vector<std::string>{"-"} : inputs) {
    std::unique_ptr<ByteSource> src = OpenInput(p);
    c.Add(*src);
  }
  std::vector<TimedSample> samples;
  StackTree tree = c.TakeTimeline(&samples);
  if (samples.empty()) NoteEmptyResult(tree, report);
  BufferedWriter w(out);
  WriteTimeOrdered(tree, samples, options.filter, w);
  w.Flush();
  out.Commit();
}

void CollapseFiles(const std::vector<std::string>& inputs, const CollapseOptions& options,
                   ByteSink& out, ReadReport* report) {
  if (options.perf.keep_times) {
    CollapseTimeline(inputs, options, out, report);
    return;
  }
  if (MergeFoldedFiles(inputs, options, out, report)) return;
  if (FoldScriptFile(inputs, options, out, report)) return;
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
