// Fuzz target: addr2line's name index as the cache keeps it (Addr2lineNames::Saved /
// Restored), against this program's own ELF image. Any bytes either fail to restore or give
// an index that saves back to the same bytes and answers every address near its candidates.
// Each input is also tried cut and with a byte changed at points across it, so replaying the
// corpus in ctest exercises the checks too.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "symbolize/addr2line_names.h"
#include "symbolize/elf_image.h"

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
  const std::string input(reinterpret_cast<const char*>(data), size);
  Check(input);
  const size_t step = size / 64 + 1;
  for (size_t k = 0; k < size; k += step) {
    Check(std::string_view(input).substr(0, k));
    std::string flipped = input;
    flipped[k] = static_cast<char>(flipped[k] ^ 0x41);
    Check(flipped);
  }
  return 0;
}
