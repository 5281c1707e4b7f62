// Fuzz target: the massif reader (formats/massif.h) for each way of choosing a snapshot, and
// through the collapse (forced -f massif and sniffed). Must never crash, hang or leak; a tree
// read must hold no more than the sum of its entries can (never a negative, wrapped weight).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "collapse/collapse.h"
#include "formats/massif.h"
#include "io/output.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const char* snapshot : {"peak", "last", "1", "40"}) {
    try {
      auto src = pf::MemoryInput(text, "fuzz");
      pf::ReadReport report;
      pf::StackTree tree = pf::ReadMassif(*src, snapshot, &report);
      if (tree.Total() == UINT64_MAX && tree.saturated() == 0) std::abort();
    } catch (const pf::Error&) {
    }
  }
  for (const char* format : {"massif", "auto"}) {
    try {
      pf::CollapseOptions opt;
      opt.format = format;
      std::vector<std::unique_ptr<pf::ByteSource>> in;
      in.push_back(pf::MemoryInput(text, "fuzz"));
      pf::StringSink sink;
      pf::ReadReport report;
      pf::CollapseSources(std::move(in), opt, sink, &report);
    } catch (const pf::Error&) {
    }
  }
  return 0;
}
