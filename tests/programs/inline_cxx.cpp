// A C++ program whose DWARF has what the CU index must read right: functions in namespaces
// and classes, templates, lambdas (code nested in local classes), functions inlined into
// functions inlined into others, and the STL's deep inline trees. The unit tests look up
// every address of its .text; built with DWARF 5 and 4, and with debug sections compressed.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace shapes {

struct Point {
  long x, y;
};

static inline __attribute__((always_inline)) long Square(long v) { return v * v; }

static inline __attribute__((always_inline)) long Norm(const Point& p) {
  return Square(p.x) + Square(p.y);
}

template <typename T>
class Accumulator {
 public:
  void Add(const T& v) { total_ += Weigh(v); }
  long total() const { return total_; }

 private:
  static long Weigh(const T& v) { return Norm(v) % 1000; }
  long total_ = 0;
};

}  // namespace shapes

__attribute__((noinline)) long SortAndSum(std::vector<shapes::Point>& points) {
  std::sort(points.begin(), points.end(), [](const shapes::Point& a, const shapes::Point& b) {
    return shapes::Norm(a) < shapes::Norm(b);
  });
  shapes::Accumulator<shapes::Point> acc;
  for (const auto& p : points) acc.Add(p);
  return acc.total();
}

__attribute__((noinline)) long CountWords(const std::vector<std::string>& words) {
  std::map<std::string, int> counts;
  for (const auto& w : words) ++counts[w];
  struct Longest {
    size_t operator()(const std::map<std::string, int>& m) const {
      size_t n = 0;
      for (const auto& [k, v] : m) n = std::max(n, k.size() * static_cast<size_t>(v));
      return n;
    }
  };
  return static_cast<long>(Longest()(counts));
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  long sum = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<shapes::Point> points;
    for (long i = 0; i < 20000; ++i) points.push_back({(i * 7919) % 1013, (i * 104729) % 997});
    sum += SortAndSum(points);
    std::vector<std::string> words;
    for (int i = 0; i < 5000; ++i) words.push_back("w" + std::to_string(i % 313));
    sum += CountWords(words);
  }
  std::printf("%ld\n", sum);
  return 0;
}
