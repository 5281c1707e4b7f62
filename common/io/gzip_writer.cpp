// Deflates with zlib's streaming API into a 256 KiB buffer handed to the sink as it fills.
// windowBits 15 + 16 asks zlib for a gzip wrapper; without deflateSetHeader zlib writes
// mtime 0, no name and its OS code, which makes the output a function of the input alone.

#include "io/gzip_writer.h"

#include <zlib.h>

#include <algorithm>
#include <memory>

#include "base/error.h"

namespace pf {

void WriteGzip(std::string_view data, ByteSink& out) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error("gzip: cannot start zlib's deflate (out of memory)");
  }
  std::unique_ptr<z_stream, int (*)(z_stream*)> end(&z, deflateEnd);
  constexpr size_t kChunk = 256 << 10;
  std::unique_ptr<unsigned char[]> buf(new unsigned char[kChunk]);
  const char* next = data.data();
  size_t left = data.size();
  int flush = Z_NO_FLUSH;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0 && flush == Z_NO_FLUSH) {
      // avail_in is 32 bits: feed at most 1 GiB at a time.
      size_t n = std::min<size_t>(left, size_t{1} << 30);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(next));
      z.avail_in = static_cast<uInt>(n);
      next += n;
      left -= n;
      if (left == 0) flush = Z_FINISH;
    }
    z.next_out = buf.get();
    z.avail_out = kChunk;
    rc = deflate(&z, flush);
    if (rc == Z_STREAM_ERROR) throw Error("gzip: zlib's deflate failed");
    size_t have = kChunk - z.avail_out;
    if (have) out.WriteAll(std::string_view(reinterpret_cast<char*>(buf.get()), have));
  }
}

}  // namespace pf
