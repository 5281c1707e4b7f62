// Inline frames and source lines from DWARF (dwarf_info.h explains the plan and why libdw
// alone was too slow). In order below: the debug file opened, its compressed sections
// inflated into one ELF image (kept in the cache on disk); the fast walk of .debug_info, which
// indexes a CU's functions without entering them and reads a function's inline tree when one
// of its addresses is asked for, with libdw's DIE functions for what it leaves; the CU indexes
// and the answers kept on disk, each restored entry checked against the DWARF before use;
// names, range lists and .debug_aranges read here; and Lookup, which puts them together for an
// address, with the line from libdw's line table.

#include "symbolize/dwarf_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <xxhash.h>

#include "base/byte_cursor.h"
#include "base/dwarf_reader.h"
#include "base/error.h"
#include "base/regular_file.h"
#include "base/thread_name.h"
#include "base/version.h"
#include "symbolize/cache_entry.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_cache.h"
#include "symbolize/elf_image.h"
#include "symbolize/section_data.h"

namespace pf {

// An ELF image built in memory (not zero-filled: every byte read is written).
// The decompressed image: anonymous memory, each section's pages populated in one call
// (PopulateForWrite) by the thread about to fill them, which is cheaper than a page fault for
// each page as the inflater writes them.
struct ImageBuffer {
  struct Unmap {
    size_t size;
    void operator()(char* p) const { munmap(p, size); }
  };
  std::shared_ptr<char> bytes;  // (shared with a cache store that outlives the handle)
  size_t size = 0;
  bool Allocate(size_t n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    bytes = std::shared_ptr<char>(static_cast<char*>(p), Unmap{n});
    size = n;
    return true;
  }
};

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

constexpr unsigned char kHostElfData =
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;

namespace {

// The DwarfInfos whose CU indexes changed, stored at exit (StoreChangedIndexes) unless
// destroyed before: a run's Symbolizer is kept until the process ends (base/teardown.h).
std::mutex& ChangedIndexesMu() {
  static std::mutex mu;
  return mu;
}
std::vector<DwarfInfo*>& ChangedIndexes() {
  static auto* all = new std::vector<DwarfInfo*>;
  return *all;
}

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

void StoreChangedIndexes() {
  std::lock_guard lock(ChangedIndexesMu());
  std::vector<std::string> dirs;  // to trim, once each
  for (DwarfInfo* info : ChangedIndexes()) {
    info->index_registered_ = false;
    if (info->WriteIndex() &&
        std::find(dirs.begin(), dirs.end(), info->index_dir_) == dirs.end()) {
      dirs.push_back(info->index_dir_);
    }
  }
  ChangedIndexes().clear();
  for (const std::string& dir : dirs) TrimCacheNowAndThen(dir, kCacheBytes);
}

struct DwarfInfo::Handle {
  int fd = -1;
  Dwarf* dwarf = nullptr;
  Elf* elf = nullptr;  // over `image`, when the sections were decompressed here
  ImageBuffer image;
  ~Handle() {
    if (dwarf) dwarf_end(dwarf);
    if (elf) elf_end(elf);
    if (fd >= 0) close(fd);
  }
};

// The raw .debug_info and .debug_abbrev, for the fast walk, and the abbreviation tables
// parsed so far (by offset).
struct DwarfInfo::Sections {
  struct Spec {
    uint32_t name, form;
    int64_t implicit;  // DW_FORM_implicit_const's value
  };
  struct Abbrev {
    uint32_t tag = 0;
    bool children = false;
    bool known = false;
    uint32_t first = 0, count = 0;  // into specs
    // In a unit of 4-byte offsets and 8-byte addresses (DWARF32 on a 64-bit target), the
    // bytes of a DIE's attributes when every form has a fixed size, else -1; and where its
    // DW_AT_sibling is among them (-1: none, or not of a fixed-size form), and that form.
    int32_t fixed_size = -1;
    int32_t sibling_at = -1;
    uint32_t sibling_spec = 0;  // into specs
  };
  struct Table {
    std::vector<Abbrev> by_code;  // codes are small and dense in practice
    std::unordered_map<uint64_t, Abbrev> sparse;
    std::vector<Spec> specs;
    const Abbrev* Find(uint64_t code) const {
      if (code < by_code.size()) return by_code[code].known ? &by_code[code] : nullptr;
      auto it = sparse.find(code);
      return it == sparse.end() ? nullptr : &it->second;
    }
  };
  // A unit's header, as the fast walk needs it.
  struct Header {
    uint64_t start = 0, end = 0;  // of the unit in .debug_info
    uint16_t version = 0;
    uint8_t address_size = 8;
    uint8_t offset_size = 4;
  };
  std::string_view info, abbrev, aranges, str, line_str, ranges, rnglists;
  std::unordered_map<uint64_t, std::unique_ptr<Table>> tables;

  const Table* TableAt(uint64_t offset);
};

namespace {

// A string attribute, following DW_AT_abstract_origin and DW_AT_specification.
const char* StringAttr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr) return nullptr;
  return dwarf_formstring(&attr);
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

namespace {

// The name perf would give the function of `die`: its linkage name demangled (without
// parameters, as perf prints symbols), else its plain name.
std::string FunctionName(Dwarf_Die* die, bool demangle) {
  const char* linkage = StringAttr(die, DW_AT_linkage_name);
  if (linkage == nullptr) linkage = StringAttr(die, DW_AT_MIPS_linkage_name);
  if (linkage != nullptr) return demangle ? Demangle(linkage) : std::string(linkage);
  const char* name = StringAttr(die, DW_AT_name);
  return name ? name : "??";
}

}  // namespace

DwarfInfo::~DwarfInfo() {
  if (index_registered_) {
    StoreIndex();
    std::lock_guard lock(ChangedIndexesMu());
    std::vector<DwarfInfo*>& all = ChangedIndexes();
    all.erase(std::remove(all.begin(), all.end(), this), all.end());
  }
}

namespace {

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

// When a 64-bit little-endian file keeps its DWARF compressed (SHF_COMPRESSED, as Debian's
// debug packages do), the ELF image libdw is given instead: the ELF header, the wanted
// sections decompressed (libdeflate, 2-3x faster than the zlib inflate libelf would run,
// and zstd, which libelf 0.188 cannot read), the section name table, and every other section
// turned into SHT_NOBITS. False (use the file as it is) when nothing wanted is compressed,
// for a relocatable file (libdw would need its relocations) or one with a dwz alternate file
// (libdw finds that from the file's path), and on anything malformed.
bool DecompressedImage(std::string_view file, bool lines, uint64_t aside_bytes,
                       ImageBuffer* image) {
  using elf::CString;
  using elf::ReadAt;
  using elf::Slice;
  Elf64_Ehdr eh;
  if (!ReadAt(file, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_type == ET_REL || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shstrndx >= eh.e_shnum) {
    return false;
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (size_t i = 0; i < sh.size(); ++i) {
    if (!ReadAt(file, eh.e_shoff + i * sizeof(Elf64_Shdr), &sh[i])) return false;
  }
  const Elf64_Shdr& names = sh[eh.e_shstrndx];
  std::string_view shstrtab = Slice(file, names.sh_offset, names.sh_size);
  if (shstrtab.empty()) return false;
  std::vector<char> keep(sh.size(), 0);
  bool compressed = false;
  for (size_t i = 1; i < sh.size(); ++i) {
    std::string_view name = CString(shstrtab, sh[i].sh_name);
    if (name == ".gnu_debugaltlink") return false;
    if (sh[i].sh_type == SHT_NOBITS || !WantedSection(name, lines)) continue;
    keep[i] = 1;
    if (sh[i].sh_flags & SHF_COMPRESSED) compressed = true;
  }
  if (!compressed) return false;
  keep[eh.e_shstrndx] = 1;

  // Where each kept section goes, then one buffer (not zeroed), filled in place.
  const std::vector<Elf64_Shdr> in = sh;  // the file's headers, to copy the data from
  auto align = [](uint64_t v) { return (v + 15) & ~uint64_t{15}; };
  uint64_t end = sizeof eh;
  for (size_t i = 1; i < sh.size(); ++i) {
    Elf64_Shdr& s = sh[i];
    if (!keep[i]) {
      s.sh_type = SHT_NOBITS;
      s.sh_offset = sizeof eh;
      continue;
    }
    std::string_view data = Slice(file, s.sh_offset, s.sh_size);
    if (data.size() != s.sh_size) return false;
    uint64_t size = data.size();
    if (s.sh_flags & SHF_COMPRESSED) {
      size = DecompressedSize(data);
      if (size == 0) return false;
    }
    keep[i] = (s.sh_flags & SHF_COMPRESSED) ? 2 : 1;  // 2: decompressed when copied
    s.sh_flags &= ~static_cast<uint64_t>(SHF_COMPRESSED);
    s.sh_size = size;
    end = align(end);
    s.sh_offset = end;
    end += size;
  }
  end = align(end);
  const uint64_t shoff = end;
  end += sh.size() * sizeof(Elf64_Shdr);
  if (!image->Allocate(end)) return false;
  char* out = image->bytes.get();
  std::memset(out, 0, sizeof eh);
  auto fill = [&](size_t i) {
    std::string_view data = Slice(file, in[i].sh_offset, in[i].sh_size);
    const Elf64_Shdr& s = sh[i];
    PopulateForWrite(out + s.sh_offset, s.sh_size);
    if (keep[i] == 2) return DecompressSectionInto(data, out + s.sh_offset, s.sh_size);
    if (!data.empty()) std::memcpy(out + s.sh_offset, data.data(), data.size());
    return true;
  };
  // The largest compressed section, when large, is inflated on a thread of its own while this
  // one fills the others: one zlib stream cannot be split, and glibc's .debug_info (5.8 MB, 11
  // ms here) is what a machine's first run waits for.
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
  if (!ok || !helper_ok) return false;
  // Padding between sections stays as allocated: nothing reads it.
  eh.e_shoff = shoff;
  eh.e_phoff = 0;
  eh.e_phnum = 0;
  std::memcpy(out + shoff, sh.data(), sh.size() * sizeof(Elf64_Shdr));
  std::memcpy(out, &eh, sizeof eh);
  return true;
}

}  // namespace

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

// One CU's functions and inline trees.
struct DwarfInfo::Unit {
  struct Range {
    uint64_t lo, hi;
  };
  struct Inline {
    uint32_t first_range, range_count;
    uint32_t depth;  // 0: directly in the function
    uint64_t die;    // for the name
    uint64_t call_file, call_line;
  };
  struct Function {
    uint32_t first_inline = 0, inline_count = 0;
    uint64_t die = 0;     // the subprogram's DIE
    uint64_t entry = 0;   // the start of its first range, in DWARF's order
    bool loaded = false;  // its inlines were read
  };
  struct FunctionRange {
    uint64_t lo, hi;
    uint32_t function;
  };
  std::vector<Range> ranges;    // of the inlined subroutines
  std::vector<Inline> inlines;  // contiguous per function, in tree order
  std::vector<Function> functions;
  std::vector<FunctionRange> by_address;  // sorted by lo
  Dwarf_Files* files = nullptr;
  size_t nfiles = 0;
  // Read by the fast walk: its header and abbreviations. `full`: functions nested in
  // functions were looked for (the fast walk's first index skips the functions' subtrees).
  bool scanned = false;
  bool full = true;
  Sections::Header header;
  const Sections::Table* abbrevs = nullptr;
  int32_t appending = -1;  // the function whose inlines are being added
  // From the CU's DIE, by the fast walk: DW_AT_language (-1: none), and the base address of
  // its range lists (libdw's: DW_AT_low_pc, else DW_AT_entry_pc, else 0; unknown when given
  // in a form read through .debug_addr).
  int language = -1;
  uint64_t base = 0;
  bool base_known = false;

  // What the walks find. A function with code: its index (-1 when it has no ranges: a
  // declaration or an abstract instance, under which nothing has code).
  int32_t AddFunction(const std::vector<Range>& code, uint64_t die) {
    if (code.empty()) return -1;
    uint32_t index = static_cast<uint32_t>(functions.size());
    for (const Range& r : code) by_address.push_back({r.lo, r.hi, index});
    functions.push_back({0, 0, die, code.front().lo, false});
    return static_cast<int32_t>(index);
  }
  // An inlined subroutine at `depth` inside function `function`, in tree order: a function's
  // inlines are read in one go (LoadInlines), so they are contiguous.
  void AddInline(int32_t function, uint32_t depth, uint64_t die, const std::vector<Range>& code,
                 uint64_t call_file, uint64_t call_line) {
    if (function != appending) return;
    inlines.push_back({static_cast<uint32_t>(ranges.size()), static_cast<uint32_t>(code.size()),
                       depth, die, call_file, call_line});
    ranges.insert(ranges.end(), code.begin(), code.end());
    ++functions[static_cast<size_t>(function)].inline_count;
  }
  // The function whose ranges hold `vaddr`, or -1.
  int32_t FunctionAt(uint64_t vaddr) const {
    auto f = std::upper_bound(by_address.begin(), by_address.end(), vaddr,
                              [](uint64_t v, const FunctionRange& r) { return v < r.lo; });
    // Ranges of distinct functions do not overlap, but a function's may start before
    // another's end in odd CUs: look back a few.
    for (int back = 0; back < 8 && f != by_address.begin(); ++back) {
      --f;
      if (vaddr >= f->lo && vaddr < f->hi) return static_cast<int32_t>(f->function);
    }
    return -1;
  }
};

struct DwarfInfo::CuRef {
  uint64_t die = 0;              // the CU DIE's offset in .debug_info
  uint64_t unit = ~uint64_t{0};  // its unit's start, when known without libdw
  Dwarf_Die handle{};
  bool have_handle = false;
};

// libdw's handle of the CU's DIE, made the first time it is needed: libdw reads the header
// of every CU before the one asked for, the first time.
void* DwarfInfo::DieOf(CuRef& cu) {
  if (!cu.have_handle) {
    if (dwarf_offdie(h_->dwarf, cu.die, &cu.handle) == nullptr) return nullptr;
    cu.have_handle = true;
  }
  return &cu.handle;
}

namespace {

using Ranges = std::vector<DwarfInfo::Unit::Range>;

// The address ranges of a DIE (low_pc/high_pc or DW_AT_ranges).
void RangesOf(Dwarf_Die* die, Ranges* out) {
  out->clear();
  Dwarf_Addr base, start, end;
  ptrdiff_t off = 0;
  for (int n = 0; n < 100000 && (off = dwarf_ranges(die, off, &base, &start, &end)) > 0; ++n) {
    if (end > start) out->push_back({start, end});
  }
}

// Tags whose children never hold code: the walk skips them (call sites and their parameters
// are most of a large CU's DIEs). Class types are walked: GCC nests the code of a local
// class's members (lambdas) in them.
bool NoCodeBelow(int tag) {
  switch (tag) {
    case DW_TAG_call_site:
    case DW_TAG_GNU_call_site:
    case DW_TAG_formal_parameter:
    case DW_TAG_variable:
    case DW_TAG_member:
    case DW_TAG_enumeration_type:
    case DW_TAG_array_type:
    case DW_TAG_subroutine_type:
    case DW_TAG_typedef:
    case DW_TAG_base_type:
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
    case DW_TAG_const_type:
    case DW_TAG_volatile_type:
    case DW_TAG_ptr_to_member_type:
    case DW_TAG_template_type_parameter:
    case DW_TAG_template_value_parameter:
    case DW_TAG_GNU_template_parameter_pack:
    case DW_TAG_GNU_formal_parameter_pack:
    case DW_TAG_imported_declaration:
    case DW_TAG_imported_module:
      return true;
    default:
      return false;
  }
}

// Reads one attribute value of `form`, returning constants, addresses and references in
// *value (references as the form holds them); false on a form it does not know or a read
// past the end.
bool ReadForm(DwarfReader& r, uint64_t form, const DwarfInfo::Sections::Header& h, int64_t implicit,
              uint64_t* value) {
  auto offset = [&]() { return h.offset_size == 8 ? r.U64() : r.U32(); };
  auto address = [&]() -> uint64_t { return h.address_size == 8 ? r.U64() : r.U32(); };
  auto three = [&]() -> uint64_t {
    uint64_t a = r.U8(), b = r.U8(), c = r.U8();
    return a | b << 8 | c << 16;
  };
  *value = 0;
  for (int indirections = 0; indirections < 4; ++indirections) {
    switch (form) {
      case DW_FORM_addr:
        *value = address();
        return r.ok();
      case DW_FORM_block2:
        r.Skip(r.U16());
        return r.ok();
      case DW_FORM_block4:
        r.Skip(r.U32());
        return r.ok();
      case DW_FORM_data2:
      case DW_FORM_ref2:
      case DW_FORM_strx2:
      case DW_FORM_addrx2:
        *value = r.U16();
        return r.ok();
      case DW_FORM_data4:
      case DW_FORM_ref4:
      case DW_FORM_ref_sup4:
      case DW_FORM_strx4:
      case DW_FORM_addrx4:
        *value = r.U32();
        return r.ok();
      case DW_FORM_data8:
      case DW_FORM_ref8:
      case DW_FORM_ref_sig8:
      case DW_FORM_ref_sup8:
        *value = r.U64();
        return r.ok();
      case DW_FORM_data16:
        r.Skip(16);
        return r.ok();
      case DW_FORM_string:
        while (r.ok() && r.U8() != 0) {
        }
        return r.ok();
      case DW_FORM_block:
      case DW_FORM_exprloc:
        r.Skip(r.Uleb());
        return r.ok();
      case DW_FORM_block1:
        r.Skip(r.U8());
        return r.ok();
      case DW_FORM_data1:
      case DW_FORM_ref1:
      case DW_FORM_flag:
      case DW_FORM_strx1:
      case DW_FORM_addrx1:
        *value = r.U8();
        return r.ok();
      case DW_FORM_sdata:
        *value = static_cast<uint64_t>(r.Sleb());
        return r.ok();
      case DW_FORM_udata:
      case DW_FORM_ref_udata:
      case DW_FORM_strx:
      case DW_FORM_addrx:
      case DW_FORM_loclistx:
      case DW_FORM_rnglistx:
      case DW_FORM_GNU_addr_index:
      case DW_FORM_GNU_str_index:
        *value = r.Uleb();
        return r.ok();
      case DW_FORM_strp:
      case DW_FORM_line_strp:
      case DW_FORM_sec_offset:
      case DW_FORM_strp_sup:
      case DW_FORM_GNU_ref_alt:
      case DW_FORM_GNU_strp_alt:
        *value = offset();
        return r.ok();
      case DW_FORM_ref_addr:
        *value = h.version <= 2 ? address() : offset();
        return r.ok();
      case DW_FORM_flag_present:
        *value = 1;
        return true;
      case DW_FORM_implicit_const:
        *value = static_cast<uint64_t>(implicit);
        return true;
      case DW_FORM_strx3:
      case DW_FORM_addrx3:
        *value = three();
        return r.ok();
      case DW_FORM_indirect:
        form = r.Uleb();
        if (!r.ok()) return false;
        continue;
      default:
        return false;
    }
  }
  return false;
}

bool IsConstantForm(uint64_t form) {
  switch (form) {
    case DW_FORM_data1:
    case DW_FORM_data2:
    case DW_FORM_data4:
    case DW_FORM_data8:
    case DW_FORM_udata:
    case DW_FORM_sdata:
    case DW_FORM_implicit_const:
      return true;
    default:
      return false;
  }
}

// The attributes that place a DIE's code, as the fast walk reads them: "odd" ones come in a
// form read through .debug_addr, left to libdw.
struct PcAttrs {
  uint64_t low = 0, high = 0, entry = 0, ranges_form = 0, ranges_at = 0;
  bool has_low = false, has_high = false, high_is_offset = false, has_ranges = false;
  bool odd_low = false, odd_high = false, has_entry = false, odd_entry = false;

  // Takes the attribute if it is one of these.
  bool Take(uint64_t name, uint64_t form, uint64_t v) {
    switch (name) {
      case DW_AT_low_pc:
        has_low = true;
        low = v;
        odd_low = form != DW_FORM_addr;
        return true;
      case DW_AT_high_pc:
        has_high = true;
        high = v;
        high_is_offset = IsConstantForm(form);
        odd_high = form != DW_FORM_addr && !high_is_offset;
        return true;
      case DW_AT_ranges:
        has_ranges = true;
        ranges_form = form;
        ranges_at = v;
        return true;
      case DW_AT_entry_pc:
        has_entry = true;
        entry = v;
        odd_entry = form != DW_FORM_addr;
        return true;
      default:
        return false;
    }
  }
  bool odd() const { return odd_low || odd_high; }
  // As libdw's dwarf_ranges: one range when low and high pc are both there.
  bool single() const { return !odd() && has_low && has_high; }
  uint64_t end() const { return high_is_offset ? low + high : high; }
  // A CU DIE's base address for its range lists, as libdw's __libdw_cu_base_address:
  // DW_AT_low_pc, else DW_AT_entry_pc, else 0. False when it comes through .debug_addr.
  bool Base(uint64_t* base) const {
    *base = has_low ? low : has_entry ? entry : 0;
    return has_low ? !odd_low : !(has_entry && odd_entry);
  }
};

}  // namespace

namespace {

// The size of a form's value, when it has one of its own (-1: it depends on the value).
int FixedFormSize(uint64_t form, int offset_size, int address_size) {
  switch (form) {
    case DW_FORM_flag_present:
    case DW_FORM_implicit_const:
      return 0;
    case DW_FORM_data1:
    case DW_FORM_ref1:
    case DW_FORM_flag:
    case DW_FORM_strx1:
    case DW_FORM_addrx1:
      return 1;
    case DW_FORM_data2:
    case DW_FORM_ref2:
    case DW_FORM_strx2:
    case DW_FORM_addrx2:
      return 2;
    case DW_FORM_strx3:
    case DW_FORM_addrx3:
      return 3;
    case DW_FORM_data4:
    case DW_FORM_ref4:
    case DW_FORM_ref_sup4:
    case DW_FORM_strx4:
    case DW_FORM_addrx4:
      return 4;
    case DW_FORM_data8:
    case DW_FORM_ref8:
    case DW_FORM_ref_sig8:
    case DW_FORM_ref_sup8:
      return 8;
    case DW_FORM_data16:
      return 16;
    case DW_FORM_addr:
      return address_size;
    case DW_FORM_strp:
    case DW_FORM_line_strp:
    case DW_FORM_sec_offset:
    case DW_FORM_ref_addr:
    case DW_FORM_strp_sup:
    case DW_FORM_GNU_ref_alt:
    case DW_FORM_GNU_strp_alt:
      return offset_size;
    default:
      return -1;
  }
}

}  // namespace

const DwarfInfo::Sections::Table* DwarfInfo::Sections::TableAt(uint64_t offset) {
  auto& slot = tables[offset];
  if (slot) return slot.get();
  auto t = std::make_unique<Table>();
  DwarfReader r(abbrev);
  r.Seek(offset);
  constexpr uint64_t kDenseCodes = 1 << 16;
  while (r.ok()) {
    uint64_t code = r.Uleb();
    if (code == 0 || !r.ok()) break;
    Abbrev a;
    a.tag = static_cast<uint32_t>(r.Uleb());
    a.children = r.U8() != 0;
    a.known = true;
    a.first = static_cast<uint32_t>(t->specs.size());
    for (;;) {
      uint64_t name = r.Uleb(), form = r.Uleb();
      if (!r.ok() || (name == 0 && form == 0)) break;
      int64_t implicit = form == DW_FORM_implicit_const ? r.Sleb() : 0;
      t->specs.push_back({static_cast<uint32_t>(name), static_cast<uint32_t>(form), implicit});
    }
    a.count = static_cast<uint32_t>(t->specs.size()) - a.first;
    if (!r.ok()) break;
    int32_t size = 0;
    for (uint32_t i = a.first; i < a.first + a.count && size >= 0; ++i) {
      int n = FixedFormSize(t->specs[i].form, /*offset_size=*/4, /*address_size=*/8);
      if (n >= 0 && t->specs[i].name == DW_AT_sibling && t->specs[i].form != DW_FORM_ref_addr) {
        a.sibling_at = size;
        a.sibling_spec = i;
      }
      size = n < 0 ? -1 : size + n;
    }
    a.fixed_size = size;
    if (size < 0) a.sibling_at = -1;
    if (code < kDenseCodes) {
      if (t->by_code.size() <= code) t->by_code.resize(code + 1);
      t->by_code[code] = a;
    } else {
      t->sparse[code] = a;
    }
  }
  slot = std::move(t);
  return slot.get();
}

// The fast walk reads .debug_info itself: each DIE's abbreviation is looked up once and its
// attributes decoded or skipped in one pass, where libdw's dwarf_child, dwarf_siblingof and
// dwarf_tag each decode the DIE again. Ranges given by DW_AT_ranges or address indexes are
// left to libdw (dwarf_ranges).
//
// Most of an optimized CU's DIEs are inside functions (their inline trees, variables, call
// sites), and most functions are never sampled: so a CU is first indexed without entering
// functions (kIndex: their subtrees are jumped over by DW_AT_sibling), and a function's
// inline tree is read the first time one of its addresses is looked up (kFunction). An
// address in no function so indexed may be in a function nested in another (GNU C's nested
// functions, OpenMP's outlined bodies, code of local classes): the CU is then indexed again
// entering functions (kFull). A nested function is its own entry, and the inline tree of the
// function around it goes on after it.

// Reads the header of the CU whose DIE is at `cu_offset` into u.header and u.abbrevs; false
// for units the fast walk does not read (split and type units) or a malformed header.
bool DwarfInfo::ReadUnitHeader(Unit& u, CuRef& cu) {
  if (!sections_ || sections_->info.empty() || sections_->abbrev.empty()) return false;
  const uint64_t cu_offset = cu.die;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0, address_size = 0, offset_size = 0;
  if (cu.unit != ~uint64_t{0}) {
    // The header read here (checked again below).
    DwarfReader r(sections_->info);
    r.Seek(cu.unit);
    offset_size = r.U32() == 0xffffffff ? 8 : 4;
    if (offset_size == 8) r.U64();
    version = r.U16();
    if (version >= 5) {
      unit_type = r.U8();
      address_size = r.U8();
    } else {
      unit_type = DW_UT_compile;
      r.Skip(offset_size);
      address_size = r.U8();
    }
    if (!r.ok()) return false;
  } else {
    Dwarf_Die* die = static_cast<Dwarf_Die*>(DieOf(cu));
    if (die == nullptr || dwarf_cu_info(die->cu, &version, &unit_type, nullptr, nullptr, nullptr,
                                        &address_size, &offset_size) != 0) {
      return false;
    }
  }
  if (version < 2 || version > 5 || (unit_type != DW_UT_compile && unit_type != DW_UT_partial) ||
      (address_size != 4 && address_size != 8) || (offset_size != 4 && offset_size != 8)) {
    return false;
  }
  // The header's size follows from the version and offset size for these unit types.
  uint64_t size = (offset_size == 8 ? 12 : 4) + 2 + (version >= 5 ? 2 : 1) + offset_size;
  if (cu_offset < size) return false;
  Sections::Header& h = u.header;
  h.start = cu_offset - size;
  h.version = version;
  h.address_size = address_size;
  h.offset_size = offset_size;
  DwarfReader r(sections_->info);
  r.Seek(h.start);
  uint64_t length = r.U32();
  if (length == 0xffffffff) length = r.U64();
  uint64_t length_end = r.pos();
  if (r.U16() != version) return false;
  uint64_t abbrev_offset;
  if (version >= 5) {
    r.U8();  // unit_type
    if (r.U8() != address_size) return false;
    abbrev_offset = offset_size == 8 ? r.U64() : r.U32();
  } else {
    abbrev_offset = offset_size == 8 ? r.U64() : r.U32();
    if (r.U8() != address_size) return false;
  }
  if (!r.ok() || r.pos() != cu_offset || length > sections_->info.size() - length_end) {
    return false;
  }
  h.end = length_end + length;
  u.abbrevs = sections_->TableAt(abbrev_offset);
  return true;
}

// Walks the DIEs from the one at `start` (the CU's, or a function's for kFunction) to the
// end of its children. False on anything malformed.
bool DwarfInfo::ScanDies(Unit& u, uint64_t start, ScanMode mode, int32_t function_index) {
  const Sections::Header& h = u.header;
  const Sections::Table& abbrevs = *u.abbrevs;
  DwarfReader die(sections_->info.substr(0, h.end));
  die.Seek(start);
  // Each open level of children knows the function it is in (-1: none), how many inlined
  // subroutines enclose it there, and whether nothing below is wanted.
  struct Level {
    int32_t function;
    uint32_t inline_depth;
    bool skip;
  };
  std::vector<Level> levels;
  Ranges code;
  std::vector<uint64_t> pairs;
  bool first = true;
  // The units Abbrev::fixed_size was measured for.
  const bool fixed_layout = h.offset_size == 4 && h.address_size == 8 && h.version >= 3;
  while (die.ok() && die.pos() < h.end) {
    uint64_t offset = die.pos();
    uint64_t code_number = die.Uleb();
    if (!die.ok()) return false;
    if (code_number == 0) {  // the end of a list of children
      if (levels.empty()) return false;
      levels.pop_back();
      if (levels.empty()) return true;
      continue;
    }
    const Sections::Abbrev* a = abbrevs.Find(code_number);
    if (a == nullptr) return false;
    uint64_t sibling = 0, call_file = 0, call_line = 0;
    int64_t language = -1;
    PcAttrs pc;
    // Below the first DIE only a function's and an inlined subroutine's attributes are read,
    // and any other DIE's sibling: a DIE of fixed-size attributes is jumped over at once.
    // (In a subtree nothing below is wanted from, only the sibling, whatever the tag.)
    if (fixed_layout && !first && a->fixed_size >= 0 &&
        ((a->tag != DW_TAG_subprogram && a->tag != DW_TAG_inlined_subroutine) ||
         (!levels.empty() && levels.back().skip))) {
      const size_t attrs = die.pos();
      if (a->sibling_at >= 0) {
        const Sections::Spec& spec = abbrevs.specs[a->sibling_spec];
        uint64_t v;
        die.Skip(static_cast<uint64_t>(a->sibling_at));
        if (!ReadForm(die, spec.form, h, spec.implicit, &v)) return false;
        sibling = h.start + v;
      }
      die.Seek(attrs);
      die.Skip(static_cast<uint64_t>(a->fixed_size));
      if (!die.ok()) return false;
    } else {
      // A DIE with children nothing is wanted from: its attributes after DW_AT_sibling are
      // not read either.
      const bool unwanted =
          !first && a->children &&
          ((!levels.empty() && levels.back().skip) ||
           (a->tag != DW_TAG_subprogram && a->tag != DW_TAG_inlined_subroutine &&
            NoCodeBelow(static_cast<int>(a->tag))));
      bool jump = false;
      for (uint32_t i = 0; i < a->count && !jump; ++i) {
        const Sections::Spec& spec = abbrevs.specs[a->first + i];
        uint64_t v;
        if (!ReadForm(die, spec.form, h, spec.implicit, &v)) return false;
        if (pc.Take(spec.name, spec.form, v)) continue;
        switch (spec.name) {
          case DW_AT_sibling:
            if (spec.form != DW_FORM_ref_addr) {
              sibling = h.start + v;
              jump = unwanted && sibling > die.pos() && sibling <= h.end;
            }
            break;
          case DW_AT_language:
            if (IsConstantForm(spec.form)) language = static_cast<int64_t>(v);
            break;
          case DW_AT_call_file:
            if (IsConstantForm(spec.form)) call_file = v;
            break;
          case DW_AT_call_line:
            if (IsConstantForm(spec.form)) call_line = v;
            break;
          default:
            break;
        }
      }
      if (jump) {
        die.Seek(sibling);
        continue;
      }
    }
    if (first) {  // the CU's DIE, or the function's
      first = false;
      if (mode != ScanMode::kFunction) {
        u.language = static_cast<int>(language);
        u.base_known = pc.Base(&u.base);
      }
      if (!a->children) return true;
      if (mode == ScanMode::kFunction) {
        if (a->tag != DW_TAG_subprogram) return false;
        u.appending = function_index;
        levels.push_back({function_index, 0, false});
      } else {
        levels.push_back({-1, 0, false});
      }
      continue;
    }
    if (levels.empty()) return false;
    const Level cur = levels.back();
    int32_t function = cur.function;
    uint32_t depth = cur.inline_depth;
    bool descend = !cur.skip;
    if (descend) {
      const bool sub = a->tag == DW_TAG_subprogram;
      const bool inl = a->tag == DW_TAG_inlined_subroutine && mode == ScanMode::kFunction;
      if ((sub && mode != ScanMode::kFunction) || inl) {
        code.clear();
        // As libdw's dwarf_ranges: low and high pc when it has both, else DW_AT_ranges.
        if (pc.single()) {
          if (pc.end() > pc.low) code.push_back({pc.low, pc.end()});
        } else if (!pc.odd() && pc.has_ranges &&
                   ReadRanges(u, pc.ranges_form, pc.ranges_at, &pairs)) {
          for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
            if (pairs[i + 1] > pairs[i]) code.push_back({pairs[i], pairs[i + 1]});
          }
        } else if (pc.odd() || pc.has_ranges) {
          ++libdw_reads_;
          Dwarf_Die d;
          if (dwarf_offdie(h_->dwarf, offset, &d) != nullptr) RangesOf(&d, &code);
        }
      }
      if (sub && mode == ScanMode::kFunction) {
        descend = false;  // a nested function: its own entry
      } else if (sub) {
        // Entered only to look for nested functions.
        function = u.AddFunction(code, offset);
        descend = function >= 0 && mode == ScanMode::kFull;
      } else if (inl) {
        u.AddInline(function, depth, offset, code, call_file, call_line);
        ++depth;
      } else if (NoCodeBelow(static_cast<int>(a->tag))) {
        descend = false;
      }
    }
    if (!a->children) continue;
    if (!descend && sibling > die.pos() && sibling <= h.end) {
      die.Seek(sibling);  // past the subtree
      continue;
    }
    levels.push_back({function, depth, !descend});
  }
  return die.ok() && mode != ScanMode::kFunction;
}

// Reads the inline tree of function `index` (its nested functions are their own entries).
void DwarfInfo::LoadInlines(Unit& u, int32_t index) {
  Unit::Function& f = u.functions[static_cast<size_t>(index)];
  f.loaded = true;
  f.first_inline = static_cast<uint32_t>(u.inlines.size());
  f.inline_count = 0;
  bool ok;
  if (u.scanned) {
    ok = ScanDies(u, f.die, ScanMode::kFunction, index);
  } else {
    Dwarf_Die die;
    ok = dwarf_offdie(h_->dwarf, f.die, &die) != nullptr &&
         WalkDies(u, &die, ScanMode::kFunction, index);
  }
  // Malformed below the function: no inline frames rather than a part of them.
  if (!ok) u.functions[static_cast<size_t>(index)].inline_count = 0;
  u.appending = -1;
}

// The same walks through libdw's DIE functions, for the units ScanDies does not read: the
// CU whole (kFull), or one function's inline tree (kFunction, from the function's DIE).
bool DwarfInfo::WalkDies(Unit& u, void* start_die, ScanMode mode, int32_t function_index) {
  struct Level {
    Dwarf_Die die;
    int32_t function;
    uint32_t inline_depth;
  };
  std::vector<Level> stack;
  Dwarf_Die child;
  if (dwarf_child(static_cast<Dwarf_Die*>(start_die), &child) != 0) return true;
  const bool inlines = mode == ScanMode::kFunction;
  if (inlines) u.appending = function_index;
  stack.push_back({child, inlines ? function_index : -1, 0});
  Ranges code;
  while (!stack.empty()) {
    Level& cur = stack.back();
    int tag = dwarf_tag(&cur.die);
    int32_t function = cur.function;
    uint32_t depth = cur.inline_depth;
    bool descend = true;
    if (tag == DW_TAG_subprogram && inlines) {
      descend = false;  // a nested function: its own entry
    } else if (tag == DW_TAG_subprogram) {
      RangesOf(&cur.die, &code);
      function = u.AddFunction(code, dwarf_dieoffset(&cur.die));
      descend = function >= 0;
    } else if (tag == DW_TAG_inlined_subroutine && inlines) {
      RangesOf(&cur.die, &code);
      uint64_t call_file = 0, call_line = 0;
      Dwarf_Attribute attr;
      Dwarf_Word v;
      if (dwarf_attr(&cur.die, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &v) == 0) {
        call_file = v;
      }
      if (dwarf_attr(&cur.die, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &v) == 0) {
        call_line = v;
      }
      u.AddInline(function, depth, dwarf_dieoffset(&cur.die), code, call_file, call_line);
      ++depth;
    } else if (NoCodeBelow(tag)) {
      descend = false;
    }
    Dwarf_Die next;
    if (descend && dwarf_haschildren(&cur.die) && dwarf_child(&cur.die, &next) == 0) {
      stack.push_back({next, function, depth});
      continue;
    }
    // On to the next sibling, climbing as levels end.
    while (!stack.empty()) {
      if (dwarf_siblingof(&stack.back().die, &next) == 0) {
        stack.back().die = next;
        break;
      }
      stack.pop_back();
    }
  }
  return true;
}

DwarfInfo::Unit& DwarfInfo::UnitFor(CuRef& cu) {
  auto& slot = units_[cu.die];
  if (slot) return *slot;
  slot = std::make_unique<Unit>();
  Unit& u = *slot;
  if (lines_) {
    auto* die = static_cast<Dwarf_Die*>(DieOf(cu));
    if (die == nullptr || dwarf_getsrcfiles(die, &u.files, &u.nfiles) != 0) u.files = nullptr;
  }
  if (!index_loaded_) LoadSavedIndex();
  if (!libdw_walk_ && RestoreUnit(u, cu)) {
    ++units_restored_;
    return u;
  }
  u.scanned = !libdw_walk_ && ReadUnitHeader(u, cu) && ScanDies(u, cu.die, ScanMode::kIndex, -1);
  u.full = !u.scanned;
  if (!u.scanned) WalkAgain(u, cu);
  SortFunctions(u);
  if (u.scanned) IndexChanged();
  return u;
}

// Walks the CU whole (nested functions too), by the fast walk when it read the CU before,
// else through libdw.
void DwarfInfo::WalkAgain(Unit& u, CuRef& cu) {
  const uint64_t offset = cu.die;
  Unit fresh;
  fresh.files = u.files;
  fresh.nfiles = u.nfiles;
  fresh.header = u.header;
  fresh.abbrevs = u.abbrevs;
  fresh.full = true;
  fresh.scanned = u.scanned && ScanDies(fresh, offset, ScanMode::kFull, -1);
  if (!fresh.scanned) {
    Unit plain;
    plain.files = u.files;
    plain.nfiles = u.nfiles;
    fresh = std::move(plain);
    ++libdw_walks_;
    if (void* die = DieOf(cu)) WalkDies(fresh, die, ScanMode::kFull, -1);
  }
  fresh.appending = -1;
  u = std::move(fresh);
  if (u.scanned) IndexChanged();
}

void DwarfInfo::SortFunctions(Unit& u) {
  std::sort(u.by_address.begin(), u.by_address.end(),
            [](const Unit::FunctionRange& a, const Unit::FunctionRange& b) { return a.lo < b.lo; });
}

// The CU indexes kept on disk. Indexing a CU reads all its DIEs outside functions (and all
// of them where there is no DW_AT_sibling, as LLVM writes): 10-60 us a CU of CPython or of a
// Rust crate, where a recording needs tens to hundreds of CUs (libpython's 103 took 5.9 ms
// of a 22 ms fold). So the indexes a run makes are kept in the cache (dwarf_cache.h), one
// entry per debug file named after its identity, and a later run takes a CU's index from
// there, checked against the DWARF, instead of walking the CU.
//
// An entry, in host byte order:
//   "pfcuidx1", u64 count of CUs, then per CU (ascending CU offsets) a 32-byte header:
//     u64 CU DIE offset, u32 functions, u32 ranges, i32 DW_AT_language (-1: none),
//     u8 base known, u8 full, u16 zero, u64 base;
//   then per CU, in the same order, its functions (u64 DIE offset, u64 entry) and its
//   address ranges by start (u64 lo, u64 hi, u32 function, u32 zero).
// RestoreIndex checks the layout (sizes, order, zeros), RestoreUnit a CU's contents when the
// CU is first asked for: every range non-empty, in order and naming a function, every
// function's DIE inside the CU. So a bad entry (its checksum forged) costs a walk, never a
// wrong read; LoadInlines and NameOf read from a restored DIE offset as from a walked one.
namespace {

constexpr std::string_view kSavedIndexMagic("pfcuidx1", 8);
constexpr size_t kSavedHead = 32, kSavedFunction = 16, kSavedRange = 24;

// A CU's header in a saved index.
struct SavedHead {
  uint64_t cu = 0, base = 0;
  uint32_t functions = 0, ranges = 0;
  int32_t language = -1;
  bool base_known = false, full = false;
  void Write(EntryWriter& w) const {
    w.Put(cu);
    w.Put(functions);
    w.Put(ranges);
    w.Put(language);
    w.Flag(base_known);
    w.Flag(full);
    w.Zero<uint16_t>();
    w.Put(base);
  }
  bool Read(EntryReader& r) {
    return r.Get(&cu) && r.Get(&functions) && r.Get(&ranges) && r.Get(&language) &&
           r.Flag(&base_known) && r.Flag(&full) && r.Zero<uint16_t>() && r.Get(&base);
  }
};

}  // namespace

std::string DwarfInfo::SavedIndex() const {
  // The units made or restored here (walked by the fast walk), and the saved ones not asked for.
  struct Entry {
    uint64_t cu;
    const Unit* unit;
    const SavedUnit* saved;
  };
  std::vector<Entry> entries;
  for (const auto& [cu, u] : units_) {
    if (u && u->scanned) entries.push_back({cu, u.get(), nullptr});
  }
  for (const SavedUnit& su : saved_) {
    if (units_.find(su.cu) == units_.end()) entries.push_back({su.cu, nullptr, &su});
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.cu < b.cu; });
  EntryWriter w(kSavedIndexMagic);
  w.Put<uint64_t>(entries.size());
  for (const Entry& e : entries) {
    if (e.saved) {
      w.Append(saved_bytes_.substr(e.saved->head, kSavedHead));
      continue;
    }
    const Unit& u = *e.unit;
    SavedHead{.cu = e.cu,
              .base = u.base,
              .functions = static_cast<uint32_t>(u.functions.size()),
              .ranges = static_cast<uint32_t>(u.by_address.size()),
              .language = u.language,
              .base_known = u.base_known,
              .full = u.full}
        .Write(w);
  }
  for (const Entry& e : entries) {
    if (e.saved) {
      w.Append(saved_bytes_.substr(e.saved->data, e.saved->functions * kSavedFunction +
                                                      e.saved->ranges * kSavedRange));
      continue;
    }
    for (const Unit::Function& f : e.unit->functions) {
      w.Put(f.die);
      w.Put(f.entry);
    }
    for (const Unit::FunctionRange& r : e.unit->by_address) {
      w.Put(r.lo);
      w.Put(r.hi);
      w.Put(r.function);
      w.Zero<uint32_t>();
    }
  }
  return w.Take();
}

bool DwarfInfo::RestoreIndex(std::shared_ptr<const char> owner, std::string_view bytes) {
  EntryReader r(bytes);
  uint64_t count;
  if (!r.Tag(kSavedIndexMagic) || !r.Count(&count, kSavedHead)) return false;
  std::vector<SavedUnit> units;
  units.reserve(count);
  size_t data = r.pos() + count * kSavedHead;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t head = r.pos();
    SavedHead h;
    if (!h.Read(r) || (!units.empty() && h.cu <= units.back().cu)) return false;
    const uint64_t size = uint64_t{h.functions} * kSavedFunction + uint64_t{h.ranges} * kSavedRange;
    if (size > bytes.size() - data) return false;
    units.push_back({h.cu, head, data, h.functions, h.ranges});
    data += size;
  }
  if (data != bytes.size()) return false;
  saved_owner_ = std::move(owner);
  saved_bytes_ = bytes;
  saved_ = std::move(units);
  index_loaded_ = true;
  return true;
}

bool DwarfInfo::RestoreUnit(Unit& u, CuRef& cu) {
  auto it = std::lower_bound(saved_.begin(), saved_.end(), cu.die,
                             [](const SavedUnit& su, uint64_t die) { return su.cu < die; });
  if (it == saved_.end() || it->cu != cu.die || !ReadUnitHeader(u, cu)) return false;
  const SavedUnit& su = *it;
  EntryReader head = EntryReader::At(saved_bytes_, su.head);
  SavedHead h;
  if (!h.Read(head)) return false;
  EntryReader r = EntryReader::At(saved_bytes_, su.data);
  std::vector<Unit::Function> functions(su.functions);
  for (Unit::Function& f : functions) {
    if (!r.Get(&f.die) || !r.Get(&f.entry) || f.die <= cu.die || f.die >= u.header.end) {
      return false;
    }
  }
  std::vector<Unit::FunctionRange> ranges(su.ranges);
  for (size_t i = 0; i < ranges.size(); ++i) {
    Unit::FunctionRange& g = ranges[i];
    if (!r.Get(&g.lo) || !r.Get(&g.hi) || !r.Get(&g.function) || !r.Zero<uint32_t>() ||
        g.lo >= g.hi || g.function >= su.functions || (i > 0 && g.lo < ranges[i - 1].lo)) {
      return false;
    }
  }
  u.functions = std::move(functions);
  u.by_address = std::move(ranges);
  u.language = h.language;
  u.base_known = h.base_known;
  u.full = h.full;
  u.base = h.base;
  u.scanned = true;
  return true;
}

void DwarfInfo::LoadSavedIndex() {
  index_loaded_ = true;
  if (MappedEntry entry = MapCachedEntry(index_dir_, index_key_)) {
    RestoreIndex(std::move(entry.owner), entry.bytes);
  }
}

void DwarfInfo::IndexChanged() {
  index_changed_ = true;
  Register();
}

void DwarfInfo::Register() {
  if (index_registered_ || index_key_.empty()) return;
  index_registered_ = true;
  std::lock_guard lock(ChangedIndexesMu());
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(StoreChangedIndexes); });
  ChangedIndexes().push_back(this);
}

bool DwarfInfo::WriteIndex() {
  bool wrote = false;
  if (index_changed_ && !index_key_.empty()) {
    index_changed_ = false;
    wrote = StoreCachedImageUntrimmed(index_dir_, index_key_, SavedIndex());
  }
  if (locations_changed_ && !locations_key_.empty()) {
    locations_changed_ = false;
    std::string saved = SavedLocations();
    if (!saved.empty()) wrote |= StoreCachedImageUntrimmed(index_dir_, locations_key_, saved);
  }
  return wrote;
}

void DwarfInfo::StoreIndex() {
  if (WriteIndex()) TrimCacheNowAndThen(index_dir_, kCacheBytes);
}

// The answers kept on disk. With the CU indexes restored, what a warm run still spends on
// inline frames is reading each function's inline tree and names, and the abbreviations of
// its CU (CPython: about 8 ms of a 26 ms fold; a Rust program 3 of 10). So the Locations a run
// makes are kept too, one entry per debug file (and options, and pf version), and a later run
// answers an address it holds without reading the DWARF at all.
//
// An entry, in host byte order:
//   "pfloc001", u64 count, then per address (ascending) u64 address, u32 offset, u32 size;
//   then the answers, one after another in that order (each offset is the sum of the sizes
//   before it): u8 function_linkage, u64 function_entry, the function and the srcline as
//   strings (u32 length, bytes), u32 count of inlined functions, then per inlined function
//   its name and its call site as strings.
// RestoreLocations checks the layout, RestoreLocation an answer when its address is first
// asked for (every length within the answer, which it must fill exactly); an answer that
// fails is made again.
namespace {

constexpr std::string_view kSavedLocationsMagic("pfloc001", 8);
constexpr size_t kSavedLocationsHead = 16, kSavedLocationRow = 16;
// A set this large is not kept whole: only the run's own answers are.
constexpr size_t kMaxSavedLocations = size_t{1} << 20;

struct LocationRow {
  uint64_t vaddr = 0;
  uint32_t offset = 0, size = 0;
  void Write(EntryWriter& w) const {
    w.Put(vaddr);
    w.Put(offset);
    w.Put(size);
  }
  bool Read(EntryReader& r) { return r.Get(&vaddr) && r.Get(&offset) && r.Get(&size); }
};

void PutLocation(EntryWriter& w, const DwarfInfo::Location& loc) {
  w.Flag(loc.function_linkage);
  w.Put<uint64_t>(loc.function_entry);
  w.Str(loc.function);
  w.Str(loc.srcline);
  w.Put(static_cast<uint32_t>(loc.inlined.size()));
  for (size_t i = 0; i < loc.inlined.size(); ++i) {
    w.Str(loc.inlined[i]);
    w.Str(i < loc.call_sites.size() ? std::string_view(loc.call_sites[i]) : "");
  }
}

// An answer as PutLocation wrote it, filling `r` exactly.
bool ReadLocation(EntryReader& r, DwarfInfo::Location* loc) {
  uint32_t inlined;
  // (Each inlined function holds two strings: at least 8 bytes.)
  if (!r.Flag(&loc->function_linkage) || !r.Get(&loc->function_entry) ||
      !r.Str(&loc->function) || !r.Str(&loc->srcline) || !r.Count(&inlined, 8)) {
    return false;
  }
  loc->inlined.resize(inlined);
  loc->call_sites.resize(inlined);
  for (uint32_t i = 0; i < inlined; ++i) {
    if (!r.Str(&loc->inlined[i]) || !r.Str(&loc->call_sites[i])) return false;
  }
  return r.AtEnd();
}

}  // namespace

std::string DwarfInfo::SavedLocations() const {
  // This run's answers, and the saved ones not asked for (as they are), by address.
  struct Entry {
    uint64_t vaddr;
    const Location* loc;
    std::string_view saved;
  };
  std::vector<Entry> entries;
  entries.reserve(cache_.size());
  for (const auto& [vaddr, loc] : cache_) entries.push_back({vaddr, &loc, {}});
  const size_t data = kSavedLocationsHead + saved_location_count_ * kSavedLocationRow;
  if (cache_.size() + saved_location_count_ <= kMaxSavedLocations) {
    EntryReader rows = EntryReader::At(saved_locations_, kSavedLocationsHead);
    for (size_t i = 0; i < saved_location_count_; ++i) {
      LocationRow row;
      row.Read(rows);  // (checked whole by RestoreLocations)
      if (cache_.count(row.vaddr) == 0) {
        std::string_view saved = saved_locations_.substr(data + row.offset, row.size);
        entries.push_back({row.vaddr, nullptr, saved});
      }
    }
  } else if (cache_.size() > kMaxSavedLocations) {
    return "";
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.vaddr < b.vaddr; });
  EntryWriter answers;
  EntryWriter w(kSavedLocationsMagic);
  w.Put<uint64_t>(entries.size());
  for (const Entry& e : entries) {
    const size_t at = answers.size();
    if (e.loc) {
      PutLocation(answers, *e.loc);
    } else {
      answers.Append(e.saved);
    }
    if (answers.size() > UINT32_MAX) return "";
    LocationRow{e.vaddr, static_cast<uint32_t>(at), static_cast<uint32_t>(answers.size() - at)}
        .Write(w);
  }
  w.Append(answers.Take());
  return w.Take();
}

bool DwarfInfo::RestoreLocations(std::shared_ptr<const char> owner, std::string_view bytes) {
  EntryReader r(bytes);
  uint64_t count;
  if (!r.Tag(kSavedLocationsMagic) || !r.Count(&count, kSavedLocationRow)) return false;
  const size_t data = kSavedLocationsHead + count * kSavedLocationRow;
  uint64_t next = 0, last = 0;
  for (uint64_t i = 0; i < count; ++i) {
    LocationRow row;
    if (!row.Read(r) || row.offset != next || row.size > bytes.size() - data - next ||
        (i > 0 && row.vaddr <= last)) {
      return false;
    }
    next += row.size;
    last = row.vaddr;
  }
  if (data + next != bytes.size()) return false;
  saved_locations_owner_ = std::move(owner);
  saved_locations_ = bytes;
  saved_location_count_ = count;
  locations_loaded_ = true;
  return true;
}

bool DwarfInfo::RestoreLocation(uint64_t vaddr, Location* loc) const {
  // The row of `vaddr`, by binary search over the rows in place.
  size_t l = 0, u = saved_location_count_;
  LocationRow row;
  bool found = false;
  while (l < u && !found) {
    const size_t i = (l + u) / 2;
    EntryReader r = EntryReader::At(saved_locations_, kSavedLocationsHead + i * kSavedLocationRow);
    if (!row.Read(r)) return false;
    if (row.vaddr < vaddr) {
      l = i + 1;
    } else if (row.vaddr > vaddr) {
      u = i;
    } else {
      found = true;
    }
  }
  if (!found) return false;
  const size_t data = kSavedLocationsHead + saved_location_count_ * kSavedLocationRow;
  EntryReader r = EntryReader::At(saved_locations_, data + row.offset, row.size);
  return ReadLocation(r, loc);
}

void DwarfInfo::LoadSavedLocations() {
  locations_loaded_ = true;
  if (locations_key_.empty()) return;
  if (MappedEntry entry = MapCachedEntry(index_dir_, locations_key_)) {
    RestoreLocations(std::move(entry.owner), entry.bytes);
  }
}

// A function's name and whether it is a linkage name: read here in a unit the fast walk
// reads, else through libdw.
const DwarfInfo::Name& DwarfInfo::NameOf(Unit& u, uint64_t die_offset) {
  auto it = names_.find(die_offset);
  if (it != names_.end()) return it->second;
  Name name;
  if (libdw_walk_ || !u.scanned || !ReadName(u, die_offset, &name)) {
    if (u.scanned && !libdw_walk_) ++libdw_reads_;
    name = Name{"??", false};
    Dwarf_Die die;
    if (dwarf_offdie(h_->dwarf, die_offset, &die) != nullptr) {
      name.name = FunctionName(&die, demangle_);
      name.linkage = StringAttr(&die, DW_AT_linkage_name) != nullptr ||
                     StringAttr(&die, DW_AT_MIPS_linkage_name) != nullptr;
    }
  }
  return names_.emplace(die_offset, std::move(name)).first->second;
}

// FunctionName's answer read here: DW_AT_linkage_name (or DW_AT_MIPS_linkage_name), else
// DW_AT_name, each from the first DIE having it along DW_AT_abstract_origin, else
// DW_AT_specification, links (as libdw's dwarf_attr_integrate follows them, 16 at most).
// False, for libdw to answer, on a link to another unit, a string in another section than
// .debug_str and .debug_line_str (indexed, or in a dwz file), or anything malformed.
bool DwarfInfo::ReadName(const Unit& u, uint64_t die_offset, Name* out) const {
  const Sections::Header& h = u.header;
  const Sections::Table& abbrevs = *u.abbrevs;
  const std::string_view info = sections_->info.substr(0, h.end);
  std::optional<std::string_view> linkage, mips_linkage, plain;
  auto string_at = [](std::string_view section, uint64_t at) -> std::optional<std::string_view> {
    if (at >= section.size()) return std::nullopt;
    size_t end = section.find('\0', at);
    if (end == std::string_view::npos) return std::nullopt;
    return section.substr(at, end - at);
  };
  uint64_t die = die_offset;
  for (int chain = 0; chain <= 16; ++chain) {
    if (die < h.start || die >= h.end) return false;
    DwarfReader r(info);
    r.Seek(die);
    const Sections::Abbrev* a = abbrevs.Find(r.Uleb());
    if (!r.ok() || a == nullptr) return false;
    std::optional<uint64_t> origin, specification;
    for (uint32_t i = 0; i < a->count; ++i) {
      const Sections::Spec& spec = abbrevs.specs[a->first + i];
      const size_t at = r.pos();
      uint64_t v;
      if (!ReadForm(r, spec.form, h, spec.implicit, &v)) return false;
      std::optional<std::string_view>* slot = nullptr;
      if (spec.name == DW_AT_linkage_name) slot = &linkage;
      if (spec.name == DW_AT_MIPS_linkage_name) slot = &mips_linkage;
      if (spec.name == DW_AT_name) slot = &plain;
      if (slot != nullptr && !slot->has_value()) {
        switch (spec.form) {
          case DW_FORM_string:
            *slot = info.substr(at, r.pos() - at - 1);
            break;
          case DW_FORM_strp:
            *slot = string_at(sections_->str, v);
            if (!slot->has_value()) return false;
            break;
          case DW_FORM_line_strp:
            *slot = string_at(sections_->line_str, v);
            if (!slot->has_value()) return false;
            break;
          default:
            return false;
        }
      }
      if (spec.name == DW_AT_abstract_origin || spec.name == DW_AT_specification) {
        switch (spec.form) {
          case DW_FORM_ref1:
          case DW_FORM_ref2:
          case DW_FORM_ref4:
          case DW_FORM_ref8:
          case DW_FORM_ref_udata:
            (spec.name == DW_AT_abstract_origin ? origin : specification) = h.start + v;
            break;
          default:
            return false;
        }
      }
    }
    if (!origin && !specification) break;
    die = origin ? *origin : *specification;
  }
  const std::optional<std::string_view>& link = linkage ? linkage : mips_linkage;
  if (link) {
    out->name = demangle_ ? Demangle(std::string(*link)) : std::string(*link);
    out->linkage = true;
  } else {
    out->name = plain ? std::string(*plain) : "??";
    out->linkage = false;
  }
  return true;
}

// A DW_AT_ranges list read here, as libdw's dwarf_ranges reads it: .debug_rnglists (DWARF 5)
// or .debug_ranges, from the unit's base address; pairs of (start, end) in *out. False, for
// libdw to read it, on an index form, an entry read through .debug_addr, or anything
// malformed.
bool DwarfInfo::ReadRanges(const Unit& u, uint64_t form, uint64_t offset,
                           std::vector<uint64_t>* out) const {
  out->clear();
  const Sections::Header& h = u.header;
  if (!u.base_known) return false;
  uint64_t base = u.base;
  const bool wide = h.address_size == 8;
  auto address = [&](DwarfReader& r) -> uint64_t { return wide ? r.U64() : r.U32(); };
  if (h.version >= 5) {
    if (form != DW_FORM_sec_offset || sections_->rnglists.empty()) return false;
    DwarfReader r(sections_->rnglists);
    r.Seek(offset);
    for (int n = 0; n < 100000; ++n) {
      uint8_t kind = r.U8();
      if (!r.ok()) return false;
      switch (kind) {
        case DW_RLE_end_of_list:
          return true;
        case DW_RLE_offset_pair: {
          uint64_t lo = r.Uleb(), hi = r.Uleb();
          out->push_back(base + lo);
          out->push_back(base + hi);
          break;
        }
        case DW_RLE_base_address:
          base = address(r);
          break;
        case DW_RLE_start_end: {
          uint64_t lo = address(r), hi = address(r);
          out->push_back(lo);
          out->push_back(hi);
          break;
        }
        case DW_RLE_start_length: {
          uint64_t lo = address(r), len = r.Uleb();
          out->push_back(lo);
          out->push_back(lo + len);
          break;
        }
        default:  // the *x kinds read .debug_addr
          return false;
      }
      if (!r.ok()) return false;
    }
    return false;
  }
  if ((form != DW_FORM_sec_offset && form != DW_FORM_data4 && form != DW_FORM_data8) ||
      sections_->ranges.empty()) {
    return false;
  }
  DwarfReader r(sections_->ranges);
  r.Seek(offset);
  const uint64_t selector = wide ? ~uint64_t{0} : 0xffffffffu;
  for (int n = 0; n < 100000; ++n) {
    uint64_t lo = address(r), hi = address(r);
    if (!r.ok()) return false;
    if (lo == 0 && hi == 0) return true;
    if (lo == selector) {
      base = hi;
      continue;
    }
    out->push_back(base + lo);
    out->push_back(base + hi);
  }
  return false;
}

// The CU holding `vaddr` from the CUs' own ranges: libdw 0.188 finds CUs through
// .debug_aranges only, which clang does not emit by default. The index (each CU DIE's
// ranges, sorted) is built the first time it is needed, of the CUs .debug_aranges leaves
// out: an address it does not cover is in none of the others (GCC lists every CU, so for
// glibc's 4,000 the index is empty, where reading all their ranges took 3 ms).
// Reads .debug_aranges as libdw's dwarf_getaranges does, but each CU's DIE offset from its
// own header alone, once a lookup lands in the CU. Anything it does not read as libdw would
// (a segment selector, a malformed set) leaves the lookups to libdw, and so does a unit
// type other than a compile or partial unit for the lookups in that unit.
void DwarfInfo::ReadAranges() {
  aranges_state_ = ArangesState::kUnusable;
  if (!sections_ || sections_->aranges.empty() || sections_->info.empty()) return;
  std::vector<Arange> out;
  DwarfReader r(sections_->aranges);
  while (r.left() > 0) {
    const size_t set_start = r.pos();
    uint64_t length = r.U32();
    size_t offset_size = 4;
    if (length == 0xffffffff) {
      length = r.U64();
      offset_size = 8;
    }
    if (!r.ok() || length > r.left()) return;
    const size_t set_end = r.pos() + length;
    if (r.U16() != 2) return;
    uint64_t cu = offset_size == 8 ? r.U64() : r.U32();
    uint8_t address_size = r.U8(), segment_size = r.U8();
    if (!r.ok() || segment_size != 0 || (address_size != 4 && address_size != 8)) return;
    // Tuples start at a multiple of twice the address size from the set's start.
    const size_t tuple = 2 * address_size;
    size_t header = r.pos() - set_start;
    r.Skip((tuple - header % tuple) % tuple);
    while (r.ok() && r.pos() + tuple <= set_end) {
      uint64_t addr = address_size == 8 ? r.U64() : r.U32();
      uint64_t len = address_size == 8 ? r.U64() : r.U32();
      if (addr == 0 && len == 0) break;
      out.push_back({addr, len, cu});
    }
    if (!r.ok()) return;
    r.Seek(set_end);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Arange& a, const Arange& b) { return a.addr < b.addr; });
  aranges_ = std::move(out);
  aranges_state_ = ArangesState::kRead;
}

void DwarfInfo::Prepare() {
  if (!locations_loaded_) LoadSavedLocations();
  // With saved answers, the index is read when an address is not among them.
  if (saved_location_count_ > 0) return;
  if (aranges_state_ == ArangesState::kUnread && !libdw_walk_) ReadAranges();
  if (!index_loaded_) LoadSavedIndex();
}

// dwarf_addrdie's answer: the CU of the arange holding `vaddr`, found by libdw's binary
// search (dwarf_getarange_addr).
bool DwarfInfo::UnitByAranges(uint64_t vaddr, CuRef* cu) {
  if (aranges_state_ == ArangesState::kUnread && !libdw_walk_) ReadAranges();
  if (aranges_state_ == ArangesState::kRead) {
    const Arange* found = nullptr;
    size_t l = 0, u = aranges_.size();
    while (l < u && found == nullptr) {
      size_t i = (l + u) / 2;
      const Arange& a = aranges_[i];
      if (vaddr < a.addr) {
        u = i;
      } else if (vaddr > a.addr && vaddr - a.addr >= a.length) {
        l = i + 1;
      } else {
        found = &a;
      }
    }
    if (found == nullptr) return false;
    // The CU's DIE follows its header, read only for the CUs asked about (glibc's 4,126
    // headers lie across its 5.8 MB .debug_info). A header libdw would not read: libdw
    // answers.
    uint64_t die;
    if (UnitDie(found->unit, &die)) {
      *cu = CuRef{die, found->unit, {}, false};
      return true;
    }
  }
  if (dwarf_addrdie(h_->dwarf, vaddr, &cu->handle) == nullptr) return false;
  cu->have_handle = true;
  cu->die = dwarf_dieoffset(&cu->handle);
  return true;
}

bool DwarfInfo::UnitDie(uint64_t unit, uint64_t* die) const {
  DwarfReader h(sections_->info);
  h.Seek(unit);
  uint64_t unit_length = h.U32();
  size_t unit_offset_size = 4;
  if (unit_length == 0xffffffff) {
    h.U64();
    unit_offset_size = 8;
  }
  uint16_t version = h.U16();
  if (version < 2 || version > 5) return false;
  if (version >= 5) {
    uint8_t unit_type = h.U8();
    if (unit_type != DW_UT_compile && unit_type != DW_UT_partial) return false;
    h.U8();  // address size
    h.Skip(unit_offset_size);
  } else {
    h.Skip(unit_offset_size);
    h.U8();
  }
  if (!h.ok()) return false;
  *die = h.pos();
  return true;
}

// The address ranges of a CU's DIE read here (as ScanDies reads a function's); false where
// libdw has to read them.
bool DwarfInfo::ReadUnitRanges(uint64_t unit, uint64_t die, std::vector<uint64_t>* out) {
  out->clear();
  Unit u;
  CuRef ref{die, unit, {}, false};
  if (!ReadUnitHeader(u, ref)) return false;
  const Sections::Header& h = u.header;
  DwarfReader r(sections_->info.substr(0, h.end));
  r.Seek(die);
  const Sections::Abbrev* a = u.abbrevs->Find(r.Uleb());
  if (!r.ok() || a == nullptr) return false;
  PcAttrs pc;
  for (uint32_t i = 0; i < a->count; ++i) {
    const Sections::Spec& spec = u.abbrevs->specs[a->first + i];
    uint64_t v;
    if (!ReadForm(r, spec.form, h, spec.implicit, &v)) return false;
    pc.Take(spec.name, spec.form, v);
  }
  if (pc.odd()) return false;
  if (pc.single()) {
    out->push_back(pc.low);
    out->push_back(pc.end());
    return true;
  }
  if (!pc.has_ranges) return true;
  u.base_known = pc.Base(&u.base);
  return ReadRanges(u, pc.ranges_form, pc.ranges_at, out);
}

int64_t DwarfInfo::ArangesUnitAt(uint64_t vaddr) {
  CuRef cu;
  if (!UnitByAranges(vaddr, &cu)) return -1;
  return static_cast<int64_t>(cu.die);
}

bool DwarfInfo::UnitByRanges(uint64_t vaddr, CuRef* cu) {
  if (!unit_ranges_built_) {
    unit_ranges_built_ = true;
    std::vector<uint64_t> listed;  // CU DIEs with address ranges in .debug_aranges
    if (aranges_state_ == ArangesState::kUnread && !libdw_walk_) ReadAranges();
    if (aranges_state_ == ArangesState::kRead) {
      for (const Arange& a : aranges_) {
        uint64_t die;
        if (UnitDie(a.unit, &die)) listed.push_back(die);
      }
    } else {
      Dwarf_Aranges* aranges = nullptr;
      size_t count = 0;
      if (dwarf_getaranges(h_->dwarf, &aranges, &count) == 0) {
        for (size_t i = 0; i < count; ++i) {
          Dwarf_Addr start;
          Dwarf_Word length;
          Dwarf_Off die;
          if (dwarf_getarangeinfo(dwarf_onearange(aranges, i), &start, &length, &die) == 0)
            listed.push_back(die);
        }
      }
    }
    std::sort(listed.begin(), listed.end());
    Dwarf_Off off = 0, next = 0;
    size_t header = 0;
    Ranges code;
    std::vector<uint64_t> pairs;
    for (int n = 0; n < 1000000 && dwarf_next_unit(h_->dwarf, off, &next, &header, nullptr, nullptr,
                                                   nullptr, nullptr, nullptr, nullptr) == 0;
         ++n, off = next) {
      if (std::binary_search(listed.begin(), listed.end(), off + header)) continue;
      if (!libdw_walk_ && ReadUnitRanges(off, off + header, &pairs)) {
        for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
          if (pairs[i + 1] > pairs[i])
            unit_ranges_.push_back({pairs[i], pairs[i + 1], off + header, off});
        }
        continue;
      }
      Dwarf_Die die;
      if (dwarf_offdie(h_->dwarf, off + header, &die) == nullptr) continue;
      RangesOf(&die, &code);
      for (const Unit::Range& r : code) unit_ranges_.push_back({r.lo, r.hi, off + header, off});
    }
    std::sort(unit_ranges_.begin(), unit_ranges_.end(),
              [](const UnitRange& a, const UnitRange& b) { return a.lo < b.lo; });
  }
  auto it = std::upper_bound(unit_ranges_.begin(), unit_ranges_.end(), vaddr,
                             [](uint64_t v, const UnitRange& r) { return v < r.lo; });
  for (int back = 0; back < 8 && it != unit_ranges_.begin(); ++back) {
    --it;
    if (vaddr >= it->lo && vaddr < it->hi) {
      *cu = CuRef{it->die, it->unit, {}, false};
      return true;
    }
  }
  return false;
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
