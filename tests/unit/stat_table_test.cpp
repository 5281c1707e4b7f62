// perf stat's table (perf/stat_table.h), checked against lines perf stat 6.1 printed on this
// kind of machine (no hardware counters): the widths, the metrics, the footer, CSV and -I.

#include "perf/stat_table.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

namespace pf {
namespace {

std::vector<StatCounter> Counters() {
  auto sw = [](const char* name, uint64_t config, uint64_t value) {
    return StatCounter{name, PERF_TYPE_SOFTWARE, config, true, value, 815345, 815345};
  };
  std::vector<StatCounter> c = {sw("task-clock", PERF_COUNT_SW_TASK_CLOCK, 853000),
                                sw("context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 1),
                                sw("cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, 0),
                                sw("page-faults", PERF_COUNT_SW_PAGE_FAULTS, 76)};
  c.push_back(StatCounter{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false});
  return c;
}

TEST(StatTable, PerfStatsLayout) {
  StatContext ctx{"'sleep 0.1'", 101657444, true, 0.001698, 0.0, ""};
  EXPECT_EQ(FormatStatTable(Counters(), ctx),
            "\n Performance counter stats for 'sleep 0.1':\n\n"
            "              0.85 msec task-clock                       #    0.008 CPUs utilized          \n"
            "                 1      context-switches                 #    1.172 K/sec                  \n"
            "                 0      cpu-migrations                   #    0.000 /sec                   \n"
            "                76      page-faults                      #   89.097 K/sec                  \n"
            "   <not supported>      cycles                                                      \n"
            "\n       0.101657444 seconds time elapsed\n"
            "\n       0.001698000 seconds user\n       0.000000000 seconds sys\n\n\n");
  ctx.rusage = false;  // -a, -p: no command of ours ran
  EXPECT_TRUE(FormatStatTable(Counters(), ctx).ends_with("seconds time elapsed\n\n"));
}

TEST(StatTable, CsvAndIntervals) {
  StatContext ctx{"'sleep 0.1'", 101657444, true, 0, 0, ","};
  std::vector<StatCounter> c = Counters();
  c[2].running = 0;  // never ran: <not counted>
  EXPECT_EQ(FormatStatTable(c, ctx),
            "0.85,msec,task-clock,815345,100.00,0.008,CPUs utilized\n"
            "1,,context-switches,815345,100.00,1.172,K/sec\n"
            "<not counted>,,cpu-migrations,0,100.00,,\n"
            "76,,page-faults,815345,100.00,89.097,K/sec\n"
            "<not supported>,,cycles,0,100.00,,\n");
  ctx.csv_sep.clear();
  EXPECT_EQ(StatIntervalHeader(c, ctx), "#           time             counts unit events\n");
  std::string lines = FormatStatInterval({c[0]}, ctx, 200329114);
  EXPECT_EQ(lines,
            "     0.200329114               0.85 msec task-clock                       #    0.008 "
            "CPUs utilized          \n");
  // A counter that ran part of its time: the share after the metric.
  c[0].running = c[0].enabled / 2;
  EXPECT_NE(FormatStatTable({c[0]}, ctx).find("CPUs utilized            (50.00%)\n"),
            std::string::npos);
}

}  // namespace
}  // namespace pf
