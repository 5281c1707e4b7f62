#pragma once
// Opening the files a recording names (binaries, debug files, /tmp/perf-PID.map, build-id
// cache entries, saved kernel symbols) on the reading machine. Those names come from the
// data, not from the user: one of them can be a FIFO or a device there, and a plain open()
// of a FIFO waits for a writer forever. So every such file is opened without blocking and
// without becoming a controlling terminal, and kept only when fstat says it is a regular
// file; anything else reads as absent, as perf treats a file it cannot use.
// (A FIFO the user names on the command line is an input like any other: io/input.h.)

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace pf {

/// A descriptor of `path` when it is a regular file, opened read-only, close-on-exec and
/// without blocking (which a regular file's reads ignore). Else -1, with errno from open()
/// or EINVAL for a file that is not regular (a FIFO, a device, a socket, a directory).
inline int OpenRegularFile(const char* path) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return -1;
  struct stat st;
  int e = fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
  if (e != 0) {
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}
inline int OpenRegularFile(const std::string& path) { return OpenRegularFile(path.c_str()); }

/// The whole of the regular file `path` in `out`; false (errno set) when it cannot be opened
/// as one or a read fails.
inline bool ReadRegularFile(const std::string& path, std::string* out) {
  int fd = OpenRegularFile(path);
  if (fd < 0) return false;
  out->clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out->append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      int e = errno;
      close(fd);
      errno = e;
      return false;
    }
  }
  close(fd);
  return true;
}

}  // namespace pf
