// The image libdw is given for a debug file whose DWARF is compressed (SHF_COMPRESSED, as
// Debian's -dbgsym and libc6-dbg packages keep it): one ELF image in anonymous memory with
// the sections DwarfInfo reads inflated (libdeflate, 2-3x faster than the zlib inflate libelf
// would run, and zstd, which libelf 0.188 cannot read) and every other section left out.
// Inflating glibc's .debug_info is most of what a first run with inline frames costs, so the
// largest section is inflated on a thread of its own while this one fills the others, each
// section's pages mapped in one call before they are written; DwarfInfo::Open keeps the image
// in the cache on disk (dwarf_cache.h), and a later run maps it instead.

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "base/thread_name.h"
#include "symbolize/dwarf_info_internal.h"
#include "elf/elf_image.h"
#include "elf/section_data.h"

namespace pf {

namespace {

// Maps in the whole pages inside [p, p + n) of an ImageBuffer, zero-filled, at once (before
// Linux 5.14, they are left to fault in as they are written).
void PopulateForWrite(char* p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(page - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  static_cast<void>(p);
  static_cast<void>(n);
#endif
}

// The sections libdw reads for what Lookup asks (the DIEs, their strings, ranges and address
// index; the line table only for lines). Location lists, macros, .debug_frame and the name
// indexes are never read here, and are the larger part of a debug file.
bool WantedSection(std::string_view name, bool lines) {
  if (name.substr(0, 7) != ".debug_") return false;
  if (name == ".debug_line") return lines;
  for (std::string_view skip : {".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
                                ".debug_frame", ".debug_pubnames", ".debug_pubtypes",
                                ".debug_gnu_pubnames", ".debug_gnu_pubtypes", ".debug_names"}) {
    if (name == skip) return false;
  }
  return true;
}

// The file's ELF header and section headers, when it is a 64-bit little-endian file that is
// not relocatable (libdw would need its relocations), with well-formed section headers.
bool ReadHeaders(std::string_view file, Elf64_Ehdr* eh, std::vector<Elf64_Shdr>* sh) {
  if (!elf::ReadAt(file, 0, eh) || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
      eh->e_type == ET_REL || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
      eh->e_shstrndx >= eh->e_shnum) {
    return false;
  }
  sh->resize(eh->e_shnum);
  for (size_t i = 0; i < sh->size(); ++i) {
    if (!elf::ReadAt(file, eh->e_shoff + i * sizeof(Elf64_Shdr), &(*sh)[i])) return false;
  }
  return true;
}

// Marks in `keep` (1) the sections the image holds: the wanted ones with data, and the
// section name table. False when none of them is compressed (nothing to do), or the file has
// a dwz alternate file (libdw finds that from the file's path).
bool ChooseSections(std::string_view file, const Elf64_Ehdr& eh, const std::vector<Elf64_Shdr>& sh,
                    bool lines, std::vector<char>* keep) {
  const Elf64_Shdr& names = sh[eh.e_shstrndx];
  std::string_view shstrtab = elf::Slice(file, names.sh_offset, names.sh_size);
  if (shstrtab.empty()) return false;
  keep->assign(sh.size(), 0);
  bool compressed = false;
  for (size_t i = 1; i < sh.size(); ++i) {
    std::string_view name = elf::CString(shstrtab, sh[i].sh_name);
    if (name == ".gnu_debugaltlink") return false;
    if (sh[i].sh_type == SHT_NOBITS || !WantedSection(name, lines)) continue;
    (*keep)[i] = 1;
    if (sh[i].sh_flags & SHF_COMPRESSED) compressed = true;
  }
  (*keep)[eh.e_shstrndx] = 1;
  return compressed;
}

// Rewrites the section headers `sh` for the image: each kept section at its offset (16-byte
// aligned, after the ELF header), decompressed (keep[i] becomes 2 where it must be inflated
// when copied), the others SHT_NOBITS. Returns where the section headers go, with *end the
// image's size; 0 on a section that is not all in the file or does not say its size.
uint64_t LayOutImage(std::string_view file, std::vector<Elf64_Shdr>& sh, std::vector<char>& keep,
                     uint64_t* end) {
  auto align = [](uint64_t v) { return (v + 15) & ~uint64_t{15}; };
  uint64_t at = sizeof(Elf64_Ehdr);
  for (size_t i = 1; i < sh.size(); ++i) {
    Elf64_Shdr& s = sh[i];
    if (!keep[i]) {
      s.sh_type = SHT_NOBITS;
      s.sh_offset = sizeof(Elf64_Ehdr);
      continue;
    }
    std::string_view data = elf::Slice(file, s.sh_offset, s.sh_size);
    if (data.size() != s.sh_size) return 0;
    uint64_t size = data.size();
    if (s.sh_flags & SHF_COMPRESSED) {
      size = DecompressedSize(data);
      if (size == 0) return 0;
    }
    keep[i] = (s.sh_flags & SHF_COMPRESSED) ? 2 : 1;  // 2: decompressed when copied
    s.sh_flags &= ~static_cast<uint64_t>(SHF_COMPRESSED);
    s.sh_size = size;
    at = align(at);
    s.sh_offset = at;
    at += size;
  }
  const uint64_t shoff = align(at);
  *end = shoff + sh.size() * sizeof(Elf64_Shdr);
  return shoff;
}

// Copies (or inflates) each kept section from the file (headers `in`) to its place in `out`
// (headers `sh`). The largest compressed section, when large, is inflated on a thread of its
// own while this one fills the others: one zlib stream cannot be split, and glibc's
// .debug_info (5.8 MB, 11 ms here) is what a machine's first run waits for.
bool FillSections(std::string_view file, const std::vector<Elf64_Shdr>& in,
                  const std::vector<Elf64_Shdr>& sh, const std::vector<char>& keep,
                  uint64_t aside_bytes, char* out) {
  auto fill = [&](size_t i) {
    std::string_view data = elf::Slice(file, in[i].sh_offset, in[i].sh_size);
    const Elf64_Shdr& s = sh[i];
    PopulateForWrite(out + s.sh_offset, s.sh_size);
    if (keep[i] == 2) return DecompressSectionInto(data, out + s.sh_offset, s.sh_size);
    if (!data.empty()) std::memcpy(out + s.sh_offset, data.data(), data.size());
    return true;
  };
  size_t largest = 0;
  for (size_t i = 1; i < sh.size(); ++i) {
    if (keep[i] == 2 && (largest == 0 || sh[i].sh_size > sh[largest].sh_size)) largest = i;
  }
  bool helper_ok = true;
  std::thread helper;
  if (largest != 0 && sh[largest].sh_size >= aside_bytes) {
    try {
      helper = std::thread([&] {
        NameThisThread("pf-dwarf-read");
        helper_ok = fill(largest);
      });
    } catch (const std::system_error&) {  // no thread to be had: filled below
    }
  }
  const size_t aside = helper.joinable() ? largest : 0;
  bool ok = true;
  for (size_t i = 1; i < sh.size() && ok; ++i) {
    if (keep[i] && i != aside) ok = fill(i);
  }
  if (helper.joinable()) helper.join();
  return ok && helper_ok;
}

}  // namespace

// When a 64-bit little-endian file keeps its DWARF compressed (SHF_COMPRESSED, as Debian's
// debug packages do), the ELF image libdw is given instead: the ELF header, the wanted
// sections decompressed (libdeflate, 2-3x faster than the zlib inflate libelf would run,
// and zstd, which libelf 0.188 cannot read), the section name table, and every other section
// turned into SHT_NOBITS. False (use the file as it is) when nothing wanted is compressed,
// for a relocatable file or one with a dwz alternate file, and on anything malformed.
bool DecompressedImage(std::string_view file, bool lines, uint64_t aside_bytes,
                       ImageBuffer* image) {
  Elf64_Ehdr eh;
  std::vector<Elf64_Shdr> sh;
  std::vector<char> keep;
  if (!ReadHeaders(file, &eh, &sh) || !ChooseSections(file, eh, sh, lines, &keep)) return false;
  // Where each kept section goes, then one buffer (not zeroed), filled in place.
  const std::vector<Elf64_Shdr> in = sh;  // the file's headers, to copy the data from
  uint64_t end = 0;
  const uint64_t shoff = LayOutImage(file, sh, keep, &end);
  if (shoff == 0 || !image->Allocate(end)) return false;
  char* out = image->bytes.get();
  std::memset(out, 0, sizeof eh);
  if (!FillSections(file, in, sh, keep, aside_bytes, out)) return false;
  // Padding between sections stays as allocated: nothing reads it.
  eh.e_shoff = shoff;
  eh.e_phoff = 0;
  eh.e_phnum = 0;
  std::memcpy(out + shoff, sh.data(), sh.size() * sizeof(Elf64_Shdr));
  std::memcpy(out, &eh, sizeof eh);
  return true;
}

}  // namespace pf
