#pragma once
// Where a new thread runs. Linux may start a thread on its creator's CPU and leave it there
// until the load balancer moves one of them: here pf-collapse's reading thread shared the main
// thread's CPU for 1-5 ms of a 7 ms fold while the other CPU idled (perf sched timehist), and
// the main thread, whose setup takes 0.1 ms, started folding milliseconds late.

#include <sched.h>

namespace pf {

/// The CPU the calling thread runs on; -1 when unknown.
inline int CurrentCpu() { return sched_getcpu(); }

/// Moves the calling thread off `cpu` (when it may run on another), then lets it run on every
/// CPU it could before: a thread that starts a pipeline's second busy stage calls it with its
/// creator's CPU. False when it did not move (one CPU allowed, `cpu` unknown, or refused).
inline bool LeaveCpu(int cpu) {
  cpu_set_t allowed;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    return false;
  }
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0) return false;
  // The first call moves the thread to one of the others; the second allows `cpu` again
  // without moving it back.
  const bool moved = sched_setaffinity(0, sizeof others, &others) == 0;
  sched_setaffinity(0, sizeof allowed, &allowed);
  return moved;
}

}  // namespace pf
