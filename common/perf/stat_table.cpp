// perf stat's table for pf-record --stat (stat_table.h). The widths are perf 6.1's: an 18-
// column value, a 4-column unit, a 32-column event name (25 for a counter that has no value),
// a 35-column metric.

#include "perf/stat_table.h"

#include <linux/perf_event.h>

#include <cstdarg>
#include <cstdio>

namespace pf {

namespace {

constexpr int kCountsLen = 18, kEvnameLen = 32, kBadEvnameLen = 25, kMetricLen = 35;
constexpr int kUnitWidth = 4;

void Appendf(std::string* out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void Appendf(std::string* out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) out->append(buf, std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1));
}

bool IsClock(const StatCounter& c) {
  return c.type == PERF_TYPE_SOFTWARE &&
         (c.config == PERF_COUNT_SW_CPU_CLOCK || c.config == PERF_COUNT_SW_TASK_CLOCK);
}
bool Counted(const StatCounter& c) { return c.supported && c.running > 0; }

const StatCounter* Find(const std::vector<StatCounter>& all, uint32_t type, uint64_t config) {
  for (const StatCounter& c : all) {
    if (c.type == type && c.config == config && Counted(c)) return &c;
  }
  return nullptr;
}

// A metric: its number as perf formats it, and its unit; none when `unit` is empty.
struct Metric {
  const char* fmt = nullptr;
  double value = 0;
  std::string unit;
};

// stat-shadow.c: what follows '#' for counter `c`.
Metric MetricOf(const StatCounter& c, const std::vector<StatCounter>& all, double elapsed_ns) {
  Metric m;
  if (!Counted(c)) return m;
  double clock_ns = 0;
  for (const StatCounter& x : all) {
    if (IsClock(x) && Counted(x)) clock_ns += static_cast<double>(x.value);
  }
  const double v = static_cast<double>(c.value);
  if (IsClock(c)) {
    return {"%8.3f", elapsed_ns > 0 ? v / elapsed_ns : 0, "CPUs utilized"};
  }
  if (c.type == PERF_TYPE_HARDWARE) {
    const StatCounter* cycles = Find(all, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    const StatCounter* branches = Find(all, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
    const StatCounter* refs = Find(all, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES);
    if (c.config == PERF_COUNT_HW_CPU_CYCLES && clock_ns > 0) return {"%8.3f", v / clock_ns, "GHz"};
    if (c.config == PERF_COUNT_HW_INSTRUCTIONS && cycles && cycles->value) {
      return {"%7.2f ", v / static_cast<double>(cycles->value), "insn per cycle"};
    }
    if (c.config == PERF_COUNT_HW_BRANCH_MISSES && branches && branches->value) {
      return {"%7.2f%%", 100 * v / static_cast<double>(branches->value), "of all branches"};
    }
    if (c.config == PERF_COUNT_HW_CACHE_MISSES && refs && refs->value) {
      return {"%7.2f%%", 100 * v / static_cast<double>(refs->value), "of all cache refs"};
    }
  }
  if (clock_ns <= 0) return m;
  // Events a second of the counted time, in K, M or G above a thousand, a million, a billion.
  double rate = v * 1e9 / clock_ns;
  std::string unit = "/sec";
  for (auto [scale, prefix] : {std::pair{1e9, "G"}, {1e6, "M"}, {1e3, "K"}}) {
    if (rate > scale) {
      rate /= scale;
      unit = std::string(prefix) + "/sec";
      break;
    }
  }
  return {"%8.3f", rate, unit};
}

const char* Unit(const StatCounter& c) { return IsClock(c) ? "msec" : ""; }

void AppendStd(std::string* out, const StatCounter& c, const std::vector<StatCounter>& all,
               double elapsed_ns) {
  if (!Counted(c)) {
    Appendf(out, "%*s %-*s %-*s%-*s\n", kCountsLen, c.supported ? "<not counted>" : "<not supported>",
            kUnitWidth, Unit(c), kBadEvnameLen, c.name.c_str(), kMetricLen, "");
    return;
  }
  if (IsClock(c)) {
    Appendf(out, "%*.2f ", kCountsLen, static_cast<double>(c.value) / 1e6);
  } else {
    Appendf(out, "%*.0f ", kCountsLen, static_cast<double>(c.value));
  }
  Appendf(out, "%-*s %-*s", kUnitWidth, Unit(c), kEvnameLen, c.name.c_str());
  const Metric m = MetricOf(c, all, elapsed_ns);
  if (m.unit.empty()) {
    Appendf(out, "%-*s", kMetricLen, "");
  } else {
    char num[64];
    std::snprintf(num, sizeof num, m.fmt, m.value);
    const int n = 3 + static_cast<int>(std::string_view(num).size());
    Appendf(out, " # %s %-*s", num, kMetricLen - n - 1, m.unit.c_str());
  }
  if (c.running < c.enabled) {
    Appendf(out, "  (%.2f%%)", 100.0 * static_cast<double>(c.running) / static_cast<double>(c.enabled));
  }
  *out += '\n';
}

void AppendCsv(std::string* out, const StatCounter& c, const std::vector<StatCounter>& all,
               double elapsed_ns, const std::string& sep) {
  const char* s = sep.c_str();
  if (!Counted(c)) {
    Appendf(out, "%s%s%s%s%s%s0%s100.00%s%s\n", c.supported ? "<not counted>" : "<not supported>",
            s, Unit(c), s, c.name.c_str(), s, s, s, s);
    return;
  }
  if (IsClock(c)) {
    Appendf(out, "%.2f", static_cast<double>(c.value) / 1e6);
  } else {
    Appendf(out, "%.0f", static_cast<double>(c.value));
  }
  const double pct = c.running < c.enabled
                         ? 100.0 * static_cast<double>(c.running) / static_cast<double>(c.enabled)
                         : 100.0;
  Appendf(out, "%s%s%s%s%s%llu%s%.2f", s, Unit(c), s, c.name.c_str(), s,
          static_cast<unsigned long long>(c.running), s, pct);
  const Metric m = MetricOf(c, all, elapsed_ns);
  if (m.unit.empty()) {
    Appendf(out, "%s%s\n", s, s);
    return;
  }
  char num[64];
  std::snprintf(num, sizeof num, m.fmt, m.value);
  std::string_view v(num);
  v.remove_prefix(std::min(v.find_first_not_of(' '), v.size()));
  size_t end = 0;
  while (end < v.size() && ((v[end] >= '0' && v[end] <= '9') || v[end] == '.')) ++end;
  Appendf(out, "%s%.*s%s%s\n", s, static_cast<int>(end), v.data(), s, m.unit.c_str());
}

void AppendCounters(std::string* out, const std::string& prefix,
                    const std::vector<StatCounter>& counters, const StatContext& c) {
  for (const StatCounter& x : counters) {
    *out += prefix;
    if (c.csv_sep.empty()) {
      AppendStd(out, x, counters, c.elapsed_ns);
    } else {
      AppendCsv(out, x, counters, c.elapsed_ns, c.csv_sep);
    }
  }
}

}  // namespace

std::string FormatStatTable(const std::vector<StatCounter>& counters, const StatContext& c) {
  std::string out;
  if (c.csv_sep.empty()) out += "\n Performance counter stats for " + c.target + ":\n\n";
  AppendCounters(&out, "", counters, c);
  if (!c.csv_sep.empty()) return out;
  Appendf(&out, "\n %17.9f seconds time elapsed\n", c.elapsed_ns / 1e9);
  if (c.rusage) Appendf(&out, "\n %17.9f seconds user\n %17.9f seconds sys\n\n", c.user_s, c.sys_s);
  out += '\n';
  return out;
}

std::string StatIntervalHeader(const std::vector<StatCounter>&, const StatContext& c) {
  if (!c.csv_sep.empty()) return "";
  return "#           time             counts unit events\n";
}

std::string FormatStatInterval(const std::vector<StatCounter>& counters, const StatContext& c,
                               uint64_t since_ns) {
  std::string prefix;
  Appendf(&prefix, "%6llu.%09llu%s", static_cast<unsigned long long>(since_ns / 1000000000),
          static_cast<unsigned long long>(since_ns % 1000000000),
          c.csv_sep.empty() ? " " : c.csv_sep.c_str());
  std::string out;
  AppendCounters(&out, prefix, counters, c);
  return out;
}

}  // namespace pf
