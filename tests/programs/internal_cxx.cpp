// C++ functions with internal linkage (a static function in a namespace, one in an anonymous
// namespace), which GCC describes in DWARF without a linkage name: binutils, and so perf,
// names them from the symbol table (ns::helper), not by their DWARF name (helper) -- but only
// once it has been asked about an address of the function's own: before that, as the caller
// of an inlined function, a lambda is "operator()" (most of `sweep` is the inlined `blend`).
// The dwarf_unwind test compares pf-script with perf script on a recording of it.
#include <cstdio>
#include <cstdlib>

namespace ns {
static __attribute__((noinline)) double helper(int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += (i % 7) * 0.5;
  return s;
}
}  // namespace ns

namespace {
__attribute__((noinline)) double twice(int n) { return ns::helper(n) * 2; }
}  // namespace

inline __attribute__((always_inline)) double blend(int i) {
  return (i % 5) * 0.25 + (i % 3);
}

int main(int argc, char** argv) {
  auto sweep = [](int n) __attribute__((noinline)) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += blend(i);
    return s;
  };
  int rounds = argc > 1 ? std::atoi(argv[1]) : 3000;
  double t = 0;
  for (int k = 0; k < rounds; ++k) t += twice(100000 + k) + sweep(100000 + k);
  std::printf("%f\n", t);
  return 0;
}
