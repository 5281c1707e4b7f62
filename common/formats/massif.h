#pragma once
// Reading valgrind's massif files (massif.out.PID): the heap tree of one snapshot as a stack
// tree of bytes.
//
// A massif file is a header (`desc:`, `cmd:`, `time_unit:`) and snapshots, each
// `snapshot=N` with its time, mem_heap_B, mem_heap_extra_B, mem_stacks_B and
// `heap_tree=empty|detailed|peak`. Detailed and peak snapshots carry a tree, callee first:
// the root is all heap allocation functions, its children the allocation sites, their
// children the callers, one line each, indented by depth:
//     n2: 75712 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.
//      n1: 64000 0x109167: alloc_row (massif_prog.c:32)
//       n0: 64000 0x1092A8: main (massif_prog.c:68)
//      n0: 512 in 1 place, below massif's threshold (1.00%)
// A node's bytes are inclusive (itself and all it lists below it); a chain from a site down
// to a node with bytes its children do not account for is a stack, root first, with those
// bytes (node minus its children; never negative: a file that says otherwise is counted and
// warned of). So the tree's total equals the snapshot's mem_heap_B.
//
// Frames are the function names as massif prints them, without the "0xADDR: " prefix and
// without the " (file.c:12)" or " (in /lib/x.so)" that follows (a flame graph merges a
// function's call sites, as perf's folded stacks do); an unknown function ("???") is its
// object "[x.so]", as stackcollapse-perf.pl names unknown frames; massif's below-threshold
// entries are one frame "[below threshold: N places]".

#include <string>
#include <string_view>

#include "io/input.h"
#include "stacks/read_report.h"
#include "stacks/stack_tree.h"

namespace pf {

/// Throws pf::UsageError unless `snapshot` is "peak", "last" or a snapshot number (what
/// ReadMassif takes; the tools check --snapshot with it before reading any input).
void CheckMassifSnapshot(std::string_view snapshot);

/// Reads the heap tree of one snapshot of a massif file: `snapshot` is "peak" (the
/// snapshot massif marks as the peak), "last" (the last snapshot with a tree) or a snapshot
/// number. One column, "inuse_space" in bytes. Throws pf::Error (FILE:LINE) for a file that
/// is not massif's, or a snapshot that is missing or has no tree (naming those that have).
StackTree ReadMassif(ByteSource& source, std::string_view snapshot, ReadReport* report);

/// A massif tree entry's text as a frame name (see the file comment).
std::string MassifFrameName(std::string_view text);

}  // namespace pf
