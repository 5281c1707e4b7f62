#pragma once
// gperftools' CPU and heap profiles (formats/gperftools.h parses them) named through pf's
// symbolizer and folded into a stack tree: one of the readers ReadProfile chooses from
// (collapse/profiles.h).

#include "collapse/profiles.h"

namespace pf {

/// Reads a gperftools profile (`format`: kGperftoolsCpu or kGperftoolsHeap) into a tree with
/// its sample types (CPU: samples, cpu; heap: alloc_objects, alloc_space, inuse_objects,
/// inuse_space). Binaries are looked for as `symbols` says (--symfs); those the profile's
/// maps name that are not found are listed in a warning in `report`, with how many samples
/// they leave unnamed and where to put them.
StackTree ReadGperftools(InputFormat format, ByteSource& source, const ProfileOptions& options,
                         const Symbolizer::Options& symbols, ReadReport* report);

/// The most of a gperftools profile gathered from a pipe or a decompressed file.
inline constexpr uint64_t kMaxGperftoolsBytes = uint64_t{1} << 30;

/// The whole of `source` as one buffer: a stable source's own bytes, else its chunks
/// gathered in *storage. Input that is not a profile of the format (`cpu`, else heap) is
/// refused from its first 4 KiB, before the rest is gathered; more than `cap` bytes is a
/// pf::Error (a gzip bomb ends there, not in the machine's memory).
std::string_view GatherGperftoolsBytes(ByteSource& source, bool cpu, std::string* storage,
                                       uint64_t cap = kMaxGperftoolsBytes);

}  // namespace pf
