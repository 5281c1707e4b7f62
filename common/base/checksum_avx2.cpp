// Compiled with -mavx2 (common/CMakeLists.txt): called only where the CPU has AVX2.
#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace pf {

uint64_t ChecksumAvx2(const void* data, size_t size) { return XXH3_64bits(data, size); }

XXH128_hash_t Hash128Avx2(const void* data, size_t size, uint64_t seed) {
  return XXH3_128bits_withSeed(data, size, seed);
}

}  // namespace pf
