#include "pfstream/address_collector.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace pf {

namespace {
constexpr uint16_t kCpuModeMask = 7;
constexpr uint16_t kCpuModeKernel = 1;
}  // namespace

AddressCollector::AddressCollector()
    : symbolizer_(Symbolizer::Options{}), session_(symbolizer_) {
  static constexpr char kHeader[16] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2',
                                       16,  0,   0,   0,   0,   0,   0,   0};
  headers_.assign(kHeader, sizeof kHeader);
}

AddressCollector::~AddressCollector() = default;

void AddressCollector::OnRecord(std::span<const uint8_t> rec) {
  if (rec.size() < 8) return;
  uint32_t type;
  uint16_t misc;
  std::memcpy(&type, rec.data(), 4);
  std::memcpy(&misc, rec.data() + 4, 2);
  if (!reader_) {
    if (type == kRecordHeaderAttr) {
      headers_.append(reinterpret_cast<const char*>(rec.data()), rec.size());
      return;
    }
    if (type >= kRecordHeaderAttr) return;  // other header records: not needed
    // The first kernel-kind record: the attributes are complete.
    source_ = MemoryInput(headers_, "<stream>");
    reader_ = std::make_unique<PerfDataReader>(*source_);
  }
  // An aligned copy of the body (the ring's records may sit anywhere).
  std::vector<uint64_t> copy((rec.size() + 7) / 8);
  std::memcpy(copy.data(), rec.data(), rec.size());
  Record r;
  r.type = type;
  r.misc = misc;
  r.body = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(copy.data()) + 8,
                                    rec.size() - 8);
  if (type != kRecordSample) {
    SampleId id;
    if (reader_->ParseSampleId(r, &id) && id.has_time) last_time_ = std::max(last_time_, id.time);
    session_.OnRecord(*reader_, r);
    return;
  }
  Sample s;
  if (!reader_->ParseSample(r, &s)) return;
  last_time_ = std::max(last_time_, s.time);
  bool kernel = (s.misc & kCpuModeMask) == kCpuModeKernel;
  if (s.callchain.empty()) {
    seen_.insert({s.pid, kernel, s.ip});
    return;
  }
  for (uint64_t ip : s.callchain) {
    if (ip >= kContextMax) {
      if (ip == kContextKernel || ip == kContextUser) kernel = ip == kContextKernel;
      continue;
    }
    seen_.insert({s.pid, kernel, ip});
  }
}

EmbeddedSymbols AddressCollector::Resolve() {
  EmbeddedSymbols out;
  if (!reader_) return out;
  for (const Key& k : seen_) {
    ResolvedFrame f = session_.Resolve(k.pid, k.ip, k.kernel);
    if (!f.has_sym) continue;
    if (k.kernel) {
      std::string module;
      if (f.dso.size() > 2 && f.dso != "[kernel.kallsyms]") {
        module = std::string(f.dso.substr(1, f.dso.size() - 2));
      }
      out.AddKernel(k.ip - f.symoff, f.symoff + 1, f.sym, module);
    } else if (f.dso.rfind("/tmp/perf-", 0) != 0) {  // JIT maps are files already
      out.Add(std::string(f.dso), "", f.addr - f.symoff, f.symoff + 1, f.sym);
    }
  }
  return out;
}

}  // namespace pf
