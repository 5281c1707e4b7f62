#pragma once
// pf-record's engine: sample a command, processes, threads or CPUs with perf_event_open(2)
// and write what the kernel reports as a perf.data pipe stream (see pfstream/perf_writer.h).
//
// The passes of a recording (RunRecord):
//   1. targets: fork the command (it waits for a go signal), list the threads of -p/-t
//      (after the options and events were checked, so a mistake starts nothing); with
//      -a, -C, -p or -t the command is not a target: the targets are recorded while it
//      runs (perf's `perf record -p PID -- sleep 10`);
//   2. open: one event per (event, thread or all, CPU) — perf's layout — disabled, with
//      inherit so threads and children created later are followed; kernel refusals are
//      retried the way perf retries them (kernel excluded, cycles -> cpu-clock, no
//      build-id, no precise_ip) and otherwise turned into advice (perf/advice.h);
//   3. ring buffers: one mmap per CPU; the other descriptors of that CPU write into it
//      (PERF_EVENT_IOC_SET_OUTPUT), so memory does not grow with the number of threads;
//   4. stream head: header, HEADER_ATTR per event with its ids, feature records;
//   5. go: enable the events (or let the command exec: enable_on_exec), then synthesize
//      what existed before from /proc — after enabling, so that nothing created in
//      between is missed (a map seen twice is harmless, a map missed is not);
//   6. loop: poll the descriptors (100 ms at most, so a pipe reader sees data promptly),
//      copy every ring into the stream, FINISHED_ROUND after each pass, flush;
//   7. end (signal, duration, the command exits, every -p/-t target is gone, or the
//      reader closes the pipe): SIGTERM to a command still running (as perf record does),
//      disable, drain, flush, report samples and losses.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/output.h"

namespace pf {

/// What each sample carries besides its address: nothing, the frame-pointer chain, or the
/// kernel's chain with the user registers and a copy of the user stack (DWARF unwinding).
enum class CallChainMode { kNone, kFramePointer, kDwarf };

/// What to record and how (pf-record's options).
struct RecordOptions {
  // What to record: the command, pids/tids, or CPUs. With pids/tids or CPUs, a command
  // is not recorded itself: recording ends when it exits.
  std::vector<std::string> command;  // -- COMMAND ARGS
  std::vector<int> pids;             // -p: every thread, present and future
  std::vector<int> tids;             // -t
  bool system_wide = false;          // -a
  std::vector<int> cpus;             // -C (also limits -p/-t/command); empty: all online

  // How to sample.
  std::vector<std::string> events;  // -e; empty: cpu-clock as perf names its default
  uint64_t frequency = 99;          // -F (samples per second per CPU)
  uint64_t period = 0;              // -c: sample every PERIOD events (overrides -F)
  CallChainMode call_graph = CallChainMode::kNone;
  /// Also record where threads wait: each wait, from the thread leaving the CPU to its
  /// return, as an `offcpu-time` sample weighted in nanoseconds (perf/off_cpu.h).
  bool off_cpu = false;
  /// --stat: count instead of sample, and hand perf stat's table (perf/stat_table.h) to
  /// `stat_out` at the end; with `stat_interval_ms`, each interval's lines as they come
  /// (-I); with `stat_csv_sep`, perf's CSV (-x). No stream is written.
  bool stat = false;
  uint64_t stat_interval_ms = 0;
  std::string stat_csv_sep;
  std::function<void(const std::string&)> stat_out;
  uint32_t stack_bytes = 8192;  // kDwarf: user stack copied per sample (a multiple of 8)
  bool raw_stacks = false;      // kDwarf: keep the registers and stacks instead of unwinding
  bool user_only = false;
  bool kernel_only = false;
  double duration = 0;  // seconds; 0 means until the end of the target or a signal

  bool symbols = true;    // --no-symbols clears it
  bool build_ids = true;  // MMAP2 records carry build-ids
  size_t ring_pages = 0;  // data pages per ring buffer (a power of two); 0: sized for the rate
  /// Stop on SIGINT, SIGTERM and SIGHUP (the handlers are restored at the end).
  bool handle_signals = true;
  /// The command's standard output goes to standard error (when the stream is stdout).
  bool command_stdout_to_stderr = false;

  std::vector<std::string> argv;                   // for the CMDLINE feature
  std::function<void(const std::string&)> notice;  // one-line notices (fallbacks, limits)
};

/// What a recording did, for the summary line and the exit status.
struct RecordReport {
  uint64_t samples = 0;
  uint64_t off_cpu = 0;      // --off-cpu: waits written as offcpu-time samples
  uint64_t lost = 0;         // samples the kernel dropped (PERF_RECORD_LOST)
  uint64_t records = 0;      // records copied from the ring buffers
  uint64_t synthesized = 0;  // records synthesized from /proc
  uint64_t bytes = 0;        // bytes written
  uint64_t unwound = 0;      // DWARF samples unwound while recording
  uint64_t truncated = 0;    // of those, stacks deeper than the copy
  double startup_ms = 0;     // from RunRecord() to the events being enabled
  bool command_ran = false;
  int exit_status = 0;   // the command's: its exit code, or 128 + signal
  bool corrupt = false;  // a ring buffer held a malformed record (skipped)

  /// "12345 samples, 0 lost (0.0%)", and ", 678 off-CPU waits" with --off-cpu.
  std::string Summary() const;
};

/// Opens the output; called once, after the command is forked (so the command does not
/// inherit the output's descriptor) and before any event is opened.
using OutputOpener = std::function<std::unique_ptr<ByteSink>()>;

/// The largest user stack copy a sample can carry: the record must fit its 16-bit size.
constexpr uint32_t kMaxStackBytes = 65528;

/// Records as `options` say and writes the stream to the output (committed at the end).
/// Throws pf::Error with advice when the kernel refuses, pf::UsageError for bad options,
/// pf::PipeClosed when the reader of the stream went away (a command is then stopped
/// with SIGTERM and waited for, as perf record does; -p/-t targets are left running).
void RunRecord(const RecordOptions& options, const OutputOpener& open_output, RecordReport* report);
/// The same, writing to a sink the caller owns (tests).
void RunRecord(const RecordOptions& options, ByteSink& sink, RecordReport* report);

/// Computes the number of data pages per ring buffer to hold half a second of samples of
/// `sample_bytes` at a rate (power of two, at least 128 pages = 512 KiB, at most 16384),
/// capped for an unprivileged user so that `buffers` rings fit in `mlock_kb` KiB per CPU
/// times `cpus`.
size_t RingPagesFor(uint64_t samples_per_second, size_t sample_bytes, size_t buffers, int cpus,
                    uint64_t mlock_kb, bool unlimited, size_t page_size = 4096);

}  // namespace pf
