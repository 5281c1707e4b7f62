#include "base/cpu.h"

#include <gtest/gtest.h>

#include <thread>

namespace pf {
namespace {

bool SameCpus(const cpu_set_t& a, const cpu_set_t& b) { return CPU_EQUAL(&a, &b); }

// A thread that leaves its CPU runs on another at once, and may then run anywhere again.
TEST(Cpu, LeaveCpuMovesTheThreadAndKeepsItsCpus) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int cpu = CurrentCpu();
  ASSERT_GE(cpu, 0);
  if (CPU_COUNT(&allowed) < 2) {
    EXPECT_FALSE(LeaveCpu(cpu));
    GTEST_SKIP() << "one CPU allowed: there is nowhere to move to";
  }
  // On a thread of its own (the test's thread keeps its affinity whatever happens).
  bool moved = false;
  int after = -1;
  cpu_set_t then;
  std::thread t([&] {
    const int here = CurrentCpu();
    moved = LeaveCpu(here);
    after = CurrentCpu();
    sched_getaffinity(0, sizeof then, &then);
    EXPECT_NE(after, here);
  });
  t.join();
  EXPECT_TRUE(moved);
  EXPECT_GE(after, 0);
  EXPECT_TRUE(SameCpus(then, allowed));
  EXPECT_FALSE(LeaveCpu(-1));
  EXPECT_FALSE(LeaveCpu(CPU_SETSIZE));
}

}  // namespace
}  // namespace pf
