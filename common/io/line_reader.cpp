#include "io/line_reader.h"

#include <algorithm>

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
// The end of the last empty line in `data`, or npos.
size_t RFindEmptyLineEnd(std::string_view data) {
  size_t a = data.rfind("\n\n");
  size_t b = data.rfind("\n\r\n");
  size_t ea = a == std::string_view::npos ? 0 : a + 2;
  size_t eb = b == std::string_view::npos ? 0 : b + 3;
  size_t e = std::max(ea, eb);
  return e == 0 ? std::string_view::npos : e;
}
}  // namespace

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
    rest_ = source_.Next();
    started_ = true;
  }
  if (rest_.empty()) return false;
  size_t take = rest_.size();
  if (rest_.size() > block_bytes_) {
    // Look for a boundary after the target size, so blocks are at least block_bytes_.
    size_t from = block_bytes_;
    size_t found = std::string_view::npos;
    // Look only a bounded distance ahead, so input without empty lines stays linear.
    if (cut_ == kSampleBoundary) found = FindEmptyLineEnd(rest_.substr(0, from + kMaxLineBytes), from);
    if (found == std::string_view::npos) {
      size_t p = rest_.find('\n', from);
      if (p != std::string_view::npos) found = p + 1;
    }
    take = found == std::string_view::npos ? rest_.size() : found;
  }
  block->owner = nullptr;
  block->releasable = source_.releasable();
  block->data = rest_.substr(0, take);
  block->first_line = line_;
  line_ += std::count(block->data.begin(), block->data.end(), '\n');
  rest_.remove_prefix(take);
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
  line_ += std::count(buf->begin(), buf->end(), '\n');
  block->owner = std::move(buf);
  return true;
}

}  // namespace pf
