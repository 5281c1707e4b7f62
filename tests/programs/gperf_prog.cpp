// A workload with known call paths and allocation sites, linked with gperftools' libprofiler
// and tcmalloc, for the tests of pf's gperftools readers (tests/e2e/gperftools_test.sh).
//
//   CPUPROFILE=cpu.prof HEAPPROFILE=heap ./gperf_prog [SECONDS]
//
// CPU (SECONDS, default 0.5): rounds of hot_a() twice, hot_b() once and hot_c() once; hot_a
// and hot_b call spin(), hot_c has mix() inlined into it (a frame only DWARF names).
// Heap: alloc_small() keeps 1000 blocks of 64 bytes, alloc_big() keeps 8 blocks of 1 MiB,
// alloc_temp() allocates and frees 2000 blocks of 4096 bytes (alloc_* differs from inuse_*),
// then the heap profile is dumped once ("HEAPPROFILE.0001.heap", every allocation recorded).
//
// The workload's functions have C names (extern "C"), so every symbolizer names them alike.

#include <gperftools/heap-profiler.h>
#include <gperftools/profiler.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

extern "C" {

__attribute__((noinline)) unsigned spin(unsigned n) {
  volatile unsigned x = 0;
  for (unsigned i = 0; i < n; ++i) x = x * 31 + i;
  return x;
}

__attribute__((noinline)) unsigned hot_a(unsigned n) { return spin(n) + 1; }
__attribute__((noinline)) unsigned hot_b(unsigned n) { return spin(n) + 2; }

static inline __attribute__((always_inline)) unsigned mix(unsigned n) {
  volatile unsigned x = 7;
  for (unsigned i = 0; i < n; ++i) x = (x ^ i) * 33;
  return x;
}
__attribute__((noinline)) unsigned hot_c(unsigned n) { return mix(n) + 3; }

static void* kept[1100];
static int kept_n;

__attribute__((noinline)) void alloc_small(int n) {
  for (int i = 0; i < n; ++i) {
    kept[kept_n] = malloc(64);
    memset(kept[kept_n++], 1, 64);
  }
}
__attribute__((noinline)) void alloc_big(int n) {
  for (int i = 0; i < n; ++i) {
    kept[kept_n] = malloc(1 << 20);
    memset(kept[kept_n++], 2, 1 << 20);
  }
}
void* volatile last_temp;  // (so the compiler keeps each malloc and free)
__attribute__((noinline)) void alloc_temp(int n) {
  for (int i = 0; i < n; ++i) {
    last_temp = malloc(4096);
    memset(last_temp, 3, 4096);
    free(last_temp);
  }
}

}  // extern "C"

static double Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 0.5;
  unsigned sum = 0;
  double end = Now() + seconds;
  while (Now() < end) {
    for (int r = 0; r < 16; ++r) {
      sum += hot_a(20000);
      sum += hot_a(20000);
      sum += hot_b(20000);
      sum += hot_c(20000);
    }
  }
  alloc_small(1000);
  alloc_big(8);
  alloc_temp(2000);
  ProfilerFlush();  // (also keeps libprofiler linked: CPUPROFILE starts it)
  if (IsHeapProfilerRunning()) HeapProfilerDump("gperf_prog");
  printf("%u\n", sum & 1);
  return 0;
}
