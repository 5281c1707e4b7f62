// pf-record's output side (recorder.h's passes 4 to 7). The stream's head declares each
// event as the stream carries it (DWARF samples unwound here are declared as the frames
// they become); then what existed before the events were enabled is synthesized from /proc;
// then the loop polls (100 ms at most, so a reader of a pipe sees data promptly) and drains
// every ring into the stream, a FINISHED_ROUND after each pass. With DWARF samples, a pass
// writes the other records before the samples, so that a sample's maps are known when it is
// unwound whichever ring it came through. At the end: the symbols of the sampled addresses
// (unless --no-symbols) and the note that marks the stream whole.

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>

#include "base/error.h"
#include "base/regular_file.h"
#include "base/version.h"
#include "io/line_reader.h"
#include "base/cpu_list.h"
#include "perf/recorder_impl.h"
#include "pfstream/perf_data.h"
#include "pfstream/records.h"
#include "pfstream/trace_formats.h"

namespace pf::record_impl {

namespace {

constexpr int kPollMs = 100;  // the longest a reader of the stream waits for data

// The value of the first "key: value" line of a /proc file ("" when there is none).
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

}  // namespace

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
    if (off_cpu_) off_cpu_->AddAttr(stream_attr, e.ids, e.switches);
    if (e.switches) continue;  // its samples become offcpu-time's
    writer_->WriteAttr(stream_attr, e.ids);
    descs.push_back({stream_attr, PerfEventName(e.spec.name, e.attr), e.ids});
  }
  // The tracepoints' formats, for perf script (and pf-script) to print their fields.
  std::vector<std::string> tracepoints;
  for (const Event& e : events_) {
    if (e.spec.tracepoint()) tracepoints.push_back(e.spec.name);
  }
  if (!tracepoints.empty()) writer_->WriteTracingData(TracingData(tracepoints));
  if (off_cpu_) {
    const uint64_t ids[] = {kOffCpuId};
    const perf_event_attr a = OffCpuTracker::EventAttr(descs.front().attr);
    writer_->WriteAttr(a, ids);
    descs.push_back({a, OffCpuTracker::kEventName, {kOffCpuId}});
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

void Recorder::Synthesize() {
  // Raw DWARF stacks: the data maps too, for perf's unwinders (they read .eh_frame_hdr
  // through the process's memory map).
  const bool raw_dwarf = opt_.call_graph == CallChainMode::kDwarf && opt_.raw_stacks;
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

void Recorder::WriteRecord(std::span<const uint8_t> rec) {
  if (off_cpu_ && off_cpu_->Take(rec)) return;
  CountRecord(rec);
  writer_->WriteRaw(rec);
}

bool Recorder::Pass() {
  if (!writer_) return false;  // --stat: counters, no rings
  const uint64_t before = writer_->bytes_written();
  if (!rewriter_) {
    for (RingBuffer& ring : rings_) {
      ring.Drain([this](std::span<const uint8_t> rec) { WriteRecord(rec); });
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
        Record r;
        if (!RecordView(rec, &r) || r.type != PERF_RECORD_SAMPLE) {
          WriteRecord(rec);
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
      WriteRecord(rewriter_->Rewrite(rec));
    }
  }
  if (off_cpu_) {
    off_cpu_->Flush(*writer_);
    report_->off_cpu = off_cpu_->intervals();
  }
  if (writer_->bytes_written() == before) return false;
  // Everything read in this pass may be sorted by time against the next passes.
  writer_->WriteFinishedRound();
  writer_->Flush();
  return true;
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
    if (opt_.stat && opt_.stat_interval_ms) {
      MaybePrintInterval(false);
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next_interval_ - Clock::now());
      timeout = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, timeout));
    }
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

}  // namespace pf::record_impl
