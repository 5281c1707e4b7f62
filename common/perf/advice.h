#pragma once
// The perf module (common/perf/): pf-record's side of the kernel: perf_event_open sessions
// and the recording loop (recorder.h), ring buffers, event names, CPU lists, /proc synthesis,
// and the advice given when the kernel refuses.
//
// What the kernel allows a profiler, and what to tell a person when perf_event_open(2)
// refuses. Every errno of perf_event_open and of mapping its ring buffer is turned into a
// sentence that says what was refused, why, and the exact command that changes it.
//
// The rules are the kernel's (kernel/events/core.c: perf_allow_kernel(), perf_allow_cpu(),
// perf_event_open() and its ptrace_may_access() check; include/linux/perf_event.h), as
// documented in https://www.kernel.org/doc/html/latest/admin-guide/perf-security.html and
// https://www.kernel.org/doc/html/latest/admin-guide/sysctl/kernel.html#perf-event-paranoid:
//   -1  everything, for every user (and no locked-memory limit on ring buffers);
//    0  no raw tracepoints and no ftrace function events for unprivileged users;
//    1  ... and no CPU-wide events (pf-record -a, -C);
//    2  ... and no kernel profiling: user space of one's own processes only (the upstream
//       default);
//   3/4 distribution patches (Debian and Android use 3, Ubuntu 4): no perf events at all
//       for unprivileged users. On an upstream kernel they mean the same as 2.
// "Privileged" is CAP_PERFMON (Linux 5.8+) or CAP_SYS_ADMIN in the initial user namespace;
// in a container the default seccomp profile may refuse the system call itself (EPERM).
// These functions are pure, so the tests check every text.

#include <cstdint>
#include <string>

namespace pf {

/// The perf-related settings and privileges of this process.
struct PerfEnvironment {
  int paranoid = 2;  // /proc/sys/kernel/perf_event_paranoid
  bool paranoid_known = false;
  int kptr_restrict = 0;              // /proc/sys/kernel/kptr_restrict
  bool root = false;                  // effective uid 0
  bool cap_perfmon = false;           // CAP_PERFMON in the effective set
  bool cap_sys_admin = false;         // CAP_SYS_ADMIN in the effective set
  bool in_container = false;          // a guess: /.dockerenv, /run/.containerenv, cgroup names
  uint64_t mlock_kb = 516;            // /proc/sys/kernel/perf_event_mlock_kb
  uint64_t max_sample_rate = 100000;  // /proc/sys/kernel/perf_event_max_sample_rate
  int max_stack = 127;                // /proc/sys/kernel/perf_event_max_stack

  /// What the kernel calls perfmon_capable().
  bool privileged() const { return cap_perfmon || cap_sys_admin; }
};

/// Reads /proc/sys/kernel/* and /proc/self/status.
PerfEnvironment ReadPerfEnvironment();

/// One line: what perf_event_paranoid = `level` allows unprivileged users.
std::string ParanoidMeaning(int level);

/// Whether the kernel will sample kernel code for us (paranoid <= 1, or privileged).
bool KernelSamplingAllowed(const PerfEnvironment& env);
/// Whether the kernel allows CPU-wide events (-a, -C) for us (paranoid <= 0, or privileged).
bool CpuWideAllowed(const PerfEnvironment& env);

/// The notice printed when pf-record leaves kernel code out on its own, as perf does.
std::string KernelExcludedNotice(const PerfEnvironment& env);
/// The error for `what` (tracepoints, --off-cpu), which only samples taken in the kernel
/// give, when this user may not take them.
std::string KernelNeededAdvice(const PerfEnvironment& env, const std::string& what);
/// The notice printed when kernel addresses are hidden (kptr_restrict), or "" when they
/// are visible.
std::string KptrRestrictNotice(const PerfEnvironment& env, bool kernel_addresses_visible);

/// What was being opened when perf_event_open failed.
struct OpenAttempt {
  int err = 0;        // errno
  std::string event;  // "cpu-clock"
  int pid = -1;       // the target thread, -1 for all processes (-a, -C)
  int cpu = -1;
  bool kernel_included = false;  // exclude_kernel was 0
  bool hardware = false;         // a PERF_TYPE_HARDWARE event
  bool other_user = false;       // the target belongs to another user
  uint64_t frequency = 0;        // -F, 0 with -c
  uint64_t fds_needed = 0;       // descriptors the recording needs
  uint64_t fd_limit = 0;         // RLIMIT_NOFILE
};

/// The message for a failed perf_event_open: the cause and what to do about it.
std::string OpenErrorAdvice(const OpenAttempt& attempt, const PerfEnvironment& env);

/// The message for a ring buffer that could not be mapped (mmap errno `err`).
std::string MmapErrorAdvice(int err, uint64_t bytes, const PerfEnvironment& env);

/// The exact command that sets perf_event_paranoid to `level`.
std::string SysctlParanoidCommand(int level);

}  // namespace pf
