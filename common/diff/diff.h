#pragma once
// The diff module (common/diff/): pf-diff's differential profiles and change reports.
//
// pf-diff: two profiles (anything pf-collapse reads) into a differential profile — folded
// lines with two counts, `stack BEFORE AFTER`, as FlameGraph's difffolded.pl and inferno's
// diff-folded write them, but sorted — or a report of the functions that changed most.

#include <string>
#include <string_view>
#include <vector>

#include "io/output.h"
#include "stacks/stack_tree.h"

namespace pf {

struct DiffOptions {
  bool normalize = false;   // -n: scale BEFORE to AFTER's total (truncating, as difffolded)
  bool strip_hex = false;   // -s: 0x1234abcd -> 0x... in names, so builds compare
  bool report = false;      // --report: a table of the functions that changed most
  double threshold = 0;     // --threshold: report rows whose change is at least this % of all
  size_t limit = 0;         // --top: at most this many report rows (0: all)
  bool mixed_units = false;  // --mixed-units: compare profiles of different units (warned)
};

/// One tree with two weight columns, `b`'s (BEFORE) and `a`'s (AFTER), named `before` and
/// `after` in warnings; with options.normalize BEFORE is scaled to AFTER's total. Throws
/// pf::Error for a differential input (two columns already).
StackTree DiffTrees(const StackTree& b, const StackTree& a, const std::string& before,
                    const std::string& after, const DiffOptions& options,
                    std::vector<std::string>* warnings);

/// Writes the differential tree `t` (DiffTrees) as sorted `stack BEFORE AFTER` lines after a
/// "# pf-diff: before=... after=..." comment, or with options.report the change report.
void WriteDiff(const StackTree& t, const std::string& before, const std::string& after,
               const DiffOptions& options, ByteSink& out, std::vector<std::string>* warnings);

/// Two folded texts already sorted with one stack per line (what pf-collapse and pf-diff
/// write) merged line by line, in memory bounded by the output buffer, instead of being
/// loaded into trees: a first pass checks the order and sums the totals, the second writes
/// what WriteDiff would. Returns false, having written nothing, when the texts do not
/// qualify (unsorted, decimal, differential or too large counts); adds the lines read to
/// *lines.
bool MergeSortedFolded(const std::string_view data[2], const std::string& before,
                       const std::string& after, const DiffOptions& options, ByteSink& out,
                       uint64_t* lines);

/// The same for two folded texts in any order (profile-bpfcc -f, bpftrace, cat): their
/// distinct stacks listed with a count per side (StackList), then written in line order.
/// Memory follows the distinct stacks. Returns false, having written nothing, when the
/// texts hold what the tree path says more about (decimal, differential, malformed or too
/// large counts, pf's notes, units that disagree, an empty side).
bool DiffFoldedInAnyOrder(const std::string_view data[2], const std::string& before,
                          const std::string& after, const DiffOptions& options, ByteSink& out,
                          uint64_t* lines);

}  // namespace pf
