// pf-record's events (recorder.h's passes 2 and 3). Each event's perf_event_attr is built
// the way perf builds it (side-band records from the first event only, the DWARF registers
// and stack copy, inherit unless CPU-wide, enable_on_exec for a command); then one
// descriptor is opened per (event, thread or all, CPU). A refusal is retried as perf's
// evsel__fallback() retries it (cycles -> cpu-clock, kernel excluded, no build-id, no
// precise_ip, a raised descriptor limit), on the first descriptor of an event only so all of
// them share one attribute; otherwise it becomes advice (perf/advice.h). The ring buffers
// are one per CPU, shrunk under the locked-memory limit; the CPU's other descriptors write
// into its ring.

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "base/error.h"
#include "base/cpu_list.h"
#include "perf/recorder_impl.h"

namespace pf::record_impl {

namespace {

int PerfEventOpen(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, group, flags));
}

}  // namespace

void Recorder::PrepareEvents() {
  std::vector<EventSpec> specs;
  for (const std::string& e : opt_.events) specs.push_back(ParseEventSpec(e));
  if (specs.empty()) specs.push_back(DefaultEventSpec());
  const uint64_t frequency = AllowedFrequency();
  const size_t opened = specs.size() + (opt_.off_cpu ? 1 : 0);
  SizeRings(opened, frequency);
  uint64_t sample_type = SampleType(opened);
  // Tracepoints: the CPU of each sample, as perf records (and perf script prints) it.
  const bool tracepoints =
      std::any_of(specs.begin(), specs.end(), [](const EventSpec& s) { return s.tracepoint(); });
  if (tracepoints) sample_type |= PERF_SAMPLE_CPU;
  const bool kernel_allowed = KernelSamplingAllowed(env_);
  for (size_t i = 0; i < specs.size(); ++i) {
    Event e;
    e.spec = specs[i];
    e.attr = EventAttr(e.spec, i == 0, sample_type, frequency, kernel_allowed);
    if (e.spec.tracepoint()) TracepointAttr(&e.attr, kernel_allowed);
    events_.push_back(e);
  }
  if (opt_.off_cpu) events_.push_back(SwitchEvent(sample_type, kernel_allowed));
}

// An event that fires only in the kernel (a tracepoint, the switch-out sample): with the
// kernel excluded it would never be seen, so it keeps the kernel (refused with advice where
// this user may not sample it) and --user-only leaves out only its kernel frames. Each hit
// is a sample (-c, else 1 as perf's default for tracepoints).
void Recorder::KernelEvent(perf_event_attr* a, bool kernel_allowed, const char* what) const {
  if (!kernel_allowed) throw Error(KernelNeededAdvice(env_, what));
  a->freq = 0;
  a->sample_period = opt_.period ? opt_.period : 1;
  a->exclude_kernel = a->exclude_hv = 0;
  a->exclude_callchain_kernel = opt_.user_only;
  a->precise_ip = 0;
}

// A tracepoint: a sample at each hit, with its fields (PERF_SAMPLE_RAW).
void Recorder::TracepointAttr(perf_event_attr* a, bool kernel_allowed) const {
  KernelEvent(a, kernel_allowed, "a tracepoint");
  a->sample_type |= PERF_SAMPLE_RAW;
}

// --off-cpu: a sample at every context switch, which the kernel takes as a thread leaves the
// CPU, in its context (perf/off_cpu.h).
Event Recorder::SwitchEvent(uint64_t sample_type, bool kernel_allowed) {
  Event e;
  e.spec.name = "context-switches";
  e.spec.type = PERF_TYPE_SOFTWARE;
  e.spec.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
  e.switches = true;
  e.attr = EventAttr(e.spec, false, sample_type, 1, true);
  KernelEvent(&e.attr, kernel_allowed, "--off-cpu (a sample at each context switch)");
  e.attr.exclude_user = 0;   // (--kernel-only leaves it: every switch is wanted)
  e.attr.sample_period = 1;  // every switch, whatever -c says
  return e;
}

// -F, lowered to kernel.perf_event_max_sample_rate (with a notice) when above it.
uint64_t Recorder::AllowedFrequency() const {
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
  return frequency;
}

// Ring size: half a second of samples at the rate asked for.
void Recorder::SizeRings(size_t events, uint64_t frequency) {
  uint64_t rate = (opt_.period ? 1000 : frequency) * events;
  if (opt_.off_cpu) rate += 20000;  // switches a second per CPU, for a busy program
  const bool unlimited = env_.root || env_.privileged() || env_.paranoid < 0;
  // Generous sample sizes: 127 frames of chain; with DWARF, the stack copy and registers too.
  size_t sample_bytes = opt_.call_graph == CallChainMode::kNone ? 128 : 1024;
  if (opt_.call_graph == CallChainMode::kDwarf) sample_bytes = opt_.stack_bytes + 1536;
  ring_pages_ = opt_.ring_pages
                    ? opt_.ring_pages
                    : RingPagesFor(rate, sample_bytes, cpus_.size(),
                                   static_cast<int>(OnlineCpus().size()), env_.mlock_kb, unlimited,
                                   static_cast<size_t>(sysconf(_SC_PAGESIZE)));
}

uint64_t Recorder::SampleType(size_t events) const {
  uint64_t sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
  if (opt_.call_graph != CallChainMode::kNone) sample_type |= PERF_SAMPLE_CALLCHAIN;
  if (opt_.call_graph == CallChainMode::kDwarf) {
    sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  }
  if (cpu_wide_) sample_type |= PERF_SAMPLE_CPU;
  // Several events: each sample says which one it belongs to, at a fixed place.
  if (events > 1) sample_type |= PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER;
  return sample_type;
}

// One event's attribute; `first` carries the side-band records. The kernel is left out
// (with a notice, once) when this user may not sample it.
perf_event_attr Recorder::EventAttr(const EventSpec& spec, bool first, uint64_t sample_type,
                                    uint64_t frequency, bool kernel_allowed) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = spec.type;
  a.config = spec.config;
  if (opt_.period) {
    a.sample_period = opt_.period;
  } else {
    a.freq = 1;
    a.sample_freq = frequency;
  }
  a.sample_type = sample_type;
  if (opt_.call_graph == CallChainMode::kDwarf) {
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
  a.precise_ip = static_cast<unsigned>(spec.precise);
  a.watermark = 1;
  a.wakeup_watermark = static_cast<uint32_t>(ring_pages_ * sysconf(_SC_PAGESIZE) / 4);
  if (first) {
    // Side-band records once, from the first event (as perf does): more would repeat
    // every mmap and comm per event.
    a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 1;
    // Raw DWARF stacks: data mappings too, as perf records them for its unwinders.
    a.mmap_data = opt_.call_graph == CallChainMode::kDwarf && opt_.raw_stacks;
    a.build_id = opt_.build_ids;
    a.context_switch = opt_.off_cpu;  // --off-cpu: a record as each thread returns to a CPU
  }
  bool exclude_kernel = spec.exclude_kernel || opt_.user_only;
  bool exclude_user = spec.exclude_user || opt_.kernel_only;
  if (!exclude_kernel && !exclude_user && !kernel_allowed) {
    exclude_kernel = true;
    if (!kernel_notice_given_) Notice(KernelExcludedNotice(env_));
    kernel_notice_given_ = true;
  }
  a.exclude_kernel = exclude_kernel;
  a.exclude_user = exclude_user;
  a.exclude_hv = exclude_kernel || exclude_user;
  return a;
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
    if (RetryOpen(e, err, tid)) continue;
    if (err == ESRCH && !must_exist) return false;  // the thread exited meanwhile
    OpenFailed(e, err, tid, cpu);
  }
  throw Error("perf_event_open kept failing for " + e.spec.name);
}

// True when the open that failed with `err` is worth another try, `e` changed as perf would.
bool Recorder::RetryOpen(Event& e, int err, int tid) {
  // The retries perf makes (tools/perf/util/evsel.c, evsel__fallback()), on the first
  // descriptor of an event only, so all of its descriptors share one attribute.
  if (!e.opened_once) {
    if (e.spec.hardware() && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)) {
      Notice(e.spec.name + " is not supported here (" + Errno(err) +
             "): using cpu-clock instead, as perf does");
      e.spec.name = "cpu-clock";
      e.spec.type = e.attr.type = PERF_TYPE_SOFTWARE;
      e.spec.config = e.attr.config = PERF_COUNT_SW_CPU_CLOCK;
      return true;
    }
    if ((err == EACCES || err == EPERM) && tid >= 0 && !e.attr.exclude_kernel &&
        !e.attr.exclude_user) {
      e.attr.exclude_kernel = e.attr.exclude_hv = 1;
      if (!kernel_notice_given_) Notice(KernelExcludedNotice(env_));
      kernel_notice_given_ = true;
      return true;
    }
    if (err == EINVAL && e.attr.build_id) {  // before Linux 5.12
      e.attr.build_id = 0;
      return true;
    }
    if ((err == EINVAL || err == EOPNOTSUPP) && e.attr.precise_ip) {
      e.attr.precise_ip = 0;
      return true;
    }
  }
  if (err == EMFILE) {
    // Raise the soft limit to the hard one, as perf does, once.
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      if (setrlimit(RLIMIT_NOFILE, &rl) == 0) return true;
    }
  }
  return false;
}

// Throws the error for an open that failed for good: advice for what the user can change.
void Recorder::OpenFailed(const Event& e, int err, int tid, int cpu) const {
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

}  // namespace pf::record_impl
