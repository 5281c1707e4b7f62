// C++ functions with internal linkage (a static function in a namespace, one in an anonymous
// namespace), which GCC describes in DWARF without a linkage name: binutils, and so perf,
// names them from the symbol table (ns::helper), not by their DWARF name (helper). The
// dwarf_unwind test compares pf-script with perf script on a recording of it.
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

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 3000;
  double t = 0;
  for (int k = 0; k < rounds; ++k) t += twice(100000 + k);
  std::printf("%f\n", t);
  return 0;
}
