// pf-diff's entry point (files.h). Two regular files of sorted folded text (what pf-collapse
// and pf-diff write) are merged line by line in bounded memory (diff.h's MergeSortedFolded),
// and in another order listed by distinct stack and written sorted (DiffFoldedInAnyOrder);
// anything else is collapsed to two stack trees, each with a report of its own so an empty
// one is said to be, and why, then combined (DiffTrees) and written (WriteDiff).

#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "app/files.h"
#include "base/error.h"
#include "io/input.h"

namespace pf {

namespace {

// The sorted merge, when both inputs are regular files of folded text and the options allow
// it. Only regular files: opening them here and again on the tree path reads nothing twice,
// where a pipe would lose what this look consumed.
bool TryMerge(const std::string& before, const std::string& after, const DiffOptions& o,
              const CollapseOptions& read, ByteSink& sink, ReadReport* report) {
  if (o.strip_hex || o.report) return false;
  if ((read.format != "auto" && read.format != "folded") || !read.value.empty()) return false;
  for (const std::string* path : {&before, &after}) {
    struct stat st;
    if (*path == "-" || stat(path->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  }
  std::unique_ptr<ByteSource> in[2] = {OpenInput(before), OpenInput(after)};
  std::string_view data[2];
  for (int i = 0; i < 2; ++i) {
    if (!IsMappedFolded(*in[i]) || !in[i]->releasable()) return false;
    data[i] = in[i]->Peek();
  }
  return MergeSortedFolded(data, before, after, o, sink, &report->folded_lines) ||
         DiffFoldedInAnyOrder(data, before, after, o, sink, &report->folded_lines);
}

}  // namespace

void DiffFiles(const std::string& before, const std::string& after, const DiffOptions& o,
               ByteSink& sink, ReadReport* report, const CollapseOptions& read) {
  if (TryMerge(before, after, o, read, sink, report)) return;
  ReadReport side[2];
  StackTree b = CollapseFilesToTree({before}, read, &side[0]);
  StackTree a = CollapseFilesToTree({after}, read, &side[1]);
  for (int i = 0; i < 2; ++i) {
    ReadReport& r = side[i];
    report->warnings.insert(report->warnings.end(), r.warnings.begin(), r.warnings.end());
    report->notices.insert(report->notices.end(), r.notices.begin(), r.notices.end());
    report->samples += r.samples;
    report->perf_samples += r.perf_samples;
    report->folded_lines += r.folded_lines;
    if (r.empty) {
      report->warnings.push_back((i ? "AFTER " + after : "BEFORE " + before) + ": " +
                                 EmptyResultReason(r, ""));
    }
  }
  StackTree t = DiffTrees(b, a, before, after, o, &report->warnings);
  WriteDiff(t, before, after, o, sink, &report->warnings);
}

}  // namespace pf
