// Fuzz target: the thread dump readers (eu-stack, gdb, jstack) on any text, each forced, and
// the sniffer. Must never crash, hang or leak; a stack read is never empty of frames.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "formats/sniff.h"
#include "formats/thread_dumps.h"
#include "io/input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  pf::SniffFormat(text);
  for (pf::ThreadDumpFormat f : {pf::ThreadDumpFormat::kEuStack, pf::ThreadDumpFormat::kGdb,
                                 pf::ThreadDumpFormat::kJstack}) {
    try {
      auto in = pf::MemoryInput(text, "fuzz");
      pf::ReadReport report;
      pf::StackTree tree = pf::ReadThreadDumps(f, *in, &report);
      // Every line adds at most one sample.
      size_t lines = 1;
      for (char c : text) lines += c == '\n';
      if (tree.Total() > lines) std::abort();
    } catch (const pf::Error&) {
    }
  }
  return 0;
}
