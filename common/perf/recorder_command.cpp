// pf-record's command and threads (recorder.h's first and fifth passes). The command is
// resolved on PATH and forked before any event exists; the child waits on a pipe for "go",
// so that its events (enable_on_exec) are in place before its first instruction, and an exec
// failure comes back through a second pipe. A pidfd tells the loop when it exits. The stop
// signals (SIGINT, SIGTERM, SIGHUP) only write a byte into a pipe that the loop polls; a
// second one while the command is being waited for kills it.

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/error.h"
#include "perf/recorder_impl.h"

namespace pf::record_impl {

namespace {

// The stop signals: the handler only writes a byte into a pipe that the loop polls.
int g_signal_write_fd = -1;
volatile sig_atomic_t g_signals = 0;

void OnStopSignal(int) {
  int saved = errno;
  g_signals = g_signals + 1;
  if (g_signal_write_fd >= 0) {
    char c = 1;
    (void)!write(g_signal_write_fd, &c, 1);
  }
  errno = saved;
}

}  // namespace

SignalGuard::SignalGuard(bool enable, int write_fd) : enabled_(enable) {
  g_signal_write_fd = write_fd;
  g_signals = 0;
  if (!enabled_) return;
  struct sigaction sa = {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking waitpid() returns EINTR
  for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &sa, &old_[i]);
}

SignalGuard::~SignalGuard() {
  if (enabled_) {
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  g_signal_write_fd = -1;
}

void Recorder::ResolveCommand() {
  const std::string& name = opt_.command[0];
  auto runnable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (!runnable(name)) {
      throw Error(name, "cannot run: " + Errno(access(name.c_str(), F_OK) ? ENOENT : EACCES));
    }
    command_path_ = name;
    return;
  }
  const char* path = getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  for (;;) {
    size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (runnable(candidate)) {
      command_path_ = candidate;
      return;
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  throw Error(name, "command not found");
}

void Recorder::ForkCommand() {
  ResolveCommand();
  int go[2], err[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    throw Error("cannot create a pipe: " + Errno(errno));
  }
  std::vector<char*> argv;
  for (const std::string& a : opt_.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const char* path = command_path_.c_str();
  const bool to_stderr = opt_.command_stdout_to_stderr;

  pid_t pid = fork();
  if (pid < 0) throw Error("cannot fork: " + Errno(errno));
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec. It waits for "go", so that the
    // events exist (enable_on_exec) before its first instruction.
    close(go[1]);
    close(err[0]);
    if (to_stderr) dup2(2, 1);  // the stream owns stdout (perf does the same)
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, nullptr);  // pf tools ignore SIGPIPE; the command must not
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    char c;
    ssize_t n;
    do {
      n = read(go[0], &c, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);
    execv(path, argv.data());
    int e = errno;
    (void)!write(err[1], &e, sizeof e);
    _exit(127);
  }
  close(go[0]);
  close(err[1]);
  child_ = pid;
  go_fd_ = go[1];
  exec_err_fd_ = err[0];
  // A pidfd becomes readable when the child exits (Linux 5.3+); else waitpid() polling.
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}

void Recorder::CollectThreads() {
  for (int pid : opt_.pids) {
    std::vector<int> tids = ListThreads(pid);
    if (tids.empty() || !ProcessAlive(pid)) throw Error("no process " + std::to_string(pid));
    for (int tid : tids) threads_.emplace_back(pid, tid);
  }
  for (int tid : opt_.tids) {
    int tgid = 0, ppid = 0;
    if (!ReadTgidPpid(tid, &tgid, &ppid)) throw Error("no thread " + std::to_string(tid));
    threads_.emplace_back(tgid, tid);
  }
}

void Recorder::Go() {
  if (!attach_command()) {
    for (const Handle& h : handles_) {
      if (ioctl(h.fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        throw Error("cannot enable a perf event: " + Errno(errno));
      }
    }
  }
  enabled_at_ = Clock::now();
  if (child_ > 0) {
    // Let the command exec; enable_on_exec starts its events at that instant.
    if (write(go_fd_, "g", 1) != 1) throw Error("cannot start the command: " + Errno(errno));
    close(go_fd_);
    go_fd_ = -1;
    int e = 0;
    ssize_t n;
    do {
      n = read(exec_err_fd_, &e, sizeof e);
    } while (n < 0 && errno == EINTR);
    if (n == sizeof e) {
      ReapCommand(true);
      throw Error(opt_.command[0], "cannot run: " + Errno(e));
    }
    report_->command_ran = true;
  }
  report_->startup_ms = std::chrono::duration<double, std::milli>(enabled_at_ - start_).count();
}

bool Recorder::ReapCommand(bool block) {
  if (child_ <= 0 || child_reaped_) return child_reaped_;
  int st = 0;
  pid_t r;
  for (;;) {
    r = wait4(child_, &st, block ? 0 : WNOHANG, &rusage_);  // (its times, for --stat)
    if (r >= 0 || errno != EINTR) break;
    if (g_signals > 1) kill(child_, SIGKILL);  // a second Ctrl-C while we wait
  }
  if (r != child_) return false;
  child_reaped_ = true;
  child_status_ = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
  return true;
}

void Recorder::StopCommand() {
  if (child_ <= 0 || child_reaped_) return;
  kill(child_, SIGTERM);
  ReapCommand(true);
}

}  // namespace pf::record_impl
