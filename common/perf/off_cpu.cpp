// Off-CPU intervals from context switches (off_cpu.h).

#include "perf/off_cpu.h"

#include <algorithm>

#include "pfstream/perf_data.h"

namespace pf {

OffCpuTracker::OffCpuTracker(uint64_t offcpu_id) : offcpu_id_(offcpu_id) {}

void OffCpuTracker::AddAttr(const perf_event_attr& attr, std::span<const uint64_t> ids,
                            bool switches) {
  decoder_.AddAttr(attr, ids);
  if (switches) switch_ids_.insert(switch_ids_.end(), ids.begin(), ids.end());
  if (!switches && sample_type_ == 0) sample_type_ = EventAttr(attr).sample_type;
}

perf_event_attr OffCpuTracker::EventAttr(const perf_event_attr& like) {
  perf_event_attr a = like;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_BPF_OUTPUT;  // as perf's own offcpu-time event
  a.freq = 0;
  a.sample_period = 1;
  a.precise_ip = 0;
  a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = a.mmap_data = a.build_id = 0;
  a.context_switch = 0;
  a.sample_type &= ~static_cast<uint64_t>(PERF_SAMPLE_RAW);  // (a tracepoint's fields)
  return a;
}

bool OffCpuTracker::Take(std::span<const uint8_t> record) {
  Record r;
  if (!decoder_.Decode(record, &r)) return false;
  if (r.type == kRecordSample) {
    Sample s;
    if (!decoder_.reader()->ParseSample(r, &s) ||
        std::find(switch_ids_.begin(), switch_ids_.end(), s.id) == switch_ids_.end()) {
      return false;
    }
    if (s.tid == 0) return true;  // the idle task
    Switch sw{s.time, s.pid, s.tid, s.cpu, true, s.misc, s.ip, chains_.size(), s.callchain.size()};
    chains_.insert(chains_.end(), s.callchain.begin(), s.callchain.end());
    pass_.push_back(sw);
    return true;
  }
  if (r.type != PERF_RECORD_SWITCH && r.type != PERF_RECORD_SWITCH_CPU_WIDE) return false;
  // The switch-out is known from its sample; a return to the CPU is this record's thread.
  SampleId id;
  if (!(r.misc & PERF_RECORD_MISC_SWITCH_OUT) && decoder_.reader()->ParseSampleId(r, &id, true) &&
      id.has_time && id.tid != 0) {
    pass_.push_back(Switch{id.time, id.pid, id.tid, id.cpu, false, 0, 0, 0, 0});
  }
  return true;
}

void OffCpuTracker::Flush(PerfStreamWriter& writer) {
  std::stable_sort(pass_.begin(), pass_.end(),
                   [](const Switch& a, const Switch& b) { return a.time < b.time; });
  for (const Switch& sw : pass_) {
    if (sw.out) {
      auto back = resumed_.find(sw.tid);
      const bool late = back != resumed_.end() && back->second > sw.time;
      // The thread's slot keeps its chain's storage from wait to wait (a switch-out is taken
      // at every context switch); a switch-out read after its return goes out at once.
      Waiting late_wait;
      Waiting& w = late ? late_wait : waiting_[sw.tid];
      w.time = sw.time;
      w.pid = sw.pid;
      w.cpu = sw.cpu;
      w.misc = sw.misc;
      w.ip = sw.ip;
      w.chain.assign(chains_.begin() + static_cast<std::ptrdiff_t>(sw.chain_at),
                     chains_.begin() + static_cast<std::ptrdiff_t>(sw.chain_at + sw.chain_size));
      if (late) Write(writer, w, sw.tid, back->second);
      continue;
    }
    resumed_[sw.tid] = sw.time;
    auto it = waiting_.find(sw.tid);
    if (it == waiting_.end() || it->second.time == kDone) continue;  // off since before
    if (it->second.time <= sw.time) Write(writer, it->second, sw.tid, sw.time);
    it->second.time = kDone;
  }
  pass_.clear();
  chains_.clear();
}

void OffCpuTracker::Write(PerfStreamWriter& writer, const Waiting& w, uint32_t tid,
                          uint64_t until) {
  out_.misc = w.misc;
  out_.id = offcpu_id_;
  out_.ip = w.ip;
  out_.pid = w.pid;
  out_.tid = tid;
  out_.time = until;
  out_.cpu = w.cpu;
  out_.period = until - w.time;
  out_.callchain = w.chain;
  writer.WriteSample(out_, sample_type_);
  ++intervals_;
}

}  // namespace pf
