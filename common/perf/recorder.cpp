// pf-record's engine (recorder.h lists the passes). A Recorder owns everything one recording
// opens (the command's process, the event descriptors, the ring buffers, the output) and
// Run() calls the passes in order, so the whole life of a recording reads in one function and
// the destructor can undo whatever a failed pass left. Signals only write a byte into a pipe
// the loop polls, so SIGINT ends a recording between two passes and the stream stays whole.
// Each ring is drained into the stream as the kernel wrote it; DWARF samples go through the
// SampleRewriter (unwound, or trimmed), and the records are watched by the AddressCollector
// that writes the symbol table at the end. This file holds Run and the checks of the
// options; the passes themselves are in recorder_events.cpp, recorder_command.cpp and
// recorder_stream.cpp (recorder_impl.h says which is where).

#include "perf/recorder.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "base/thread_name.h"
#include "base/cpu_list.h"
#include "perf/recorder_impl.h"
#include "pfstream/records.h"

namespace pf {

namespace {

uint64_t NextPow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

namespace record_impl {

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
  if (o.call_graph == CallChainMode::kDwarf &&
      (o.stack_bytes == 0 || o.stack_bytes % 8 != 0 || o.stack_bytes > kMaxStackBytes)) {
    throw UsageError("the stack copy must be a multiple of 8 bytes, from 8 to " +
                     std::to_string(kMaxStackBytes) + ", not " + std::to_string(o.stack_bytes));
  }
  if (o.off_cpu && o.raw_stacks) {
    throw UsageError("--off-cpu writes call chains: use it without --raw-stacks");
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

void Recorder::Run() {
  if (opt_.stat) {
    RunStat();
    return;
  }
  env_ = ReadPerfEnvironment();
  Validate();
  PrepareEvents();
  // 1. targets
  if (!opt_.command.empty()) ForkCommand();
  CollectThreads();
  sink_ = open_output_();
  out_ = std::make_unique<BufferedWriter>(*sink_);
  writer_ = std::make_unique<PerfStreamWriter>(*out_);
  if (opt_.call_graph == CallChainMode::kDwarf) {
    rewriter_mode_ = opt_.raw_stacks ? SampleRewriter::Mode::kTrim : SampleRewriter::Mode::kUnwind;
    rewriter_ = std::make_unique<SampleRewriter>(rewriter_mode_);
  }
  if (opt_.off_cpu) off_cpu_ = std::make_unique<OffCpuTracker>(kOffCpuId);
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

}  // namespace record_impl

std::string RecordReport::Summary() const {
  const uint64_t total = samples + lost;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f",
                total ? 100.0 * static_cast<double>(lost) / static_cast<double>(total) : 0.0);
  std::string s =
      std::to_string(samples) + " samples, " + std::to_string(lost) + " lost (" + pct + "%)";
  if (off_cpu > 0) s += ", " + std::to_string(off_cpu) + " off-CPU waits";
  return s;
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
  record_impl::Recorder recorder(options, open_output, report);
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
