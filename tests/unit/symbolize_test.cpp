// Symbolization: perf's rules for ELF symbol tables (aliases, zero sizes, overlaps, PLT),
// demangling as perf prints names, kallsyms and perf-map parsing, robustness on corrupt ELF
// files, and lookups in real files of the machine (libc, the vdso, a stripped binary).
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/regular_file.h"
#include "symbolize/addr2line_names.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_cache.h"
#include "symbolize/dwarf_info.h"
#include "elf/elf_image.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perf_map.h"
#include "symbolize/symbolizer.h"
#include "test_util.h"

namespace pf {

// What only tests read of a symbol table (friends: not in the tables' interfaces).
struct ElfSymbolsTestPeer {
  /// Load answered from the cache on disk.
  static bool FromCache(const ElfSymbols& s) { return s.from_cache_; }
  /// Disjoint ranges of the lookup table, 0 when the replayed tree answers.
  static size_t RangeCount(const ElfSymbols& s) { return s.ranges_.ranges_.size(); }
  /// The binary's .gnu_debuglink file name ("" when it has none).
  static const std::string& Debuglink(const ElfSymbols& s) { return s.debuglink_; }
  /// The file the symbol table was read from (the binary or a debug file).
  static const std::string& SymbolsPath(const ElfSymbols& s) { return s.symbols_path_; }
};
struct KernelSymbolsTestPeer {
  /// The text had symbols but every address was zero (kptr_restrict).
  static bool Restricted(const KernelSymbols& k) { return k.restricted_; }
};

namespace {

// ---------------------------------------------------------------------------------------------
// A tiny ELF writer: one loadable .text section and a .symtab, 32 or 64 bits, so the table
// rules are tested on exact inputs.

struct TestSym {
  std::string name;
  uint64_t value;
  uint64_t size;
  unsigned char bind = STB_GLOBAL;
  unsigned char type = STT_FUNC;
  unsigned char visibility = STV_DEFAULT;
};

template <typename Ehdr, typename Shdr, typename Phdr, typename Sym>
std::string BuildElf(const std::vector<TestSym>& syms, uint64_t text_vaddr, unsigned char cls) {
  const uint64_t text_off = 0x1000, text_size = 0x1000;
  std::string strtab(1, '\0');
  std::vector<Sym> table(1);
  for (const TestSym& s : syms) {
    Sym e{};
    e.st_name = static_cast<uint32_t>(strtab.size());
    strtab += s.name;
    strtab += '\0';
    e.st_value = static_cast<decltype(e.st_value)>(s.value);
    e.st_size = static_cast<decltype(e.st_size)>(s.size);
    e.st_info = static_cast<unsigned char>((s.bind << 4) | s.type);
    e.st_other = s.visibility;
    e.st_shndx = 1;
    table.push_back(e);
  }
  const std::string shstrtab = std::string("\0.text\0.symtab\0.strtab\0.shstrtab\0", 33);
  std::string image(text_off + text_size, '\0');
  auto append = [&](const void* p, size_t n) {
    uint64_t at = image.size();
    image.append(static_cast<const char*>(p), n);
    return at;
  };
  uint64_t symtab_off = append(table.data(), table.size() * sizeof(Sym));
  uint64_t strtab_off = append(strtab.data(), strtab.size());
  uint64_t shstrtab_off = append(shstrtab.data(), shstrtab.size());
  while (image.size() % 8) image += '\0';

  Shdr sh[5] = {};
  sh[1].sh_name = 1;  // .text
  sh[1].sh_type = SHT_PROGBITS;
  sh[1].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
  sh[1].sh_addr = static_cast<decltype(sh[1].sh_addr)>(text_vaddr);
  sh[1].sh_offset = static_cast<decltype(sh[1].sh_offset)>(text_off);
  sh[1].sh_size = static_cast<decltype(sh[1].sh_size)>(text_size);
  sh[2].sh_name = 7;  // .symtab
  sh[2].sh_type = SHT_SYMTAB;
  sh[2].sh_offset = static_cast<decltype(sh[2].sh_offset)>(symtab_off);
  sh[2].sh_size = static_cast<decltype(sh[2].sh_size)>(table.size() * sizeof(Sym));
  sh[2].sh_link = 3;
  sh[2].sh_entsize = sizeof(Sym);
  sh[3].sh_name = 15;  // .strtab
  sh[3].sh_type = SHT_STRTAB;
  sh[3].sh_offset = static_cast<decltype(sh[3].sh_offset)>(strtab_off);
  sh[3].sh_size = static_cast<decltype(sh[3].sh_size)>(strtab.size());
  sh[4].sh_name = 23;  // .shstrtab
  sh[4].sh_type = SHT_STRTAB;
  sh[4].sh_offset = static_cast<decltype(sh[4].sh_offset)>(shstrtab_off);
  sh[4].sh_size = static_cast<decltype(sh[4].sh_size)>(shstrtab.size());
  uint64_t shoff = append(sh, sizeof(sh));

  Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_flags = PF_R | PF_X;
  ph.p_offset = static_cast<decltype(ph.p_offset)>(text_off);
  ph.p_vaddr = static_cast<decltype(ph.p_vaddr)>(text_vaddr);
  ph.p_filesz = ph.p_memsz = static_cast<decltype(ph.p_filesz)>(text_size);
  uint64_t phoff = append(&ph, sizeof(ph));

  Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = cls;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = cls == ELFCLASS64 ? EM_X86_64 : EM_386;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = static_cast<decltype(eh.e_phoff)>(phoff);
  eh.e_shoff = static_cast<decltype(eh.e_shoff)>(shoff);
  eh.e_ehsize = sizeof(Ehdr);
  eh.e_phentsize = sizeof(Phdr);
  eh.e_phnum = 1;
  eh.e_shentsize = sizeof(Shdr);
  eh.e_shnum = 5;
  eh.e_shstrndx = 4;
  image.replace(0, sizeof(eh), reinterpret_cast<const char*>(&eh), sizeof(eh));
  return image;
}

std::string Elf64(const std::vector<TestSym>& syms, uint64_t text_vaddr = 0x1000) {
  return BuildElf<Elf64_Ehdr, Elf64_Shdr, Elf64_Phdr, Elf64_Sym>(syms, text_vaddr, ELFCLASS64);
}
std::string Elf32(const std::vector<TestSym>& syms, uint64_t text_vaddr = 0x1000) {
  return BuildElf<Elf32_Ehdr, Elf32_Shdr, Elf32_Phdr, Elf32_Sym>(syms, text_vaddr, ELFCLASS32);
}

// "name+0xOFF" or "[unknown]" for a file offset, as perf script prints a frame.
std::string At(const ElfSymbols& elf, uint64_t file_offset) {
  SymbolIndex index;
  uint64_t offset;
  if (!elf.Find(file_offset, &index, &offset)) return "[unknown]";
  char buf[32];
  std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(offset));
  return elf.Name(index) + buf;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char name[] = "/tmp/pf_symbolize_XXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    path_ = name;
    EXPECT_EQ(write(fd, contents.data(), contents.size()), static_cast<ssize_t>(contents.size()));
    close(fd);
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// Table rules

TEST(ElfSymbols, AliasChoiceFollowsPerf) {
  // libc's write: every alias has the size; weak ones lose, then (all local) fewer leading
  // underscores tie, the longest name wins. perf script prints __GI___libc_write.
  std::vector<TestSym> syms = {
      {"__GI___write", 0x1100, 157, STB_LOCAL},
      {"__GI_write", 0x1100, 157, STB_LOCAL},
      {"__GI___libc_write", 0x1100, 157, STB_LOCAL},
      {"__libc_write", 0x1100, 157, STB_LOCAL},
      {"__write", 0x1100, 157, STB_WEAK},
      {"write", 0x1100, 157, STB_WEAK},
      // free: globals beat locals, then the longest name without leading underscores.
      {"__free", 0x1200, 64, STB_LOCAL},
      {"__GI___libc_free", 0x1200, 64, STB_LOCAL},
      {"free", 0x1200, 64, STB_GLOBAL},
      {"__libc_free", 0x1200, 64, STB_GLOBAL},
      {"cfree@GLIBC_2.2.5", 0x1200, 64, STB_GLOBAL},
  };
  auto elf = ElfSymbols::FromImage(Elf64(syms), "t");
  EXPECT_EQ(At(*elf, 0x1100), "__GI___libc_write+0x0");
  EXPECT_EQ(At(*elf, 0x1105), "__GI___libc_write+0x5");
  EXPECT_EQ(At(*elf, 0x1200), "cfree@GLIBC_2.2.5+0x0");
  EXPECT_EQ(At(*elf, 0x1240), "[unknown]");  // past the size: a gap
}

TEST(ElfSymbols, ZeroSizeSymbolsReachTheNextOne) {
  std::vector<TestSym> syms = {
      {"sized", 0x1000, 8, STB_LOCAL},
      {"zero_after_sized_alias", 0x1000, 0, STB_GLOBAL},  // extended first, then wins
      {"next", 0x1020, 16},
      {"asm_label", 0x1040, 0},
      {"last_zero", 0x1ff0, 0},
  };
  auto elf = ElfSymbols::FromImage(Elf64(syms), "t");
  EXPECT_EQ(At(*elf, 0x1010), "zero_after_sized_alias+0x10");
  EXPECT_EQ(At(*elf, 0x1030), "[unknown]");
  EXPECT_EQ(At(*elf, 0x1fef), "asm_label+0xfaf");
  // The last zero-size symbol reaches the page after its own.
  EXPECT_EQ(At(*elf, 0x2fff), "last_zero+0x100f");
  EXPECT_EQ(At(*elf, 0x3000), "[unknown]");
}

TEST(ElfSymbols, LabelsAndObjectsAndHiddenNotypes) {
  std::vector<TestSym> syms = {
      {"func", 0x1000, 0x40},
      {"hidden_label", 0x1040, 0, STB_GLOBAL, STT_NOTYPE, STV_HIDDEN},  // ignored
      {"label", 0x1080, 0, STB_LOCAL, STT_NOTYPE},                      // kept (".text")
      {"table", 0x1100, 0x20, STB_LOCAL, STT_OBJECT},                   // kept: perf has data
      {"ifunc", 0x1200, 0x10, STB_GLOBAL, STT_GNU_IFUNC},
  };
  auto elf = ElfSymbols::FromImage(Elf64(syms), "t");
  EXPECT_EQ(At(*elf, 0x1044), "[unknown]");
  EXPECT_EQ(At(*elf, 0x1090), "label+0x10");
  EXPECT_EQ(At(*elf, 0x1101), "table+0x1");
  EXPECT_EQ(At(*elf, 0x1200), "ifunc+0x0");
}

// Nested symbols, whose answers need perf's tree.
std::unique_ptr<ElfSymbols> NestedSymbols() {
  std::vector<TestSym> syms = {
      {"outer", 0x1000, 0x40},
      {"inner", 0x1010, 0x8},
      {"after", 0x1100, 0x10},
  };
  return ElfSymbols::FromImage(Elf64(syms), "t");
}

TEST(ElfSymbols, OverlapsAnswerLikePerfsTree) {
  // perf's tree search meets `inner` first and goes right past its end, so addresses of
  // `outer` after `inner` are unknown (checked against perf 6.1).
  auto elf = NestedSymbols();
  EXPECT_EQ(At(*elf, 0x1008), "outer+0x8");
  EXPECT_EQ(At(*elf, 0x1014), "inner+0x4");
  EXPECT_EQ(At(*elf, 0x1018), "[unknown]");
}

// A cached table with a tree is read in place and answers as the one it was saved from; a
// corrupt tree whose every child is the first node (a cycle the restore does not look for)
// makes a search stop, not loop.
TEST(ElfSymbols, CachedTreeAnswersAndACycleEnds) {
  auto elf = NestedSymbols();
  ASSERT_EQ(ElfSymbolsTestPeer::RangeCount(*elf), 0u);  // the tree answers
  const std::string saved = elf->Saved();
  auto restored = ElfSymbols::Restored(saved);
  ASSERT_NE(restored, nullptr);
  EXPECT_EQ(restored->Saved(), saved);
  for (uint64_t a : {0x1008, 0x1014, 0x1018, 0x1105, 0x2000})
    EXPECT_EQ(At(*restored, a), At(*elf, a));
  // The nodes are the last 32-byte records: start, end, id, left, right, zero.
  std::string cyclic = saved;
  const size_t nodes = 3;
  ASSERT_GT(cyclic.size(), nodes * 32);
  for (size_t i = 0; i < nodes; ++i) {
    const size_t at = cyclic.size() - (nodes - i) * 32;
    const int32_t first = 0;
    std::memcpy(&cyclic[at + 20], &first, 4);
    std::memcpy(&cyclic[at + 24], &first, 4);
  }
  auto looping = ElfSymbols::Restored(cyclic);
  ASSERT_NE(looping, nullptr);
  SymbolIndex index;
  uint64_t offset;
  EXPECT_FALSE(looping->Find(0x10, &index, &offset));    // below every start: left forever
  EXPECT_FALSE(looping->Find(0x9000, &index, &offset));  // past every end: right forever
}

// The file BFD reports with a symbol-table name: the latest STT_FILE's, even an empty one
// (ld writes one before its own local symbols; addr2line then prints ":?", perf ":0"), and
// for a global symbol after a file symbol that follows other symbols, none.
TEST(Addr2lineNames, FileSymbols) {
  std::vector<TestSym> syms = {
      {"", 0, 0, STB_LOCAL, STT_FILE},
      {"asm_fn", 0x1100, 0, STB_LOCAL, STT_NOTYPE},
      {"a.c", 0, 0, STB_LOCAL, STT_FILE},
      {"c_fn", 0x1200, 0x10, STB_LOCAL, STT_FUNC},
      {"glob", 0x1300, 0x10, STB_GLOBAL, STT_FUNC},
  };
  auto image = elf::ElfImage::FromBytes(Elf64(syms), "t");
  Addr2lineNames names(*image);
  Addr2lineNames::Answer a = names.At(0x1105);
  EXPECT_EQ(a.function, "asm_fn");
  EXPECT_TRUE(a.has_file);
  EXPECT_EQ(a.file, "");
  a = names.At(0x1205);
  EXPECT_EQ(a.function, "c_fn");
  EXPECT_TRUE(a.has_file);
  EXPECT_EQ(a.file, "a.c");
  a = names.At(0x1305);
  EXPECT_EQ(a.function, "glob");
  EXPECT_FALSE(a.has_file);
}

// A name the string table does not end is no name, as elf::CString reads it: that symbol is
// no candidate (the one below answers), and nothing past the table is read.
TEST(Addr2lineNames, UnterminatedNameIsNoName) {
  std::string bytes = Elf64({{"a_fn", 0x1100, 0x10}, {"last", 0x1200, 0x10}});
  {
    auto image = elf::ElfImage::FromBytes(bytes, "t");
    Addr2lineNames names(*image);
    EXPECT_EQ(names.At(0x1205).function, "last");
    const elf::Section& strtab =
        image->sections()[image->sections()[static_cast<size_t>(image->symtab())].link];
    ASSERT_EQ(bytes[strtab.offset + strtab.size - 1], '\0');
    bytes[strtab.offset + strtab.size - 1] = 'x';  // "last" runs to the table's end
  }
  auto image = elf::ElfImage::FromBytes(bytes, "t");
  Addr2lineNames names(*image);
  EXPECT_EQ(names.At(0x1105).function, "a_fn");
  EXPECT_EQ(names.At(0x1205).function, "a_fn");
}

TEST(SymbolRanges, ReplaysInsertionOrder) {
  // Two nodes: the first inserted is the root.
  SymbolRanges a;
  a.Insert({0, 64, 1, STB_GLOBAL, false});
  a.Insert({16, 24, 2, STB_GLOBAL, false});
  a.Finish();
  uint32_t id = 0;
  ASSERT_TRUE(a.Find(32, &id));
  EXPECT_EQ(id, 1u);

  SymbolRanges b;
  b.Insert({16, 24, 2, STB_GLOBAL, false});
  b.Insert({0, 64, 1, STB_GLOBAL, false});
  b.Finish();
  EXPECT_FALSE(b.Find(32, &id));
  ASSERT_TRUE(b.Find(20, &id));
  EXPECT_EQ(id, 2u);
  ASSERT_TRUE(b.Find(8, &id));
  EXPECT_EQ(id, 1u);

  // A zero-size entry matches its own address only; erased entries are gone.
  SymbolRanges c;
  c.Insert({100, 100, 7, STB_GLOBAL, false});
  c.Insert({200, 300, 8, STB_GLOBAL, false});
  c.Erase(8);
  c.Finish();
  ASSERT_TRUE(c.Find(100, &id));
  EXPECT_EQ(id, 7u);
  EXPECT_FALSE(c.Find(101, &id));
  EXPECT_FALSE(c.Find(250, &id));
}

TEST(ElfSymbols, DemangledNamesDecideAliases) {
  // Demangled, "abcde" is longer than "wxyz"; mangled, "_Z5abcdev" has a leading underscore.
  std::vector<TestSym> syms = {{"_Z5abcdev", 0x1000, 16}, {"wxyz", 0x1000, 16}};
  EXPECT_EQ(At(*ElfSymbols::FromImage(Elf64(syms), "t", true), 0x1000), "abcde+0x0");
  EXPECT_EQ(At(*ElfSymbols::FromImage(Elf64(syms), "t", false), 0x1000), "wxyz+0x0");
}

TEST(ElfSymbols, FileOffsetsGoThroughTheLoadSegment) {
  // Text linked at 0x401000 but stored at file offset 0x1000 (ET_EXEC-like).
  std::vector<TestSym> syms = {{"main", 0x401010, 0x20}};
  auto elf = ElfSymbols::FromImage(Elf64(syms, 0x401000), "t");
  EXPECT_EQ(At(*elf, 0x1010), "main+0x0");
  EXPECT_EQ(At(*elf, 0x1015), "main+0x5");
  uint64_t vaddr = 0, off = 0;
  ASSERT_TRUE(elf->FileOffsetToVaddr(0x1015, &vaddr));
  EXPECT_EQ(vaddr, 0x401015u);
  ASSERT_TRUE(elf->VaddrToFileOffset(0x401015, &off));
  EXPECT_EQ(off, 0x1015u);
  EXPECT_FALSE(elf->FileOffsetToVaddr(0x10, &vaddr));
}

TEST(ElfSymbols, Elf32) {
  std::vector<TestSym> syms = {{"f32", 0x1100, 0x10}, {"g32", 0x1110, 0}};
  auto elf = ElfSymbols::FromImage(Elf32(syms), "t32");
  EXPECT_EQ(At(*elf, 0x1104), "f32+0x4");
  EXPECT_EQ(At(*elf, 0x1120), "g32+0x10");
}

// ---------------------------------------------------------------------------------------------
// Robustness

// Parses `image` and looks everything up; must not crash whatever the bytes.
void Exercise(std::string_view image) {
  try {
    auto elf = ElfSymbols::FromImage(image, "fuzz");
    SymbolIndex index;
    uint64_t offset, v;
    for (uint64_t off = 0; off < 0x3000; off += 0x40) {
      if (elf->Find(off, &index, &offset)) (void)elf->Name(index);
      (void)elf->FileOffsetToVaddr(off, &v);
    }
    for (SymbolIndex i; i.index() < elf->size(); ++i) (void)elf->RawName(i);
  } catch (const Error&) {
    // "no symbols" is a fine answer for a broken file
  }
}

TEST(ElfSymbols, TruncatedFilesNeverCrash) {
  std::string image = Elf64({{"a", 0x1000, 0x10}, {"b", 0x1010, 0}});
  for (size_t n = 0; n <= image.size(); ++n) Exercise(std::string_view(image).substr(0, n));
  std::string self = ReadAll("/proc/self/exe");
  ASSERT_GT(self.size(), 1000u);
  for (size_t n = 0; n < self.size(); n += 1 + n / 16)
    Exercise(std::string_view(self).substr(0, n));
  // A truncated copy on disk: Load finds no usable table (or a partial one), never crashes.
  TempFile half(self.substr(0, self.size() / 2));
  try {
    auto elf = ElfSymbols::Load(half.path(), {});
    SymbolIndex index;
    uint64_t offset;
    (void)elf->Find(0x1000, &index, &offset);
  } catch (const Error&) {
  }
}

TEST(ElfSymbols, CorruptBytesNeverCrash) {
  std::string base = Elf64({{"a", 0x1000, 0x10}, {"b", 0x1010, 0}, {"_Z3foov", 0x1020, 8}});
  std::mt19937 rng(12345);
  for (int round = 0; round < 3000; ++round) {
    std::string image = base;
    int flips = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < flips; ++i) {
      // Headers and tables sit outside the text area: aim there most of the time.
      size_t at = rng() % 4 == 0
                      ? rng() % image.size()
                      : (rng() % 2 ? rng() % 64 : 0x2000 + rng() % (image.size() - 0x2000));
      image[at] = static_cast<char>(rng());
    }
    Exercise(image);
  }
}

TEST(ElfSymbols, NotElf) {
  EXPECT_THROW(ElfSymbols::FromImage("", "empty"), Error);
  EXPECT_THROW(ElfSymbols::FromImage("#!/bin/sh\necho hi\n", "script"), Error);
  EXPECT_THROW(ElfSymbols::Load("/nonexistent/pf/binary", {}), Error);
}

// ---------------------------------------------------------------------------------------------
// Real files of the machine

TEST(ElfSymbols, LibcExportedFunction) {
  // Where this process's libc has `write`: its file offset from the runtime address (asked
  // of libc itself: a sanitizer's interceptor is the default `write`).
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  if (libc == nullptr) GTEST_SKIP() << "no libc.so.6";
  void* fn = dlsym(libc, "write");
  dlclose(libc);
  ASSERT_NE(fn, nullptr);
  Dl_info info;
  ASSERT_NE(dladdr(fn, &info), 0);
  std::string path = info.dli_fname;
  if (path.find("libc.so") == std::string::npos) GTEST_SKIP() << "write is not in libc: " << path;

  auto elf = ElfSymbols::Load(path, {});
  uint64_t vaddr = reinterpret_cast<uintptr_t>(fn) - reinterpret_cast<uintptr_t>(info.dli_fbase);
  uint64_t off = 0;
  ASSERT_TRUE(elf->VaddrToFileOffset(vaddr, &off));
  SymbolIndex index;
  uint64_t offset;
  ASSERT_TRUE(elf->Find(off, &index, &offset));
  EXPECT_EQ(offset, 0u);
  // With libc6-dbg (Debian) the debug file's local alias wins, as in perf script.
  const std::vector<std::string> aliases = {"__GI___libc_write", "__libc_write", "write",
                                            "__write"};
  EXPECT_NE(std::find(aliases.begin(), aliases.end(), elf->Name(index)), aliases.end())
      << elf->Name(index);
  SymbolIndex index5;
  ASSERT_TRUE(elf->Find(off + 5, &index5, &offset));
  EXPECT_EQ(index5, index);
  EXPECT_EQ(offset, 5u);
  EXPECT_FALSE(elf->build_id().empty());

  // Through the front door, with the same answer.
  Symbolizer symbolizer({});
  Symbol s = symbolizer.Lookup(path, "", off + 5, 0);
  ASSERT_TRUE(s.found);
  EXPECT_EQ(s.name, elf->Name(index));
  EXPECT_EQ(s.offset, 5u);
  // A recorded build-id that is not the file's: perf refuses the file.
  Symbol wrong = symbolizer.Lookup(path, std::string(40, 'a'), off, 0);
  EXPECT_FALSE(wrong.found);
}

// Two loads of one binary agree on everything a caller can ask: names, bounds, identity, and
// the symbol found at every symbol's first, last and next byte and at points between.
void ExpectSameSymbols(const ElfSymbols& a, const ElfSymbols& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.build_id(), b.build_id());
  EXPECT_EQ(ElfSymbolsTestPeer::Debuglink(a), ElfSymbolsTestPeer::Debuglink(b));
  EXPECT_EQ(ElfSymbolsTestPeer::SymbolsPath(a), ElfSymbolsTestPeer::SymbolsPath(b));
  std::vector<uint64_t> probes;
  for (SymbolIndex i; i.index() < a.size(); ++i) {
    ASSERT_EQ(a.RawName(i), b.RawName(i)) << i.value;
    ASSERT_EQ(a.Name(i), b.Name(i)) << i.value;
    ASSERT_EQ(a.Start(i), b.Start(i)) << i.value;
    ASSERT_EQ(a.End(i), b.End(i)) << i.value;
    for (uint64_t p : {a.Start(i), a.End(i) - 1, a.End(i), (a.Start(i) + a.End(i)) / 2})
      probes.push_back(p);
  }
  for (uint64_t p : probes) {
    SymbolIndex ia, ib;
    uint64_t oa = 0, ob = 0;
    bool fa = a.Find(p, &ia, &oa), fb = b.Find(p, &ib, &ob);
    ASSERT_EQ(fa, fb) << std::hex << p;
    if (fa) {
      ASSERT_EQ(ia.value, ib.value) << std::hex << p;
      ASSERT_EQ(oa, ob) << std::hex << p;
    }
  }
  for (uint64_t off : {0x0ull, 0x1000ull, 0x20000ull}) {
    uint64_t va = 0, vb = 0;
    EXPECT_EQ(a.FileOffsetToVaddr(off, &va), b.FileOffsetToVaddr(off, &vb));
    EXPECT_EQ(va, vb);
  }
}

// Loads read through the cache on disk answer as a fresh read does; an entry is used only
// while the binary and every file the search looked at are unchanged, and one whose bytes are
// wrong (however they passed the checksum) is never trusted.
TEST(ElfSymbols, CachedTablesAnswerAsFreshOnes) {
  test::ScopedCacheDir scoped;
  ASSERT_TRUE(scoped.ok());
  // glibc (with libc6-dbg: its debug file's symbols, whose overlaps need perf's tree) and a
  // program of the tests'.
  std::vector<std::string> binaries = {std::string(PF_PROGRAMS_DIR) + "/inline_cxx_nodebug"};
  if (void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD)) {
    link_map* map = nullptr;
    if (dlinfo(libc, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name[0] == '/')
      binaries.push_back(map->l_name);
    dlclose(libc);
  }
  for (const std::string& path : binaries) {
    SCOPED_TRACE(path);
    setenv("PF_CACHE_DIR", "", 1);
    auto fresh = ElfSymbols::Load(path, {});
    EXPECT_FALSE(ElfSymbolsTestPeer::FromCache(*fresh));
    setenv("PF_CACHE_DIR", scoped.cache().c_str(), 1);
    auto stored = ElfSymbols::Load(path, {});
    EXPECT_FALSE(ElfSymbolsTestPeer::FromCache(*stored));
    auto cached = ElfSymbols::Load(path, {});
    EXPECT_TRUE(ElfSymbolsTestPeer::FromCache(*cached));
    ExpectSameSymbols(*fresh, *cached);
    // Other options: an entry of their own.
    ElfLoadOptions raw;
    raw.demangle = false;
    EXPECT_FALSE(ElfSymbolsTestPeer::FromCache(*ElfSymbols::Load(path, raw)));
    EXPECT_TRUE(ElfSymbolsTestPeer::FromCache(*ElfSymbols::Load(path, raw)));
  }

  // A binary under a --symfs root, so that a debug file can appear where perf looks.
  const std::string root = scoped.dir() + "/root";
  std::filesystem::create_directories(root + "/usr/lib/debug");
  const std::string prog = root + "/prog";
  std::filesystem::copy_file(binaries[0], prog);
  ElfLoadOptions opt;
  opt.symfs = root;
  EXPECT_FALSE(ElfSymbolsTestPeer::FromCache(*ElfSymbols::Load("/prog", opt)));
  auto before = ElfSymbols::Load("/prog", opt);
  EXPECT_TRUE(ElfSymbolsTestPeer::FromCache(*before));
  EXPECT_EQ(ElfSymbolsTestPeer::SymbolsPath(*before), prog);
  // A debug file appears (/usr/lib/debug/PATH.debug comes before the binary): not answered
  // from the entry, and read from the new file.
  std::filesystem::copy_file(binaries[0], root + "/usr/lib/debug/prog.debug");
  auto after = ElfSymbols::Load("/prog", opt);
  EXPECT_FALSE(ElfSymbolsTestPeer::FromCache(*after));
  EXPECT_EQ(ElfSymbolsTestPeer::SymbolsPath(*after), root + "/usr/lib/debug/prog.debug");
  EXPECT_TRUE(ElfSymbolsTestPeer::FromCache(*ElfSymbols::Load("/prog", opt)));
  // It goes again: the binary's own table once more.
  std::filesystem::remove(root + "/usr/lib/debug/prog.debug");
  auto gone = ElfSymbols::Load("/prog", opt);
  EXPECT_FALSE(ElfSymbolsTestPeer::FromCache(*gone));
  EXPECT_EQ(ElfSymbolsTestPeer::SymbolsPath(*gone), prog);
  // The binary changes (a new modification time): not answered from the entry.
  std::filesystem::last_write_time(prog, std::filesystem::last_write_time(prog) +
                                             std::chrono::seconds(5));
  EXPECT_FALSE(ElfSymbolsTestPeer::FromCache(*ElfSymbols::Load("/prog", opt)));
  EXPECT_TRUE(ElfSymbolsTestPeer::FromCache(*ElfSymbols::Load("/prog", opt)));

  // Entries whose bytes are cut or changed but whose trailer was made to match them: never
  // a crash or a hang, and a fresh read unless the change left a well-formed table.
  test::ScopedCacheDir only;
  ASSERT_TRUE(only.ok());
  const std::string& path = binaries[0];
  auto reference = ElfSymbols::Load(path, {});
  ASSERT_EQ(only.Entries().size(), 1u);
  const std::string entry = only.Entries()[0];
  const std::string good = test::ReadFile(entry);
  ASSERT_GT(good.size(), 32u);
  const std::string payload = good.substr(0, good.size() - 32);
  const std::string trailer = good.substr(good.size() - 32);
  auto write_entry = [&](const std::string& bytes) {
    std::string t = trailer;
    uint64_t size = bytes.size(), sum = XXH3_64bits(bytes.data(), bytes.size());
    std::memcpy(t.data() + 8, &size, 8);
    std::memcpy(t.data() + 16, &sum, 8);
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes << t;
  };
  write_entry(payload);
  EXPECT_TRUE(ElfSymbolsTestPeer::FromCache(*ElfSymbols::Load(path, {})));
  std::mt19937 rng(7);
  int trusted = 0;
  for (int round = 0; round < 300; ++round) {
    std::string bytes = payload;
    if (round % 3 == 0) {
      bytes.resize(rng() % payload.size());
    } else {
      for (int k = 0; k <= round % 4; ++k)
        bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
    }
    write_entry(bytes);
    auto loaded = ElfSymbols::Load(path, {});
    if (ElfSymbolsTestPeer::FromCache(*loaded)) {
      ++trusted;  // a byte of a name or an address changed: still a well-formed table
      EXPECT_EQ(loaded->size(), reference->size());
    } else {
      ExpectSameSymbols(*loaded, *reference);
    }
  }
  EXPECT_LT(trusted, 300);
}

TEST(ElfSymbols, StrippedBinaryLoads) {
  for (const char* path : {"/usr/bin/true", "/bin/true"}) {
    if (access(path, R_OK) != 0) continue;
    auto elf = ElfSymbols::Load(path, {});
    EXPECT_FALSE(elf->build_id().empty());
    uint64_t v;
    EXPECT_TRUE(elf->FileOffsetToVaddr(0x1000, &v));
    return;
  }
  GTEST_SKIP() << "no /usr/bin/true";
}

TEST(Symbolizer, Vdso) {
  uintptr_t ehdr = getauxval(AT_SYSINFO_EHDR);
  if (ehdr == 0) GTEST_SKIP() << "no vdso";
  // The vdso's clock_gettime, found in this process's image.
  std::string image;
  {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      if (line.find("[vdso]") == std::string::npos) continue;
      unsigned long lo, hi;
      ASSERT_EQ(std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi), 2);
      image.assign(reinterpret_cast<const char*>(lo), hi - lo);
    }
  }
  ASSERT_FALSE(image.empty());
  auto vdso = ElfSymbols::FromImage(image, "[vdso]");
  uint64_t start = 0;
  bool seen = false;
  for (SymbolIndex i; i.index() < vdso->size(); ++i) {
    if (vdso->Name(i) == "__vdso_clock_gettime") {
      start = vdso->Start(i);
      seen = true;
    }
  }
  if (!seen) GTEST_SKIP() << "no __vdso_clock_gettime in this vdso";
  Symbolizer symbolizer({});
  Symbol s = symbolizer.Lookup("[vdso]", "", start + 2, 0);
  ASSERT_TRUE(s.found);
  EXPECT_EQ(s.name, "__vdso_clock_gettime");  // not the weak alias clock_gettime
  EXPECT_EQ(s.offset, 2u);
}

TEST(Symbolizer, UnreadableFilesAreRememberedAsUnknown) {
  Symbolizer symbolizer({});
  for (int i = 0; i < 3; ++i) {
    Symbol s = symbolizer.Lookup("/nonexistent/pf/lib.so", "", 0x1234, 0);
    EXPECT_FALSE(s.found);
  }
  EXPECT_FALSE(symbolizer.Lookup("//anon", "", 0x1234, 0).found);
  EXPECT_TRUE(Symbolizer::UsesPerfMap("//anon"));
  EXPECT_TRUE(Symbolizer::UsesPerfMap("[heap]"));
  EXPECT_FALSE(Symbolizer::UsesPerfMap("/usr/lib/libc.so.6"));
  EXPECT_EQ(Symbolizer::PerfMapPath(42), "/tmp/perf-42.map");
}

// A process that has ended is in this file system (its /proc is gone: never looked up), as
// this one is.
TEST(Symbolizer, EndedProcessesAreInThisFileSystem) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  Symbolizer symbolizer({});
  EXPECT_TRUE(symbolizer.InThisFileSystem(static_cast<uint32_t>(child)));
  EXPECT_TRUE(symbolizer.InThisFileSystem(static_cast<uint32_t>(getpid())));
  EXPECT_TRUE(symbolizer.InThisFileSystem(0));
}

// Every file a recording names is opened without blocking and read only when it is a
// regular file: a FIFO there (no writer) reads as an unusable file at once, never a hang.
TEST(Symbolizer, FifosAndDirectoriesNamedByARecordingDoNotBlock) {
  test::ScopedCacheDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string fifo = dir.dir() + "/prog";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, dir.dir()}) {
    errno = 0;
    EXPECT_EQ(OpenRegularFile(path), -1);
    EXPECT_EQ(errno, EINVAL);
    std::string text;
    EXPECT_FALSE(ReadRegularFile(path, &text));
    EXPECT_THROW(elf::ElfImage::Open(path), Error);
    EXPECT_THROW(PerfMap::Load(path), Error);
    EXPECT_THROW(KernelSymbols::Load(path), Error);
    EXPECT_EQ(DwarfInfo::Open(path), nullptr);
    Symbolizer symbolizer({});
    EXPECT_FALSE(symbolizer.Lookup(path, "", 0x1234, 0).found);
  }
  TempFile regular("text");
  int fd = OpenRegularFile(regular.path());
  EXPECT_GE(fd, 0);
  if (fd >= 0) close(fd);
  std::string text;
  EXPECT_TRUE(ReadRegularFile(regular.path(), &text));
  EXPECT_EQ(text, "text");
}

TEST(Symbolizer, NamesStayValid) {
  Symbolizer symbolizer({});
  TempFile elf(Elf64({{"_ZN5outer5innerIiE3runEv", 0x1000, 0x40}, {"plain", 0x1040, 0x10}}));
  Symbol a = symbolizer.Lookup(elf.path(), "", 0x1001, 0);
  Symbol b = symbolizer.Lookup(elf.path(), "", 0x1041, 0);
  ASSERT_TRUE(a.found && b.found);
  for (int i = 0; i < 1000; ++i) symbolizer.Lookup(elf.path(), "", 0x1000 + i % 0x50, 0);
  EXPECT_EQ(a.name, "outer::inner<int>::run");
  EXPECT_EQ(b.name, "plain");
  EXPECT_EQ(symbolizer.Lookup(elf.path(), "", 0x1001, 0).name.data(), a.name.data());
}

TEST(Symbolizer, KernelAndJitFromFiles) {
  TempFile kallsyms(
      "ffffffff81000000 T _text\n"
      "ffffffff81000000 T startup_64\n"
      "ffffffff81000100 t do_work\n"
      "ffffffff81000200 T _etext\n");
  Symbolizer::Options options;
  options.kallsyms = kallsyms.path();
  Symbolizer symbolizer(options);
  EXPECT_FALSE(symbolizer.KernelSymbolsMissing());
  Symbol k = symbolizer.LookupKernel(0xffffffff81000105);
  ASSERT_TRUE(k.found);
  EXPECT_EQ(k.name, "do_work");
  EXPECT_EQ(k.offset, 5u);
  EXPECT_EQ(symbolizer.LookupKernel(0xffffffff81000000).name, "startup_64");

  // A pid no process has, so no namespace is involved.
  const uint32_t pid = 3999999999u;
  std::string map_path = Symbolizer::PerfMapPath(pid);
  {
    std::ofstream out(map_path);
    out << "7f0000001000 40 LazyCompile:*run /app.js:1\n";
  }
  Symbol j = symbolizer.LookupJit(pid, 0x7f0000001010);
  unlink(map_path.c_str());
  ASSERT_TRUE(j.found);
  EXPECT_EQ(j.name, "LazyCompile:*run /app.js:1");
  EXPECT_EQ(j.offset, 0x10u);

  Symbolizer::Options none;
  none.kallsyms = "/nonexistent/kallsyms";
  Symbolizer missing(none);
  EXPECT_TRUE(missing.KernelSymbolsMissing());
  EXPECT_FALSE(missing.LookupKernel(0xffffffff81000105).found);
}

// The test program of tests/programs, when the build says where it is.
TEST(Symbolizer, CallpathRoundTrip) {
  const char* path = std::getenv("PF_CALLPATH");
  if (path == nullptr || *path == '\0') GTEST_SKIP() << "PF_CALLPATH not set";
  auto elf = ElfSymbols::Load(path, {});
  bool seen = false;
  for (SymbolIndex i; i.index() < elf->size(); ++i) {
    if (elf->RawName(i) != "work_a") continue;
    seen = true;
    uint64_t start = elf->Start(i), vaddr = 0, back = 0;
    ASSERT_TRUE(elf->FileOffsetToVaddr(start, &vaddr));
    ASSERT_TRUE(elf->VaddrToFileOffset(vaddr, &back));
    EXPECT_EQ(back, start);
    Symbolizer symbolizer({});
    Symbol s = symbolizer.Lookup(path, elf->build_id(), start + 3, 0);
    ASSERT_TRUE(s.found);
    EXPECT_EQ(s.name, "work_a");
    EXPECT_EQ(s.offset, 3u);
  }
  EXPECT_TRUE(seen) << "no work_a in " << path;
}

// ---------------------------------------------------------------------------------------------
// Demangling as perf 6.1 prints names

TEST(Demangle, CxxWithoutParameters) {
  EXPECT_EQ(Demangle("_ZN5outer5inner3BoxIlLi2EE4workEl"), "outer::inner::Box<long, 2>::work");
  EXPECT_EQ(Demangle("_ZNK5outer5inner3BoxIlLi2EEclEl"), "outer::inner::Box<long, 2>::operator()");
  EXPECT_EQ(Demangle("_ZZ4mainENKUliE_clEi"), "main::{lambda(int)#1}::operator()");
  EXPECT_EQ(Demangle("_ZN12_GLOBAL__N_19anon_spinEj"), "(anonymous namespace)::anon_spin");
  EXPECT_EQ(Demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back");
  EXPECT_EQ(Demangle("_ZN3foo3barIiEEvT_"), "foo::bar<int>");  // no return type
  EXPECT_EQ(Demangle("_ZN3FooC2Ev"), "Foo::Foo");
  EXPECT_EQ(Demangle("_ZN3FooD0Ev"), "Foo::~Foo");
}

TEST(Demangle, ClonesVersionsAndSpecialNames) {
  EXPECT_EQ(Demangle("_ZL8clone_mejj.constprop.0"), "clone_me");
  EXPECT_EQ(Demangle("_Z9sort_workv.cold"), "sort_work");
  EXPECT_EQ(Demangle("_Znwm@GLIBCXX_3.4"), "operator new");
  EXPECT_EQ(Demangle("_ZTV3Foo"), "vtable for Foo");
  EXPECT_EQ(Demangle("_ZThn8_N3Foo3barEv"), "non-virtual thunk to Foo::bar()");
}

TEST(Demangle, Rust) {
  EXPECT_EQ(Demangle("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
  EXPECT_EQ(Demangle("_ZN4main4spin17h3f5e5e6a8b6a4e50E"), "main::spin");
  EXPECT_EQ(Demangle("_RNvCs1234_7mycrate4main"), "mycrate::main");
  EXPECT_EQ(Demangle("_RINvCs32gj3y4fnmh_4main4spinhEB2_"), "main::spin::<u8>");
}

TEST(Demangle, OtherNamesUnchanged) {
  EXPECT_EQ(Demangle("main"), "main");
  EXPECT_EQ(Demangle("unlink_chunk.constprop.0"), "unlink_chunk.constprop.0");
  EXPECT_EQ(Demangle("cfree@GLIBC_2.2.5"), "cfree@GLIBC_2.2.5");
  EXPECT_EQ(Demangle("_GLOBAL__sub_I_main"), "_GLOBAL__sub_I_main");
  EXPECT_EQ(Demangle("_Z"), "_Z");
  EXPECT_EQ(Demangle(""), "");
  EXPECT_EQ(Demangle(std::string_view("_Z3f\0oo", 7)), std::string_view("_Z3f\0oo", 7));
  EXPECT_EQ(Demangle("camlStdlib__list__map_123"), "Stdlib.list.map_123");
  EXPECT_EQ(Demangle("caml_alloc"), "caml_alloc");
  // Old GNU, Ada and D manglings: not in cplus_demangle's default style either.
  EXPECT_EQ(Demangle("foo__3Bar"), "foo__3Bar");
  EXPECT_EQ(Demangle("__ct__3Foo"), "__ct__3Foo");
  EXPECT_EQ(Demangle("pkg__sub"), "pkg__sub");
  EXPECT_EQ(Demangle("_D3foo3barFZv"), "_D3foo3barFZv");
}

// Demangle skips cplus_demangle for names outside its prefixes: the answers are the same as
// asking it, on every symbol of this test binary, libstdc++ and the C library.
extern "C" char* cplus_demangle(const char* mangled, int options);
TEST(Demangle, PrefixShortcutAnswersAsLibiberty) {
  size_t checked = 0;
  for (const char* path : {"/proc/self/exe", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
                           "/lib/x86_64-linux-gnu/libc.so.6"}) {
    std::unique_ptr<elf::ElfImage> image;
    try {
      image = elf::ElfImage::Open(path);
    } catch (const Error&) {
      continue;
    }
    for (int table : {image->symtab(), image->dynsym()}) {
      if (table < 0) continue;
      const auto& sec = image->sections()[table];
      std::string_view syms = image->SectionData(sec);
      std::string_view strtab = image->SectionData(image->sections()[sec.link]);
      for (size_t i = 0; i < image->SymbolCount(sec); ++i) {
        uint32_t at = image->ReadSymbol(syms, i).name;
        if (at >= strtab.size()) continue;
        std::string name(strtab.substr(at, strtab.find('\0', at) - at));
        if (name.empty()) continue;
        char* slow = cplus_demangle(name.c_str(), 0);
        if (slow != nullptr) {
          // (Rust's hash and escapes are Demangle's own steps after libiberty's.)
          if (name.find("17h") == std::string::npos) {
            EXPECT_EQ(Demangle(name), slow) << name;
          }
          std::free(slow);
        } else if (name.rfind("caml", 0) != 0) {
          EXPECT_EQ(Demangle(name), name) << name;
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000u);
}

// ---------------------------------------------------------------------------------------------
// kallsyms

TEST(KernelSymbols, ParsesAndLooksUpLikePerf) {
  KernelSymbols k = KernelSymbols::Parse(
      "ffffffff81000000 T srso_alias_untrain_ret\n"
      "ffffffff81000000 T _stext\n"
      "ffffffff81000000 T _text\n"
      "ffffffff81000000 T __pi__text\n"
      "ffffffff81000100 t local_fn\n"
      "ffffffff81000200 W weak_fn\n"
      "ffffffff81000200 T strong_fn\n"
      "ffffffff81000300 D data_sym\n"
      "ffffffff81000400 R rodata_sym\n"
      "ffffffff81000500 A abs_sym\n"
      "ffffffff81000600 b bss_sym\n"
      "ffffffff81000800 t $x\n"
      "garbage line\n"
      "ffffffff81000900 T last_core\n"
      "ffffffffc0201000 t modfn\t[mymod]\n"
      "ffffffffc0201100 t modfn2\t[mymod]");
  KernelSymbols::Hit hit;
  ASSERT_TRUE(k.Lookup(0xffffffff81000000, &hit));
  EXPECT_EQ(hit.name, "__pi__text");  // the last alias: the one the extension reached
  ASSERT_TRUE(k.Lookup(0xffffffff81000105, &hit));
  EXPECT_EQ(hit.name, "local_fn");
  EXPECT_EQ(hit.offset, 5u);
  ASSERT_TRUE(k.Lookup(0xffffffff81000201, &hit));
  EXPECT_EQ(hit.name, "strong_fn");
  ASSERT_TRUE(k.Lookup(0xffffffff81000480, &hit));
  EXPECT_EQ(hit.name, "data_sym");  // R and A are not kept
  ASSERT_TRUE(k.Lookup(0xffffffff81000880, &hit));
  EXPECT_EQ(hit.name, "bss_sym");  // $x is not a symbol
  // The core kernel's last symbol before the modules ends a page (rounded) after it.
  ASSERT_TRUE(k.Lookup(0xffffffff81001fff, &hit));
  EXPECT_EQ(hit.name, "last_core");
  EXPECT_FALSE(k.Lookup(0xffffffff81002000, &hit));
  ASSERT_TRUE(k.Lookup(0xffffffffc0201000, &hit));
  EXPECT_EQ(hit.name, "modfn");
  EXPECT_EQ(hit.module, "mymod");
  // The very last symbol reaches the page after the one it starts in.
  ASSERT_TRUE(k.Lookup(0xffffffffc0202fff, &hit));
  EXPECT_EQ(hit.name, "modfn2");
  EXPECT_FALSE(k.Lookup(0xffffffffc0203000, &hit));
  EXPECT_FALSE(k.Lookup(0x1000, &hit));
  uint64_t text = 0;
  ASSERT_TRUE(k.AddressOf("_text", &text));
  EXPECT_EQ(text, 0xffffffff81000000u);
  EXPECT_FALSE(KernelSymbolsTestPeer::Restricted(k));
}

TEST(KernelSymbols, RestrictedAndEmpty) {
  KernelSymbols r = KernelSymbols::Parse(
      "0000000000000000 T _text\n0000000000000000 t foo\n0000000000000000 T bar\n");
  EXPECT_TRUE(KernelSymbolsTestPeer::Restricted(r));
  EXPECT_TRUE(r.empty());
  KernelSymbols::Hit hit;
  EXPECT_FALSE(r.Lookup(0xffffffff81000000, &hit));
  KernelSymbols e = KernelSymbols::Parse("");
  EXPECT_TRUE(e.empty());
  EXPECT_FALSE(KernelSymbolsTestPeer::Restricted(e));
}

// The lazy lookup (binary search of the core kernel's lines) answers as the whole parse
// does, at every line's address and around it.
namespace {
void ExpectLazyAsEager(const KernelSymbols& lazy, const KernelSymbols& eager,
                       std::string_view text, size_t stride = 1) {
  std::vector<uint64_t> probes = {0, 1, ~uint64_t{0}};
  size_t pos = 0;
  for (size_t line = 0; pos < text.size(); ++line) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    if (line % stride != 0) {
      pos = nl + 1;
      continue;
    }
    uint64_t a = std::strtoull(std::string(text.substr(pos, 16)).c_str(), nullptr, 16);
    for (uint64_t d : {uint64_t{0}, uint64_t{1}, uint64_t{4095}, uint64_t{4096}})
      probes.insert(probes.end(), {a + d, a - d});
    uint64_t page_after = ((a + 4096) + 4095) & ~uint64_t{4095};
    probes.insert(probes.end(), {page_after - 1, page_after});
    pos = nl + 1;
  }
  EXPECT_EQ(lazy.empty(), eager.empty());
  EXPECT_EQ(KernelSymbolsTestPeer::Restricted(lazy), KernelSymbolsTestPeer::Restricted(eager));
  // Twice, the second time backwards: the lazy table's answers kept from the first pass
  // (its core symbols found) answer then.
  std::vector<uint64_t> backwards(probes.rbegin(), probes.rend());
  probes.insert(probes.end(), backwards.begin(), backwards.end());
  for (uint64_t ip : probes) {
    KernelSymbols::Hit a, b;
    bool found = lazy.Lookup(ip, &a);
    ASSERT_EQ(found, eager.Lookup(ip, &b)) << std::hex << ip;
    if (!found) continue;
    ASSERT_EQ(a.name, b.name) << std::hex << ip;
    ASSERT_EQ(a.module, b.module) << std::hex << ip;
    ASSERT_EQ(a.offset, b.offset) << std::hex << ip;
  }
}
}  // namespace

TEST(KernelSymbols, LazyLookupAnswersAsTheWholeParse) {
  const char* texts[] = {
      // sorted core, garbage, aliases at the end of the core, a module
      "ffffffff81000000 T _text\nffffffff81000000 t a\nzz\nffffffff81000010 R ro\n"
      "ffffffff81000020 T b\nffffffff81000020 W b2\nffffffff81000030 A abs\n"
      "ffffffffc0000000 t m1\t[mod]\nffffffffc0000100 t m0\t[mod]\n",
      // brackets in core names (perf takes them for modules' symbols): the whole parse
      "ffffffff81000000 T a\nffffffff81000100 T we[ird\nffffffff81000200 T b\n"
      "ffffffff81000300 t c\nffffffff81000300 t c[2]\nffffffff81000400 T d\n"
      "ffffffff81000500 t e[3]\nffffffff81000500 T e\nffffffff81000600 T f\n"
      "ffffffff81000700 T g[1]\nffffffff81000700 t g\nffffffff81000800 T h\n"
      "ffffffffc0000000 t m\t[mod]\n",
      // a core with no module after it; the last line has no newline
      "ffffffff81000000 T x\nffffffff81000100 t $d\nffffffff81000200 t y",
      // the core's last symbol followed by a non-module tab line: extended to it
      "ffffffff81000000 T x\nffffffff81000100 t y\nffffffff81009000 t z\tnot-a-module\n",
      // out of order core: parsed whole
      "ffffffff81000200 T late\nffffffff81000000 T early\nffffffff81000100 T mid\n"
      "ffffffff81000050 T back\n",
      // modules below the core: parsed whole
      "ffffffff81000000 T x\nffffffff81000100 t y\nffffffff80000000 t m\t[mod]\n",
      // kptr_restrict, nothing kept, nothing at all
      "0000000000000000 T _text\n0000000000000000 t foo\n",
      "ffffffff81000000 R ro\nffffffff81000100 A abs\n",
      "",
      "\n\n garbage\n",
  };
  for (const char* text : texts) {
    SCOPED_TRACE(text);
    ExpectLazyAsEager(KernelSymbols::Parse(text), KernelSymbols::ParseEagerly(text), text);
  }
}

// Random tables in kallsyms' shape: sorted core lines with aliases, every type, names with
// brackets or `$`, unparsable lines, then module lines in any order.
TEST(KernelSymbols, LazyLookupAnswersAsTheWholeParseOnRandomTables) {
  std::mt19937_64 rng(6);
  const char kTypes[] = "TtWwDdBbRrAaUu";
  for (int round = 0; round < 300; ++round) {
    std::string text;
    uint64_t address = 0xffffffff81000000u + (rng() % 4) * 0x1000;
    int lines = 1 + static_cast<int>(rng() % 40);
    char hex[32];
    for (int i = 0; i < lines; ++i) {
      if (rng() % 3 != 0) address += rng() % 3 == 0 ? 0x1800 : rng() % 0x80;
      if (rng() % 25 == 0) text += "not a line\n";
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(address));
      std::string name = rng() % 20 == 0 ? "$s" : "s";
      name += std::to_string(i);
      if (rng() % 15 == 0) name += "[x]";
      text += std::string(hex) + " " + kTypes[rng() % (sizeof kTypes - 1)] + " " + name + "\n";
    }
    int modules = static_cast<int>(rng() % 6);
    for (int i = 0; i < modules; ++i) {
      uint64_t m = (rng() % 8 == 0 ? address - rng() % 0x3000 : 0xffffffffc0000000u) +
                   rng() % 0x400;
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(m));
      text += std::string(hex) + " " + kTypes[rng() % 4] + " m" + std::to_string(i) +
              (rng() % 5 == 0 ? "\tplain\n" : "\t[mod]\n");
    }
    if (rng() % 2) text.pop_back();  // no newline at the end
    SCOPED_TRACE(text);
    ExpectLazyAsEager(KernelSymbols::Parse(text), KernelSymbols::ParseEagerly(text), text);
    if (HasFatalFailure()) return;
  }
}

TEST(KernelSymbols, ThisMachine) {
  if (access("/proc/kallsyms", R_OK) != 0) GTEST_SKIP() << "no /proc/kallsyms";
  KernelSymbols k = KernelSymbols::Load("/proc/kallsyms");
  if (KernelSymbolsTestPeer::Restricted(k)) {
    GTEST_SKIP() << "kptr_restrict hides kernel addresses";
  }
  uint64_t text = 0;
  ASSERT_TRUE(k.AddressOf("_text", &text));
  KernelSymbols::Hit hit;
  EXPECT_TRUE(k.Lookup(text + 1, &hit));
  // The lazy lookup against the whole parse on every line of this kernel's table.
  std::string all;
  {
    std::ifstream in("/proc/kallsyms");
    all.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // (Every line's address on a table of up to 16,000 lines; every 8th on today's kernels.)
  size_t lines = static_cast<size_t>(std::count(all.begin(), all.end(), '\n'));
  ExpectLazyAsEager(KernelSymbols::Parse(all), KernelSymbols::ParseEagerly(all), all,
                    lines / 16000 + 1);
}

// A kallsyms copy in a file (perf's build-id cache) keeps in the cache on disk where its core
// lines end, which otherwise costs a read of the whole text; an entry that does not fit the
// text is not believed, and a changed file gets an entry of its own.
TEST(KernelSymbols, FilesKeepWhereTheirCoreEndsInTheCache) {
  test::ScopedCacheDir scoped;
  ASSERT_TRUE(scoped.ok());
  auto kallsyms = [](int modules) {
    std::string text;
    for (int i = 0; i < 3000; ++i) {
      char line[64];
      std::snprintf(line, sizeof line, "ffffffff81%06x %c core_%d\n", i * 64, "TtDW"[i % 4], i);
      text += line;
    }
    for (int i = 0; i < modules; ++i) {
      char line[64];
      std::snprintf(line, sizeof line, "ffffffffc0%06x t mod_%d\t[m%d]\n", i * 32, i, i % 3);
      text += line;
    }
    return text;
  };
  const std::string path = scoped.dir() + "/kallsyms";
  auto write = [&](const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  };
  std::string text = kallsyms(40);
  write(text);
  ExpectLazyAsEager(KernelSymbols::Load(path), KernelSymbols::ParseEagerly(text), text);
  std::vector<std::string> entries = scoped.Entries();
  ASSERT_EQ(entries.size(), 1u);
  const std::string name = std::filesystem::path(entries[0]).stem().string();
  EXPECT_EQ(name[0], 'k');
  ExpectLazyAsEager(KernelSymbols::Load(path), KernelSymbols::ParseEagerly(text), text);
  EXPECT_EQ(scoped.Entries().size(), 1u);

  // Entries whose answer does not fit the text (a line's middle, a core line, a module
  // line after the first): not believed, and written again.
  auto stored = [&] {
    std::ifstream in(entries[0], std::ios::binary);
    uint64_t kept[2] = {0, 0};
    in.read(reinterpret_cast<char*>(kept), sizeof kept);
    return std::make_pair(kept[0], kept[1]);
  };
  const uint64_t core_end = text.rfind('\n', text.find('\t')) + 1;
  EXPECT_EQ(stored(), std::make_pair(uint64_t{text.size()}, core_end));
  for (uint64_t wrong : {uint64_t{5}, uint64_t{0}, uint64_t{text.find('\t') + 40},
                         uint64_t{text.size() + 1}}) {
    SCOPED_TRACE(wrong);
    const uint64_t forged[2] = {text.size(), wrong};
    ASSERT_TRUE(StoreCachedImage(scoped.cache(), name,
                                 std::string_view(reinterpret_cast<const char*>(forged),
                                                  sizeof forged)));
    ExpectLazyAsEager(KernelSymbols::Load(path), KernelSymbols::ParseEagerly(text), text);
    EXPECT_EQ(stored(), std::make_pair(uint64_t{text.size()}, core_end));
  }

  // The file changed: its own entry.
  text = kallsyms(7);
  write(text);
  ExpectLazyAsEager(KernelSymbols::Load(path), KernelSymbols::ParseEagerly(text), text);
  EXPECT_EQ(scoped.Entries().size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// perf maps

TEST(PerfMap, ParsesWithPerfsQuirks) {
  auto map = PerfMap::Parse(
      "7f1000000000 100 jit_one\n"
      "7f1000000100 80 _ZN3foo3barEv\n"  // not demangled
      "0x7f1000000200 0x40 with_0x\n"    // strtoull accepts 0x
      "7f1000000300 0 zero_size\n"       // matches its own address only
      "7f1000000400 10 ab\n"             // names under 3 characters are skipped
      " 7f1000000800 40  spaced name\n"  // one separator; the rest is the name
      "bogus\n"
      "7f1000000a00 100 first\n"
      "7f1000000a00 100 second\n"            // same start: perf's tree decides (first)
      "7f1000000c00 40 no_newline_at_end");  // perf drops the last byte of every line
  std::string_view name;
  uint64_t offset;
  ASSERT_TRUE(map->Lookup(0x7f1000000010, &name, &offset));
  EXPECT_EQ(name, "jit_one");
  EXPECT_EQ(offset, 0x10u);
  ASSERT_TRUE(map->Lookup(0x7f1000000100, &name, &offset));
  EXPECT_EQ(name, "_ZN3foo3barEv");
  ASSERT_TRUE(map->Lookup(0x7f100000023f, &name, &offset));
  EXPECT_EQ(name, "with_0x");
  EXPECT_FALSE(map->Lookup(0x7f1000000240, &name, &offset));
  ASSERT_TRUE(map->Lookup(0x7f1000000300, &name, &offset, 0x7f1000000000));
  EXPECT_EQ(name, "zero_size");
  EXPECT_EQ(offset, uint64_t{0} - 0x7f1000000000u);  // perf's offset for it
  EXPECT_FALSE(map->Lookup(0x7f1000000301, &name, &offset));
  EXPECT_FALSE(map->Lookup(0x7f1000000400, &name, &offset));
  ASSERT_TRUE(map->Lookup(0x7f1000000800, &name, &offset));
  EXPECT_EQ(name, " spaced name");
  ASSERT_TRUE(map->Lookup(0x7f1000000a00, &name, &offset));
  EXPECT_EQ(name, "first");  // checked with perf script on this very text
  ASSERT_TRUE(map->Lookup(0x7f1000000c00, &name, &offset));
  EXPECT_EQ(name, "no_newline_at_en");
}

TEST(PerfMap, GarbageNeverCrashes) {
  std::mt19937 rng(99);
  const std::string alphabet = "0123456789abcdefx \t\n-+Zz";
  for (int round = 0; round < 500; ++round) {
    std::string text;
    size_t n = rng() % 400;
    for (size_t i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
    auto map = PerfMap::Parse(text);
    std::string_view name;
    uint64_t offset;
    for (int i = 0; i < 20; ++i) (void)map->Lookup(rng() % 0x1000, &name, &offset);
  }
}

}  // namespace
}  // namespace pf

#include "symbolize/embedded.h"

namespace pf {
namespace {

TEST(EmbeddedSymbols, RoundTripAndNotes) {
  EmbeddedSymbols e;
  e.Add("/bin/prog", "abcd", 0x1000, 0x20, "main");
  e.Add("/bin/prog", "abcd", 0x1000, 0x40, "main");  // widened by a later address
  e.Add("/lib/libc.so.6", "", 0x2000, 8, "write");
  e.AddKernel(0xffffffff81000000ULL, 0x100, "do_syscall_64", "");
  e.AddKernel(0xffffffffc0000000ULL, 0x10, "nf_hook", "nf_conntrack");
  uint64_t start = 0;
  const EmbeddedSymbols::Range* r = e.Find("/bin/prog", 0x103f, &start);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->name, "main");
  EXPECT_EQ(start, 0x1000u);
  EXPECT_EQ(e.Find("/bin/prog", 0x1040, &start), nullptr);
  EXPECT_EQ(e.Find("/bin/other", 0x1000, &start), nullptr);
  std::string bytes = e.Encode();
  EmbeddedSymbols d;
  ASSERT_TRUE(d.Decode({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}));
  ASSERT_NE(d.FindKernel(0xffffffffc000000fULL, &start), nullptr);
  EXPECT_EQ(d.FindKernel(0xffffffffc000000fULL, &start)->module, "nf_conntrack");
  EXPECT_EQ(d.Encode(), bytes);
  // The notes pf-record writes rebuild the same table.
  EmbeddedSymbols from_notes;
  for (const EmbeddedSymbols::Note& n : e.ToNotes()) {
    EXPECT_TRUE(from_notes.AddNote(n.addr, n.len, n.name)) << n.name;
    EXPECT_LT(n.addr, 1ULL << 63) << "a note's address must be outside kernel maps";
  }
  EXPECT_EQ(from_notes.Encode(), e.Encode());
  EXPECT_FALSE(from_notes.AddNote(0, 0, "not a pf note"));
  EXPECT_FALSE(from_notes.AddNote(0x10, 4, "pf-sym 99 orphan"));
  // Corrupt input adds nothing.
  EmbeddedSymbols bad;
  std::string cut = bytes.substr(0, bytes.size() - 3);
  EXPECT_FALSE(bad.Decode({reinterpret_cast<const uint8_t*>(cut.data()), cut.size()}));
  EXPECT_TRUE(bad.empty());
}

}  // namespace
}  // namespace pf
