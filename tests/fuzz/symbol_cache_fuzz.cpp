// Fuzz target: the symbol cache's entries (ElfSymbols::Saved / Restored). Any bytes either
// fail to restore or give a table that saves back to the same bytes, whose lookups at every
// symbol's bounds end (the replayed tree's shape is checked) and whose names can be read.
// Each input is also tried cut and with a byte changed (variants.h).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "symbolize/elf_symbols.h"
#include "variants.h"

namespace {

void Check(std::string_view bytes) {
  std::unique_ptr<pf::ElfSymbols> s = pf::ElfSymbols::Restored(bytes);
  if (!s) return;
  if (s->Saved() != bytes) std::abort();
  for (pf::SymbolIndex i; i.index() < s->size() && i.value < 4096; ++i) {
    for (uint64_t probe : {s->Start(i), s->End(i) - 1, s->End(i)}) {
      pf::SymbolIndex index;
      uint64_t offset;
      if (s->Find(probe, &index, &offset) && index.index() >= s->size()) std::abort();
    }
    (void)s->Name(i);
  }
  uint64_t v;
  s->FileOffsetToVaddr(0x1000, &v);
  s->VaddrToFileOffset(0x1000, &v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pf::fuzz::CheckWithVariants(std::string_view(reinterpret_cast<const char*>(data), size), Check);
  return 0;
}
