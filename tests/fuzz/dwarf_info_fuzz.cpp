// Fuzz target: inline chains and source lines from DWARF (DwarfInfo: the CU index of
// functions and inline trees, the line tables), and the names addr2line gives from the
// symbol table (Addr2lineNames). The input is an ELF file with DWARF; addresses of its .text
// (sampled) are looked up. Must never crash or hang.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "base/error.h"
#include "symbolize/addr2line_names.h"
#include "symbolize/dwarf_info.h"
#include "elf/elf_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // (Memory files are never cached on disk, so the inputs leave nothing behind.)
  // libdw reads a file: hand it the input through a memory file.
  int fd = memfd_create("fuzz-dwarf", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  uint64_t lo = 0, hi = 0x10000;
  try {
    std::unique_ptr<pf::elf::ElfImage> image = pf::elf::ElfImage::Open(path);
    int text = image->FindSection(".text");
    if (text >= 0) {
      lo = image->sections()[static_cast<size_t>(text)].addr;
      hi = lo + std::min<uint64_t>(image->sections()[static_cast<size_t>(text)].size, 1 << 20);
    }
    pf::Addr2lineNames names(*image);
    uint64_t step = (hi - lo) / 256 + 1;
    for (uint64_t a = lo; a < hi; a += step) names.At(a);
  } catch (const pf::Error&) {
  }
  if (std::unique_ptr<pf::DwarfInfo> info = pf::DwarfInfo::Open(path)) {
    uint64_t step = (hi - lo) / 256 + 1;
    for (uint64_t a = lo; a < hi; a += step) info->Lookup(a);
  }
  close(fd);
  return 0;
}
