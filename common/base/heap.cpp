// TuneHeap (heap.h): glibc's malloc settings, and the heap advised for huge pages.
#include "base/heap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

extern char end;  // the end of the program's data (end(3)): the heap lies above it

namespace pf {

void TuneHeap() {
#if !defined(__SANITIZE_ADDRESS__)
  // Blocks under 64 MB come from the heap, and a freed one stays there for the next.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  // The heap grows by 256 MB of address space now (the kernel gives pages as they are
  // touched), so that one madvise covers what the run will use: the kernel does not carry
  // the advice over to the heap's later growth, which glibc's tunable advises each time.
  mallopt(M_TOP_PAD, 256 << 20);
  void* volatile grow = malloc(1 << 20);
  free(grow);
  const uintptr_t huge = uintptr_t{2} << 20;
  const uintptr_t from = (reinterpret_cast<uintptr_t>(&end) + huge - 1) & ~(huge - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(sbrk(0)) & ~(huge - 1);
  // The range spans the gap between the program and its (randomly placed) heap: madvise
  // advises every mapping in it and reports ENOMEM for the gap, which is expected.
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#endif
}

}  // namespace pf
