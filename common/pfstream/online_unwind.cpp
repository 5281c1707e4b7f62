// pf-record's rewriting of DWARF samples (online_unwind.h). The stream declares each event with
// the layout the rewritten samples have (StreamAttr), so readers never see the kernel's. A
// sample is unwound with a Session kept up to date by every non-sample record written
// (Observe), and rewritten as a frame-pointer sample would be: its call chain, then the same
// fields without the registers and the stack copy. In kTrim mode the copy is only cut to the
// bytes the kernel filled.

#include "pfstream/online_unwind.h"

#include <cstring>


namespace pf {

SampleRewriter::SampleRewriter(Mode mode)
    : mode_(mode), symbolizer_(Symbolizer::Options{}), session_(symbolizer_) {}

SampleRewriter::~SampleRewriter() = default;

perf_event_attr SampleRewriter::StreamAttr(const perf_event_attr& kernel_attr, Mode mode) {
  perf_event_attr a = kernel_attr;
  if (mode == Mode::kUnwind && (a.sample_type & PERF_SAMPLE_STACK_USER)) {
    a.sample_type &= ~static_cast<uint64_t>(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
    // sample_regs_user and sample_stack_user stay: readers ignore them without the
    // sample_type bits, and they tell pf's readers that the user frames were unwound from
    // stack copies (which perf expands with inline frames).
    a.exclude_callchain_user = 0;  // the chain now holds the user frames
  }
  return a;
}

void SampleRewriter::AddAttr(const perf_event_attr& kernel_attr, std::span<const uint64_t> ids) {
  decoder_.AddAttr(kernel_attr, ids);
}

void SampleRewriter::Observe(std::span<const uint8_t> record) {
  Record r;
  if (!decoder_.Decode(record, &r) || r.type == kRecordSample) return;
  session_.OnRecord(*decoder_.reader(), r);
}

std::span<const uint8_t> SampleRewriter::Rewrite(std::span<const uint8_t> record) {
  Record r;
  Sample s;
  if (!decoder_.Decode(record, &r) || r.type != kRecordSample ||
      !decoder_.reader()->ParseSample(r, &s) || s.stack_user_at == 0 ||
      (mode_ == Mode::kUnwind && s.callchain_at == 0)) {
    return record;
  }
  ++samples_;
  bytes_in_ += record.size();
  const uint8_t* body = r.body.data();
  out_.clear();
  auto append = [this](const void* data, size_t bytes) {
    // Everything appended is a multiple of 8 bytes except the trimmed stack (padded below).
    size_t at = out_.size();
    out_.resize(at + (bytes + 7) / 8, 0);
    std::memcpy(reinterpret_cast<uint8_t*>(out_.data()) + at * 8, data, bytes);
  };
  uint64_t header = 0;
  append(&header, 8);  // filled in at the end
  if (mode_ == Mode::kUnwind) {
    // Everything before the chain, the new chain, and whatever followed the stack copy.
    std::span<const uint64_t> chain = session_.Callchain(s, &chain_);
    append(body, s.callchain_at);
    uint64_t nr = chain.size();
    append(&nr, 8);
    for (uint64_t ip : chain) {
      uint64_t v = ip == Session::kTruncatedFrame ? 0 : ip;
      append(&v, 8);
    }
    size_t chain_end = s.callchain_at + 8 + s.callchain.size() * 8;
    if (s.regs_user_at > chain_end) append(body + chain_end, s.regs_user_at - chain_end);
    size_t tail = s.stack_user_end;
    if (tail < r.body.size()) append(body + tail, r.body.size() - tail);
  } else {
    // The same record with the stack cut to dyn_size (rounded up to 8).
    append(body, s.stack_user_at);
    uint64_t dyn = s.stack_user.size();
    uint64_t size = (dyn + 7) & ~uint64_t{7};
    append(&size, 8);
    if (size) {
      append(s.stack_user.data(), dyn);  // padded with zeros to `size`
      append(&dyn, 8);
    }
    size_t tail = s.stack_user_end;
    if (tail < r.body.size()) append(body + tail, r.body.size() - tail);
  }
  const size_t bytes = out_.size() * 8;
  if (bytes > 0xffff) return record;  // cannot happen: the result is never larger
  perf_event_header h;
  h.type = PERF_RECORD_SAMPLE;
  h.misc = r.misc;
  h.size = static_cast<uint16_t>(bytes);
  std::memcpy(out_.data(), &h, sizeof h);
  bytes_out_ += bytes;
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(out_.data()), bytes);
}

uint64_t SampleRewriter::truncated() const {
  const auto& ends = session_.unwind_ends();
  size_t i = static_cast<size_t>(UnwindEnd::kTruncated);
  return i < ends.size() ? ends[i] : 0;
}

}  // namespace pf
