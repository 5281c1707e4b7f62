#pragma once
// For the fuzz targets of what DwarfInfo keeps in the cache (cu_index, locations): the .text
// of their fixed ELF file with DWARF (PF_FUZZ_DWARF_ELF, from the dwarf_info corpus), whose
// every address each input is checked at, and the check itself. No cache is read or written.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "symbolize/dwarf_info.h"
#include "elf/elf_image.h"

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

/// Bytes either are not taken by `restore` or are taken and `save` back to the same bytes;
/// every address of .text is then looked up, and what the DwarfInfo saves afterwards is taken
/// by a fresh one. Aborts otherwise.
inline void CheckSaved(std::string_view bytes, const DwarfInfo::Options& options,
                       bool (DwarfInfo::*restore)(std::shared_ptr<const char>, std::string_view),
                       std::string (DwarfInfo::*save)() const) {
  auto take = [&](DwarfInfo& info, std::string_view b) {
    auto copy = std::make_shared<std::string>(b);
    return (info.*restore)(std::shared_ptr<const char>(copy, copy->data()), *copy);
  };
  const Text& text = TextRange();
  std::unique_ptr<DwarfInfo> info = DwarfInfo::Open(PF_FUZZ_DWARF_ELF, options);
  if (!info) std::abort();
  if (take(*info, bytes) && ((*info).*save)() != bytes) std::abort();
  for (uint64_t a = text.lo; a < text.hi; ++a) info->Lookup(a);
  std::unique_ptr<DwarfInfo> next = DwarfInfo::Open(PF_FUZZ_DWARF_ELF, options);
  if (!take(*next, ((*info).*save)())) std::abort();
}

}  // namespace pf::fuzz
