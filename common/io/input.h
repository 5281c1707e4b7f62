#pragma once
// The io module (common/io/): bytes in and out: input sources (input.h), line and block
// splitting (line_reader.h), buffered output and safe -o files (output.h), read-ahead of
// mapped pages (page_ahead.h).
//
// Input: files by mmap (stdin too when redirected from one), pipes in large reads, gzip and
// zstd undone transparently (recognised by their magic bytes, never by file name). Everything
// above this layer sees a ByteSource: a sequence of chunks of bytes.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace pf {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// The next chunk of bytes; empty at the end. A chunk stays valid until the next call,
  /// or, when stable(), for the lifetime of the source.
  virtual std::string_view Next() = 0;
  /// The first chunk, without consuming it (the next Next() returns it again).
  virtual std::string_view Peek() = 0;
  /// True when the whole input is one chunk that stays valid (a mapped file, memory).
  virtual bool stable() const { return false; }
  /// True when consumed parts of the input may be given back to the kernel with
  /// ReleaseInput (a mapped file, whose pages would otherwise all stay resident).
  virtual bool releasable() const { return false; }
  /// The input's name for messages ("<stdin>" for "-").
  const std::string& name() const { return name_; }

 protected:
  explicit ByteSource(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

enum class Compression { kNone, kGzip, kZstd };

/// Opens a file, or stdin for "-": mapped when it is a regular file, read in large blocks
/// otherwise, decompressed when it starts with gzip or zstd magic. Throws pf::Error.
std::unique_ptr<ByteSource> OpenInput(const std::string& path);

/// A source over memory the caller keeps alive (tests, fuzzers); decompressed like a file.
std::unique_ptr<ByteSource> MemoryInput(std::string_view data, std::string name = "<memory>");

/// Gives back the whole pages inside `bytes` of a releasable() source: they are re-read
/// from the file if touched again. Keeps a large mapped input from filling memory.
void ReleaseInput(std::string_view bytes);

/// The compression a buffer starts with.
Compression DetectCompression(std::string_view head);

}  // namespace pf
