#pragma once
// Asking the CPU to load memory that will be read soon. A recording's bytes are read once, so
// each read of a sample would otherwise wait on main memory: unwinding a stack copy is a chain
// of such reads (each return address gives the next frame's rule), and prefetching the next
// sample while one is processed took the unwinding of a 160 MB recording from 0.87 to 0.66 us
// a sample.

#include <cstddef>

namespace pf {

/// Asks the CPU to load the cache line of `p` (no fault if it is not mapped). Not
/// __builtin_prefetch: g++ 12 drops that builtin from some loops (the walk of a StackList in
/// sorted order lost all of its prefetches), and a hint that silently vanishes is worse than
/// none, so on x86 the instruction is written out.
inline void Prefetch(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

/// Prefetches the cache lines of [p, p + bytes).
inline void PrefetchBytes(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t k = 0; k < bytes; k += 64) Prefetch(c + k);
}

}  // namespace pf
