#pragma once
// For fuzz targets whose seeds are whole, valid encodings (cache entries): each input is also
// tried cut short and with a byte changed, at points across it, so that replaying the corpus
// in ctest exercises the readers' checks and not only their happy path.
#include <cstddef>
#include <string>
#include <string_view>

namespace pf::fuzz {

template <typename Check>
void CheckWithVariants(std::string_view input, Check check) {
  check(input);
  const size_t step = input.size() / 64 + 1;
  for (size_t k = 0; k < input.size(); k += step) {
    check(input.substr(0, k));
    std::string flipped(input);
    flipped[k] = static_cast<char>(flipped[k] ^ 0x41);
    check(std::string_view(flipped));
  }
}

}  // namespace pf::fuzz
