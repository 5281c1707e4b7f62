// Fuzz target: the tracing tools' stack texts (formats/trace_stacks.h), each input read as
// bpftrace, bcc, DTrace and SystemTap text, and sniffed. Must never crash, hang or leak; a
// reader either throws pf::Error or returns a tree whose total is the sum of its stacks.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "formats/sniff.h"
#include "formats/trace_stacks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  pf::InputFormat sniffed = pf::SniffFormat(text);
  for (pf::InputFormat f : {pf::InputFormat::kBpftrace, pf::InputFormat::kBcc,
                            pf::InputFormat::kDtrace, pf::InputFormat::kStap}) {
    try {
      auto source = pf::MemoryInput(text, "fuzz");
      pf::ReadReport report;
      pf::StackTree tree = pf::ReadTraceStacks(f, *source, &report);
      if (tree.columns() != 1) std::abort();
      if (tree.size() < 2) std::abort();  // a tree read holds a stack
    } catch (const pf::Error&) {
    }
  }
  (void)sniffed;
  return 0;
}
