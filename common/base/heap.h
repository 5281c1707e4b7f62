#pragma once
// How a tool's process asks for memory: from a heap in huge pages that keeps what is freed.
//
// pf-collapse, pf-flamegraph and pf-dot build tables of a few to a few hundred megabytes
// (names, stack trees and lists, hash tables), grow them by doubling and free the old copy.
// With glibc's defaults each large block is mmapped and unmapped on its own, and each 4 KiB
// page of it is faulted in and zeroed one at a time: on a 19 MB capture pf-dot took 4,650
// page faults and spent 13% of its CPU in them. glibc can back its heap with transparent
// huge pages (the tunable glibc.malloc.hugetlb=1), but only from the environment at
// start-up; TuneHeap does the same from inside the process, and keeps large blocks on the
// heap. pf-dot then took 1,150 faults and 59 ms instead of 65 (77 without the settings).
//
// It costs memory at the peak, 2-7 MB (pages are given 2 MB at a time, freed blocks are kept):
// pf-diff, whose peak is a target of its own, does not call it. (FlatMap's tables map their
// own huge pages from 2 MB on, in every tool: base/flat_map.h.)

namespace pf {

/// Large blocks come from the heap, freed ones stay there, and the heap is reserved ahead
/// and advised for transparent huge pages (used where the system's THP mode is "madvise" or
/// "always"). Called by a command before its work. No effect under AddressSanitizer, whose
/// allocator is its own.
void TuneHeap();

}  // namespace pf
