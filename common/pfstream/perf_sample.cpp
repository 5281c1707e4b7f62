// The fields of perf.data records (perf_data.h): a sample's, parsed field by field by its
// event's sample_type with every read bounds-checked through Cursor, its time alone for the
// time-ordered replay, and the sample_id that other records carry at their end; and which
// event a record belongs to, by the id where its sample_type puts it.

#include <algorithm>

#include "base/byte_cursor.h"
#include "pfstream/perf_data.h"
#include "pfstream/sample_layout.h"

namespace pf {

using namespace sample_layout;  // the sample_type and read_format bits fields are read by

const EventAttr* PerfDataReader::AttrFor(std::span<const uint8_t> body, bool is_sample) const {
  if (attrs_.empty()) return nullptr;
  if (attrs_.size() == 1) return &attrs_[0];
  const uint64_t st = attrs_[0].sample_type;
  uint64_t id;
  if (is_sample) {
    size_t idx;
    if (st & kIdentifier) {
      idx = 0;
    } else if (st & kId) {
      idx = Popcount(st & (kIp | kTid | kTime | kAddr));
    } else {
      return &attrs_[0];
    }
    if (body.size() < (idx + 1) * 8) return nullptr;
    id = Load64(body.data() + idx * 8);
  } else {
    if (!attrs_[0].sample_id_all()) return &attrs_[0];
    size_t from_end;
    if (st & kIdentifier) {
      from_end = 1;
    } else if (st & kId) {
      from_end = 1 + Popcount(st & (kCpu | kStreamId));
    } else {
      return &attrs_[0];
    }
    if (body.size() < from_end * 8) return nullptr;
    id = Load64(body.data() + body.size() - from_end * 8);
  }
  for (const EventAttr& a : attrs_) {
    for (uint64_t x : a.ids) {
      if (x == id) return &a;
    }
  }
  return nullptr;
}

bool PerfDataReader::ParseSample(const Record& r, Sample* s) const {
  if (ParseSampleFields(r, s)) return true;
  bad_samples_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool PerfDataReader::ParseSampleFields(const Record& r, Sample* s) const {
  const EventAttr* a = AttrFor(r.body, true);
  if (!a) return false;
  *s = Sample();
  s->attr = a;
  s->misc = r.misc;
  const uint64_t st = a->sample_type;
  Cursor c(r.body);
  uint64_t v;
  if ((st & kIdentifier) && !c.U64(&s->id)) return false;
  if ((st & kIp) && !c.U64(&s->ip)) return false;
  if ((st & kTid) && (!c.U32(&s->pid) || !c.U32(&s->tid))) return false;
  if ((st & kTime) && !c.U64(&s->time)) return false;
  if ((st & kAddr) && !c.U64(&s->addr)) return false;
  if ((st & kId) && !c.U64(&s->id)) return false;
  if ((st & kStreamId) && !c.U64(&v)) return false;
  if ((st & kCpu) && (!c.U32(&s->cpu) || !c.Skip(4))) return false;
  if (!(st & kPeriod) && !a->freq() && a->sample_period) s->period = a->sample_period;
  if ((st & kPeriod) && !c.U64(&s->period)) return false;
  if (st & kRead) {
    uint64_t rf = a->read_format;
    if (rf & kFormatGroup) {
      uint64_t nr;
      if (!c.U64(&nr) || nr > 4096) return false;
      size_t per = 1 + ((rf & kFormatId) ? 1 : 0) + ((rf & kFormatLost) ? 1 : 0);
      if (!c.Skip(8 * (Popcount(rf & (kTotalEnabled | kTotalRunning)) + nr * per))) return false;
    } else {
      if (!c.Skip(8 * (1 + Popcount(rf & (kTotalEnabled | kTotalRunning | kFormatId |
                                            kFormatLost))))) {
        return false;
      }
    }
  }
  if (st & kCallchain) {
    uint64_t nr;
    s->callchain_at = static_cast<uint32_t>(c.pos());
    if (!c.U64(&nr) || !c.Span64(nr, &s->callchain)) return false;
  }
  if (st & kRaw) {
    uint32_t size;
    if (!c.U32(&size) || !c.Bytes(size, &s->raw)) return false;
  }
  if (st & kBranchStack) {
    uint64_t nr;
    if (!c.U64(&nr) || nr > 4096 || !c.Skip(24 * nr)) return false;
  }
  if (st & kRegsUser) {
    s->regs_user_at = static_cast<uint32_t>(c.pos());
    if (!c.U64(&s->regs_abi)) return false;
    if (s->regs_abi && !c.Span64(a->user_regs, &s->regs_user)) return false;
  }
  if (st & kStackUser) {
    uint64_t size;
    std::span<const uint8_t> data;
    s->stack_user_at = static_cast<uint32_t>(c.pos());
    if (!c.U64(&size) || !c.Bytes(size, &data)) return false;
    if (size) {
      uint64_t dyn;
      if (!c.U64(&dyn)) return false;
      s->stack_user = data.subspan(0, std::min<uint64_t>(dyn, size));
    }
    s->stack_user_end = static_cast<uint32_t>(c.pos());
  }
  return true;
}

bool PerfDataReader::SampleTime(const Record& r, uint64_t* time) const {
  const EventAttr* a = AttrFor(r.body, true);
  if (!a || !(a->sample_type & kTime)) return false;
  size_t at = 8 * Popcount(a->sample_type & (kIdentifier | kIp | kTid));
  if (r.body.size() < at + 8) return false;
  *time = Load64(r.body.data() + at);
  return true;
}

bool PerfDataReader::ParseSampleId(const Record& r, SampleId* id, bool any_event) const {
  const EventAttr* a = AttrFor(r.body, false);
  // Synthesized records may carry an id no event has: read them as the first event's, when
  // asked (for printing; ordering keeps them at time 0, as before).
  if (!a && any_event && !attrs_.empty()) a = &attrs_[0];
  if (!a || !a->sample_id_all()) return false;
  const uint64_t st = a->sample_type;
  size_t size = 8 * Popcount(st & (kTid | kTime | kId | kStreamId | kCpu | kIdentifier));
  if (size > r.body.size()) return false;
  Cursor c(r.body.subspan(r.body.size() - size));
  uint64_t v;
  if ((st & kTid) && (!c.U32(&id->pid) || !c.U32(&id->tid))) return false;
  if (st & kTime) {
    if (!c.U64(&id->time)) return false;
    id->has_time = true;
  }
  if ((st & kId) && !c.U64(&v)) return false;
  if ((st & kStreamId) && !c.U64(&v)) return false;
  if ((st & kCpu) && !c.U32(&id->cpu)) return false;
  return true;
}

}  // namespace pf
