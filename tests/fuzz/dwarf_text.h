#pragma once
// For the fuzz targets of what DwarfInfo keeps in the cache (cu_index, locations): the .text
// of their fixed ELF file with DWARF (PF_FUZZ_DWARF_ELF, from the dwarf_info corpus), whose
// every address each input is checked at. No cache is read or written.
#include <cstdint>
#include <cstdlib>

#include "symbolize/elf_image.h"

namespace pf::fuzz {

struct Text {
  uint64_t lo = 0, hi = 0;
};

inline const Text& TextRange() {
  static const Text text = [] {
    setenv("PF_CACHE_DIR", "", 1);  // nothing read from or left in a cache
    Text t;
    auto image = pf::elf::ElfImage::Open(PF_FUZZ_DWARF_ELF);
    int i = image->FindSection(".text");
    if (i >= 0) {
      const pf::elf::Section& s = image->sections()[static_cast<size_t>(i)];
      t = {s.addr, s.addr + s.size};
    }
    return t;
  }();
  return text;
}

}  // namespace pf::fuzz
