// pf-dot's text reports (text_report.h): pprof's -top, -tree and -peek, with pprof's
// orders, columns and numbers (internal/report/report.go, internal/measurement).

#include "callgraph/text_report.h"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "callgraph/names.h"

namespace pf {

namespace {

struct ScaleUnit {
  const char* name;
  double factor;  // in the profile's unit (ns, bytes)
};
constexpr ScaleUnit kTimeUnits[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
                                    {"hrs", 3600e9}};
constexpr ScaleUnit kByteUnits[] = {{"B", 1},
                                    {"kB", 1024.0},
                                    {"MB", 1024.0 * 1024},
                                    {"GB", 1024.0 * 1024 * 1024},
                                    {"TB", 1024.0 * 1024 * 1024 * 1024},
                                    {"PB", 1024.0 * 1024 * 1024 * 1024 * 1024}};

// The units values of `unit` scale through (pprof's UnitTypes), with the one used for a value
// below the smallest; none for counts.
std::pair<const ScaleUnit*, size_t> UnitsOf(WeightUnit unit) {
  if (unit == WeightUnit::kNanoseconds) return {kTimeUnits, std::size(kTimeUnits)};
  if (unit == WeightUnit::kBytes) return {kByteUnits, std::size(kByteUnits)};
  return {nullptr, 0};
}

// pprof's autoScale: the largest unit in which `v` is at least 1 (else its default unit: s for
// time, B for bytes).
std::string AutoUnit(double v, WeightUnit unit) {
  auto [units, n] = UnitsOf(unit);
  if (n == 0) return "";
  const ScaleUnit* best = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (v / units[i].factor >= 1.0 && (!best || units[i].factor >= best->factor)) best = &units[i];
  }
  if (best) return best->name;
  return unit == WeightUnit::kNanoseconds ? "s" : "B";
}

double Factor(const std::string& unit) {
  for (const ScaleUnit& u : kTimeUnits) {
    if (unit == u.name) return u.factor;
  }
  for (const ScaleUnit& u : kByteUnits) {
    if (unit == u.name) return u.factor;
  }
  return 1;
}

double AsDouble(uint64_t value, int decimals) {
  return static_cast<double>(value) / static_cast<double>(Pow10(decimals));
}

// The nodes in the report's order: flat (then name, then cum) or cum (then name, then flat),
// as pprof's FlatNameOrder and CumNameOrder.
std::vector<uint32_t> Ordered(const CallGraph& g, bool cum) {
  std::vector<uint32_t> order(g.nodes.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const CallGraph::Node &l = g.nodes[a], &r = g.nodes[b];
    const uint64_t l1 = cum ? l.total : l.self, r1 = cum ? r.total : r.self;
    if (l1 != r1) return l1 > r1;
    if (l.name != r.name) return l.name < r.name;
    const uint64_t l2 = cum ? l.self : l.total, r2 = cum ? r.self : r.total;
    return l2 > r2;
  });
  return order;
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// What every report prints with the same numbers: the unit, the values' labels and widths.
struct Printer {
  const CallGraph& g;
  const TextReportOptions& o;
  std::string unit;                 // pprof's output unit ("ms", "" for counts)
  size_t width = 4;                 // of the value columns
  std::vector<std::string> labels;  // by node: the name as shown

  Printer(const CallGraph& graph, const TextReportOptions& options, size_t prefix)
      : g(graph), o(options), unit(ReportUnit(graph)) {
    for (const CallGraph::Node& n : g.nodes) {
      width = std::max({width, Value(n.self).size(), Value(Cum(n.total)).size()});
    }
    std::vector<std::string> names;
    for (const CallGraph::Node& n : g.nodes) names.push_back(n.name);
    // On a terminal, names elided in their middle to what is left of its width (never below
    // 24 characters); distinct names stay distinct.
    const size_t taken = prefix + 2 * width;
    if (o.width > 0) {
      labels = DistinctLabels(names, std::vector<std::string>(names.size()),
                              std::max<size_t>(24, o.width > taken ? o.width - taken : 0));
    } else {
      labels = std::move(names);
    }
  }
  std::string Value(uint64_t v) const { return FormatReportValue(v, g.decimals, unit); }
  // A total as shown: at most the profile's (callgrind's inclusive costs count a recursive
  // call's cost again at each level; stacks never do).
  uint64_t Cum(uint64_t v) const { return std::min(v, g.total); }
  std::string Pct(uint64_t v) const { return ReportPercentage(v, g.total); }
  // flat flat% sum% cum cum%
  std::string Columns(const CallGraph::Node& n, uint64_t flat_sum) const {
    return Pad(Value(n.self), width) + " " + Pct(n.self) + " " + Pct(flat_sum) + " " +
           Pad(Value(Cum(n.total)), width) + " " + Pct(Cum(n.total));
  }
};

uint64_t ShownFlat(const CallGraph& g) {
  uint64_t sum = 0;
  for (const CallGraph::Node& n : g.nodes) sum = AddSat(sum, n.self);
  return sum;
}

// pprof's header lines (reportLabels), after the unit's.
void WriteHeader(const Printer& p, BufferedWriter& out) {
  const CallGraph& g = p.g;
  std::string h = "Unit: ";
  h += g.unit == WeightUnit::kUnspecified ? "samples" : UnitKeyword(g.unit);
  h += '\n';
  if (!p.o.filters.empty()) {
    h += "Active filters:\n";
    for (const std::string& f : p.o.filters) h += "   " + f + "\n";
  }
  const uint64_t shown = ShownFlat(g);
  std::string pct = p.Pct(shown);
  pct.erase(0, pct.find_first_not_of(' '));
  h += "Showing nodes accounting for " + p.Value(shown) + ", " + pct + " of " +
       p.Value(g.total) + " total\n";
  if (g.total != 0) {
    const size_t dropped = g.all_nodes - g.above_cutoff;
    if (dropped > 0) {
      h += "Dropped " + std::to_string(dropped) + (dropped > 1 ? " nodes" : " node") +
           " (cum <= " + p.Value(g.node_cutoff) + ")\n";
    }
    if (!g.nodes.empty() && g.nodes.size() < g.above_cutoff) {
      h += "Showing top " + std::to_string(g.nodes.size()) + " nodes out of " +
           std::to_string(g.above_cutoff) + "\n";
    }
  }
  out.Append(h);
}

void WriteTop(const Printer& p, BufferedWriter& out) {
  WriteHeader(p, out);
  out.Append(Pad("flat", p.width) + "  flat%   sum% " + Pad("cum", p.width) + "   cum%\n");
  uint64_t flat_sum = 0;
  for (uint32_t i : Ordered(p.g, p.o.cum)) {
    flat_sum = AddSat(flat_sum, p.g.nodes[i].self);
    out.Append(p.Columns(p.g.nodes[i], flat_sum) + "  " + p.labels[i] + "\n");
  }
}

// The top table for machines: exact values in the profile's unit, percentages as numbers.
void WriteTopTable(const CallGraph& g, const TextReportOptions& o, BufferedWriter& out) {
  const char sep = o.separator;
  auto pct = [&](uint64_t v) {
    return Fixed(g.total ? 100.0 * static_cast<double>(v) / static_cast<double>(g.total) : 0, 2);
  };
  // A name as a field: quoted as RFC 4180 says in CSV when it must be; in TSV, its tabs and
  // line ends as spaces.
  auto field = [&](const std::string& name) {
    const bool quoted = sep == ',' && name.find_first_of(",\"\r\n") != std::string::npos;
    std::string f = quoted ? "\"" : "";
    for (char c : name) {
      if (quoted && c == '"') f += '"';
      f += sep == '\t' && (c == '\t' || c == '\n' || c == '\r') ? ' ' : c;
    }
    if (quoted) f += '"';
    return f;
  };
  const std::string unit(g.unit == WeightUnit::kUnspecified ? "samples" : UnitKeyword(g.unit));
  std::string s;
  for (const char* h : {"flat", "flat%", "sum%", "cum", "cum%", "unit"}) (s += h) += sep;
  s += "name\n";
  out.Append(s);
  uint64_t flat_sum = 0;
  for (uint32_t i : Ordered(g, o.cum)) {
    const CallGraph::Node& n = g.nodes[i];
    flat_sum = AddSat(flat_sum, n.self);
    s.clear();
    for (const std::string& v : {FormatWeight(n.self, g.decimals), pct(n.self), pct(flat_sum),
                                 FormatWeight(n.total, g.decimals), pct(n.total), unit}) {
      (s += v) += sep;
    }
    s += field(n.name);
    s += '\n';
    out.Append(s);
  }
}

// pprof's -tree (and -peek: only the nodes `shown` matches): each node with its callers above
// and callees below, each edge's share of the node's cum.
void WriteTree(const Printer& p, const re2::RE2* shown, BufferedWriter& out) {
  const CallGraph& g = p.g;
  const std::string separator = std::string(2 * p.width + 38, '-') + "+-------------\n";
  WriteHeader(p, out);
  out.Append(separator);
  out.Append(Pad("flat", p.width) + "  flat%   sum% " + Pad("cum", p.width) +
             "   cum%   calls calls% + context\n");
  std::vector<std::vector<const CallGraph::Edge*>> in(g.nodes.size()), outs(g.nodes.size());
  for (const CallGraph::Edge& e : g.edges) {
    if (e.from == e.to) continue;  // (pprof has no edge from a function to itself)
    in[e.to].push_back(&e);
    outs[e.from].push_back(&e);
  }
  auto by_weight = [&](const CallGraph::Edge* a, const CallGraph::Edge* b) {
    if (a->weight != b->weight) return a->weight > b->weight;
    if (g.nodes[a->from].name != g.nodes[b->from].name) {
      return g.nodes[a->from].name < g.nodes[b->from].name;
    }
    return g.nodes[a->to].name < g.nodes[b->to].name;
  };
  const size_t edge_value_width = 2 * p.width + 30;
  uint64_t flat_sum = 0;
  size_t matched = 0;
  for (uint32_t i : Ordered(g, p.o.cum)) {
    const CallGraph::Node& n = g.nodes[i];
    if (shown && !re2::RE2::PartialMatch(n.name, *shown)) continue;
    ++matched;
    out.Append(separator);
    auto edge_line = [&](const CallGraph::Edge* e, uint32_t other) {
      const uint64_t w = std::min(e->weight, p.Cum(n.total));
      out.Append(Pad(p.Value(w), edge_value_width) + " " + ReportPercentage(w, p.Cum(n.total)) +
                 " |   " + p.labels[other] + "\n");
    };
    std::sort(in[i].begin(), in[i].end(), by_weight);
    for (const CallGraph::Edge* e : in[i]) edge_line(e, e->from);
    flat_sum = AddSat(flat_sum, n.self);
    out.Append(p.Columns(n, flat_sum) + "                | " + p.labels[i] + "\n");
    std::sort(outs[i].begin(), outs[i].end(), by_weight);
    for (const CallGraph::Edge* e : outs[i]) edge_line(e, e->to);
  }
  if (!g.nodes.empty()) out.Append(separator);
  if (shown && matched == 0) {
    throw Error("--peek: no function matches '" + shown->pattern() + "'");
  }
}

}  // namespace

std::string FormatReportValue(uint64_t value, int decimals, const std::string& unit) {
  const double v = AsDouble(value, decimals) / Factor(unit);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  if (s.ends_with(".00")) s.resize(s.size() - 3);
  if (s == "0" || s == "-0") return "0";
  return s + unit;
}

std::string AutoScaledValue(uint64_t value, int decimals, WeightUnit unit) {
  return FormatReportValue(value, decimals, AutoUnit(AsDouble(value, decimals), unit));
}

std::string ReportUnit(const CallGraph& g) {
  if (UnitsOf(g.unit).second == 0 || g.nodes.empty()) return "";
  uint64_t min = 0;
  for (const CallGraph::Node& n : g.nodes) {
    const uint64_t v = n.self ? n.self : n.total;
    if (v > 0 && (min == 0 || v < min)) min = v;
  }
  const uint64_t max = g.total;
  if (min == 0) min = max;
  const double lo = AsDouble(min, g.decimals), hi = AsDouble(max, g.decimals);
  std::string unit = AutoUnit(lo, g.unit);
  // Different units at the two ends: the smallest is shown down to 0.01 of a larger one.
  if (unit != AutoUnit(hi, g.unit) && lo * 100 < hi) unit = AutoUnit(100 * lo, g.unit);
  return unit;
}

std::string ReportPercentage(uint64_t value, uint64_t total) {
  const double ratio =
      total ? std::fabs(static_cast<double>(value) / static_cast<double>(total)) * 100 : 0;
  char buf[32];
  if (ratio >= 99.95 && ratio <= 100.05) return "  100%";
  std::snprintf(buf, sizeof buf, ratio >= 1.0 ? "%5.2f%%" : "%5.2g%%", ratio);
  return buf;
}

void WriteTextReport(const CallGraph& graph, const TextReportOptions& o, BufferedWriter& out) {
  using Kind = TextReportOptions::Kind;
  if (o.kind == Kind::kTop && o.separator) return WriteTopTable(graph, o, out);
  if (o.kind == Kind::kTop) return WriteTop(Printer(graph, o, 24), out);
  std::unique_ptr<re2::RE2> shown;
  if (o.kind == Kind::kPeek) {
    re2::RE2::Options ro;
    ro.set_log_errors(false);
    shown = std::make_unique<re2::RE2>(o.peek, ro);
    if (!shown->ok()) throw UsageError("--peek: bad regex '" + o.peek + "': " + shown->error());
  }
  WriteTree(Printer(graph, o, 42), shown.get(), out);
}

}  // namespace pf
