#pragma once
// Output: one buffered writer per output, over a sink (a file descriptor, a file written
// atomically, or a string for tests). A closed pipe downstream surfaces as pf::PipeClosed.

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void WriteAll(std::string_view bytes) = 0;
  /// Makes the output final (renames a temporary file into place). Called once at success.
  virtual void Commit() {}
};

/// Collects output in memory.
class StringSink : public ByteSink {
 public:
  void WriteAll(std::string_view bytes) override { data_.append(bytes); }
  const std::string& data() const { return data_; }

 private:
  std::string data_;
};

/// Opens "-" (stdout) or a file. A file is written to a temporary name beside it and renamed
/// into place by Commit(), so a failed run never leaves a half-written file. Throws pf::Error.
std::unique_ptr<ByteSink> OpenOutput(const std::string& path);

/// True when `path` names a terminal ("-" and stdout is a tty).
bool OutputIsTerminal(const std::string& path);

class BufferedWriter {
 public:
  explicit BufferedWriter(ByteSink& sink, size_t capacity = 1 << 20);
  ~BufferedWriter();  // does not flush: call Flush() on the success path
  void Append(std::string_view s) {
    if (s.size() > capacity_ - len_) {
      Slow(s);
      return;
    }
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
  }
  void Append(char c) {
    if (len_ == capacity_) Flush();
    buf_[len_++] = c;
  }
  void AppendU64(uint64_t v);
  void Flush();

 private:
  void Slow(std::string_view s);
  ByteSink& sink_;
  std::unique_ptr<char[]> buf_;  // not zero-filled: pages are touched only as output grows
  size_t capacity_;
  size_t len_ = 0;
};

}  // namespace pf
