// Direct (r) and mutual (even/odd) recursion for callgrind: tests/data/valgrind/README.md.
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) long work(int n) { long s=0; for (int i=0;i<n*1000;i++) s+=i; return s; }
__attribute__((noinline)) long r(int d) { if (d==0) return work(5); return r(d-1) + work(1); }
__attribute__((noinline)) long odd(int d);
__attribute__((noinline)) long even(int d) { if (d==0) return work(3); return odd(d-1); }
__attribute__((noinline)) long odd(int d) { if (d==0) return work(2); return even(d-1); }
int main() { sink = r(3) + even(4) + work(7); return 0; }
