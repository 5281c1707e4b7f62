#pragma once
// The Recorder that pf-record's engine (recorder.h) runs, shared by the files that hold its
// passes: recorder.cpp (Run, the options), recorder_events.cpp (the events' attributes,
// opening them with perf's fallbacks, the ring buffers), recorder_command.cpp (the command,
// the threads of -p/-t, the stop signals) and recorder_stream.cpp (the stream's head, the
// records synthesized from /proc, the drain loop and the end). Not for other modules.

#include <linux/perf_event.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "perf/advice.h"
#include "perf/events.h"
#include "perf/off_cpu.h"
#include "perf/stat_table.h"
#include "perf/proc.h"
#include "perf/recorder.h"
#include "perf/ring_buffer.h"
#include "pfstream/address_collector.h"
#include "pfstream/online_unwind.h"
#include "pfstream/perf_writer.h"

namespace pf::record_impl {

using Clock = std::chrono::steady_clock;

inline std::string Errno(int err) { return std::strerror(err); }

/// Stops a recording on SIGINT, SIGTERM and SIGHUP (when `enable`) while it lives: the
/// handler only writes a byte into `write_fd`, a pipe that the loop polls.
class SignalGuard {
 public:
  SignalGuard(bool enable, int write_fd);
  ~SignalGuard();

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  bool enabled_;
  struct sigaction old_[3];
};

struct Event {
  EventSpec spec;
  perf_event_attr attr;
  std::vector<uint64_t> ids;
  bool opened_once = false;
  bool switches = false;  // --off-cpu's switch-out samples: taken by the tracker, not declared
  bool unsupported = false;  // --stat: a hardware event this machine does not count
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
  // --stat (recorder_stat.cpp): count, then print perf stat's table.
  void RunStat();

 private:
  void Notice(const std::string& m) const {
    if (opt_.notice) opt_.notice(m);
  }
  // The passes (recorder.cpp: Run, Validate).
  void Validate();
  // Events (recorder_events.cpp).
  void PrepareEvents();
  Event SwitchEvent(uint64_t sample_type, bool kernel_allowed);
  void TracepointAttr(perf_event_attr* a, bool kernel_allowed) const;
  void KernelEvent(perf_event_attr* a, bool kernel_allowed, const char* what) const;
  uint64_t AllowedFrequency() const;
  void SizeRings(size_t events, uint64_t frequency);
  uint64_t SampleType(size_t events) const;
  perf_event_attr EventAttr(const EventSpec& spec, bool first, uint64_t sample_type,
                            uint64_t frequency, bool kernel_allowed);
  void OpenAll();
  bool OpenOne(size_t ev, int tid, int cpu, bool must_exist);
  bool RetryOpen(Event& e, int err, int tid);
  [[noreturn]] void OpenFailed(const Event& e, int err, int tid, int cpu) const;
  void MapRings();
  // The command and the threads (recorder_command.cpp).
  void ResolveCommand();
  void ForkCommand();
  void CollectThreads();
  void Go();
  bool ReapCommand(bool block);
  void StopCommand();
  // The stream (recorder_stream.cpp).
  void WriteHead();
  void Synthesize();
  void Loop();
  bool Pass();
  void Finish();
  void CountRecord(std::span<const uint8_t> rec);
  // --stat (recorder_stat.cpp).
  void PrepareCounters();
  void OpenCounters();
  std::vector<StatCounter> ReadCounters() const;
  StatContext StatTarget() const;
  void MaybePrintInterval(bool last);
  // A record of the rings into the stream, unless the off-CPU tracker takes it.
  void WriteRecord(std::span<const uint8_t> rec);

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
  std::unique_ptr<OffCpuTracker> off_cpu_;       // --off-cpu
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
  struct rusage rusage_ = {};  // the command's, when it was reaped
  // --stat -I: when the next interval ends, and the counts at the last one.
  Clock::time_point next_interval_;
  std::vector<StatCounter> last_counts_;
  std::vector<std::string> counter_names_;  // --stat: each counter's name as given
  uint64_t intervals_printed_ = 0;
};


}  // namespace pf::record_impl
