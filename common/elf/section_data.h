#pragma once
// The bytes of an ELF section stored compressed (SHF_COMPRESSED: an Elf64_Chdr, then zlib or
// zstd data), as `ld --compress-debug-sections` and Debian's debug packages write them.
//
// zlib data is inflated with libdeflate, which decodes a whole buffer 2-3 times faster than
// zlib's streaming inflate (on glibc's .debug_info: 10 ms instead of 25); opening the DWARF
// of a compressed debug file is most of what folding a small recording costs.

#include <string>
#include <string_view>

namespace pf {

/// The largest section this will inflate (a bigger Elf64_Chdr size is taken as corrupt).
inline constexpr size_t kMaxDecompressedSection = size_t{1} << 31;

/// The size the SHF_COMPRESSED section data `in` decompresses to, from its header; 0 when the
/// header is cut or of an unknown kind, or the size is implausible.
size_t DecompressedSize(std::string_view in);

/// Decompresses `in` into `out`, which holds DecompressedSize(in) bytes; false when the data
/// does not decode to exactly that size.
bool DecompressSectionInto(std::string_view in, char* out, size_t size);

/// The same, into a string.
bool DecompressSection(std::string_view in, std::string* out);

}  // namespace pf
