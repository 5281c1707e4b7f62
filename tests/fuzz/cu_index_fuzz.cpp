// Fuzz target: the CU indexes DwarfInfo keeps in the cache (SavedIndex / RestoreIndex), against
// a fixed ELF file with DWARF (PF_FUZZ_DWARF_ELF, from the dwarf_info corpus). Any bytes either
// are not taken or are taken and save back to the same bytes; every address of .text is then
// looked up (each restored CU checked as it is first asked for), and what the DwarfInfo saves
// afterwards is taken by a fresh one. Each input is also tried cut and with a byte changed
// (variants.h).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "symbolize/dwarf_info.h"
#include "dwarf_text.h"
#include "variants.h"

namespace {

bool Restore(pf::DwarfInfo& info, std::string_view bytes) {
  auto copy = std::make_shared<std::string>(bytes);
  return info.RestoreIndex(std::shared_ptr<const char>(copy, copy->data()), *copy);
}

void Check(std::string_view bytes) {
  const pf::fuzz::Text& text = pf::fuzz::TextRange();
  std::unique_ptr<pf::DwarfInfo> info = pf::DwarfInfo::Open(PF_FUZZ_DWARF_ELF);
  if (!info) std::abort();
  if (Restore(*info, bytes) && info->SavedIndex() != bytes) std::abort();
  for (uint64_t a = text.lo; a < text.hi; ++a) info->Lookup(a);
  std::unique_ptr<pf::DwarfInfo> next = pf::DwarfInfo::Open(PF_FUZZ_DWARF_ELF);
  if (!Restore(*next, info->SavedIndex())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pf::fuzz::CheckWithVariants(std::string_view(reinterpret_cast<const char*>(data), size), Check);
  return 0;
}
