// Fuzz target: the answers DwarfInfo keeps in the cache (SavedLocations / RestoreLocations),
// against a fixed ELF file with DWARF (PF_FUZZ_DWARF_ELF, from the dwarf_info corpus). Any
// bytes either are not taken or are taken and save back to the same bytes; every address of
// .text is then looked up (each restored answer checked as it is taken, a bad one made
// again), and what the DwarfInfo saves afterwards is taken by a fresh one. Each input is also
// tried cut and with a byte changed (variants.h).
#include <cstdint>
#include <string_view>

#include "dwarf_text.h"
#include "variants.h"

namespace {

void Check(std::string_view bytes) {
  pf::fuzz::CheckSaved(bytes, pf::DwarfInfo::Options{.keep_locations = true},
                       &pf::DwarfInfo::RestoreLocations, &pf::DwarfInfo::SavedLocations);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pf::fuzz::CheckWithVariants(std::string_view(reinterpret_cast<const char*>(data), size), Check);
  return 0;
}
