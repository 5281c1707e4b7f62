#pragma once
// XXH3 (64 bits) of large buffers, such as the cache's entries, in AVX2 code where the CPU
// has it (else SSE2): the value is the same as XXH3_64bits gives, whichever code computes it.

#include <cstddef>
#include <cstdint>

namespace pf {

uint64_t Checksum(const void* data, size_t size);

}  // namespace pf
