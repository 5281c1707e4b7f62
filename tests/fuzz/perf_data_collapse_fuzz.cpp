// Fuzz target: recordings through pf-collapse's two-stage fold (a thread reading the records
// in time order, another naming and folding the samples), taken however small the input is,
// with the stack copies unwound by either thread as their loads share them, then all by the
// reading thread, then all by the folding one. The three must fold alike; none may crash,
// hang or leak.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "collapse/collapse.h"
#include "collapse/test_seams.h"
#include "io/input.h"
#include "io/output.h"

namespace {

using pf::test_seams::TwoStageUnwinder;

// The folded text, or nothing when the input was refused.
std::optional<std::string> Fold(const std::string& input, TwoStageUnwinder unwind) {
  pf::test_seams::ForceTwoStageUnwinder force(unwind);
  try {
    std::vector<std::unique_ptr<pf::ByteSource>> sources;
    sources.push_back(pf::MemoryInput(input, "fuzz"));
    pf::CollapseOptions options;
    options.threads = 2;
    options.two_stage_bytes = 0;
    options.two_stage_fp_bytes = 0;
    options.symbols.kallsyms = "/nonexistent/kallsyms";  // as the perf_data target
    options.symbols.use_build_id_cache = false;
    options.symbols.symfs = "/nonexistent-symfs";
    pf::StringSink sink;
    pf::ReadReport report;
    pf::CollapseSources(std::move(sources), options, sink, &report);
    return sink.data();
  } catch (const pf::Error&) {
  } catch (const pf::UsageError&) {
  }
  return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string copy(reinterpret_cast<const char*>(data), size);  // 8-byte aligned by malloc
  std::optional<std::string> shared = Fold(copy, TwoStageUnwinder::kByLoad);
  for (TwoStageUnwinder unwind :
       {TwoStageUnwinder::kReadingThread, TwoStageUnwinder::kFoldingThread}) {
    if (Fold(copy, unwind) != shared) std::abort();  // the stages disagree
  }
  return 0;
}
