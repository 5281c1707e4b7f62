// A C++ program whose profile has the names pf-dot must keep apart (tests/e2e/dot_cxx_test.sh):
// two function objects' operator(), two lambdas of one function, and several methods of one
// long template class (the red-black tree under std::map<std::string, std::vector<double>>).
// Built with frame pointers; the functions that matter are kept out of line.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

struct Hasher {
  __attribute__((noinline)) unsigned operator()(unsigned x) const {
    for (int i = 0; i < 400; ++i) x = x * 2654435761u + i;
    return x;
  }
};
struct Mixer {
  __attribute__((noinline)) unsigned operator()(unsigned x) const {
    for (int i = 0; i < 400; ++i) x = (x ^ (x >> 7)) * 31;
    return x;
  }
};

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 40;
  auto scale = [](int v) __attribute__((noinline)) {
    long s = 0;
    for (int i = 0; i < 400; ++i) s += static_cast<long>(v) * i;
    return s;
  };
  auto blend = [](int v, int w) __attribute__((noinline)) {
    long s = 0;
    for (int i = 0; i < 400; ++i) s += static_cast<long>(v ^ w) + i;
    return s;
  };
  unsigned long total = 0;
  for (int r = 0; r < rounds; ++r) {
    std::map<std::string, std::vector<double>> m;  // inserts, then _M_erase when it goes
    for (int i = 0; i < 20000; ++i) m[std::to_string(i * 7919 % 100003)].push_back(i);
    total += m.size();
    for (int i = 0; i < 2000; ++i) total += Hasher{}(i) + Mixer{}(i) + scale(i) + blend(i, r);
  }
  std::printf("%lu\n", total);
  return 0;
}
