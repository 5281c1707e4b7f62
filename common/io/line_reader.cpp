// Cutting input into blocks of whole lines (line_reader.h). A mapped file is cut into views of
// the mapping: each block ends at the first boundary (a newline, or an empty line in sample
// mode) after the target size, and the search for empty lines remembers how far it got, so
// input with few of them is still scanned once. A stream is copied into owned buffers and the
// partial line at the end of a chunk carries over to the next block; a stream line longer than
// the cap is dropped and counted instead of buffered. Line numbers are counted per block so
// that errors in blocks parsed on other threads still name their line; a mapped block's are
// counted only when the next block is asked for, unless its reader said how many it read.

#include "io/line_reader.h"

#include "base/error.h"

#include <algorithm>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace pf {

BlockReader::BlockReader(ByteSource& source, Cut cut, size_t block_bytes)
    : source_(source), cut_(cut), block_bytes_(block_bytes) {}

namespace {
// The end of the first empty line ("\n\n" or "\n\r\n") at or after `from`, or npos. One pass
// over the newlines, stopping at the first empty line.
size_t FindEmptyLineEnd(std::string_view data, size_t from) {
  for (size_t p = data.find('\n', from); p != std::string_view::npos; p = data.find('\n', p + 1)) {
    if (p + 1 < data.size() && data[p + 1] == '\n') return p + 2;
    if (p + 2 < data.size() && data[p + 1] == '\r' && data[p + 2] == '\n') return p + 3;
  }
  return std::string_view::npos;
}
// The end of the last empty line in `data`, or npos: one backward pass over the newlines.
size_t RFindEmptyLineEnd(std::string_view data) {
  const char* begin = data.data();
  size_t n = data.size();
  while (n > 0) {
    const char* nl = static_cast<const char*>(memrchr(begin, '\n', n));
    if (!nl) break;
    size_t p = nl - begin;
    if (p >= 1 && begin[p - 1] == '\n') return p + 1;
    if (p >= 2 && begin[p - 1] == '\r' && begin[p - 2] == '\n') return p + 1;
    n = p;
  }
  return std::string_view::npos;
}
}  // namespace

uint64_t CountNewlines(std::string_view s) {
  uint64_t n = 0;
  const char* p = s.data();
  const char* end = p + s.size();
#ifdef __SSE2__
  // Compare 16 bytes at a time; the 0xff matches are subtracted into byte counters, which are
  // summed with a SAD before they can overflow.
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (end - p >= 16) {
    __m128i acc = zero;
    for (int i = 0; i < 255 && end - p >= 16; ++i, p += 16) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
    }
    __m128i sums = _mm_sad_epu8(acc, zero);
    n += static_cast<uint64_t>(_mm_cvtsi128_si64(sums)) +
         static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
#endif
  for (; p < end; ++p) n += *p == '\n';
  return n;
}

// Where to end a block of `data`: after the last empty line (sample mode) or the last newline;
// 0 when there is no such place. At the end of the input everything goes.
size_t BlockReader::CutPoint(std::string_view data, bool at_end) const {
  if (at_end) return data.size();
  if (cut_ == kSampleBoundary) {
    size_t e = RFindEmptyLineEnd(data);
    if (e != std::string_view::npos) return e;
  }
  size_t nl = data.rfind('\n');
  return nl == std::string_view::npos ? 0 : nl + 1;
}

bool BlockReader::Next(Block* block) {
  return source_.stable() ? NextStable(block) : NextStream(block);
}

bool BlockReader::NextStable(Block* block) {
  if (!started_) {
    all_ = source_.Next();
    started_ = true;
  }
  if (!uncounted_.empty()) line_ += CountNewlines(uncounted_);  // no CountedLines for it
  uncounted_ = {};
  std::string_view rest = all_.substr(consumed_);
  if (rest.empty()) return false;
  size_t take = rest.size();
  if (rest.size() > block_bytes_) {
    // Cut at the first boundary after the target size, so blocks are at least block_bytes_.
    // The search for an empty line remembers how far it got, so input with few or no empty
    // lines is still scanned once, not once per block.
    size_t from = consumed_ + block_bytes_;
    size_t found = std::string_view::npos;
    if (cut_ == kSampleBoundary) {
      if (empty_end_ == std::string_view::npos || empty_end_ < from) {
        if (scanned_ < from) scanned_ = from;
        empty_end_ = scanned_ < all_.size() ? FindEmptyLineEnd(all_, scanned_) : std::string_view::npos;
        scanned_ = empty_end_ == std::string_view::npos ? all_.size() : empty_end_;
      }
      if (empty_end_ != std::string_view::npos && empty_end_ >= from) found = empty_end_;
    }
    if (found == std::string_view::npos) {
      size_t p = all_.find('\n', from);
      if (p != std::string_view::npos) found = p + 1;
    }
    take = found == std::string_view::npos ? rest.size() : found - consumed_;
  }
  block->owner = nullptr;
  block->releasable = source_.releasable();
  block->data = rest.substr(0, take);
  block->first_line = line_;
  uncounted_ = block->data;  // counted when the next block is asked for, unless said
  consumed_ += take;
  return true;
}

bool BlockReader::NextStream(Block* block) {
  auto buf = std::make_shared<std::string>();
  buf->swap(carry_);
  for (;;) {
    if (eof_) break;
    std::string_view chunk = source_.Next();
    if (chunk.empty()) {
      eof_ = true;
      break;
    }
    if (skipping_line_) {  // inside an overlong line: drop bytes up to its end
      size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) continue;
      chunk.remove_prefix(nl + 1);
      skipping_line_ = false;
      ++line_;
    }
    buf->append(chunk);
    if (buf->size() < block_bytes_) continue;
    size_t cut = CutPoint(*buf, false);
    if (cut > 0) {
      carry_.assign(*buf, cut, std::string::npos);
      buf->resize(cut);
      break;
    }
    if (buf->size() > kMaxLineBytes) {  // one line, too long to hold: drop it, count it
      if (overlong_lines_++ == 0) first_overlong_line_ = line_;
      buf->clear();
      skipping_line_ = true;
    }
  }
  if (buf->empty()) return false;
  block->data = *buf;
  block->releasable = false;
  block->first_line = line_;
  line_ += CountNewlines(*buf);
  block->owner = std::move(buf);
  return true;
}

SkipCount OverlongLines(const BlockReader& reader, const std::string& name) {
  SkipCount s;
  if (reader.overlong_lines()) {
    s.count = reader.overlong_lines();
    s.first_file = name;
    s.first_line = reader.first_overlong_line();
  }
  return s;
}

std::string OverlongWarning(const SkipCount& overlong) {
  return Plural(overlong.count, "line", "lines") + " longer than 16 MiB skipped, first at " +
         Where(overlong.first_file, overlong.first_line);
}

}  // namespace pf
