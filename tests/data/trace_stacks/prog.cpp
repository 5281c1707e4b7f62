// The program of tests/data/trace_stacks/bpftrace-prog-*.txt (README.md there); not built by the tests.
#include <thread>
#include <vector>
#include <functional>
#include <map>
#include <string>
#include <cmath>
#include <cstdio>
#include <atomic>
#include <unistd.h>
namespace ns { namespace inner {
template <typename T, int N> struct Deep {
  static __attribute__((noinline)) double go(T x) { volatile double r = Deep<T, N-1>::go(x + 1); return r + 1; }
};
template <typename T> struct Deep<T, 0> {
  static __attribute__((noinline)) double go(T x) { double s = 0; for (int i = 0; i < 20000; ++i) s += std::sqrt(x + i); return s; }
};
}}
std::atomic<bool> stop{false};
__attribute__((noinline)) long recurse(int n) { if (n == 0) { long s = 0; for (int i = 0; i < 50000; ++i) s += i * i % 7; return s; } return recurse(n - 1) + 1; }
__attribute__((noinline)) void sleeper() { while (!stop) usleep(3000); }
int main(int argc, char** argv) {
  int secs = argc > 1 ? atoi(argv[1]) : 5;
  std::vector<std::thread> ts;
  ts.emplace_back([] { while (!stop) ns::inner::Deep<double, 12>::go(1.0); });
  ts.emplace_back([] { while (!stop) recurse(60); });
  auto lam = [](std::map<std::string, int>& m) { for (int i = 0; i < 1000; ++i) m[std::to_string(i)] += i; };
  ts.emplace_back([&] { std::map<std::string, int> m; while (!stop) { lam(m); m.clear(); } });
  ts.emplace_back(sleeper);
  sleep(secs); stop = true;
  for (auto& t : ts) t.join();
}
