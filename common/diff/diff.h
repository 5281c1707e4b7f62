#pragma once
// The diff module (common/diff/): pf-diff's differential profiles and change reports.
//
// pf-diff: two profiles (anything pf-collapse reads) into a differential profile — folded
// lines with two counts, `stack BEFORE AFTER`, as FlameGraph's difffolded.pl and inferno's
// diff-folded write them, but sorted — or a report of the functions that changed most.

#include <string>

#include "collapse/collapse.h"
#include "io/output.h"

namespace pf {

struct DiffOptions {
  bool normalize = false;   // -n: scale BEFORE to AFTER's total (truncating, as difffolded)
  bool strip_hex = false;   // -s: 0x1234abcd -> 0x... in names, so builds compare
  bool report = false;      // --report: a table of the functions that changed most
  double threshold = 0;     // --threshold: report rows whose change is at least this % of all
  size_t limit = 0;         // --top: at most this many report rows (0: all)
  std::string input_format = "auto";  // -f: CollapseOptions::format
};

/// Writes the differential profile (or the report) of `before` and `after` to `out`.
void DiffFiles(const std::string& before, const std::string& after, const DiffOptions& options,
               ByteSink& out, CollapseReport* report);

}  // namespace pf
