#include "symbolize/section_data.h"

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

bool DecompressSection(std::string_view in, std::string* out) {
  Elf64_Chdr ch;
  if (in.size() < sizeof ch) return false;
  std::memcpy(&ch, in.data(), sizeof ch);
  if (ch.ch_size > kMaxDecompressedSection) return false;
  std::string_view data = in.substr(sizeof ch);
  // Deflate and zstd expand at most ~1000x and ~32000x; a size beyond that is corrupt, and
  // not allocated.
  if (ch.ch_size / 32768 > data.size()) return false;
  out->resize(ch.ch_size);
  if (ch.ch_type == ELFCOMPRESS_ZLIB) {
    thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> d(
        libdeflate_alloc_decompressor());
    if (!d) return false;
    size_t n = 0;
    return libdeflate_zlib_decompress(d.get(), data.data(), data.size(), out->data(),
                                      out->size(), &n) == LIBDEFLATE_SUCCESS &&
           n == ch.ch_size;
  }
  if (ch.ch_type == 2 /* ELFCOMPRESS_ZSTD */) {
    size_t n = ZSTD_decompress(out->data(), out->size(), data.data(), data.size());
    return !ZSTD_isError(n) && n == ch.ch_size;
  }
  return false;
}

}  // namespace pf
