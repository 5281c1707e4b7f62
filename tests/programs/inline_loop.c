/* A hot loop in functions inlined into each other (inner into middle into outer), for
 * profiles whose addresses pf names itself: each inlined function must be a frame of its
 * own, as pprof's own symbolization gives them (tests/e2e/pprof_in_test.sh). Argument: the
 * number of millions of calls (default 3). */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) double inner(double x) {
  for (int i = 0; i < 200; i++) x = x * 1.0000001 + 0.5;
  return x;
}

static inline __attribute__((always_inline)) double middle(double x) {
  return inner(x) + inner(x * 2);
}

__attribute__((noinline)) double outer(double x) { return middle(x) * 0.5; }

int main(int argc, char** argv) {
  long n = (argc > 1 ? atol(argv[1]) : 3) * 1000000;
  double s = 0;
  for (long i = 0; i < n; i++) s += outer((double)i);
  printf("%f\n", s);
  return 0;
}
