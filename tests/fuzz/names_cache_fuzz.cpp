// Fuzz target: addr2line's name index as the cache keeps it (Addr2lineNames::Saved /
// Restored), against this program's own ELF image. Any bytes either fail to restore or give
// an index that saves back to the same bytes and answers every address near its candidates.
// Each input is also tried cut and with a byte changed (variants.h).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "symbolize/addr2line_names.h"
#include "elf/elf_image.h"
#include "variants.h"

namespace {

const pf::elf::ElfImage& Image() {
  static std::unique_ptr<pf::elf::ElfImage> image = pf::elf::ElfImage::Open("/proc/self/exe");
  return *image;
}

void Check(std::string_view bytes) {
  std::unique_ptr<pf::Addr2lineNames> names = pf::Addr2lineNames::Restored(Image(), bytes);
  if (!names) return;
  if (names->Saved() != bytes) std::abort();
  // Each candidate's value, and the addresses around it.
  for (size_t at = 16; at + 32 <= bytes.size() && at < 16 + 32 * 4096; at += 32) {
    uint64_t value;
    std::memcpy(&value, bytes.data() + at, 8);
    for (uint64_t probe : {value - 1, value, value + 1}) {
      pf::Addr2lineNames::Answer a = names->At(probe);
      (void)a.function.size();
      (void)a.file.size();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pf::fuzz::CheckWithVariants(std::string_view(reinterpret_cast<const char*>(data), size), Check);
  return 0;
}
