// pf-record --stat: count instead of sample, as perf stat does (recorder.h). The events are
// counters (no sample period, no ring buffer): one per event for a command (inherited by
// its threads and children, started at its exec), one per event and thread for -p/-t, one
// per event and CPU for -a/-C. A hardware event this machine lacks is <not supported>, not
// replaced by cpu-clock as when sampling. The targets, the signals, -d and the end are the
// recorder's (recorder_command.cpp, Loop); at the end the counters are read, each scaled to
// the time it was enabled when it could not count all of it, and perf stat's table is handed
// to RecordOptions::stat_out (with -I, each interval's lines as it ends instead).

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "perf/recorder_impl.h"

namespace pf::record_impl {

namespace {

// perf stat's default events: the task's clock (the CPUs' for -a), software events, then
// the hardware ones, which a machine without counters shows as <not supported>.
std::vector<std::string> DefaultCounters(bool cpu_wide) {
  return {cpu_wide ? "cpu-clock" : "task-clock", "context-switches", "cpu-migrations",
          "page-faults", "cycles", "instructions", "branches", "branch-misses"};
}

int PerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

void Recorder::PrepareCounters() {
  const bool kernel_allowed = KernelSamplingAllowed(env_);
  for (const std::string& name : opt_.events.empty() ? DefaultCounters(cpu_wide_) : opt_.events) {
    Event e;
    e.spec = ParseEventSpec(name);
    counter_names_.push_back(name);  // perf stat names a counter as it was given ("cs")
    perf_event_attr& a = e.attr;
    std::memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = e.spec.type;
    a.config = e.spec.config;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    a.disabled = 1;
    a.inherit = !cpu_wide_;
    a.enable_on_exec = attach_command();
    a.exclude_kernel = e.spec.exclude_kernel || opt_.user_only ||
                       (!kernel_allowed && !e.spec.tracepoint() && !e.spec.exclude_user);
    a.exclude_user = e.spec.exclude_user || opt_.kernel_only;
    a.exclude_hv = a.exclude_kernel || a.exclude_user;
    events_.push_back(e);
  }
}

void Recorder::OpenCounters() {
  auto open = [this](size_t ev, int pid, int cpu, bool must_exist) {
    Event& e = events_[ev];
    if (e.unsupported) return;
    int fd = PerfEventOpen(&e.attr, pid, cpu);
    if (fd >= 0) {
      e.opened_once = true;
      handles_.push_back({fd, ev, pid, cpu});
      return;
    }
    const int err = errno;
    if (e.spec.hardware() && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)) {
      e.unsupported = true;  // perf stat: <not supported>
      return;
    }
    if (err == ESRCH && !must_exist) return;
    OpenFailed(e, err, pid, cpu);
  };
  for (size_t ev = 0; ev < events_.size(); ++ev) {
    if (cpu_wide_) {
      for (int cpu : cpus_) open(ev, -1, cpu, true);
    } else if (attach_command()) {
      open(ev, child_, -1, true);
    } else {
      for (auto [pid, tid] : threads_) {
        const bool named = std::find(opt_.tids.begin(), opt_.tids.end(), tid) != opt_.tids.end();
        open(ev, tid, -1, named);
      }
    }
  }
}

std::vector<StatCounter> Recorder::ReadCounters() const {
  std::vector<StatCounter> out(events_.size());
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    out[i].name = counter_names_[i];
    out[i].type = e.attr.type;
    out[i].config = e.attr.config;
    out[i].supported = !e.unsupported;
  }
  for (const Handle& h : handles_) {
    uint64_t v[3];  // value, time enabled, time running
    if (read(h.fd, v, sizeof v) != static_cast<ssize_t>(sizeof v)) continue;
    StatCounter& c = out[h.event];
    // Each descriptor scaled to the time it was enabled, when it could not count all of it.
    const uint64_t value = v[2] && v[2] < v[1]
                               ? static_cast<uint64_t>(static_cast<double>(v[0]) *
                                                       static_cast<double>(v[1]) /
                                                       static_cast<double>(v[2]))
                               : v[0];
    c.value += value;
    c.enabled += v[1];
    c.running += v[2];
  }
  return out;
}

StatContext Recorder::StatTarget() const {
  StatContext c;
  if (cpu_wide_) {
    c.target = "'system wide'";
  } else if (attach_command()) {
    c.target.assign(1, '\'');
    for (size_t i = 0; i < opt_.command.size(); ++i) {
      if (i > 0) c.target += ' ';
      c.target += opt_.command[i];
    }
    c.target += '\'';
  } else {
    c.target = opt_.pids.empty() ? "thread id '" : "process id '";
    bool first = true;
    for (int p : opt_.pids.empty() ? opt_.tids : opt_.pids) {
      if (!first) c.target += ',';
      first = false;
      c.target += std::to_string(p);
    }
    c.target += '\'';
  }
  c.csv_sep = opt_.stat_csv_sep;
  return c;
}

// -I: the counts since the last interval, each interval's lines when it ends (and the part
// of one at the end, `last`).
void Recorder::MaybePrintInterval(bool last) {
  const auto now = Clock::now();
  if (!last && now < next_interval_) return;
  std::vector<StatCounter> counts = ReadCounters();
  std::vector<StatCounter> delta = counts;
  for (size_t i = 0; i < delta.size() && i < last_counts_.size(); ++i) {
    delta[i].value -= std::min(delta[i].value, last_counts_[i].value);
    delta[i].enabled -= std::min(delta[i].enabled, last_counts_[i].enabled);
    delta[i].running -= std::min(delta[i].running, last_counts_[i].running);
  }
  const auto start = next_interval_ - std::chrono::milliseconds(opt_.stat_interval_ms);
  StatContext c = StatTarget();
  c.elapsed_ns = std::chrono::duration<double, std::nano>(now - start).count();
  if (intervals_printed_++ % 25 == 0) opt_.stat_out(StatIntervalHeader(delta, c));
  const uint64_t since =
      static_cast<uint64_t>(std::chrono::duration<double, std::nano>(now - enabled_at_).count());
  opt_.stat_out(FormatStatInterval(delta, c, since));
  last_counts_ = std::move(counts);
  next_interval_ = now + std::chrono::milliseconds(opt_.stat_interval_ms);
}

void Recorder::RunStat() {
  env_ = ReadPerfEnvironment();
  Validate();
  PrepareCounters();
  if (!opt_.command.empty()) ForkCommand();
  CollectThreads();
  if (pipe2(sig_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw Error("cannot create a pipe: " + Errno(errno));
  }
  SignalGuard signals(opt_.handle_signals, sig_pipe_[1]);
  OpenCounters();
  Go();
  next_interval_ = enabled_at_ + std::chrono::milliseconds(opt_.stat_interval_ms);
  Loop();
  StopCommand();  // (one still running after Ctrl-C or -d)
  for (const Handle& h : handles_) ioctl(h.fd, PERF_EVENT_IOC_DISABLE, 0);
  const auto end = Clock::now();
  if (opt_.stat_interval_ms) {
    MaybePrintInterval(true);
  } else {
    StatContext c = StatTarget();
    c.elapsed_ns = std::chrono::duration<double, std::nano>(end - enabled_at_).count();
    c.rusage = child_ > 0 && child_reaped_;
    c.user_s = static_cast<double>(rusage_.ru_utime.tv_sec) +
               static_cast<double>(rusage_.ru_utime.tv_usec) / 1e6;
    c.sys_s = static_cast<double>(rusage_.ru_stime.tv_sec) +
              static_cast<double>(rusage_.ru_stime.tv_usec) / 1e6;
    opt_.stat_out(FormatStatTable(ReadCounters(), c));
  }
  if (child_ > 0) report_->exit_status = child_status_;
}

}  // namespace pf::record_impl
