// Advice for a refused perf_event_open or ring-buffer mmap (advice.h). The environment that
// decides (perf_event_paranoid, kptr_restrict, the capabilities, the locked-memory limit,
// whether this looks like a container) is read once into a PerfEnvironment; the functions that
// turn an errno into sentences are pure over it, so every message is tested without the
// kernel refusing anything. Each message says what was refused, why, and the command that
// changes it, as rr does for its own perf_event_open failures.

#include "perf/advice.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/regular_file.h"
#include "io/line_reader.h"

namespace pf {

namespace {

// Capability numbers (linux/capability.h).
constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;

bool ReadLong(const char* path, long* out) {
  std::ifstream in(path);
  long v;
  if (!(in >> v)) return false;
  *out = v;
  return true;
}

bool FileExists(const char* path) { return access(path, F_OK) == 0; }

bool LooksLikeContainer() {
  if (FileExists("/.dockerenv") || FileExists("/run/.containerenv")) return true;
  std::string cgroup;
  if (!ReadRegularFile("/proc/1/cgroup", &cgroup)) return false;
  LineSplitter lines(cgroup);
  std::string_view line;
  while (lines.Next(&line)) {
    for (const char* k : {"docker", "kubepods", "containerd", "libpod", "lxc"}) {
      if (line.find(k) != std::string_view::npos) return true;
    }
  }
  return false;
}

std::string Target(const OpenAttempt& a) {
  std::string t = a.pid < 0 ? "all processes" : "thread " + std::to_string(a.pid);
  if (a.cpu >= 0) t += " on CPU " + std::to_string(a.cpu);
  return t;
}

std::string ErrnoName(int err) {
  switch (err) {
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ESRCH:
      return "ESRCH";
    case ENOENT:
      return "ENOENT";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
    case ENODEV:
      return "ENODEV";
    case EMFILE:
      return "EMFILE";
    case ENFILE:
      return "ENFILE";
    case EINVAL:
      return "EINVAL";
    case EOVERFLOW:
      return "EOVERFLOW";
    case EBUSY:
      return "EBUSY";
    case E2BIG:
      return "E2BIG";
    case ENOSYS:
      return "ENOSYS";
    case ENOMEM:
      return "ENOMEM";
    case ENOSPC:
      return "ENOSPC";
    default:
      return "errno " + std::to_string(err);
  }
}

std::string ParanoidNow(const PerfEnvironment& env) {
  if (!env.paranoid_known) {
    return "/proc/sys/kernel/perf_event_paranoid could not be read";
  }
  return "kernel.perf_event_paranoid is " + ParanoidMeaning(env.paranoid);
}

const char* kContainerHint =
    " In a container, perf_event_paranoid is the host's setting (change it on the host), and "
    "the container needs CAP_PERFMON (docker run --cap-add PERFMON; Docker before 20.10 also "
    "needs --security-opt seccomp=unconfined).";

}  // namespace

PerfEnvironment ReadPerfEnvironment() {
  PerfEnvironment env;
  long v;
  if (ReadLong("/proc/sys/kernel/perf_event_paranoid", &v)) {
    env.paranoid = static_cast<int>(v);
    env.paranoid_known = true;
  }
  if (ReadLong("/proc/sys/kernel/kptr_restrict", &v)) env.kptr_restrict = static_cast<int>(v);
  if (ReadLong("/proc/sys/kernel/perf_event_mlock_kb", &v) && v >= 0) env.mlock_kb = v;
  if (ReadLong("/proc/sys/kernel/perf_event_max_sample_rate", &v) && v > 0) {
    env.max_sample_rate = v;
  }
  if (ReadLong("/proc/sys/kernel/perf_event_max_stack", &v) && v > 0) {
    env.max_stack = static_cast<int>(v);
  }
  env.root = geteuid() == 0;
  std::string status;
  ReadRegularFile("/proc/self/status", &status);
  LineSplitter lines(status);
  std::string_view line;
  while (lines.Next(&line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      uint64_t caps = std::strtoull(std::string(line.substr(7)).c_str(), nullptr, 16);
      env.cap_sys_admin = caps & (1ULL << kCapSysAdmin);
      env.cap_perfmon = caps & (1ULL << kCapPerfmon);
    }
  }
  env.in_container = LooksLikeContainer();
  return env;
}

std::string ParanoidMeaning(int level) {
  std::string n = std::to_string(level);
  if (level <= -1) {
    return n +
           ": no restrictions (every user may profile every process, CPU-wide, "
           "and the kernel)";
  }
  switch (level) {
    case 0:
      return n + ": users may profile CPU-wide and the kernel, but not raw tracepoints";
    case 1:
      return n +
             ": users may profile their own processes, kernel included, but not "
             "CPU-wide (-a, -C)";
    case 2:
      return n +
             ": users may profile only the user space of their own processes "
             "(no kernel, no CPU-wide)";
    case 3:
      return n +
             ": unprivileged users may not use perf events at all (a Debian and "
             "Android setting; upstream kernels treat it as 2)";
    default:
      return n +
             ": unprivileged users may not use perf events at all (an Ubuntu "
             "setting; upstream kernels treat it as 2)";
  }
}

std::string SysctlParanoidCommand(int level) {
  return "sysctl -w kernel.perf_event_paranoid=" + std::to_string(level);
}

bool KernelSamplingAllowed(const PerfEnvironment& env) {
  return env.privileged() || env.paranoid <= 1;
}

bool CpuWideAllowed(const PerfEnvironment& env) { return env.privileged() || env.paranoid <= 0; }

std::string KernelExcludedNotice(const PerfEnvironment& env) {
  return ParanoidNow(env) + "; recording user space only (kernel frames are left out). " +
         "To include the kernel, run as root or: " + SysctlParanoidCommand(1);
}

std::string KernelNeededAdvice(const PerfEnvironment& env, const std::string& what) {
  return what + " needs samples taken in the kernel, and " + ParanoidNow(env) +
         ". Run as root, or: " + SysctlParanoidCommand(1);
}

std::string KptrRestrictNotice(const PerfEnvironment& env, bool kernel_addresses_visible) {
  if (kernel_addresses_visible) return "";
  return "kernel addresses are hidden from this user (kernel.kptr_restrict is " +
         std::to_string(env.kptr_restrict) +
         "), so kernel frames cannot be named; run as root, or: sysctl -w "
         "kernel.kptr_restrict=0";
}

namespace {

// EACCES and EPERM: which of the kernel's rules refused (privilege, perf_event_paranoid,
// another user's process, kernel sampling) and the command that lifts it.
void PermissionAdvice(std::ostringstream& m, const OpenAttempt& a, const PerfEnvironment& env) {
  bool container_said = false;
  if (env.privileged()) {
    m << "refused although pf-record has "
      << (env.cap_perfmon ? "CAP_PERFMON" : "CAP_SYS_ADMIN")
      << ", so a security module (SELinux, AppArmor) or a seccomp filter is refusing "
         "perf_event_open.";
    if (env.in_container) {
      m << kContainerHint;
      container_said = true;
    }
  } else if (a.pid < 0 && env.paranoid > 0) {
    m << "recording every process of a CPU (-a, -C) needs perf_event_paranoid <= 0 or "
         "CAP_PERFMON, and "
      << ParanoidNow(env)
      << ". Run pf-record as root, or allow it with: " << SysctlParanoidCommand(0)
      << " (or -1 to lift every restriction); "
         "or record your own programs with -p PID or -- COMMAND instead.";
  } else if (env.paranoid >= 3) {
    m << ParanoidNow(env)
      << ". Allow profiling your own processes with: " << SysctlParanoidCommand(1)
      << " (2 allows user space only, -1 lifts every restriction), or run as root.";
  } else if (a.other_user) {
    container_said = true;  // not a container matter
    m << "process " << a.pid
      << " belongs to another user; profiling someone else's process needs root or "
         "CAP_PERFMON (the kernel checks ptrace read access). Run pf-record as that "
         "user or as root.";
  } else if (a.kernel_included && env.paranoid >= 2) {
    m << "kernel profiling needs perf_event_paranoid <= 1, and " << ParanoidNow(env)
      << ". Use --user-only, run as root, or: " << SysctlParanoidCommand(1) << " (or -1).";
  } else {
    m << ParanoidNow(env)
      << ". A security module or seccomp filter may also be refusing perf_event_open. "
         "Try as root, or: "
      << SysctlParanoidCommand(1) << " (or -1).";
  }
  if (env.in_container && !container_said) m << kContainerHint;
  if (a.err == EPERM && !env.in_container && !env.privileged()) {
    m << " (EPERM, rather than EACCES, often comes from a seccomp filter, as in "
         "containers.)";
  }
}

}  // namespace

std::string OpenErrorAdvice(const OpenAttempt& a, const PerfEnvironment& env) {
  std::ostringstream m;
  m << "cannot open event " << a.event << " for " << Target(a) << " (" << ErrnoName(a.err) << ": "
    << std::strerror(a.err) << "): ";
  switch (a.err) {
    case EACCES:
    case EPERM:
      PermissionAdvice(m, a, env);
      break;
    case ESRCH:
      m << "no process or thread " << a.pid << " (did it exit?).";
      break;
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      if (a.hardware) {
        m << a.event
          << " is not supported here: the CPU's performance counters are not available "
             "(usual in virtual machines and containers). Use -e cpu-clock, which "
             "samples with a timer.";
      } else {
        m << "this kernel does not support sampling " << a.event << ".";
      }
      break;
    case EMFILE: {
      uint64_t want = ((a.fds_needed + 64 + 1023) / 1024) * 1024;
      m << "too many open files: this recording needs about " << a.fds_needed
        << " descriptors (one per event, thread and CPU), and the limit is " << a.fd_limit
        << ". Raise it with: ulimit -n " << want << " (or record fewer threads or CPUs: -C, -t).";
      break;
    }
    case ENFILE:
      m << "the system's file table is full; raise fs.file-max or close programs.";
      break;
    case EINVAL:
      if (a.frequency > env.max_sample_rate) {
        m << "-F " << a.frequency << " is above kernel.perf_event_max_sample_rate ("
          << env.max_sample_rate << "). Use a lower -F, or: sysctl -w "
          << "kernel.perf_event_max_sample_rate=" << a.frequency << ".";
      } else {
        m << "the kernel rejected the event's attributes: it may be too old for an option "
             "in use, or the event cannot sample (try -e cpu-clock).";
      }
      break;
    case EOVERFLOW:
      m << "call chains are limited to kernel.perf_event_max_stack (" << env.max_stack
        << ") frames.";
      break;
    case EBUSY:
      m << a.event
        << " is in exclusive use by another program (another profiler, or the "
           "hypervisor's).";
      break;
    case E2BIG:
      m << "this kernel is too old for pf-record's perf_event_attr.";
      break;
    case ENOSYS:
      m << "this kernel was built without perf events (CONFIG_PERF_EVENTS), or a seccomp "
           "filter hides the system call.";
      if (env.in_container) m << kContainerHint;
      break;
    case ENOMEM:
    case ENOSPC:
      m << "the kernel ran out of resources for perf events; record fewer threads or CPUs.";
      break;
    default:
      m << "perf_event_open failed.";
      break;
  }
  return m.str();
}

std::string MmapErrorAdvice(int err, uint64_t bytes, const PerfEnvironment& env) {
  std::ostringstream m;
  m << "cannot map a " << bytes / 1024 << " KiB ring buffer (" << ErrnoName(err) << ": "
    << std::strerror(err) << "): ";
  if (err == EPERM || err == ENOMEM || err == EAGAIN) {
    m << "unprivileged users may lock kernel.perf_event_mlock_kb (" << env.mlock_kb
      << " KiB) per CPU for perf buffers, plus their locked-memory limit (ulimit -l). "
         "Lower -F, run as root, or raise the limit: sysctl -w kernel.perf_event_mlock_kb="
      << (bytes / 1024 + 4) << ".";
  } else {
    m << "the kernel refused the mapping.";
  }
  return m.str();
}

}  // namespace pf
