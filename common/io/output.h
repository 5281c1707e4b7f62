#pragma once
// Output: one buffered writer per output, over a sink (a file descriptor, a file written
// atomically, or a string for tests). A closed pipe downstream surfaces as pf::PipeClosed.
//
// `-o PATH` never destroys what the user has at PATH (OpenOutput): anything that is not a
// regular file (a device, a FIFO, a socket, /dev/stdout, /dev/fd/N, /proc/self/fd/N) is
// written through, symlinks are followed to their target, a regular file with other hard
// links is rewritten in place (as cp does, so every link sees the new content), and only a
// new path or a singly-linked regular file is written beside it and renamed into place,
// keeping the existing file's mode and owner. Nothing but a regular file is ever renamed.

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

/// How a new output file is written.
struct OutputOptions {
  /// A new path is written in place instead of beside it and renamed (pf-record: a cut
  /// recording is readable up to its last record, so a killed recorder leaves what it had).
  bool new_file_in_place = false;
};

/// Opens "-" (stdout) or PATH as the header says. A new file or a replaced singly-linked
/// one is written to `PATH.pf-partial.PID` beside it and renamed into place by Commit(), so
/// a failed run never leaves a half-written file; a partial file a killed run left beside
/// PATH (its process gone) is removed. Throws pf::Error.
std::unique_ptr<ByteSink> OpenOutput(const std::string& path, const OutputOptions& options = {});

/// The suffix of the temporary file written beside an output ("out.svg.pf-partial.1234").
inline constexpr std::string_view kPartialSuffix = ".pf-partial.";

/// What perf record does to its default output: a regular file or a symbolic link at
/// `path` is renamed to `path.old` (replacing a regular `path.old`; a link is moved itself,
/// its target untouched). Returns whether it was. Throws pf::Error when
/// `path.old` exists and is not a regular file (it is never replaced).
bool KeepAsOld(const std::string& path);

/// True when `path` names a terminal: "-", /dev/stdout or /dev/fd/N on a tty.
bool OutputIsTerminal(const std::string& path);
/// The columns of the terminal on standard output ($COLUMNS, else 80, when it tells none).
size_t TerminalColumns();

class BufferedWriter {
 public:
  explicit BufferedWriter(ByteSink& sink, size_t capacity = 1 << 20);
  ~BufferedWriter();  // does not flush: call Flush() on the success path
  void Append(std::string_view s) {
    if (s.empty()) return;  // (an empty view's data may be null: no memcpy from it)
    if (s.size() > capacity_ - len_) {
      Slow(s);
      return;
    }
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
  }
  /// Append(s) for a string followed by at least kPad readable bytes (an interned name,
  /// Interner::kSlack): a short one is copied as kPad bytes at once. memcpy's choice by
  /// size mispredicted on names of mixed lengths (pf-diff's output: a quarter of its
  /// mispredicted branches).
  static constexpr size_t kPad = 64;
  void AppendPadded(std::string_view s) {
    if (s.size() <= kPad && capacity_ - len_ >= kPad) {
      std::memcpy(buf_.get() + len_, s.data(), kPad);
      len_ += s.size();
      return;
    }
    Append(s);
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
