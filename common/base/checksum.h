#pragma once
// XXH3 of large buffers, such as the cache's entries and the lines of folded text, in AVX2
// code where the CPU has it (else SSE2): the value is the same as XXH3 gives, whichever code
// computes it, so nothing a hash decides (a table's order) differs from machine to machine.

#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace pf {

uint64_t Checksum(const void* data, size_t size);

/// XXH3-128 (with `seed`) of more than 240 bytes (where XXH3 takes its vector loop) in AVX2
/// code where the CPU has it: half the instructions of SSE2's (folded lines of 600 bytes:
/// 12% of pf-diff's instructions in SSE2).
XXH128_hash_t Hash128Long(const void* data, size_t size, uint64_t seed);

/// XXH3-128 of `size` bytes with `seed` (0: XXH3_128bits's value): short ones inline, long
/// ones by Hash128Long.
inline XXH128_hash_t Hash128(const void* data, size_t size, uint64_t seed = 0) {
  return size > XXH3_MIDSIZE_MAX ? Hash128Long(data, size, seed)
                                 : XXH3_128bits_withSeed(data, size, seed);
}

}  // namespace pf
