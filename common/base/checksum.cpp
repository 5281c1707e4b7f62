#include "base/checksum.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#ifdef PF_CHECKSUM_AVX2
#include <sys/platform/x86.h>
#endif

namespace pf {

#ifdef PF_CHECKSUM_AVX2
uint64_t ChecksumAvx2(const void* data, size_t size);  // checksum_avx2.cpp
#endif

uint64_t Checksum(const void* data, size_t size) {
#ifdef PF_CHECKSUM_AVX2
  // AVX2 hashes about 2.5 times as fast as the SSE2 every x86-64 has (glibc's image of its
  // debug file: 0.25 ms against 0.63).
  // Asked of glibc, which has read the CPU's features already: __builtin_cpu_supports links
  // libgcc's own reading in, run at every start, and CPUID costs a VM an exit (4 us each
  // here: libgcc's reading took 50 us of each start).
  static const bool avx2 = CPU_FEATURE_ACTIVE(AVX2);
  if (avx2) return ChecksumAvx2(data, size);
#endif
  return XXH3_64bits(data, size);
}

}  // namespace pf
