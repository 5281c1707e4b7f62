// Inline frames and source lines from DWARF (dwarf_info.h explains the plan and why libdw
// alone was too slow): opening a debug file, and Lookup, which puts the parts together for an
// address. Open maps the file's inflated image from the cache on disk, else builds it
// (dwarf_image.cpp) when the DWARF is compressed, hands it to libdw and keeps the raw sections
// the fast walk reads; Lookup finds the address's CU (dwarf_names.cpp: .debug_aranges, else
// the CUs' ranges), the CU's index (dwarf_walk.cpp, or restored: dwarf_saved.cpp), the
// function holding the address and the inlined subroutines around it, their names, and the
// line from libdw's line table. dwarf_info_internal.h holds what the parts share.

#include "symbolize/dwarf_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <xxhash.h>

#include "base/error.h"
#include "base/regular_file.h"
#include "base/version.h"
#include "symbolize/dwarf_cache.h"
#include "elf/elf_image.h"
#include "symbolize/dwarf_info_internal.h"

namespace pf {

constexpr unsigned char kHostElfData =
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;

namespace {

// The kind of cache entry (FileCacheKey) of a saved CU index, with its format's version.
constexpr uint64_t kSavedIndexKind = 0x4355'0001;

// The kind of entry of saved answers, with its format's version; the key also holds the
// options that change them and pf's version (a newer pf may answer differently). A change to
// what Lookup answers, within a version, comes with a new format number here.
uint64_t SavedLocationsKind(const DwarfInfo::Options& options) {
  const uint64_t kind = 0x4c4f'0001 | (options.lines ? 1ull << 32 : 0) |
                        (options.demangle ? 1ull << 33 : 0);
  return XXH3_64bits_withSeed(kVersion, std::strlen(kVersion), kind);
}

}  // namespace

// binutils 2.40's mangle_style(): the languages it demangles nothing for. Fortran 90 to 2008
// are not among them (gfortran's `program m` is DW_AT_name "m" for the symbol MAIN__, and
// addr2line says MAIN__). DW_LANG_HP_* are HP's numbers, which dwarf.h does not name.
bool BinutilsTakesPlainNames(int dw_lang) {
  switch (dw_lang) {
    case DW_LANG_C89:
    case DW_LANG_C:
    case DW_LANG_C99:
    case DW_LANG_C11:
    case DW_LANG_Cobol74:
    case DW_LANG_Cobol85:
    case DW_LANG_Fortran77:
    case DW_LANG_Pascal83:
    case DW_LANG_PLI:
    case DW_LANG_UPC:
    case DW_LANG_Mips_Assembler:
    case 0x8765:  // DW_LANG_Upc
    case 0x8004:  // DW_LANG_HP_Basic91
    case 0x8006:  // DW_LANG_HP_IMacro
    case 0x8007:  // DW_LANG_HP_Assembler
      return true;
    default:
      return false;
  }
}

std::unique_ptr<DwarfInfo> DwarfInfo::Open(const std::string& path, const Options& options) {
  return Open(path, options, TestChoices());
}

std::unique_ptr<DwarfInfo> DwarfInfo::Open(const std::string& path, const Options& options,
                                           const TestChoices& choices) {
  auto h = std::make_unique<Handle>();
  h->fd = OpenRegularFile(path);
  if (h->fd < 0) return nullptr;
  bool from_cache = false;
  const std::string cache = CacheDir();
  try {
    // The image of a compressed debug file from the cache on disk, else built and stored.
    const std::string key = cache.empty() ? "" : DwarfCacheKey(h->fd, options.lines);
    size_t image_size = 0, mapped_size = 0;
    if (char* p = MapCachedImage(cache, key, &image_size, &mapped_size)) {
      h->image.bytes = std::shared_ptr<char>(p, ImageBuffer::Unmap{mapped_size});
      h->image.size = image_size;
      from_cache = true;
    } else {
      std::unique_ptr<elf::ElfBytes> file = elf::ElfBytes::Map(path);
      if (!DecompressedImage(file->data(), options.lines, choices.inflate_aside_bytes,
                             &h->image)) {
        h->image = ImageBuffer();
      } else if (!key.empty()) {
        std::string_view image(h->image.bytes.get(), h->image.size);
        // Stored later only when libelf will read the image in place, never converting it
        // (as it would one of the other byte order).
        if (options.store_later && image.size() > EI_DATA && image[EI_DATA] == kHostElfData) {
          StoreCachedImageLater(cache, key, h->image.bytes, image, kDwarfImageCheckedHead);
        } else {
          StoreCachedImage(cache, key, image, kDwarfImageCheckedHead);
        }
      }
    }
    if (h->image.bytes) {
      static std::once_flag libelf_ready;  // (elf_version sets a global)
      std::call_once(libelf_ready, [] { elf_version(EV_CURRENT); });
      h->elf = elf_memory(h->image.bytes.get(), h->image.size);
      if (h->elf) h->dwarf = dwarf_begin_elf(h->elf, DWARF_C_READ, nullptr);
    }
  } catch (const Error&) {
    // Unreadable as a whole: leave it to libdw, which fails alike.
  }
  if (h->dwarf == nullptr) {
    if (h->elf) elf_end(h->elf);
    h->elf = nullptr;
    h->image = ImageBuffer();
    from_cache = false;
    h->dwarf = dwarf_begin(h->fd, DWARF_C_READ);
  }
  if (h->dwarf == nullptr) return nullptr;
  auto info = std::unique_ptr<DwarfInfo>(new DwarfInfo);
  info->h_ = std::move(h);
  info->demangle_ = options.demangle;
  info->lines_ = options.lines;
  info->libdw_walk_ = choices.libdw_walk;
  info->from_cache_ = from_cache;
  if (!choices.libdw_walk && !cache.empty()) {
    info->index_dir_ = cache;
    info->index_key_ = FileCacheKey(info->h_->fd, 'u', kSavedIndexKind);
    if (options.keep_locations) {
      info->locations_key_ = FileCacheKey(info->h_->fd, 'l', SavedLocationsKind(options));
    }
  }
  // The sections the fast walk reads, as libelf holds them (decompressed by libdw at open
  // when they were compressed in the file).
  info->sections_ = std::make_unique<Sections>();
  if (Elf* elf = dwarf_getelf(info->h_->dwarf)) {
    size_t names = 0;
    if (elf_getshdrstrndx(elf, &names) == 0) {
      for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
        const char* name = elf_strptr(elf, names, shdr.sh_name);
        if (name == nullptr) continue;
        std::string_view* to = nullptr;
        if (std::strcmp(name, ".debug_info") == 0) to = &info->sections_->info;
        if (std::strcmp(name, ".debug_abbrev") == 0) to = &info->sections_->abbrev;
        if (std::strcmp(name, ".debug_aranges") == 0) to = &info->sections_->aranges;
        if (std::strcmp(name, ".debug_str") == 0) to = &info->sections_->str;
        if (std::strcmp(name, ".debug_line_str") == 0) to = &info->sections_->line_str;
        if (std::strcmp(name, ".debug_ranges") == 0) to = &info->sections_->ranges;
        if (std::strcmp(name, ".debug_rnglists") == 0) to = &info->sections_->rnglists;
        if (to == nullptr || (shdr.sh_flags & SHF_COMPRESSED)) continue;
        if (Elf_Data* data = elf_getdata(scn, nullptr); data && data->d_buf) {
          *to = std::string_view(static_cast<const char*>(data->d_buf), data->d_size);
        }
      }
    }
  }
  return info;
}

// libdw's handle of the CU's DIE, made the first time it is needed: libdw reads the header
// of every CU before the one asked for, the first time.
void* DwarfInfo::DieOf(CuRef& cu) {
  if (!cu.have_handle) {
    if (dwarf_offdie(h_->dwarf, cu.die, &cu.handle) == nullptr) return nullptr;
    cu.have_handle = true;
  }
  return &cu.handle;
}

const DwarfInfo::Location& DwarfInfo::Lookup(uint64_t vaddr) {
  auto it = cache_.find(vaddr);
  if (it != cache_.end()) return it->second;
  if (!locations_loaded_) LoadSavedLocations();
  Location& loc = cache_[vaddr];
  if (saved_location_count_ > 0 && RestoreLocation(vaddr, &loc)) {
    ++locations_restored_;
    return loc;
  }
  loc = Location();
  if (!locations_key_.empty()) {
    locations_changed_ = true;
    Register();
  }
  Locate(vaddr, loc);
  return loc;
}

void DwarfInfo::Locate(uint64_t vaddr, Location& loc) {
  CuRef cu;
  if (!UnitByAranges(vaddr, &cu) && !UnitByRanges(vaddr, &cu)) return;

  // The line: the line table's row for the address, the file's base name.
  auto* cu_die = lines_ ? static_cast<Dwarf_Die*>(DieOf(cu)) : nullptr;
  if (Dwarf_Line* line = cu_die ? dwarf_getsrc_die(cu_die, vaddr) : nullptr) {
    int lineno = 0;
    const char* file = dwarf_linesrc(line, nullptr, nullptr);
    if (file != nullptr && dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
      const char* slash = std::strrchr(file, '/');
      loc.srcline = std::string(slash ? slash + 1 : file) + ":" + std::to_string(lineno);
    }
  }

  // The function holding the address, then the chain of its inlined subroutines that hold
  // it: in tree order, an entry at depth d holding the address is the chain's level d.
  Unit& u = UnitFor(cu);
  int32_t index = u.FunctionAt(vaddr);
  if (index < 0 && !u.full) {
    // Perhaps in a function nested in another, which the index did not enter.
    WalkAgain(u, cu);
    SortFunctions(u);
    index = u.FunctionAt(vaddr);
  }
  if (index < 0) return;
  if (!u.functions[static_cast<size_t>(index)].loaded) LoadInlines(u, index);
  const Unit::Function* function = &u.functions[static_cast<size_t>(index)];
  const Name& name = NameOf(u, function->die);
  loc.function = name.name;
  loc.function_entry = function->entry;
  int language = u.language;
  if (!u.scanned || libdw_walk_) {
    auto* die = static_cast<Dwarf_Die*>(DieOf(cu));
    language = die ? dwarf_srclang(die) : -1;
  }
  loc.function_linkage = BinutilsTakesPlainNames(language) || name.linkage;
  std::vector<const Unit::Inline*> chain;
  for (uint32_t i = 0; i < function->inline_count; ++i) {
    const Unit::Inline& in = u.inlines[function->first_inline + i];
    if (in.depth > chain.size()) continue;  // under an entry that does not hold the address
    bool holds = false;
    for (uint32_t r = 0; r < in.range_count && !holds; ++r) {
      const Unit::Range& range = u.ranges[in.first_range + r];
      holds = vaddr >= range.lo && vaddr < range.hi;
    }
    if (!holds) continue;
    chain.resize(in.depth);
    chain.push_back(&in);
  }
  // Innermost first, each with the line of its call in the function around it.
  for (size_t i = chain.size(); i-- > 0;) {
    const Unit::Inline& in = *chain[i];
    loc.inlined.push_back(NameOf(u, in.die).name);
    std::string site;
    if (u.files != nullptr && in.call_file < u.nfiles && in.call_line > 0) {
      if (const char* name = dwarf_filesrc(u.files, in.call_file, nullptr, nullptr)) {
        const char* slash = std::strrchr(name, '/');
        site = std::string(slash ? slash + 1 : name) + ":" + std::to_string(in.call_line);
      }
    }
    loc.call_sites.push_back(std::move(site));
  }
}

}  // namespace pf
