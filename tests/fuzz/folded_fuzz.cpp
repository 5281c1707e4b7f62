// Fuzz target: the folded reader and writer (merge mode of pf-collapse), and the format
// sniffer. Must never crash, hang or leak; output must parse back to the same output.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "collapse/collapse.h"
#include "io/output.h"

namespace {
std::string Run(std::string_view text, const char* format) {
  pf::CollapseOptions opt;
  opt.format = format;
  std::vector<std::unique_ptr<pf::ByteSource>> in;
  in.push_back(pf::MemoryInput(text, "fuzz"));
  pf::StringSink sink;
  pf::ReadReport report;
  pf::CollapseSources(std::move(in), opt, sink, &report);
  return sink.data();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    Run(text, "auto");
    std::string once = Run(text, "folded");
    // Folding is idempotent: our own output reads back to itself.
    if (Run(once, "folded") != once) std::abort();
  } catch (const pf::Error&) {
  }
  return 0;
}
