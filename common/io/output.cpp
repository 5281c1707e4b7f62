// The sinks and the buffered writer (output.h). Writes loop over short writes and turn EPIPE
// into pf::PipeClosed. OpenOutput decides how `-o PATH` is written without ever destroying
// what the user has there: it follows symlinks to their target, writes through anything that
// is not a regular file, rewrites a hard-linked file in place, and otherwise writes
// PATH.pf-partial.PID beside the target and renames it into place at commit, keeping the old
// file's owner and mode (partial files left by a killed run are removed). BufferedWriter
// appends into one large buffer, flushed when full: the tools write millions of short pieces.

#include "io/output.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
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

std::string Errno(int e) { return std::strerror(e); }

/// Writes to a descriptor the sink owns: a device, a FIFO, a socket, a descriptor named by
/// /dev/fd/N, or a regular file rewritten in place. `unlink_if_empty` names a file this sink
/// created that is removed again when the run fails before writing anything.
class DescriptorSink : public ByteSink {
 public:
  DescriptorSink(int fd, std::string name, std::string unlink_if_empty = {})
      : fd_(fd), name_(std::move(name)), created_(std::move(unlink_if_empty)) {}
  ~DescriptorSink() override {
    if (fd_ < 0) return;
    close(fd_);
    if (!created_.empty() && written_ == 0) unlink(created_.c_str());
  }
  void WriteAll(std::string_view bytes) override {
    WriteFd(fd_, bytes, name_);
    written_ += bytes.size();
  }
  void Commit() override {
    int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0 && errno != EINTR) throw Error(name_, "cannot write: " + Errno(errno));
  }

 private:
  int fd_;
  std::string name_;
  std::string created_;
  uint64_t written_ = 0;
};

/// Writes `tmp` beside `target` and renames it over `target` at Commit().
class ReplacingSink : public ByteSink {
 public:
  ReplacingSink(int fd, std::string name, std::string tmp, std::string target)
      : fd_(fd), name_(std::move(name)), tmp_(std::move(tmp)), target_(std::move(target)) {}
  ~ReplacingSink() override {
    if (fd_ >= 0) {
      close(fd_);
      unlink(tmp_.c_str());
    }
  }
  void WriteAll(std::string_view bytes) override { WriteFd(fd_, bytes, name_); }
  void Commit() override {
    int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0 || rename(tmp_.c_str(), target_.c_str()) != 0) {
      int e = errno;
      unlink(tmp_.c_str());
      throw Error(name_, "cannot write: " + Errno(e));
    }
  }

 private:
  int fd_;
  std::string name_;
  std::string tmp_;
  std::string target_;
};

/// The descriptor a path names when it is one of ours: /dev/stdout, /dev/stderr, /dev/fd/N,
/// /proc/self/fd/N, /proc/thread-self/fd/N or /proc/PID/fd/N with our PID; -1 otherwise.
int NamedDescriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  const std::string prefixes[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/",
                                  "/proc/" + std::to_string(getpid()) + "/fd/"};
  for (const std::string& prefix : prefixes) {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
    int fd = -1;
    const char* first = path.data() + prefix.size();
    const char* last = path.data() + path.size();
    auto r = std::from_chars(first, last, fd);
    if (r.ec == std::errc() && r.ptr == last && fd >= 0) return fd;
  }
  return -1;
}

/// Follows the symlinks at the end of `path`: returns the path they lead to (which may not
/// exist yet), or sets *fd when a link on the way names one of our descriptors.
std::string FollowLinks(std::string path, int* fd) {
  for (int hops = 0; hops < 40; ++hops) {
    if ((*fd = NamedDescriptor(path)) >= 0) return path;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    ssize_t n = readlink(path.c_str(), link.data(), link.size());
    if (n < 0) throw Error(path, "cannot read the link: " + Errno(errno));
    if (static_cast<size_t>(n) >= link.size()) throw Error(path, "the link changed while read");
    link.resize(static_cast<size_t>(n));
    if (link.empty() || link[0] == '/') {
      path = link;
    } else {
      size_t slash = path.rfind('/');
      path = slash == std::string::npos ? link : path.substr(0, slash + 1) + link;
    }
  }
  throw Error(path, "cannot write: " + Errno(ELOOP));
}

/// Connects to a Unix socket named in the file system.
int ConnectSocket(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw Error(path, "the socket's path is too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error(path, "cannot connect: " + Errno(errno));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    close(fd);
    throw Error(path, "cannot connect: " + Errno(e));
  }
  return fd;
}

/// Removes the partial files (`NAME.pf-partial.PID[-N]`) a killed run left beside `target`,
/// when their process is gone.
void RemoveStalePartials(const std::string& target) {
  size_t slash = target.rfind('/');
  std::string dir = slash == std::string::npos ? "." : target.substr(0, slash + 1);
  std::string prefix =
      (slash == std::string::npos ? target : target.substr(slash + 1)) + std::string(kPartialSuffix);
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = name.substr(prefix.size());
    int pid = 0;
    auto r = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (r.ec != std::errc() || pid <= 0 || pid == getpid()) continue;
    if (r.ptr != rest.data() + rest.size() && *r.ptr != '-') continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // still running (or not ours to ask)
    std::string path = (slash == std::string::npos ? "" : dir) + std::string(name);
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) unlink(path.c_str());
  }
  closedir(d);
}

/// Creates `target.pf-partial.PID` (or `-N` after it when taken) for writing.
int CreatePartial(const std::string& target, std::string* tmp) {
  const std::string base = target + std::string(kPartialSuffix) + std::to_string(getpid());
  for (int n = 0; n < 100; ++n) {
    *tmp = n == 0 ? base : base + "-" + std::to_string(n);
    int fd = open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

/// Gives the new file the replaced file's owner and mode, as far as we may (cp -p's rule:
/// without the owner, no set-user-ID or set-group-ID bit).
void KeepOwnerAndMode(int fd, const struct stat& old) {
  mode_t mode = old.st_mode & 07777;
  if ((old.st_uid != geteuid() || old.st_gid != getegid()) &&
      fchown(fd, old.st_uid, old.st_gid) != 0) {
    mode &= ~static_cast<mode_t>(S_ISUID | S_ISGID);
  }
  fchmod(fd, mode);
}

}  // namespace

std::unique_ptr<ByteSink> OpenOutput(const std::string& path, const OutputOptions& options) {
  if (path.empty() || path == "-") return std::make_unique<StdoutSink>();
  // A descriptor of ours (/dev/stdout, /dev/fd/N, a link to one): write to it as it is.
  int named = -1;
  std::string target = FollowLinks(path, &named);
  if (named >= 0) {
    int fd = fcntl(named, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) throw Error(path, "cannot write: " + Errno(errno));
    return std::make_unique<DescriptorSink>(fd, path);
  }
  struct stat st;
  bool exists = stat(target.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) throw Error(path, "cannot write: " + Errno(errno));
  // Not a regular file (a device, a FIFO, a socket): write through, never replace.
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw Error(path, "cannot write: " + Errno(EISDIR));
    int fd = S_ISSOCK(st.st_mode) ? ConnectSocket(target)
                                  : open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) throw Error(path, "cannot write: " + Errno(errno));
    return std::make_unique<DescriptorSink>(fd, path);
  }
  // A regular file with other hard links: rewrite it in place, so every link sees it.
  if (exists && st.st_nlink > 1) {
    int fd = open(target.c_str(), O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) throw Error(path, "cannot write: " + Errno(errno));
    return std::make_unique<DescriptorSink>(fd, path);
  }
  if (!exists && options.new_file_in_place) {
    int fd = open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd < 0) throw Error(path, "cannot create: " + Errno(errno));
    return std::make_unique<DescriptorSink>(fd, path, target);
  }
  // A new file, or one to replace: write beside it, rename into place at the end.
  RemoveStalePartials(target);
  std::string tmp;
  int fd = CreatePartial(target, &tmp);
  if (fd < 0) {
    int e = errno;
    if (exists && (e == EACCES || e == EROFS || e == EPERM)) {  // a folder we may not write
      fd = open(target.c_str(), O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
      if (fd >= 0) return std::make_unique<DescriptorSink>(fd, path);
    }
    throw Error(path, std::string(exists ? "cannot write: " : "cannot create: ") + Errno(e));
  }
  if (exists) KeepOwnerAndMode(fd, st);
  return std::make_unique<ReplacingSink>(fd, path, tmp, target);
}

bool KeepAsOld(const std::string& path) {
  struct stat st;
  // A symbolic link is moved itself, as perf moves it: its target is left as it is.
  if (lstat(path.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
    return false;
  }
  const std::string old = path + ".old";
  if (lstat(old.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw Error(old, "is not a regular file: not replacing it with " + path);
  }
  if (rename(path.c_str(), old.c_str()) != 0) {
    throw Error(path, "cannot rename to " + old + ": " + Errno(errno));
  }
  return true;
}

bool OutputIsTerminal(const std::string& path) {
  if (path.empty() || path == "-") return isatty(1);
  int named = -1;
  FollowLinks(path, &named);  // -o /dev/stdout is standard output too
  return named >= 0 && isatty(named);
}

size_t TerminalColumns() {
  winsize ws{};
  if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  size_t columns = 0;
  if (const char* c = std::getenv("COLUMNS")) {
    std::from_chars(c, c + std::strlen(c), columns);
  }
  return columns > 0 ? columns : 80;
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
