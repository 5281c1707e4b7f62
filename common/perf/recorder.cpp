// pf-record's engine (recorder.h lists the passes). A Recorder owns everything one recording
// opens (the command's process, the event descriptors, the ring buffers, the output) and
// Run() calls the passes in order, so the whole life of a recording reads in one function and
// the destructor can undo whatever a failed pass left. Signals only write a byte into a pipe
// the loop polls, so SIGINT ends a recording between two passes and the stream stays whole.
// Each ring is drained into the stream as the kernel wrote it; DWARF samples go through the
// SampleRewriter (unwound, or trimmed), and the records are watched by the AddressCollector
// that writes the symbol table at the end.

#include "perf/recorder.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <future>
#include <map>

#include "base/error.h"
#include "base/regular_file.h"
#include "base/thread_name.h"
#include "base/version.h"
#include "io/line_reader.h"
#include "perf/advice.h"
#include "base/cpu_list.h"
#include "perf/events.h"
#include "perf/proc.h"
#include "perf/ring_buffer.h"
#include "pfstream/address_collector.h"
#include "pfstream/online_unwind.h"
#include "pfstream/perf_data.h"
#include "pfstream/perf_writer.h"
#include "pfstream/records.h"

namespace pf {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 100;  // the longest a reader of the stream waits for data

int PerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, group, flags));
}

std::string Errno(int err) { return std::strerror(err); }

// --- Signals: the handler only writes a byte into a pipe that the loop polls. ---
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

class SignalGuard {
 public:
  SignalGuard(bool enable, int write_fd) : enabled_(enable) {
    g_signal_write_fd = write_fd;
    g_signals = 0;
    if (!enabled_) return;
    struct sigaction sa = {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocking waitpid() returns EINTR
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~SignalGuard() {
    if (enabled_) {
      for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &old_[i], nullptr);
    }
    g_signal_write_fd = -1;
  }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  bool enabled_;
  struct sigaction old_[3];
};

std::string FirstValue(const char* path, const char* key) {
  std::string text;
  if (!ReadRegularFile(path, &text)) return "";
  LineSplitter lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    if (line.rfind(key, 0) == 0) {
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      size_t b = line.find_first_not_of(" \t", colon + 1);
      return b == std::string_view::npos ? "" : std::string(line.substr(b));
    }
  }
  return "";
}

uint64_t NextPow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

struct Event {
  EventSpec spec;
  perf_event_attr attr;
  std::vector<uint64_t> ids;
  bool opened_once = false;
};

struct Handle {
  int fd;
  size_t event;
  int tid;  // -1: every process (CPU-wide)
  int cpu;
};

class Recorder {
 public:
  Recorder(const RecordOptions& o, const OutputOpener& open_output, RecordReport* report)
      : opt_(o), open_output_(open_output), report_(report) {}
  ~Recorder();
  void Run();

 private:
  void Notice(const std::string& m) const {
    if (opt_.notice) opt_.notice(m);
  }
  void Validate();
  void PrepareEvents();
  void ResolveCommand();
  void ForkCommand();
  void CollectThreads();
  void OpenAll();
  bool OpenOne(size_t ev, int tid, int cpu, bool must_exist);
  void MapRings();
  void WriteHead();
  void Go();
  void Synthesize();
  void Loop();
  bool Pass();
  void Finish();
  bool ReapCommand(bool block);
  void StopCommand();
  void CountRecord(std::span<const uint8_t> rec);

  /// The command is the target (not -a/-C/-p/-t with a command, which only sets the time).
  bool attach_command() const {
    return !opt_.command.empty() && !cpu_wide_ && opt_.pids.empty() && opt_.tids.empty();
  }

  const RecordOptions& opt_;
  const OutputOpener& open_output_;
  RecordReport* report_;
  PerfEnvironment env_;
  // Opened after the command is forked, so that it does not inherit the output.
  std::unique_ptr<ByteSink> sink_;
  std::unique_ptr<BufferedWriter> out_;
  std::unique_ptr<PerfStreamWriter> writer_;
  std::unique_ptr<AddressCollector> collector_;  // null with --no-symbols
  std::unique_ptr<SampleRewriter> rewriter_;     // DWARF samples: unwound or trimmed
  SampleRewriter::Mode rewriter_mode_ = SampleRewriter::Mode::kUnwind;
  std::vector<uint64_t> pass_bytes_;             // the samples of one pass
  std::vector<std::pair<size_t, size_t>> pass_records_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point enabled_at_;

  bool cpu_wide_ = false;
  std::vector<int> cpus_;
  std::vector<Event> events_;
  std::vector<std::pair<int, int>> threads_;  // (pid, tid) for -p / -t
  std::vector<Handle> handles_;
  std::vector<RingBuffer> rings_;
  size_t ring_pages_ = 0;
  uint64_t fds_needed_ = 0;
  bool kernel_notice_given_ = false;
  std::future<KernelText> kernel_text_;

  // The command.
  std::string command_path_;
  pid_t child_ = -1;
  int go_fd_ = -1, exec_err_fd_ = -1, pidfd_ = -1;
  bool child_reaped_ = false;
  int child_status_ = 0;

  int sig_pipe_[2] = {-1, -1};
  bool stop_ = false;
};

Recorder::~Recorder() {
  // A failure or a closed pipe while the command runs: stop it as perf record does.
  if (go_fd_ >= 0) close(go_fd_);  // a child still waiting for "go" exits on EOF
  go_fd_ = -1;
  if (child_ > 0 && !child_reaped_) {
    kill(child_, SIGTERM);
    int st;
    while (waitpid(child_, &st, 0) < 0 && errno == EINTR) {
    }
  }
  for (const Handle& h : handles_) close(h.fd);
  rings_.clear();
  for (int fd : {exec_err_fd_, pidfd_, sig_pipe_[0], sig_pipe_[1]}) {
    if (fd >= 0) close(fd);
  }
  if (kernel_text_.valid()) kernel_text_.wait();
}

void Recorder::Validate() {
  const RecordOptions& o = opt_;
  const bool threads = !o.pids.empty() || !o.tids.empty();
  if (threads && o.system_wide) throw UsageError("-a records every process: drop -p/-t");
  cpu_wide_ = o.system_wide || (!o.cpus.empty() && !threads);
  if (!cpu_wide_ && !threads && o.command.empty()) {
    throw UsageError("nothing to record: give -p PID, -t TID, -a, -C CPUS or -- COMMAND");
  }
  if (o.user_only && o.kernel_only) {
    throw UsageError("--user-only and --kernel-only exclude each other");
  }
  if (o.period == 0 && o.frequency == 0) throw UsageError("-F must be at least 1");
  if (o.duration < 0 || std::isnan(o.duration)) {
    throw UsageError("-d must be a positive number of seconds");
  }
  if (o.call_graph == CallGraph::kDwarf &&
      (o.stack_bytes == 0 || o.stack_bytes % 8 != 0 || o.stack_bytes > kMaxStackBytes)) {
    throw UsageError("the stack copy must be a multiple of 8 bytes, from 8 to " +
                     std::to_string(kMaxStackBytes) + ", not " + std::to_string(o.stack_bytes));
  }
  if (o.ring_pages & (o.ring_pages - 1)) {
    throw UsageError("the ring buffer size must be a power of two pages");
  }
  std::vector<int> online = OnlineCpus();
  if (o.cpus.empty()) {
    cpus_ = online;
  } else {
    for (int c : o.cpus) {
      if (!std::binary_search(online.begin(), online.end(), c)) {
        std::string list;
        for (int x : online) {
          if (!list.empty()) list += ',';
          list += std::to_string(x);
        }
        throw UsageError("CPU " + std::to_string(c) + " is not online (online CPUs: " + list + ")");
      }
    }
    cpus_ = o.cpus;
  }
}

void Recorder::PrepareEvents() {
  std::vector<EventSpec> specs;
  for (const std::string& e : opt_.events) specs.push_back(ParseEventSpec(e));
  if (specs.empty()) specs.push_back(DefaultEventSpec());

  uint64_t frequency = opt_.frequency;
  if (!opt_.period && frequency > env_.max_sample_rate) {
    Notice("-F " + std::to_string(frequency) +
           " is above kernel.perf_event_max_sample_rate; "
           "using " +
           std::to_string(env_.max_sample_rate) +
           " (raise it with: sysctl -w "
           "kernel.perf_event_max_sample_rate=" +
           std::to_string(frequency) + ")");
    frequency = env_.max_sample_rate;
  }

  // Ring size: half a second of samples at the rate asked for.
  uint64_t rate = (opt_.period ? 1000 : frequency) * specs.size();
  const bool unlimited = env_.root || env_.privileged() || env_.paranoid < 0;
  // Generous sample sizes: 127 frames of chain; with DWARF, the stack copy and registers too.
  size_t sample_bytes = opt_.call_graph == CallGraph::kNone ? 128 : 1024;
  if (opt_.call_graph == CallGraph::kDwarf) sample_bytes = opt_.stack_bytes + 1536;
  ring_pages_ = opt_.ring_pages
                    ? opt_.ring_pages
                    : RingPagesFor(rate, sample_bytes, cpus_.size(),
                                   static_cast<int>(OnlineCpus().size()), env_.mlock_kb, unlimited,
                                   static_cast<size_t>(sysconf(_SC_PAGESIZE)));

  uint64_t sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  if (opt_.call_graph != CallGraph::kNone) sample_type |= PERF_SAMPLE_CALLCHAIN;
  if (opt_.call_graph == CallGraph::kDwarf) {
    sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  }
  if (cpu_wide_) sample_type |= PERF_SAMPLE_CPU;
  // Several events: each sample says which one it belongs to, at a fixed place.
  if (specs.size() > 1) sample_type |= PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER;

  const bool kernel_allowed = KernelSamplingAllowed(env_);
  for (size_t i = 0; i < specs.size(); ++i) {
    Event e;
    e.spec = specs[i];
    perf_event_attr& a = e.attr;
    std::memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = e.spec.type;
    a.config = e.spec.config;
    if (opt_.period) {
      a.sample_period = opt_.period;
    } else {
      a.freq = 1;
      a.sample_freq = frequency;
    }
    a.sample_type = sample_type;
    if (opt_.call_graph == CallGraph::kDwarf) {
      // The kernel's chain stays; the user part comes from unwinding the copied stack.
      // Registers as perf samples them: AX..SS and R8..R15 (PLT stubs and signal frames
      // need more than ip, sp and bp).
      a.exclude_callchain_user = 1;
      a.sample_regs_user = 0xff0fff;
      a.sample_stack_user = opt_.stack_bytes;
    }
    a.read_format = PERF_FORMAT_ID;
    a.disabled = 1;
    a.inherit = !cpu_wide_;
    a.enable_on_exec = attach_command();
    a.sample_id_all = 1;
    a.precise_ip = static_cast<unsigned>(e.spec.precise);
    a.watermark = 1;
    a.wakeup_watermark = static_cast<uint32_t>(ring_pages_ * sysconf(_SC_PAGESIZE) / 4);
    if (i == 0) {
      // Side-band records once, from the first event (as perf does): more would repeat
      // every mmap and comm per event.
      a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 1;
      // Raw DWARF stacks: data mappings too, as perf records them for its unwinders.
      a.mmap_data = opt_.call_graph == CallGraph::kDwarf && opt_.raw_stacks;
      a.build_id = opt_.build_ids;
    }
    bool exclude_kernel = e.spec.exclude_kernel || opt_.user_only;
    bool exclude_user = e.spec.exclude_user || opt_.kernel_only;
    if (!exclude_kernel && !exclude_user && !kernel_allowed) {
      exclude_kernel = true;
      if (!kernel_notice_given_) Notice(KernelExcludedNotice(env_));
      kernel_notice_given_ = true;
    }
    a.exclude_kernel = exclude_kernel;
    a.exclude_user = exclude_user;
    a.exclude_hv = exclude_kernel || exclude_user;
    events_.push_back(e);
  }
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

bool Recorder::OpenOne(size_t ev, int tid, int cpu, bool must_exist) {
  Event& e = events_[ev];
  for (int attempt = 0; attempt < 10; ++attempt) {
    int fd = PerfEventOpen(&e.attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0) {
      e.opened_once = true;
      handles_.push_back({fd, ev, tid, cpu});
      return true;
    }
    const int err = errno;
    // The retries perf makes (tools/perf/util/evsel.c, evsel__fallback()), on the first
    // descriptor of an event only, so all of its descriptors share one attribute.
    if (!e.opened_once) {
      if (e.spec.hardware() && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)) {
        Notice(e.spec.name + " is not supported here (" + Errno(err) +
               "): using cpu-clock instead, as perf does");
        e.spec.name = "cpu-clock";
        e.spec.type = e.attr.type = PERF_TYPE_SOFTWARE;
        e.spec.config = e.attr.config = PERF_COUNT_SW_CPU_CLOCK;
        continue;
      }
      if ((err == EACCES || err == EPERM) && tid >= 0 && !e.attr.exclude_kernel &&
          !e.attr.exclude_user) {
        e.attr.exclude_kernel = e.attr.exclude_hv = 1;
        if (!kernel_notice_given_) Notice(KernelExcludedNotice(env_));
        kernel_notice_given_ = true;
        continue;
      }
      if (err == EINVAL && e.attr.build_id) {  // before Linux 5.12
        e.attr.build_id = 0;
        continue;
      }
      if ((err == EINVAL || err == EOPNOTSUPP) && e.attr.precise_ip) {
        e.attr.precise_ip = 0;
        continue;
      }
    }
    if (err == EMFILE) {
      // Raise the soft limit to the hard one, as perf does, once.
      struct rlimit rl;
      if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0) continue;
      }
    }
    if (err == ESRCH && !must_exist) return false;  // the thread exited meanwhile
    OpenAttempt a;
    a.err = err;
    a.event = e.spec.name;
    a.pid = tid;
    a.cpu = cpu;
    a.kernel_included = !e.attr.exclude_kernel;
    a.hardware = e.spec.hardware();
    a.frequency = e.attr.freq ? e.attr.sample_freq : 0;
    a.fds_needed = fds_needed_;
    struct rlimit rl;
    a.fd_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 0;
    if (tid >= 0) {
      int64_t owner = ProcessOwner(tid);
      a.other_user = owner >= 0 && owner != static_cast<int64_t>(geteuid());
    }
    if (err == ESRCH) {
      throw Error(std::string(tid == child_ ? "the command" : "no process or thread ") +
                  (tid == child_ ? " exited before recording began" : std::to_string(tid)));
    }
    throw Error(OpenErrorAdvice(a, env_));
  }
  throw Error("perf_event_open kept failing for " + e.spec.name);
}

void Recorder::OpenAll() {
  const size_t per_target = events_.size() * cpus_.size();
  if (cpu_wide_) {
    fds_needed_ = per_target;
    for (int cpu : cpus_) {
      for (size_t ev = 0; ev < events_.size(); ++ev) OpenOne(ev, -1, cpu, true);
    }
    return;
  }
  if (attach_command()) {
    fds_needed_ = per_target;
    for (int cpu : cpus_) {
      for (size_t ev = 0; ev < events_.size(); ++ev) OpenOne(ev, child_, cpu, true);
    }
    return;
  }
  fds_needed_ = per_target * threads_.size() + 16;
  std::vector<std::pair<int, int>> kept;
  for (auto [pid, tid] : threads_) {
    // -t names a thread: it must exist. A thread of -p may exit while we go.
    const bool must_exist = std::find(opt_.tids.begin(), opt_.tids.end(), tid) != opt_.tids.end();
    bool ok = true;
    for (int cpu : cpus_) {
      for (size_t ev = 0; ev < events_.size() && ok; ++ev) ok = OpenOne(ev, tid, cpu, must_exist);
    }
    if (ok) kept.emplace_back(pid, tid);
  }
  for (int pid : opt_.pids) {
    bool any = std::any_of(kept.begin(), kept.end(), [pid](auto& t) { return t.first == pid; });
    if (!any) throw Error("no process " + std::to_string(pid) + " (it exited)");
  }
  threads_ = std::move(kept);
}

void Recorder::MapRings() {
  // One ring per CPU; every other descriptor of that CPU writes into it.
  std::map<int, int> ring_fd_of_cpu;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  bool shrunk = false;
  for (const Handle& h : handles_) {
    auto it = ring_fd_of_cpu.find(h.cpu);
    if (it == ring_fd_of_cpu.end()) {
      RingBuffer ring;
      for (;;) {
        int err = ring.Map(h.fd, ring_pages_);
        if (err == 0) break;
        if ((err == EPERM || err == ENOMEM || err == EAGAIN) && ring_pages_ > 8) {
          ring_pages_ /= 2;  // over the locked-memory limit: try smaller
          shrunk = true;
          continue;
        }
        throw Error(MmapErrorAdvice(err, ring_pages_ * page, env_));
      }
      rings_.push_back(std::move(ring));
      ring_fd_of_cpu.emplace(h.cpu, h.fd);
    } else if (ioctl(h.fd, PERF_EVENT_IOC_SET_OUTPUT, it->second) != 0) {
      throw Error("cannot share the ring buffer of CPU " + std::to_string(h.cpu) + ": " +
                  Errno(errno));
    }
    uint64_t id = 0;
    if (ioctl(h.fd, PERF_EVENT_IOC_ID, &id) != 0) {
      throw Error("cannot read a perf event id (Linux 3.12 or later is needed): " + Errno(errno));
    }
    events_[h.event].ids.push_back(id);
  }
  if (shrunk) {
    Notice("ring buffers reduced to " + std::to_string(ring_pages_ * page / 1024) +
           " KiB per CPU by the locked-memory limit (kernel.perf_event_mlock_kb = " +
           std::to_string(env_.mlock_kb) + "); samples may be lost at high rates");
  }
}

void Recorder::WriteHead() {
  writer_->WriteHeader();
  std::vector<EventDesc> descs;
  for (const Event& e : events_) {
    // With DWARF samples unwound here, the stream declares the samples as they are written.
    perf_event_attr stream_attr = e.attr;
    if (rewriter_) {
      rewriter_->AddAttr(e.attr, e.ids);
      stream_attr = SampleRewriter::StreamAttr(e.attr, rewriter_mode_);
    }
    writer_->WriteAttr(stream_attr, e.ids);
    descs.push_back({stream_attr, PerfEventName(e.spec.name, e.attr), e.ids});
  }
  struct utsname u;
  if (uname(&u) == 0) {
    writer_->WriteStringFeature(kFeatHostname, u.nodename);
    writer_->WriteStringFeature(kFeatOsRelease, u.release);
    writer_->WriteStringFeature(kFeatVersion, std::string("pf ") + kVersion);
    writer_->WriteStringFeature(kFeatArch, u.machine);
  }
  writer_->WriteNrCpus(static_cast<uint32_t>(ConfiguredCpus()),
                       static_cast<uint32_t>(OnlineCpus().size()));
  std::string cpu = FirstValue("/proc/cpuinfo", "model name");
  if (!cpu.empty()) writer_->WriteStringFeature(kFeatCpuDesc, cpu);
  std::string mem = FirstValue("/proc/meminfo", "MemTotal");
  if (!mem.empty()) writer_->WriteTotalMem(std::strtoull(mem.c_str(), nullptr, 10));
  if (!opt_.argv.empty()) writer_->WriteCmdline(opt_.argv);
  writer_->WriteEventDesc(descs);
  for (const EventDesc& d : descs) {
    if (!d.ids.empty()) writer_->WriteEventName(d.ids[0], d.name);
  }
  // The stream's mark: it ends with kStreamEndNote (Finish), so a reader tells a stream cut
  // at a record boundary from a whole one (pfstream/perf_data.h). Time 0: perf delivers the
  // record at once instead of ordering it, as it does the synthesized records.
  writer_->WriteSymbolNote(0, 0, kStreamNote, SynthId{});
  writer_->Flush();
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

void Recorder::Synthesize() {
  // Raw DWARF stacks: the data maps too, for perf's unwinders (they read .eh_frame_hdr
  // through the process's memory map).
  const bool raw_dwarf = opt_.call_graph == CallGraph::kDwarf && opt_.raw_stacks;
  ProcSynthesizer synth(*writer_, opt_.build_ids, raw_dwarf);
  // Processes first: a short-lived one may exit while kallsyms is being read.
  if (cpu_wide_) {
    for (int pid : ListProcesses()) synth.Process(pid);
  } else if (!threads_.empty()) {
    // -p: every thread of the process; -t: the named threads, with their process's maps.
    std::map<int, std::vector<int>> by_pid;
    for (auto [pid, tid] : threads_) by_pid[pid].push_back(tid);
    for (auto& [pid, tids] : by_pid) {
      bool whole = std::find(opt_.pids.begin(), opt_.pids.end(), pid) != opt_.pids.end();
      synth.Process(pid, whole ? std::vector<int>{} : tids);
    }
  }
  bool kernel = std::any_of(events_.begin(), events_.end(),
                            [](const Event& e) { return !e.attr.exclude_kernel; });
  if (kernel && kernel_text_.valid()) {
    KernelText text = kernel_text_.get();
    if (text.visible()) {
      synth.Kernel(text);
    } else {
      Notice(KptrRestrictNotice(env_, false));
    }
  }
  writer_->WriteFinishedInit();
  writer_->Flush();
  report_->synthesized = synth.records();
}

void Recorder::CountRecord(std::span<const uint8_t> rec) {
  ++report_->records;
  Record r;
  if (!RecordView(rec, &r)) return;
  uint64_t lost;
  if (r.type == PERF_RECORD_SAMPLE) {
    ++report_->samples;
  } else if (ParseLost(r, &lost)) {
    report_->lost += lost;
  }
}

bool Recorder::Pass() {
  const uint64_t before = writer_->bytes_written();
  if (!rewriter_) {
    for (RingBuffer& ring : rings_) {
      ring.Drain([this](std::span<const uint8_t> rec) {
        CountRecord(rec);
        writer_->WriteRaw(rec);
      });
      report_->corrupt = report_->corrupt || ring.corrupt();
    }
  } else {
    // DWARF samples are rewritten. The records of every ring are taken first and the
    // others written before the samples (a round may be reordered: readers sort it by
    // time), so that a sample's maps are known when it is unwound, whichever ring each
    // came through.
    pass_bytes_.clear();
    pass_records_.clear();
    for (RingBuffer& ring : rings_) {
      ring.Drain([this](std::span<const uint8_t> rec) {
        CountRecord(rec);
        Record r;
        if (!RecordView(rec, &r) || r.type != PERF_RECORD_SAMPLE) {
          writer_->WriteRaw(rec);
          return;
        }
        size_t at = pass_bytes_.size();
        pass_bytes_.resize(at + (rec.size() + 7) / 8);
        std::memcpy(pass_bytes_.data() + at, rec.data(), rec.size());
        pass_records_.emplace_back(at, rec.size());
      });
      report_->corrupt = report_->corrupt || ring.corrupt();
    }
    for (auto [at, size] : pass_records_) {
      auto rec = std::span<const uint8_t>(
          reinterpret_cast<const uint8_t*>(pass_bytes_.data() + at), size);
      writer_->WriteRaw(rewriter_->Rewrite(rec));
    }
  }
  if (writer_->bytes_written() == before) return false;
  // Everything read in this pass may be sorted by time against the next passes.
  writer_->WriteFinishedRound();
  writer_->Flush();
  return true;
}

bool Recorder::ReapCommand(bool block) {
  if (child_ <= 0 || child_reaped_) return child_reaped_;
  int st = 0;
  pid_t r;
  for (;;) {
    r = waitpid(child_, &st, block ? 0 : WNOHANG);
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

void Recorder::Loop() {
  const bool has_deadline = opt_.duration > 0;
  const auto deadline = enabled_at_ + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(opt_.duration));
  // Descriptors: the signal pipe, the command's pidfd, then the events (all of them with
  // -p/-t, whose POLLHUP says a target and its children are gone; the rings otherwise).
  std::vector<pollfd> fds;
  fds.push_back({sig_pipe_[0], POLLIN, 0});
  const size_t pidfd_at = fds.size();
  fds.push_back({pidfd_, POLLIN, 0});
  const size_t events_at = fds.size();
  const bool watch_threads = !threads_.empty();
  std::map<int, bool> ring_cpu_seen;
  for (const Handle& h : handles_) {
    if (watch_threads || !ring_cpu_seen[h.cpu]) fds.push_back({h.fd, POLLIN, 0});
    ring_cpu_seen[h.cpu] = true;
  }
  size_t live = fds.size() - events_at;

  for (;;) {
    Pass();
    if (stop_) break;
    int timeout = kPollMs;
    if (has_deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) break;
      timeout = static_cast<int>(std::min<int64_t>(timeout, left.count() + 1));
    }
    int n = poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) throw Error("poll: " + Errno(errno));
    if (fds[0].revents & POLLIN) {
      char buf[64];
      while (read(sig_pipe_[0], buf, sizeof buf) > 0) {
      }
      stop_ = true;  // SIGINT, SIGTERM, SIGHUP: drain once more, then end
    }
    if (child_ > 0 && ((fds[pidfd_at].revents & POLLIN) || pidfd_ < 0)) {
      if (ReapCommand(false)) stop_ = true;
    }
    if (watch_threads) {
      for (size_t i = events_at; i < fds.size(); ++i) {
        if (fds[i].fd >= 0 && (fds[i].revents & (POLLHUP | POLLERR))) {
          fds[i].fd = -1;  // poll() skips it from now on
          --live;
        }
      }
      if (live == 0) stop_ = true;  // every target thread and its children exited
    }
  }
}

void Recorder::Finish() {
  // Stop the command if it still runs (SIGTERM, as perf does; its EXIT is recorded), stop
  // sampling, then empty the rings.
  StopCommand();
  for (const Handle& h : handles_) ioctl(h.fd, PERF_EVENT_IOC_DISABLE, 0);
  Pass();
  // Unless --no-symbols: the symbols of every address sampled, resolved here where the
  // binaries and this kernel are, so the stream names its frames anywhere (symbolize/
  // embedded.h), as KSYMBOL records perf treats as no-ops.
  if (collector_) {
    writer_->SetObserver(nullptr);
    EmbeddedSymbols symbols = collector_->Resolve();
    SynthId id;
    id.time = collector_->last_time();  // after every sample, so perf keeps them in order
    for (const EmbeddedSymbols::Note& n : symbols.ToNotes()) {
      writer_->WriteSymbolNote(n.addr, n.len, n.name, id);
    }
  }
  writer_->WriteSymbolNote(0, 0, kStreamEndNote, SynthId{});  // the last record: whole
  writer_->Flush();
  sink_->Commit();
  report_->bytes = writer_->bytes_written();
  if (rewriter_ && rewriter_mode_ == SampleRewriter::Mode::kUnwind) {
    report_->unwound = rewriter_->samples();
    report_->truncated = rewriter_->truncated();
  }
  if (child_ > 0) report_->exit_status = child_status_;
}

void Recorder::Run() {
  env_ = ReadPerfEnvironment();
  Validate();
  PrepareEvents();
  // 1. targets
  if (!opt_.command.empty()) ForkCommand();
  CollectThreads();
  sink_ = open_output_();
  out_ = std::make_unique<BufferedWriter>(*sink_);
  writer_ = std::make_unique<PerfStreamWriter>(*out_);
  if (opt_.call_graph == CallGraph::kDwarf) {
    rewriter_mode_ = opt_.raw_stacks ? SampleRewriter::Mode::kTrim : SampleRewriter::Mode::kUnwind;
    rewriter_ = std::make_unique<SampleRewriter>(rewriter_mode_);
  }
  if (opt_.symbols) {
    // Watch every record written, to name the sampled addresses at the end.
    collector_ = std::make_unique<AddressCollector>();
  }
  if (collector_ || rewriter_) {
    writer_->SetObserver([this](std::span<const uint8_t> rec) {
      if (collector_) collector_->OnRecord(rec);
      // The unwinder follows maps, comms and forks (its samples come through Rewrite).
      Record r;
      if (rewriter_ && rewriter_mode_ == SampleRewriter::Mode::kUnwind && RecordView(rec, &r) &&
          r.type != PERF_RECORD_SAMPLE && r.type < kRecordHeaderAttr) {
        rewriter_->Observe(rec);
      }
    });
  }
  if (pipe2(sig_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw Error("cannot create a pipe: " + Errno(errno));
  }
  SignalGuard signals(opt_.handle_signals, sig_pipe_[1]);
  // The kernel map needs _text/_etext from /proc/kallsyms, which takes the kernel ~50 ms
  // to print: read it in the background while the events are opened.
  if (std::any_of(events_.begin(), events_.end(),
                  [](const Event& e) { return !e.attr.exclude_kernel; })) {
    kernel_text_ = std::async(std::launch::async, [] {
      NameThisThread("pf-kernel-text");
      return ReadKernelText();
    });
  }
  // 2-3. events and ring buffers
  OpenAll();
  MapRings();
  // 4-5. stream head, go, what existed before
  WriteHead();
  Go();
  Synthesize();
  // 6-7. copy the rings until the end, then the last records
  Loop();
  Finish();
}

}  // namespace

std::string RecordReport::Summary() const {
  const uint64_t total = samples + lost;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f",
                total ? 100.0 * static_cast<double>(lost) / static_cast<double>(total) : 0.0);
  return std::to_string(samples) + " samples, " + std::to_string(lost) + " lost (" + pct + "%)";
}

size_t RingPagesFor(uint64_t samples_per_second, size_t sample_bytes, size_t buffers, int cpus,
                    uint64_t mlock_kb, bool unlimited, size_t page_size) {
  // Half a second of samples.
  const uint64_t bytes = samples_per_second * sample_bytes / 2;
  uint64_t pages = std::clamp<uint64_t>(NextPow2((bytes + page_size - 1) / page_size), 128, 16384);
  if (!unlimited && buffers > 0) {
    // The kernel lets a user lock perf_event_mlock_kb per online CPU, metadata page
    // included (kernel/events/core.c, perf_mmap()).
    uint64_t budget = mlock_kb * 1024 / page_size * static_cast<uint64_t>(std::max(cpus, 1));
    uint64_t per_buffer = budget / buffers;
    while (pages > 1 && pages + 1 > per_buffer) pages /= 2;
  }
  return static_cast<size_t>(pages);
}

void RunRecord(const RecordOptions& options, const OutputOpener& open_output,
               RecordReport* report) {
  *report = RecordReport();
  Recorder recorder(options, open_output, report);
  recorder.Run();
}

void RunRecord(const RecordOptions& options, ByteSink& sink, RecordReport* report) {
  // A sink owned by the caller, behind the opener interface.
  class Borrowed : public ByteSink {
   public:
    explicit Borrowed(ByteSink& s) : s_(s) {}
    void WriteAll(std::string_view bytes) override { s_.WriteAll(bytes); }
    void Commit() override { s_.Commit(); }

   private:
    ByteSink& s_;
  };
  RunRecord(
      options, [&sink] { return std::make_unique<Borrowed>(sink); }, report);
}

}  // namespace pf
