#pragma once
// pf-dot's text reports: pprof's -top, -tree and -peek read from a call graph. A graph
// built for them (CallGraphOptions::pprof_selection) holds the nodes pprof keeps: those whose
// total reaches int(total × threshold), then the --nodecount first in the report's order;
// this module orders and prints them as pprof does (its columns, percentages, value units
// and header lines), so the functions, their flat and cum values and their order are
// pprof's. What differs is for people: the header names the unit, the columns are as wide
// as their values, and on a terminal long names are elided in the middle (names.h) to fit.
// --csv and --tsv give the top table to machines, with exact values in the profile's unit.

#include <cstddef>
#include <string>
#include <vector>

#include "callgraph/call_graph.h"
#include "io/output.h"

namespace pf {

struct TextReportOptions {
  enum class Kind { kTop, kTree, kPeek };
  Kind kind = Kind::kTop;
  bool cum = false;      ///< sort by cum (pprof -cum), else by flat
  std::string peek;      ///< kPeek: the functions to show (re2, matched anywhere in the name)
  char separator = 0;    ///< ',' or '\t': the top table as CSV or TSV
  size_t width = 0;      ///< a terminal's columns: lines elided to fit; 0: names whole
  std::vector<std::string> filters;  ///< the filters given, "--focus=re" (the header's)
};

/// Writes `graph` (built with pprof_selection and `options.cum` as cum_order) as the report.
/// Throws pf::Error when --peek matches no function, pf::UsageError for a bad --peek regex.
void WriteTextReport(const CallGraph& graph, const TextReportOptions& options,
                     BufferedWriter& out);

/// A weight as pprof prints it in `unit` ("1.77s", "512kB", "12"), scaled by the graph's
/// decimals; `unit` from ReportUnit.
std::string FormatReportValue(uint64_t value, int decimals, const std::string& unit);

/// A weight in the unit that suits it alone (pprof's "minimum" output unit, as its -list
/// prints): "630ms", "1.14s", "12".
std::string AutoScaledValue(uint64_t value, int decimals, WeightUnit unit);

/// The one unit pprof prints a report's values in: the largest unit in which the smallest
/// nonzero flat (else cum) value of `nodes` shows as at least 0.01 ("s", "ms", "MB"...), ""
/// for counts.
std::string ReportUnit(const CallGraph& graph);

/// `value` of `total` as pprof prints a percentage: "66.67%", " 0.56%", "  100%", "    0%".
std::string ReportPercentage(uint64_t value, uint64_t total);

}  // namespace pf
