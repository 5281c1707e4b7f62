// Fuzz target: the gperftools CPU and heap profile readers (formats/gperftools.h), then the
// whole read (collapse/gperftools.h: naming through the maps text, folding), every input read
// as both formats. Must never crash, hang or leak; a profile's values must add up to the
// tree's totals.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "collapse/profiles.h"
#include "formats/gperftools.h"
#include "io/input.h"

namespace {

void ReadAs(pf::InputFormat format, std::string_view bytes) {
  try {
    pf::ReadReport report;
    pf::GperftoolsProfile p = format == pf::InputFormat::kGperftoolsCpu
                                  ? pf::ParseGperftoolsCpu(bytes, "fuzz", &report)
                                  : pf::ParseGperftoolsHeap(bytes, "fuzz", &report);
    if (p.values.size() != p.stacks.size() * p.types.size()) std::abort();
    for (const auto& s : p.stacks) {
      if (s.first + s.depth > p.addresses.size()) std::abort();
    }
    std::unique_ptr<pf::ByteSource> in = pf::MemoryInput(bytes, "fuzz");
    pf::Symbolizer::Options symbols;
    symbols.use_build_id_cache = false;
    symbols.kallsyms = "/nonexistent";
    pf::StackTree tree = pf::ReadProfile(format, *in, {}, symbols, &report);
    if (tree.columns() != static_cast<int>(p.types.size())) std::abort();
  } catch (const pf::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ReadAs(pf::InputFormat::kGperftoolsCpu, bytes);
  ReadAs(pf::InputFormat::kGperftoolsHeap, bytes);
  return 0;
}
