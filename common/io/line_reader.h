#pragma once
// Splitting input into lines and into blocks of whole lines, with no allocation per line.
//
// BlockReader cuts a ByteSource into large blocks that end at a line boundary, or, in
// kSampleBoundary mode, after an empty line (the end of a `perf script` sample), so blocks
// can be parsed independently and in parallel. A mapped file is cut into views of the
// mapping; a stream is copied into owned buffers. Memory stays bounded: a stream line longer
// than kMaxLineBytes is dropped and counted rather than buffered (parsers skip such lines
// from mapped files too, so a hostile line cannot cost gigabytes).

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <string>
#include <string_view>

#include "base/diagnostics.h"
#include "io/input.h"

namespace pf {

/// Iterates the lines of a buffer: each line without its '\n' and, for text that may come
/// from Windows (kDropCr, the default), without a '\r' before it. Kernel and tool output
/// whose bytes are data (a path in /proc/PID/maps may end with '\r') uses kKeepCr. The last
/// line need not end with '\n'; an empty buffer has no line.
class LineSplitter {
 public:
  enum CrMode { kDropCr, kKeepCr };
  explicit LineSplitter(std::string_view data, CrMode cr = kDropCr)
      : p_(data.data()), end_(data.data() + data.size()), drop_cr_(cr == kDropCr) {}
  bool Next(std::string_view* line) {
    if (p_ >= end_) return false;
    const char* nl = FindNewline(p_, end_);
    const char* stop = nl ? nl : end_;
    size_t len = stop - p_;
    if (drop_cr_ && len && stop[-1] == '\r') --len;
    *line = std::string_view(p_, len);
    p_ = nl ? nl + 1 : end_;
    return true;
  }
  /// Where the next line starts, and where the text ends.
  const char* position() const { return p_; }
  const char* end() const { return end_; }
  /// Moves on to `p`, the start of a later line that the caller found (FindEmptyLine).
  void SkipTo(const char* p) { p_ = p; }

  /// The first '\n' in [p + 1, end) that follows another ('\n\n': an empty line's), or
  /// null; looked for in the first `limit` bytes only. 16 bytes a step.
  static const char* FindEmptyLine(const char* p, const char* end, size_t limit) {
    if (end - p > static_cast<ptrdiff_t>(limit)) end = p + limit;
    const char* q = p + 1;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    for (; end - q >= 16; q += 16) {
      const __m128i here = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
      const __m128i before = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q - 1));
      if (unsigned m = static_cast<unsigned>(_mm_movemask_epi8(
              _mm_and_si128(_mm_cmpeq_epi8(here, nl), _mm_cmpeq_epi8(before, nl))))) {
        return q + std::countr_zero(m);
      }
    }
#endif
    for (; q < end; ++q) {
      if (q[0] == '\n' && q[-1] == '\n') return q;
    }
    return nullptr;
  }

  /// The first '\n' in [p, end), or null. Its first 64 bytes inline, 16 a step: a perf
  /// script stack line is about 60 bytes, and a call to memchr costs as much as their
  /// search. Longer lines (folded stacks) go on with memchr, which takes larger steps.
  static const char* FindNewline(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    for (const char* stop = end - p > 64 ? p + 64 : end; stop - p >= 16; p += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      if (unsigned m = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)))) {
        return p + std::countr_zero(m);
      }
    }
#endif
    return static_cast<const char*>(std::memchr(p, '\n', end - p));
  }

 private:
  const char* p_;
  const char* end_;
  bool drop_cr_;
};

/// The number of '\n' in `s` (vectorised).
uint64_t CountNewlines(std::string_view s);

struct Block {
  std::shared_ptr<const std::string> owner;  // null when `data` points into a stable source
  std::string_view data;
  uint64_t first_line = 1;  // line number of the block's first line in its input
  bool releasable = false;  // ReleaseInput(data) may be called once it has been parsed
};

class BlockReader {
 public:
  enum Cut { kLineBoundary, kSampleBoundary };
  static constexpr size_t kDefaultBlockBytes = 4 << 20;
  static constexpr size_t kMaxLineBytes = 16 << 20;

  BlockReader(ByteSource& source, Cut cut, size_t block_bytes = kDefaultBlockBytes);
  /// The next block; false at the end of the input.
  bool Next(Block* block);
  /// For a reader that counts the lines of the blocks it parses: `block`, the last one Next
  /// gave, held `lines` lines, so the reader need not count them (a pass over the block)
  /// before it numbers the next. Ignored for another block.
  void CountedLines(const Block& block, uint64_t lines) {
    if (block.data.data() != uncounted_.data() || block.data.size() != uncounted_.size()) return;
    line_ += lines;
    uncounted_ = {};
  }
  /// Lines dropped because they were longer than kMaxLineBytes, and the first one's number.
  uint64_t overlong_lines() const { return overlong_lines_; }
  uint64_t first_overlong_line() const { return first_overlong_line_; }

 private:
  size_t CutPoint(std::string_view data, bool at_end) const;
  bool NextStable(Block* block);
  bool NextStream(Block* block);

  ByteSource& source_;
  Cut cut_;
  size_t block_bytes_;
  uint64_t line_ = 1;
  std::string_view uncounted_;  // the last block given, its lines not yet in line_ (stable mode)
  // stable mode
  std::string_view all_;
  size_t consumed_ = 0;
  size_t empty_end_ = std::string_view::npos;  // end of the next known empty line
  size_t scanned_ = 0;                         // no empty line is known before this
  bool started_ = false;
  // stream mode
  std::string carry_;
  bool eof_ = false;
  bool skipping_line_ = false;
  uint64_t overlong_lines_ = 0;
  uint64_t first_overlong_line_ = 0;
};

/// The overlong lines a BlockReader dropped, as a count with the first one's place.
SkipCount OverlongLines(const BlockReader& reader, const std::string& name);

/// "N lines longer than 16 MiB skipped, first at FILE:LINE", for a reader's warnings.
std::string OverlongWarning(const SkipCount& overlong);

/// The line loop of the line-oriented readers: calls line(text, number) for every line of
/// `source` (numbered from 1), read in blocks (BlockReader), giving a mapped file's pages
/// back after each block, so `line` copies what it keeps. Returns the lines skipped as
/// longer than BlockReader::kMaxLineBytes (OverlongWarning says them).
template <typename F>
SkipCount ForEachLine(ByteSource& source, F&& line) {
  BlockReader blocks(source, BlockReader::kLineBoundary);
  Block block;
  SkipCount overlong;
  while (blocks.Next(&block)) {
    LineSplitter lines(block.data);
    std::string_view text;
    uint64_t number = block.first_line;
    for (; lines.Next(&text); ++number) {
      // (A stream's are dropped by the BlockReader; a mapped file's come whole.)
      if (text.size() > BlockReader::kMaxLineBytes) {
        overlong.Add(source.name(), number);
        continue;
      }
      line(text, number);
    }
    if (block.releasable) ReleaseInput(block.data);
  }
  overlong.Merge(OverlongLines(blocks, source.name()));
  return overlong;
}

}  // namespace pf
