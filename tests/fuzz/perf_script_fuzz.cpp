// Fuzz target: the perf script folder (through the collapse entry point, as pf-collapse runs
// it), with the option bits taken from the first byte. Must never crash, hang or leak.
#include <cstdint>
#include <string>

#include "base/error.h"
#include "collapse/collapse.h"
#include "io/output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint8_t bits = data[0];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  pf::CollapseOptions opt;
  opt.format = "perf-script";
  opt.threads = (bits & 1) ? 2 : 1;
  opt.perf.include_pid = bits & 2;
  opt.perf.include_tid = bits & 4;
  opt.perf.annotate_kernel = opt.perf.annotate_jit = bits & 8;
  opt.perf.include_addrs = bits & 16;
  opt.perf.weight_samples = bits & 32;
  if (bits & 64) opt.perf.skip_after = {"main"};
  if (bits & 128) opt.filter.hide = {"^f"};
  std::vector<std::unique_ptr<pf::ByteSource>> in;
  try {
    in.push_back(pf::MemoryInput(text, "fuzz"));
    pf::StringSink sink;
    pf::ReadReport report;
    pf::CollapseSources(std::move(in), opt, sink, &report);
  } catch (const pf::Error&) {
  }
  return 0;
}
