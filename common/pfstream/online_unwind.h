#pragma once
// pf-record's treatment of DWARF samples (--call-graph=dwarf): the kernel hands each sample
// with the user registers and a copy of the user stack (8 KiB by default). Two ways out:
//   kUnwind (the default): the stack is unwound as the sample is read (a Session fed with
//     every map, comm and fork record written), and the sample is rewritten with a plain
//     call chain — the kernel's part, PERF_CONTEXT_USER, the user frames as perf reports
//     them (return addresses minus one) — and without the registers and the stack: about
//     150 bytes a sample instead of 8,400. The stream declares the rewritten layout, so it
//     reads like a frame-pointer recording (perf script -i - included).
//   kTrim (--raw-stacks): the registers and the stack stay, for offline unwinding by
//     pf-script or perf script, but the stack is cut to the bytes the kernel filled
//     (dyn_size, rounded up to 8) instead of the full reservation.
// A stack cut short by the end of the copy ends, in kUnwind mode, in a frame of address 0
// (printed `0 [unknown]`): a context marker such as perf's -1 would make readers drop the
// whole chain.

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pfstream/record_decoder.h"
#include "pfstream/session.h"
#include "symbolize/symbolizer.h"

namespace pf {

class SampleRewriter {
 public:
  enum class Mode { kUnwind, kTrim };
  explicit SampleRewriter(Mode mode);
  ~SampleRewriter();

  /// The attribute to declare in the stream for an event opened with `kernel_attr`.
  static perf_event_attr StreamAttr(const perf_event_attr& kernel_attr, Mode mode);

  /// The events as opened (with REGS_USER and STACK_USER), before any record.
  void AddAttr(const perf_event_attr& kernel_attr, std::span<const uint64_t> ids);
  /// A non-sample record, in the order of the stream (synthesized maps included).
  void Observe(std::span<const uint8_t> record);
  /// The sample to write instead of `record` (valid until the next call).
  std::span<const uint8_t> Rewrite(std::span<const uint8_t> record);

  uint64_t samples() const { return samples_; }
  uint64_t bytes_in() const { return bytes_in_; }
  uint64_t bytes_out() const { return bytes_out_; }
  /// Unwound samples whose stack copy ended before their outermost frame.
  uint64_t truncated() const;

 private:
  Mode mode_;
  RecordDecoder decoder_;
  Symbolizer symbolizer_;
  Session session_;
  std::vector<uint64_t> chain_;
  std::vector<uint64_t> out_;
  uint64_t samples_ = 0, bytes_in_ = 0, bytes_out_ = 0;
};

}  // namespace pf
