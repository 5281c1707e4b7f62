#pragma once
// pf-record --stat's output: perf stat's table, byte for byte in its layout (perf 6.1's
// stat-display.c and stat-shadow.c): each counter's value (task-clock and cpu-clock in
// msec), its unit and name, then the derived metric after '#' (CPUs utilized, events a
// second with K/M/G, GHz, instructions per cycle, the share of branches missed); the
// counters the machine lacks as <not supported>, those that never ran as <not counted>;
// the elapsed, user and system times; with -I each interval's lines after its time; with
// -x SEP perf's CSV (value, unit, event, run time, share running, metric, metric unit).

#include <cstdint>
#include <string>
#include <vector>

namespace pf {

/// One counter as read at the end (or of one interval).
struct StatCounter {
  std::string name;         // as perf names it ("task-clock", "cycles:u", ...)
  uint32_t type = 0;        // perf_event_attr type and config, for the metrics
  uint64_t config = 0;
  bool supported = true;    // the machine could open it
  uint64_t value = 0;       // summed over its descriptors, scaled to the time enabled
  uint64_t enabled = 0, running = 0;  // ns
};

struct StatContext {
  std::string target;      // "'sleep 1'", "process id '1234'", "'system wide'"
  double elapsed_ns = 0;   // wall time of the run (or of the interval)
  bool rusage = false;     // a command ran: its user and system time follow
  double user_s = 0, sys_s = 0;
  std::string csv_sep;     // -x: CSV with this separator instead of the table
};

/// The whole table, as perf stat prints it at the end.
std::string FormatStatTable(const std::vector<StatCounter>& counters, const StatContext& c);
/// The header line -I prints once, and one interval's lines, each after the time since the
/// start (`since_ns`).
std::string StatIntervalHeader(const std::vector<StatCounter>& counters, const StatContext& c);
std::string FormatStatInterval(const std::vector<StatCounter>& counters, const StatContext& c,
                               uint64_t since_ns);

}  // namespace pf
