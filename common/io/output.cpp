#include "io/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "base/error.h"

namespace pf {

namespace {

void WriteFd(int fd, std::string_view bytes, const std::string& name) {
  while (!bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) throw PipeClosed();
      throw Error(name, std::string("cannot write: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

class StdoutSink : public ByteSink {
 public:
  void WriteAll(std::string_view bytes) override { WriteFd(1, bytes, "<stdout>"); }
};

class FileSink : public ByteSink {
 public:
  explicit FileSink(std::string path) : path_(std::move(path)) {
    tmp_ = path_ + ".tmp-XXXXXX";
    fd_ = mkstemp(tmp_.data());
    if (fd_ < 0) throw Error(path_, std::string("cannot create: ") + std::strerror(errno));
    fchmod(fd_, 0644 & ~CurrentUmask());
  }
  ~FileSink() override {
    if (fd_ >= 0) {
      close(fd_);
      unlink(tmp_.c_str());
    }
  }
  void WriteAll(std::string_view bytes) override { WriteFd(fd_, bytes, path_); }
  void Commit() override {
    int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0 || rename(tmp_.c_str(), path_.c_str()) != 0) {
      int e = errno;
      unlink(tmp_.c_str());
      throw Error(path_, std::string("cannot write: ") + std::strerror(e));
    }
  }

 private:
  static mode_t CurrentUmask() {
    mode_t m = umask(0);
    umask(m);
    return m;
  }
  std::string path_;
  std::string tmp_;
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<ByteSink> OpenOutput(const std::string& path) {
  if (path.empty() || path == "-") return std::make_unique<StdoutSink>();
  return std::make_unique<FileSink>(path);
}

bool OutputIsTerminal(const std::string& path) {
  return (path.empty() || path == "-") && isatty(1);
}

BufferedWriter::BufferedWriter(ByteSink& sink, size_t capacity)
    : sink_(sink), buf_(std::make_unique_for_overwrite<char[]>(capacity)), capacity_(capacity) {}

BufferedWriter::~BufferedWriter() = default;

void BufferedWriter::Flush() {
  if (len_) sink_.WriteAll(std::string_view(buf_.get(), len_));
  len_ = 0;
}

void BufferedWriter::Slow(std::string_view s) {
  Flush();
  if (s.size() >= capacity_) {
    sink_.WriteAll(s);
  } else {
    std::memcpy(buf_.get(), s.data(), s.size());
    len_ = s.size();
  }
}

void BufferedWriter::AppendU64(uint64_t v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  Append(std::string_view(tmp, r.ptr - tmp));
}

}  // namespace pf
