#pragma once
// gperftools' profiles, parsed (no symbols): the CPU profiler's legacy binary format
// (CPUPROFILE=) and the heap profiler's text (HEAPPROFILE=, tcmalloc's sampled heap). Both
// hold stacks of return addresses and the process's /proc/self/maps text; collapse/
// gperftools.h names the addresses through pf's symbolizer. What is read, and every choice
// pprof makes that is followed here (the header words, the -1 on callers' addresses, the
// CPU profile's frame fix-ups, the heap's sample types and unsampling), is in the .cpp.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stacks/read_report.h"
#include "stacks/weight.h"

namespace pf {

/// A gperftools profile before its addresses are named.
struct GperftoolsProfile {
  /// The values of each stack: CPU: samples (count) and cpu (nanoseconds); heap:
  /// alloc_objects, alloc_space, inuse_objects, inuse_space (or the inuse pair alone).
  std::vector<SampleType> types;
  struct Stack {
    size_t first = 0;     // in addresses
    uint32_t depth = 0;
  };
  std::vector<Stack> stacks;
  /// Every stack's addresses, leaf first; a caller's is its return address minus one (on
  /// the call instruction), as pprof looks them up.
  std::vector<uint64_t> addresses;
  std::vector<uint64_t> values;  // types.size() per stack
  /// The executable mappings of the maps text, in its order.
  struct Mapping {
    uint64_t start = 0, limit = 0, offset = 0;
    std::string path;  // "" for an anonymous one
  };
  std::vector<Mapping> mappings;
  /// CPU: the sampling period in microseconds. Heap: the sampling rate in bytes the values
  /// were unsampled with (0: not sampled, or not scaled).
  uint64_t period = 0;
  std::string heap_kind;  // heap: "heapprofile", "heap_v2", "heap", ...
};

/// Whether `head` starts with a CPU profile's header (five words 0, 3, 0, period, 0, of 32
/// or 64 bits, either byte order).
bool IsGperftoolsCpu(std::string_view head);
/// Whether `head`'s first line is a heap profile's header ("heap profile: N: B [M: A] @ ...").
bool IsGperftoolsHeap(std::string_view head);

/// Parses a whole CPU profile. Throws pf::Error (naming `name`) when it is not one; a
/// profile cut short is read up to its last whole record, with a warning in `report`.
GperftoolsProfile ParseGperftoolsCpu(std::string_view data, const std::string& name,
                                     ReadReport* report);
/// Parses a whole heap profile; malformed stack lines are skipped and counted in `report`.
GperftoolsProfile ParseGperftoolsHeap(std::string_view data, const std::string& name,
                                      ReadReport* report);

/// pprof's estimate of the unsampled (count, bytes) of a heap_v2 stack sampled at `rate`
/// bytes: each divided by the chance 1 - exp(-(bytes/count)/rate) that an allocation of the
/// average size was sampled.
void UnsampleHeap(uint64_t* count, uint64_t* bytes, uint64_t rate);

}  // namespace pf
