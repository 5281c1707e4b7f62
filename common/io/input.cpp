// The byte sources (input.h). A regular file is mapped whole and handed out as one chunk
// (MADV_SEQUENTIAL, and huge pages where the kernel offers them): the readers above then work
// on string_views into the mapping with no copy. Anything else (a pipe, a terminal, a device)
// is read in large blocks into a buffer the source owns. Compression is recognised from the
// first bytes (gzip's and zstd's magic), never from a name, and undone by a source that wraps
// the raw one, so no reader knows whether its input was compressed. ReleaseInput gives back
// the pages of a mapping already parsed, so a large input does not stay resident.

#include "io/input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace pf {

namespace {

constexpr size_t kReadBlock = 4 << 20;

std::string ErrnoText() { return std::strerror(errno); }

// A whole buffer that is already in memory: a mapped file or caller memory.
class MemorySource : public ByteSource {
 public:
  MemorySource(std::string name, std::string_view data, void* map = nullptr, size_t map_len = 0)
      : ByteSource(std::move(name)), data_(data), map_(map), map_len_(map_len) {}
  ~MemorySource() override {
    if (map_) munmap(map_, map_len_);
  }
  std::string_view Next() override {
    std::string_view d = done_ ? std::string_view() : data_;
    done_ = true;
    return d;
  }
  std::string_view Peek() override { return done_ ? std::string_view() : data_; }
  bool stable() const override { return true; }
  bool releasable() const override { return map_ != nullptr; }

 private:
  std::string_view data_;
  void* map_;
  size_t map_len_;
  bool done_ = false;
};

// A file descriptor read in large blocks (pipes, terminals, special files).
class FdSource : public ByteSource {
 public:
  FdSource(std::string name, int fd, bool owned)
      : ByteSource(std::move(name)),
        fd_(fd),
        owned_(owned),
        buf_(std::make_unique_for_overwrite<char[]>(kReadBlock)) {}
  ~FdSource() override {
    if (owned_) close(fd_);
  }
  std::string_view Next() override {
    if (!pending_) Fill();
    pending_ = false;
    return {buf_.get(), len_};
  }
  std::string_view Peek() override {
    if (!pending_) {
      Fill();
      pending_ = true;
    }
    return {buf_.get(), len_};
  }

 private:
  // Reads until the buffer is full or the input ends, so chunks are large.
  void Fill() {
    len_ = 0;
    while (len_ < kReadBlock) {
      ssize_t n = read(fd_, buf_.get() + len_, kReadBlock - len_);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(name(), "cannot read: " + ErrnoText());
      }
      if (n == 0) break;
      len_ += static_cast<size_t>(n);
    }
  }

  int fd_;
  bool owned_;
  std::unique_ptr<char[]> buf_;  // not zero-filled: a small input touches few pages
  size_t len_ = 0;
  bool pending_ = false;
};

// Shared shape of the two decompressors: pull compressed chunks from `inner`, hand out
// decompressed blocks.
class DecompressSource : public ByteSource {
 public:
  explicit DecompressSource(std::unique_ptr<ByteSource> inner)
      : ByteSource(inner->name()), inner_(std::move(inner)), out_(kReadBlock) {}
  std::string_view Next() override {
    if (!pending_) Fill();
    pending_ = false;
    return {out_.data(), out_len_};
  }
  std::string_view Peek() override {
    if (!pending_) {
      Fill();
      pending_ = true;
    }
    return {out_.data(), out_len_};
  }

 protected:
  // Decompresses into out_[out_len_..]; returns false at the end of the stream.
  virtual void Fill() = 0;
  // The next compressed chunk; empty at the end of the input.
  std::string_view NextInput() {
    if (in_.empty() && !inner_done_) {
      in_ = inner_->Next();
      if (in_.empty()) inner_done_ = true;
    }
    return in_;
  }
  std::unique_ptr<ByteSource> inner_;
  std::string_view in_;
  bool inner_done_ = false;
  std::vector<char> out_;
  size_t out_len_ = 0;
  bool pending_ = false;
  bool ended_ = false;
};

class GzipSource : public DecompressSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> inner) : DecompressSource(std::move(inner)) {
    std::memset(&z_, 0, sizeof z_);
    if (inflateInit2(&z_, 15 + 32) != Z_OK) throw Error(name(), "cannot start gzip decoder");
  }
  ~GzipSource() override { inflateEnd(&z_); }

 protected:
  void Fill() override {
    out_len_ = 0;
    while (out_len_ < out_.size() && !ended_) {
      std::string_view in = NextInput();
      if (in.empty()) {
        if (in_member_) throw Error(name(), "gzip data ends early (truncated file?)");
        ended_ = true;
        break;
      }
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      size_t offered = std::min<size_t>(in.size(), 1u << 30);
      z_.avail_in = static_cast<uInt>(offered);
      z_.next_out = reinterpret_cast<Bytef*>(out_.data() + out_len_);
      z_.avail_out = static_cast<uInt>(out_.size() - out_len_);
      in_member_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      in_.remove_prefix(offered - z_.avail_in);
      out_len_ = out_.size() - z_.avail_out;
      if (rc == Z_STREAM_END) {
        in_member_ = false;
        inflateReset(&z_);  // concatenated gzip members continue
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw Error(name(), std::string("corrupt gzip data: ") + (z_.msg ? z_.msg : "error"));
      }
    }
  }

 private:
  z_stream z_;
  bool in_member_ = false;
};

class ZstdSource : public DecompressSource {
 public:
  explicit ZstdSource(std::unique_ptr<ByteSource> inner)
      : DecompressSource(std::move(inner)), z_(ZSTD_createDStream()) {
    if (!z_) throw Error(name(), "cannot start zstd decoder");
  }
  ~ZstdSource() override { ZSTD_freeDStream(z_); }

 protected:
  void Fill() override {
    out_len_ = 0;
    while (out_len_ < out_.size() && !ended_) {
      std::string_view in = NextInput();
      if (in.empty()) {
        if (in_frame_) throw Error(name(), "zstd data ends early (truncated file?)");
        ended_ = true;
        break;
      }
      ZSTD_inBuffer ib{in.data(), in.size(), 0};
      ZSTD_outBuffer ob{out_.data(), out_.size(), out_len_};
      size_t rc = ZSTD_decompressStream(z_, &ob, &ib);
      if (ZSTD_isError(rc)) {
        throw Error(name(), std::string("corrupt zstd data: ") + ZSTD_getErrorName(rc));
      }
      in_frame_ = rc != 0;
      in_.remove_prefix(ib.pos);
      out_len_ = ob.pos;
    }
  }

 private:
  ZSTD_DStream* z_;
  bool in_frame_ = false;
};

std::unique_ptr<ByteSource> Wrap(std::unique_ptr<ByteSource> raw) {
  switch (DetectCompression(raw->Peek())) {
    case Compression::kGzip:
      return std::make_unique<GzipSource>(std::move(raw));
    case Compression::kZstd:
      return std::make_unique<ZstdSource>(std::move(raw));
    case Compression::kNone:
      break;
  }
  return raw;
}

}  // namespace

Compression DetectCompression(std::string_view head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return Compression::kGzip;
  }
  if (head.size() >= 4 && head.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4)) {
    return Compression::kZstd;
  }
  return Compression::kNone;
}

void ReleaseInput(std::string_view bytes) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(bytes.data()) + page - 1) & ~(page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()) & ~(page - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

std::unique_ptr<ByteSource> MemoryInput(std::string_view data, std::string name) {
  return Wrap(std::make_unique<MemorySource>(std::move(name), data));
}

namespace {

// `fd`, a regular file, mapped whole; null when it cannot be.
std::unique_ptr<ByteSource> MapFile(const std::string& name, int fd, const struct stat& st) {
  if (!S_ISREG(st.st_mode) || st.st_size <= 0) return nullptr;
  size_t len = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return nullptr;
  madvise(map, len, MADV_SEQUENTIAL);
  // Pages read from disk through this mapping are cached in folios of 2 MiB where the file
  // system allows it (ext4 since Linux 6.16), which every later mapping of the file maps in
  // a fault each: a 100 MB recording read cold once was cached page by page (read ahead
  // behind a header read at each end), and each later run spent 12 ms mapping and
  // unmapping it instead of 0.5 ms. Pages already cached are left as they are.
  madvise(map, len, MADV_HUGEPAGE);
  return Wrap(std::make_unique<MemorySource>(
      name, std::string_view(static_cast<const char*>(map), len), map, len));
}

}  // namespace

std::unique_ptr<ByteSource> OpenInput(const std::string& path) {
  if (path == "-") {
    // Redirected from a file (`< perf.data`) and not read from yet: mapped as a named file is
    // (reading a 37 MB recording into memory took ten times as long), and left at its end as
    // reading it would.
    struct stat st;
    if (fstat(0, &st) == 0 && lseek(0, 0, SEEK_CUR) == 0) {
      if (auto mapped = MapFile("<stdin>", 0, st)) {
        lseek(0, 0, SEEK_END);
        return mapped;
      }
    }
    return Wrap(std::make_unique<FdSource>("<stdin>", 0, false));
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open: " + ErrnoText());
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    throw Error(path, std::string("cannot stat: ") + std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    throw Error(path, "is a directory");
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    std::unique_ptr<ByteSource> mapped = MapFile(path, fd, st);
    int e = errno;
    close(fd);
    if (!mapped) throw Error(path, std::string("cannot map: ") + std::strerror(e));
    return mapped;
  }
  return Wrap(std::make_unique<FdSource>(path, fd, true));
}

}  // namespace pf
