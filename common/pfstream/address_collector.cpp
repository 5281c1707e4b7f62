// The symbols that travel with a pf-record stream (address_collector.h). Every record written
// goes through OnRecord: attributes and map records feed a Session, and each sample's distinct
// (process, address) pairs are kept. Only at the end are they resolved, once each, where the
// binaries and the kernel are, into the embedded symbol table: resolving while recording would
// cost the recorded machine CPU at the moment it is measured.

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
    : symbolizer_(Symbolizer::Options{}), session_(symbolizer_) {}

AddressCollector::~AddressCollector() = default;

void AddressCollector::OnRecord(std::span<const uint8_t> rec) {
  Record r;
  if (!decoder_.Decode(rec, &r)) return;
  const PerfDataReader& reader = *decoder_.reader();
  const uint32_t type = r.type;
  if (type != kRecordSample) {
    SampleId id;
    if (reader.ParseSampleId(r, &id) && id.has_time) last_time_ = std::max(last_time_, id.time);
    session_.OnRecord(reader, r);
    return;
  }
  Sample s;
  if (!reader.ParseSample(r, &s)) return;
  last_time_ = std::max(last_time_, s.time);
  bool kernel = (s.misc & kCpuModeMask) == kCpuModeKernel;
  // The chain as a reader will resolve it (a user stack copy is unwound here).
  std::span<const uint64_t> chain = session_.Callchain(s, &chain_);
  if (chain.empty()) {
    seen_.insert({s.pid, kernel, s.ip});
    return;
  }
  for (uint64_t ip : chain) {
    if (ip >= kContextMax) {
      if (ip == kContextKernel || ip == kContextUser) kernel = ip == kContextKernel;
      continue;
    }
    seen_.insert({s.pid, kernel, ip});
  }
}

EmbeddedSymbols AddressCollector::Resolve() {
  EmbeddedSymbols out;
  if (!decoder_.reader()) return out;
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
