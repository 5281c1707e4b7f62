#pragma once
// The elf module (common/elf/): reading ELF files, below both the symbolizer and the
// unwinder, which read the same binaries: ElfImage (here), compressed sections
// (section_data.h) and build-ids (ElfImage::BuildIdBytes).
//
// One ELF file, read-only: mapped (or copied, for an image held in memory such as the vdso),
// with its section and program headers normalized to 64 bits and every offset checked against
// the file, so that a truncated or corrupt file gives empty sections, never a crash. Shared by
// the symbol tables (symbolize/elf_symbols.h) and the unwind tables (unwind/cfi.h).

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/regular_file.h"
#include "base/teardown.h"

namespace pf {
namespace elf {
// ---------------------------------------------------------------------------------------------
// The bytes of one ELF file: a read-only mapping, or a copy held in memory.

class ElfBytes {
 public:
  static std::unique_ptr<ElfBytes> Map(const std::string& path) {
    // Named by a recording: a FIFO there must not block the reader (base/regular_file.h).
    int fd = OpenRegularFile(path);
    if (fd < 0 && errno == EINVAL) throw Error(path, "not a regular file");
    if (fd < 0) throw Error(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
      close(fd);
      throw Error(path, std::string("cannot stat: ") + std::strerror(errno));
    }
    auto bytes = std::unique_ptr<ElfBytes>(new ElfBytes);
    if (st.st_size > 0) {
      void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        close(fd);
        throw Error(path, std::string("cannot map: ") + std::strerror(errno));
      }
      bytes->map_ = p;
      bytes->map_size_ = static_cast<size_t>(st.st_size);
      bytes->data_ = std::string_view(static_cast<const char*>(p), bytes->map_size_);
    }
    close(fd);
    return bytes;
  }
  static std::unique_ptr<ElfBytes> Copy(std::string_view image) {
    auto bytes = std::unique_ptr<ElfBytes>(new ElfBytes);
    bytes->copy_.assign(image);
    bytes->data_ = bytes->copy_;
    return bytes;
  }
  ~ElfBytes() {
    if (map_ != nullptr) UnmapWhenDone(map_, map_size_);
  }
  std::string_view data() const { return data_; }

 private:
  ElfBytes() = default;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::string copy_;
  std::string_view data_;
};

// ---------------------------------------------------------------------------------------------
// A parsed ELF file: headers normalized to 64 bits, every offset checked against the file.

struct Section {
  uint32_t name = 0;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint64_t entsize = 0;
};

struct ProgramHeader {
  uint32_t type = 0;
  uint32_t flags = 0;
  uint64_t offset = 0;
  uint64_t vaddr = 0;
  uint64_t filesz = 0;
  uint64_t memsz = 0;
};

struct RawSymbol {
  uint32_t name = 0;
  uint8_t info = 0;
  uint8_t other = 0;
  uint16_t shndx = 0;
  uint64_t value = 0;
  uint64_t size = 0;
};

template <typename T>
inline bool ReadAt(std::string_view data, uint64_t offset, T* out) {
  if (offset > data.size() || data.size() - offset < sizeof(T)) return false;
  std::memcpy(out, data.data() + offset, sizeof(T));
  return true;
}

// [offset, offset + size) of `data`, or empty when it does not fit.
inline std::string_view Slice(std::string_view data, uint64_t offset, uint64_t size) {
  if (offset > data.size() || data.size() - offset < size) return {};
  return data.substr(offset, size);
}

// The NUL-terminated string at `offset` of a string table; empty when out of range,
// unterminated, or longer than kMaxName (so a corrupt table cannot make the scans quadratic).
inline constexpr size_t kMaxName = 64 * 1024;
inline std::string_view CString(std::string_view table, uint64_t offset) {
  if (offset >= table.size()) return {};
  std::string_view rest = table.substr(offset, kMaxName + 1);
  const void* nul = std::memchr(rest.data(), '\0', rest.size());
  if (nul == nullptr) return {};
  return rest.substr(0, static_cast<const char*>(nul) - rest.data());
}

inline std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    s += kDigits[c >> 4];
    s += kDigits[c & 15];
  }
  return s;
}

class ElfImage {
 public:
  static std::unique_ptr<ElfImage> Open(const std::string& path) {
    auto image = std::unique_ptr<ElfImage>(new ElfImage);
    image->path_ = path;
    image->bytes_ = ElfBytes::Map(path);
    image->Parse();
    return image;
  }
  static std::unique_ptr<ElfImage> FromBytes(std::string_view bytes, std::string name) {
    auto image = std::unique_ptr<ElfImage>(new ElfImage);
    image->path_ = std::move(name);
    image->bytes_ = ElfBytes::Copy(bytes);
    image->Parse();
    return image;
  }

  const std::string& path() const { return path_; }
  /// The whole file's bytes.
  std::string_view bytes() const { return bytes_->data(); }
  uint16_t machine() const { return machine_; }
  const std::vector<Section>& sections() const { return sections_; }
  const std::vector<ProgramHeader>& segments() const { return segments_; }
  /// The virtual address of file offset `offset`, through the PT_LOAD segment holding it.
  bool FileOffsetToVaddr(uint64_t offset, uint64_t* vaddr) const {
    for (const ProgramHeader& p : segments_) {
      if (p.type == PT_LOAD && offset >= p.offset && offset - p.offset < std::max(p.filesz, p.memsz)) {
        *vaddr = offset - p.offset + p.vaddr;
        return true;
      }
    }
    return false;
  }
  /// Index of .symtab (SHT_SYMTAB) or .dynsym (SHT_DYNSYM), -1 when absent.
  int symtab() const { return symtab_; }
  int dynsym() const { return dynsym_; }

  std::string_view SectionName(const Section& s) const { return CString(shstrtab_, s.name); }

  /// The first section called `name` (as libelf's walk in perf finds it), or -1.
  int FindSection(std::string_view name) const {
    for (size_t i = 0; i < sections_.size(); ++i)
      if (SectionName(sections_[i]) == name) return static_cast<int>(i);
    return -1;
  }

  /// A section's bytes; empty for NOBITS or when it does not fit in the file.
  std::string_view SectionData(const Section& s) const {
    if (s.type == SHT_NOBITS) return {};
    return Slice(bytes_->data(), s.offset, s.size);
  }

  /// Number of symbols in a symbol table section.
  size_t SymbolCount(const Section& s) const {
    return SectionData(s).size() / (is64_ ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym));
  }

  RawSymbol ReadSymbol(std::string_view table, size_t i) const {
    RawSymbol r;
    if (is64_) {
      Elf64_Sym s;
      if (!ReadAt(table, i * sizeof(s), &s)) return r;
      r = {s.st_name, s.st_info, s.st_other, s.st_shndx, s.st_value, s.st_size};
    } else {
      Elf32_Sym s;
      if (!ReadAt(table, i * sizeof(s), &s)) return r;
      r = {s.st_name, s.st_info, s.st_other, s.st_shndx, s.st_value, s.st_size};
    }
    return r;
  }

  /// The symbol index of relocation `i` of a .rel(a).plt section, or -1.
  int64_t RelocationSymbol(std::string_view table, bool rela, size_t i) const {
    if (is64_) {
      uint64_t info;
      size_t entry = rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
      if (!ReadAt(table, i * entry + offsetof(Elf64_Rel, r_info), &info)) return -1;
      return static_cast<int64_t>(ELF64_R_SYM(info));
    }
    uint32_t info;
    size_t entry = rela ? sizeof(Elf32_Rela) : sizeof(Elf32_Rel);
    if (!ReadAt(table, i * entry + offsetof(Elf32_Rel, r_info), &info)) return -1;
    return ELF32_R_SYM(info);
  }
  size_t RelocationSize(bool rela) const {
    if (is64_) return rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
    return rela ? sizeof(Elf32_Rela) : sizeof(Elf32_Rel);
  }

  /// The NT_GNU_BUILD_ID note's bytes, from SHT_NOTE sections (PT_NOTE segments when the
  /// file has no section headers); empty when there is none. A view of the file's bytes.
  std::string_view BuildIdBytes() const {
    for (const Section& s : sections_) {
      if (s.type != SHT_NOTE) continue;
      std::string_view id = NoteBuildId(SectionData(s));
      if (!id.empty()) return id;
    }
    if (sections_.empty()) {
      for (const ProgramHeader& p : segments_) {
        if (p.type != PT_NOTE) continue;
        std::string_view id = NoteBuildId(Slice(bytes_->data(), p.offset, p.filesz));
        if (!id.empty()) return id;
      }
    }
    return {};
  }
  /// The same in hex.
  std::string BuildId() const { return Hex(BuildIdBytes()); }

  /// The file name in .gnu_debuglink ("" when absent).
  std::string Debuglink() const {
    int i = FindSection(".gnu_debuglink");
    if (i < 0) return {};
    std::string_view data = SectionData(sections_[i]);
    return std::string(CString(data, 0));
  }

 private:
  ElfImage() = default;

  static std::string_view NoteBuildId(std::string_view notes) {
    uint64_t pos = 0;
    while (pos + 12 <= notes.size()) {
      uint32_t namesz = 0, descsz = 0, type = 0;
      ReadAt(notes, pos, &namesz);
      ReadAt(notes, pos + 4, &descsz);
      ReadAt(notes, pos + 8, &type);
      uint64_t name_at = pos + 12;
      uint64_t desc_at = name_at + ((uint64_t{namesz} + 3) & ~uint64_t{3});
      uint64_t next = desc_at + ((uint64_t{descsz} + 3) & ~uint64_t{3});
      if (desc_at > notes.size() || notes.size() - desc_at < descsz) return {};
      if (type == NT_GNU_BUILD_ID && namesz == 4 &&
          notes.substr(name_at, 4) == std::string_view("GNU\0", 4) && descsz > 0) {
        return notes.substr(desc_at, descsz);
      }
      pos = next;
    }
    return {};
  }

  void Parse() {
    std::string_view d = bytes_->data();
    if (d.size() < EI_NIDENT || std::memcmp(d.data(), ELFMAG, SELFMAG) != 0)
      throw Error(path_, "not an ELF file");
    if (d[EI_DATA] != ELFDATA2LSB) throw Error(path_, "big-endian ELF files are not supported");
    if (d[EI_CLASS] == ELFCLASS64) {
      is64_ = true;
      ParseHeaders<Elf64_Ehdr, Elf64_Shdr, Elf64_Phdr>(d);
    } else if (d[EI_CLASS] == ELFCLASS32) {
      is64_ = false;
      ParseHeaders<Elf32_Ehdr, Elf32_Shdr, Elf32_Phdr>(d);
    } else {
      throw Error(path_, "unknown ELF class");
    }
  }

  template <typename Ehdr, typename Shdr, typename Phdr>
  void ParseHeaders(std::string_view d) {
    Ehdr eh;
    if (!ReadAt(d, 0, &eh)) throw Error(path_, "truncated ELF header");
    machine_ = eh.e_machine;

    // Program headers (PT_LOAD for offset <-> address, PT_NOTE for the build-id).
    if (eh.e_phoff != 0 && eh.e_phnum != 0 && eh.e_phentsize >= sizeof(Phdr)) {
      for (uint64_t i = 0; i < eh.e_phnum; ++i) {
        Phdr ph;
        if (!ReadAt(d, eh.e_phoff + i * eh.e_phentsize, &ph)) break;
        segments_.push_back(
            {ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz});
      }
    }

    // Section headers, with the extended numbering of files with >= 0xff00 sections.
    if (eh.e_shoff == 0 || eh.e_shentsize < sizeof(Shdr)) return;
    Shdr first;
    if (!ReadAt(d, eh.e_shoff, &first)) return;
    uint64_t count = eh.e_shnum != 0 ? eh.e_shnum : first.sh_size;
    uint64_t strndx = eh.e_shstrndx != SHN_XINDEX ? eh.e_shstrndx : first.sh_link;
    if (count > (d.size() - std::min<uint64_t>(d.size(), eh.e_shoff)) / eh.e_shentsize)
      return;  // the table does not fit: treat as having no sections
    sections_.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      Shdr sh;
      if (!ReadAt(d, eh.e_shoff + i * eh.e_shentsize, &sh)) break;
      sections_.push_back({sh.sh_name, sh.sh_type, sh.sh_flags, sh.sh_addr, sh.sh_offset,
                           sh.sh_size, sh.sh_link, sh.sh_entsize});
    }
    if (strndx < sections_.size()) shstrtab_ = SectionData(sections_[strndx]);
    symtab_ = FindSection(".symtab");
    if (symtab_ >= 0 && sections_[symtab_].type != SHT_SYMTAB) symtab_ = -1;
    dynsym_ = FindSection(".dynsym");
    if (dynsym_ >= 0 && sections_[dynsym_].type != SHT_DYNSYM) dynsym_ = -1;
  }

  std::string path_;
  std::unique_ptr<ElfBytes> bytes_;
  bool is64_ = true;
  uint16_t machine_ = 0;
  std::vector<Section> sections_;
  std::vector<ProgramHeader> segments_;
  std::string_view shstrtab_;
  int symtab_ = -1;
  int dynsym_ = -1;
};

/// True when `file_id` (a file's build-id, hex) is the recorded `wanted` one. Recorded
/// build-ids may be zero-padded to 20 bytes.
inline bool BuildIdMatches(std::string_view wanted, std::string_view file_id) {
  if (file_id.empty()) return false;
  if (wanted.size() < file_id.size()) return false;
  if (wanted.substr(0, file_id.size()) != file_id) return false;
  return wanted.substr(file_id.size()).find_first_not_of('0') == std::string_view::npos;
}

}  // namespace elf
}  // namespace pf
