#include "base/checksum.h"

#ifdef PF_CHECKSUM_AVX2
#include <sys/platform/x86.h>
#endif

namespace pf {

#ifdef PF_CHECKSUM_AVX2
uint64_t ChecksumAvx2(const void* data, size_t size);  // checksum_avx2.cpp
XXH128_hash_t Hash128Avx2(const void* data, size_t size, uint64_t seed);

namespace {
// Asked of glibc, which has read the CPU's features already: __builtin_cpu_supports links
// libgcc's own reading in, run at every start, and CPUID costs a VM an exit (4 us each
// here: libgcc's reading took 50 us of each start).
const bool kAvx2 = CPU_FEATURE_ACTIVE(AVX2);
}  // namespace
#endif

uint64_t Checksum(const void* data, size_t size) {
#ifdef PF_CHECKSUM_AVX2
  // AVX2 hashes about 2.5 times as fast as the SSE2 every x86-64 has (glibc's image of its
  // debug file: 0.25 ms against 0.63).
  if (kAvx2) return ChecksumAvx2(data, size);
#endif
  return XXH3_64bits(data, size);
}

XXH128_hash_t Hash128Long(const void* data, size_t size, uint64_t seed) {
#ifdef PF_CHECKSUM_AVX2
  if (kAvx2) return Hash128Avx2(data, size, seed);
#endif
  return XXH3_128bits_withSeed(data, size, seed);
}

}  // namespace pf
