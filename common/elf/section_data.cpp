// A section's bytes, inflated when the section is compressed (section_data.h): SHF_COMPRESSED
// sections carry an Elf64_Chdr naming zlib or zstd and the inflated size, which is checked
// against a cap before any memory is taken, so a hostile header cannot ask for gigabytes.

#include "elf/section_data.h"

#include <elf.h>
#include <libdeflate.h>
#include <zstd.h>

#include <cstring>
#include <memory>

namespace pf {

namespace {

struct DecompressorDeleter {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

}  // namespace

size_t DecompressedSize(std::string_view in) {
  Elf64_Chdr ch;
  if (in.size() < sizeof ch) return 0;
  std::memcpy(&ch, in.data(), sizeof ch);
  if (ch.ch_type != ELFCOMPRESS_ZLIB && ch.ch_type != 2 /* ELFCOMPRESS_ZSTD */) return 0;
  if (ch.ch_size == 0 || ch.ch_size > kMaxDecompressedSection) return 0;
  // Deflate and zstd expand at most ~1000x and ~32000x; a size beyond that is corrupt, and
  // not allocated.
  if (ch.ch_size / 32768 > in.size() - sizeof ch) return 0;
  return static_cast<size_t>(ch.ch_size);
}

bool DecompressSectionInto(std::string_view in, char* out, size_t size) {
  Elf64_Chdr ch;
  if (size == 0 || DecompressedSize(in) != size) return false;
  std::memcpy(&ch, in.data(), sizeof ch);
  std::string_view data = in.substr(sizeof ch);
  if (ch.ch_type == ELFCOMPRESS_ZLIB) {
    thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(
        libdeflate_alloc_decompressor());
    if (!d) return false;
    size_t n = 0;
    return libdeflate_zlib_decompress(d.get(), data.data(), data.size(), out, size, &n) ==
               LIBDEFLATE_SUCCESS &&
           n == size;
  }
  size_t n = ZSTD_decompress(out, size, data.data(), data.size());
  return !ZSTD_isError(n) && n == size;
}

bool DecompressSection(std::string_view in, std::string* out) {
  size_t size = DecompressedSize(in);
  if (size == 0) return false;
  out->resize(size);
  return DecompressSectionInto(in, out->data(), size);
}

}  // namespace pf
