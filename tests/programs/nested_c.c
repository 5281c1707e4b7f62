/* A GNU C nested function with code of its own, and a helper inlined into it: its DWARF
 * subprogram is a child of the function around it, outside that function's address range.
 * The DWARF index must still find it (tests/unit/dwarf_info_test.cpp). */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) int mix(int v) {
  int r = 0;
  for (int i = 0; i < v % 7; ++i) r += i * v ^ (r >> 3);
  return r;
}

__attribute__((noinline)) int outer(int k) {
  __attribute__((noinline)) int inner(int v) { return mix(v) + k; }
  int s = 0;
  for (int i = 0; i < 100; ++i) s += inner(i);
  return s;
}

int main(int argc, char** argv) {
  printf("%d\n", outer(argc > 1 ? atoi(argv[1]) : 3));
  return 0;
}
