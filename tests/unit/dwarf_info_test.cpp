// DwarfInfo: inline chains and lines from DWARF. The CU index is built by a walk that reads
// .debug_info itself, entering a function when one of its addresses is asked for; libdw's DIE
// functions walking whole CUs are the oracle, on real binaries (the C++ test program in DWARF
// 5 and 4, unwind_prog, a C program with a nested function, and glibc's debug file when
// installed). Compressed
// debug sections (zlib, zstd) are decompressed by pf and must read as the plain ones, also when
// they come from the cache on disk.
#include "symbolize/dwarf_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "symbolize/addr2line_names.h"
#include "symbolize/dwarf_cache.h"
#include "elf/elf_image.h"
#include "test_util.h"

namespace pf {

// What only tests choose for a DwarfInfo or read of it (a friend: not in its interface).
struct DwarfInfoTestPeer {
  /// CUs indexed through libdw's DIE functions: the oracle of the fast walk.
  static std::unique_ptr<DwarfInfo> OpenWalkedByLibdw(const std::string& path) {
    return DwarfInfo::Open(path, {}, {.libdw_walk = true});
  }
  /// The largest compressed section inflated on a thread of its own from `bytes` on.
  static std::unique_ptr<DwarfInfo> OpenInflatingAside(const std::string& path, uint64_t bytes) {
    return DwarfInfo::Open(path, {}, {.inflate_aside_bytes = bytes});
  }
  static bool FromCache(const DwarfInfo& d) { return d.from_cache_; }
  static size_t Units(const DwarfInfo& d) { return d.units_.size(); }
  static size_t UnitsRestored(const DwarfInfo& d) { return d.units_restored_; }
  static size_t LibdwWalks(const DwarfInfo& d) { return d.libdw_walks_; }
  static size_t LibdwReads(const DwarfInfo& d) { return d.libdw_reads_; }
  static size_t LocationsRestored(const DwarfInfo& d) { return d.locations_restored_; }
  static int64_t ArangesUnitAt(DwarfInfo& d, uint64_t vaddr) { return d.ArangesUnitAt(vaddr); }
};

// What only tests read of an Addr2lineNames.
struct Addr2lineNamesTestPeer {
  /// Load found the index in the cache.
  static bool FromCache(const Addr2lineNames& n) { return n.from_cache_; }
  /// The name of `path`'s entry in the cache.
  static std::string CacheKey(const std::string& path) { return Addr2lineNames::CacheKey(path); }
};

namespace {

std::string Program(const std::string& name) { return std::string(PF_PROGRAMS_DIR) + "/" + name; }

struct TextRange {
  uint64_t lo = 0, hi = 0;
};

TextRange TextOf(const std::string& path) {
  auto image = elf::ElfImage::Open(path);
  int text = image->FindSection(".text");
  if (text < 0) return {};
  const elf::Section& s = image->sections()[static_cast<size_t>(text)];
  return {s.addr, s.addr + s.size};
}

bool DebugInfoCompressed(const std::string& path) {
  auto image = elf::ElfImage::Open(path);
  int i = image->FindSection(".debug_info");
  return i >= 0 && (image->sections()[static_cast<size_t>(i)].flags & SHF_COMPRESSED);
}

std::string Describe(const DwarfInfo::Location& loc) {
  std::string s = loc.srcline + " in " + loc.function + (loc.function_linkage ? " (linkage)" : "") +
                  " at " + std::to_string(loc.function_entry);
  for (size_t i = 0; i < loc.inlined.size(); ++i) {
    s += " | " + loc.inlined[i] + " @ " + (i < loc.call_sites.size() ? loc.call_sites[i] : "");
  }
  return s;
}

// Looks up every `step`th address of `a`'s .text in both and expects the same answers;
// returns how many addresses had inline frames.
size_t ExpectSameLookups(DwarfInfo& a, DwarfInfo& b, TextRange text, uint64_t step) {
  size_t with_inlines = 0, differing = 0;
  for (uint64_t addr = text.lo; addr < text.hi; addr += step) {
    std::string x = Describe(a.Lookup(addr)), y = Describe(b.Lookup(addr));
    if (x != y && ++differing <= 5) {
      ADD_FAILURE() << std::hex << addr << ":\n  " << x << "\n  " << y;
    }
    if (!a.Lookup(addr).inlined.empty()) ++with_inlines;
  }
  EXPECT_EQ(differing, 0u);
  return with_inlines;
}

void ExpectScanMatchesLibdw(const std::string& path, uint64_t step, size_t min_inlined) {
  SCOPED_TRACE(path);
  test::ScopedCacheDir scoped;  // empty: every CU is walked, none restored
  auto scan = DwarfInfo::Open(path);
  auto libdw = DwarfInfoTestPeer::OpenWalkedByLibdw(path);
  ASSERT_TRUE(scan && libdw);
  TextRange text = TextOf(path);
  ASSERT_LT(text.lo, text.hi);
  EXPECT_GE(ExpectSameLookups(*scan, *libdw, text, step), min_inlined);
  // Every CU was read by the fast walk (else this compared libdw with itself).
  EXPECT_GT(DwarfInfoTestPeer::Units(*scan), 0u);
  EXPECT_EQ(DwarfInfoTestPeer::LibdwWalks(*scan), 0u);
  EXPECT_EQ(DwarfInfoTestPeer::LibdwWalks(*libdw), DwarfInfoTestPeer::Units(*libdw));
  // Names and range lists too were read here.
  EXPECT_EQ(DwarfInfoTestPeer::LibdwReads(*scan), 0u);
  EXPECT_EQ(DwarfInfoTestPeer::UnitsRestored(*scan), 0u);
}

TEST(DwarfInfo, CuWalkMatchesLibdwOnCxxDwarf5) {
  ExpectScanMatchesLibdw(Program("inline_cxx"), 1, 500);
}

TEST(DwarfInfo, CuWalkMatchesLibdwOnCxxDwarf4) {
  ExpectScanMatchesLibdw(Program("inline_cxx_dwarf4"), 1, 500);
}

TEST(DwarfInfo, CuWalkMatchesLibdwOnC) { ExpectScanMatchesLibdw(Program("unwind_prog"), 1, 10); }

TEST(DwarfInfo, NestedFunctionsAreFound) {
  std::string path = Program("nested_c");
  ExpectScanMatchesLibdw(path, 1, 1);
  // The nested function's code, with `mix` inlined in it, is outside `outer`'s range: the
  // CU index (which does not enter functions) misses it, and the CU is walked whole.
  auto info = DwarfInfo::Open(path);
  TextRange text = TextOf(path);
  bool found = false;
  for (uint64_t addr = text.lo; addr < text.hi && !found; ++addr) {
    const DwarfInfo::Location& loc = info->Lookup(addr);
    found = loc.inlined.size() == 1 && loc.inlined[0] == "mix" &&
            loc.call_sites[0].rfind("nested_c.c:", 0) == 0;
  }
  EXPECT_TRUE(found) << "no address with mix inlined in the nested function";
}

TEST(DwarfInfo, CuWalkMatchesLibdwOnGlibc) {
  std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (access(libc.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << libc;
  std::string id = elf::ElfImage::Open(libc)->BuildId();
  std::string debug = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  if (id.size() < 3 || access(debug.c_str(), R_OK) != 0) {
    GTEST_SKIP() << "glibc's debug file is not installed (libc6-dbg)";
  }
  ExpectScanMatchesLibdw(debug, 97, 100);
}

// `path` opened without a cache (the answers to compare with); then `scoped`'s cache is the
// one used.
std::unique_ptr<DwarfInfo> OpenWithoutCache(const std::string& path,
                                            const test::ScopedCacheDir& scoped) {
  setenv("PF_CACHE_DIR", "", 1);
  auto info = DwarfInfo::Open(path);
  setenv("PF_CACHE_DIR", scoped.cache().c_str(), 1);
  return info;
}

// The cache's entries of one kind (the first letter of their names).
size_t EntriesOfKind(const test::ScopedCacheDir& scoped, char kind) {
  size_t n = 0;
  for (const std::string& e : scoped.Entries()) {
    n += std::filesystem::path(e).filename().string()[0] == kind;
  }
  return n;
}

// The CU indexes a DwarfInfo made are kept in the cache when it goes, and a later one takes
// them from there (no walk) and answers as a walked one, at every address of the C++ program
// and of the C one with a nested function (whose CU is indexed whole). A saved index restores
// into the same bytes; one whose layout is wrong is not taken, and a CU whose contents fail
// their checks is walked again.
TEST(DwarfInfo, CuIndexesKeptInTheCache) {
  for (const std::string name : {"inline_cxx", "nested_c"}) {
    SCOPED_TRACE(name);
    const std::string path = Program(name);
    const TextRange text = TextOf(path);
    test::ScopedCacheDir scoped;
    ASSERT_TRUE(scoped.ok());
    auto walked = OpenWithoutCache(path, scoped);
    ASSERT_TRUE(walked);
    auto index_entries = [&] { return EntriesOfKind(scoped, 'u'); };
    {
      auto first = DwarfInfo::Open(path);
      ExpectSameLookups(*first, *walked, text, 1);
      EXPECT_EQ(DwarfInfoTestPeer::UnitsRestored(*first), 0u);
      EXPECT_EQ(index_entries(), 0u);
    }
    EXPECT_EQ(index_entries(), 1u);
    auto second = DwarfInfo::Open(path);
    ExpectSameLookups(*second, *walked, text, 1);
    EXPECT_GT(DwarfInfoTestPeer::Units(*second), 0u);
    EXPECT_EQ(DwarfInfoTestPeer::UnitsRestored(*second), DwarfInfoTestPeer::Units(*second));
    const std::string saved = second->SavedIndex();
    auto restore = [&](const std::string& bytes, DwarfInfo& into) {
      auto copy = std::make_shared<std::string>(bytes);
      return into.RestoreIndex(std::shared_ptr<const char>(copy, copy->data()), *copy);
    };
    setenv("PF_CACHE_DIR", "", 1);
    {
      auto again = DwarfInfo::Open(path);
      ASSERT_TRUE(restore(saved, *again));
      EXPECT_EQ(again->SavedIndex(), saved);
      ExpectSameLookups(*again, *walked, text, 1);
      EXPECT_EQ(DwarfInfoTestPeer::UnitsRestored(*again), DwarfInfoTestPeer::Units(*again));
    }
    // The first function's DIE (after the magic, the count and one CU header) put at 0, out
    // of its CU: that CU is walked again.
    {
      std::string bad = saved;
      std::memset(bad.data() + 16 + 32 * (bad[8] & 0xff), 0, 8);
      auto again = DwarfInfo::Open(path);
      ASSERT_TRUE(restore(bad, *again));
      ExpectSameLookups(*again, *walked, text, 1);
      EXPECT_LT(DwarfInfoTestPeer::UnitsRestored(*again), DwarfInfoTestPeer::Units(*again));
    }
    // Cut, one byte more, a count too large, CUs out of order: not taken.
    {
      auto again = DwarfInfo::Open(path);
      EXPECT_FALSE(restore(saved.substr(0, saved.size() - 1), *again));
      EXPECT_FALSE(restore(saved + '\0', *again));
      std::string more = saved;
      more[8] = static_cast<char>(more[8] + 1);
      EXPECT_FALSE(restore(more, *again));
      EXPECT_FALSE(restore("", *again));
      ExpectSameLookups(*again, *walked, text, 1);
      EXPECT_EQ(DwarfInfoTestPeer::UnitsRestored(*again), 0u);
    }
    if (saved[8] >= 2) {
      std::string swapped = saved;
      std::swap_ranges(swapped.begin() + 16, swapped.begin() + 24, swapped.begin() + 48);
      auto again = DwarfInfo::Open(path);
      EXPECT_FALSE(restore(swapped, *again));
    }
  }
}

// The answers a run made are kept in the cache with those it restored, and a later run takes
// them instead of reading the DWARF; each is checked as it is taken, the whole set's layout
// when it is.
TEST(DwarfInfo, LocationsKeptInTheCache) {
  const DwarfInfo::Options keep{.keep_locations = true};
  for (const std::string name : {"inline_cxx", "nested_c"}) {
    SCOPED_TRACE(name);
    const std::string path = Program(name);
    const TextRange text = TextOf(path);
    const uint64_t all = text.hi - text.lo, half = all / 2;
    test::ScopedCacheDir scoped;
    ASSERT_TRUE(scoped.ok());
    auto walked = OpenWithoutCache(path, scoped);
    ASSERT_TRUE(walked);
    auto location_entries = [&] { return EntriesOfKind(scoped, 'l'); };
    {  // The first half of .text: none restored, all kept.
      auto first = DwarfInfo::Open(path, keep);
      ExpectSameLookups(*first, *walked, {text.lo, text.lo + half}, 1);
      EXPECT_EQ(DwarfInfoTestPeer::LocationsRestored(*first), 0u);
      EXPECT_EQ(location_entries(), 0u);
    }
    EXPECT_EQ(location_entries(), 1u);
    {  // All of it: the first half restored, the rest made, and all kept.
      auto second = DwarfInfo::Open(path, keep);
      ExpectSameLookups(*second, *walked, text, 1);
      EXPECT_EQ(DwarfInfoTestPeer::LocationsRestored(*second), half);
    }
    auto third = DwarfInfo::Open(path, keep);
    third->Prepare();
    ExpectSameLookups(*third, *walked, text, 1);
    EXPECT_EQ(DwarfInfoTestPeer::LocationsRestored(*third), all);
    EXPECT_EQ(DwarfInfoTestPeer::Units(*third), 0u) << "a CU was read for a restored answer";
    // Other options, other answers: not these.
    auto no_lines = DwarfInfo::Open(path, {.lines = false, .keep_locations = true});
    no_lines->Lookup(text.lo);
    EXPECT_EQ(DwarfInfoTestPeer::LocationsRestored(*no_lines), 0u);
    // Not kept: neither taken nor written.
    auto not_kept = DwarfInfo::Open(path);
    not_kept->Lookup(text.lo);
    EXPECT_EQ(DwarfInfoTestPeer::LocationsRestored(*not_kept), 0u);

    const std::string saved = third->SavedLocations();
    setenv("PF_CACHE_DIR", "", 1);
    auto restore = [&](const std::string& bytes, DwarfInfo& into) {
      auto copy = std::make_shared<std::string>(bytes);
      return into.RestoreLocations(std::shared_ptr<const char>(copy, copy->data()), *copy);
    };
    {
      auto again = DwarfInfo::Open(path, keep);
      ASSERT_TRUE(restore(saved, *again));
      EXPECT_EQ(again->SavedLocations(), saved);
      ExpectSameLookups(*again, *walked, text, 1);
      EXPECT_EQ(DwarfInfoTestPeer::LocationsRestored(*again), all);
    }
    // The first answer (after the magic, the count and the rows) made unreadable (its
    // linkage flag 2): that one is made again, the others taken.
    const size_t count = static_cast<unsigned char>(saved[8]) |
                         static_cast<size_t>(static_cast<unsigned char>(saved[9])) << 8 |
                         static_cast<size_t>(static_cast<unsigned char>(saved[10])) << 16;
    ASSERT_EQ(count, all);
    {
      std::string bad = saved;
      bad[16 + 16 * count] = 2;
      auto again = DwarfInfo::Open(path, keep);
      ASSERT_TRUE(restore(bad, *again));
      ExpectSameLookups(*again, *walked, text, 1);
      EXPECT_EQ(DwarfInfoTestPeer::LocationsRestored(*again), all - 1);
    }
    // Cut, one byte more, a count too large, addresses out of order: not taken.
    {
      auto again = DwarfInfo::Open(path, keep);
      EXPECT_FALSE(restore(saved.substr(0, saved.size() - 1), *again));
      EXPECT_FALSE(restore(saved + '\0', *again));
      std::string more = saved;
      more[8] = static_cast<char>(more[8] + 1);
      EXPECT_FALSE(restore(more, *again));
      std::string swapped = saved;
      std::swap_ranges(swapped.begin() + 16, swapped.begin() + 24, swapped.begin() + 32);
      EXPECT_FALSE(restore(swapped, *again));
      EXPECT_FALSE(restore("", *again));
      ExpectSameLookups(*again, *walked, text, 1);
      EXPECT_EQ(DwarfInfoTestPeer::LocationsRestored(*again), 0u);
    }
  }
}

// .debug_aranges is read by pf (libdw reads the header of every CU it lists first): each
// arange's edges and the addresses just outside them find the CU libdw finds.
void ExpectArangesAsLibdw(const std::string& path, size_t min_aranges) {
  SCOPED_TRACE(path);
  auto own = DwarfInfo::Open(path);
  auto libdw = DwarfInfoTestPeer::OpenWalkedByLibdw(path);
  ASSERT_TRUE(own && libdw);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Dwarf* dwarf = dwarf_begin(fd, DWARF_C_READ);
  ASSERT_NE(dwarf, nullptr);
  Dwarf_Aranges* aranges = nullptr;
  size_t count = 0;
  ASSERT_EQ(dwarf_getaranges(dwarf, &aranges, &count), 0);
  EXPECT_GE(count, min_aranges);
  size_t differing = 0, found = 0;
  for (size_t i = 0; i < count; ++i) {
    Dwarf_Addr start;
    Dwarf_Word length;
    Dwarf_Off die;
    ASSERT_EQ(dwarf_getarangeinfo(dwarf_onearange(aranges, i), &start, &length, &die), 0);
    for (uint64_t addr : {start - 1, start, start + length / 2, start + length - 1, start + length}) {
      Dwarf_Die cu;
      int64_t want = dwarf_addrdie(dwarf, addr, &cu) ? static_cast<int64_t>(dwarf_dieoffset(&cu)) : -1;
      int64_t got = DwarfInfoTestPeer::ArangesUnitAt(*own, addr);
      found += got >= 0;
      if (got != want && ++differing <= 5) {
        ADD_FAILURE() << std::hex << addr << ": " << got << " where libdw finds " << want;
      }
      EXPECT_EQ(DwarfInfoTestPeer::ArangesUnitAt(*libdw, addr), want);
    }
  }
  EXPECT_EQ(differing, 0u);
  EXPECT_GE(found, count);
  dwarf_end(dwarf);
  close(fd);
}

TEST(DwarfInfo, ArangesFindTheUnitsLibdwFinds) {
  ExpectArangesAsLibdw(Program("inline_cxx"), 2);
  ExpectArangesAsLibdw(Program("inline_cxx_dwarf4"), 2);
  ExpectArangesAsLibdw(Program("unwind_prog"), 1);
  std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (access(libc.c_str(), R_OK) != 0) return;
  std::string id = elf::ElfImage::Open(libc)->BuildId();
  std::string debug = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  if (id.size() > 2 && access(debug.c_str(), R_OK) == 0) ExpectArangesAsLibdw(debug, 2000);
}

TEST(DwarfInfo, KnowsNestedInlinesAndTheirCallSites) {
  auto info = DwarfInfo::Open(Program("inline_cxx"));
  ASSERT_TRUE(info);
  TextRange text = TextOf(Program("inline_cxx"));
  bool square_in_norm = false;
  for (uint64_t addr = text.lo; addr < text.hi && !square_in_norm; ++addr) {
    const DwarfInfo::Location& loc = info->Lookup(addr);
    for (size_t i = 0; i + 1 < loc.inlined.size(); ++i) {
      // Functions with internal linkage have no linkage name: DWARF names them unqualified.
      if (loc.inlined[i] == "Square" && loc.inlined[i + 1] == "Norm") {
        square_in_norm = true;
        EXPECT_EQ(loc.call_sites[i].rfind("inline_cxx.cpp:", 0), 0u) << Describe(loc);
        EXPECT_EQ(loc.srcline.rfind("inline_cxx.cpp:", 0), 0u) << Describe(loc);
      }
    }
  }
  EXPECT_TRUE(square_in_norm) << "no address with Square inlined in Norm";
}

TEST(DwarfInfo, WithoutLinesNamesStayTheSame) {
  auto with = DwarfInfo::Open(Program("inline_cxx"));
  auto without = DwarfInfo::Open(Program("inline_cxx"), {.lines = false});
  ASSERT_TRUE(with && without);
  TextRange text = TextOf(Program("inline_cxx"));
  size_t inlined = 0;
  for (uint64_t addr = text.lo; addr < text.hi; addr += 3) {
    const DwarfInfo::Location& a = with->Lookup(addr);
    const DwarfInfo::Location& b = without->Lookup(addr);
    EXPECT_EQ(a.inlined, b.inlined) << std::hex << addr;
    EXPECT_TRUE(b.srcline.empty());
    for (const std::string& site : b.call_sites) EXPECT_TRUE(site.empty());
    inlined += !b.inlined.empty();
  }
  EXPECT_GT(inlined, 100u);
}

// binutils takes a DW_AT_name for a linkage name in C-like languages only; Fortran 90 and
// later are named from the symbol table (MAIN__, not the program's name).
TEST(DwarfInfo, PlainNamesCountAsLinkageNamesWhereBinutilsSays) {
  for (int lang : std::initializer_list<int>{DW_LANG_C89, DW_LANG_C, DW_LANG_C99, DW_LANG_C11,
                                             DW_LANG_Fortran77, DW_LANG_Mips_Assembler}) {
    EXPECT_TRUE(BinutilsTakesPlainNames(lang)) << lang;
  }
  for (int lang : std::initializer_list<int>{DW_LANG_C_plus_plus, DW_LANG_C_plus_plus_14,
                                             DW_LANG_Rust, DW_LANG_Fortran90, DW_LANG_Fortran95,
                                             DW_LANG_Fortran03, DW_LANG_Fortran08, DW_LANG_Go, 0}) {
    EXPECT_FALSE(BinutilsTakesPlainNames(lang)) << lang;
  }
}

TEST(DwarfInfo, FortranProgramNameIsNoLinkageName) {
  if (std::system("gfortran --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no gfortran";
  char dir[] = "/tmp/pf-fortran-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string src = std::string(dir) + "/m.f90", bin = std::string(dir) + "/m";
  FILE* f = std::fopen(src.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      "program m\n  integer :: i\n  real(8) :: s = 0\n  do i = 1, 10\n"
      "    s = s + sin(real(i, 8))\n  end do\n  print *, s\nend program\n",
      f);
  std::fclose(f);
  int rc = std::system(("gfortran -std=f2008 -O2 -g -o " + bin + " " + src).c_str());
  unlink(src.c_str());
  if (rc != 0) {
    rmdir(dir);
    GTEST_SKIP() << "gfortran failed";
  }
  auto image = elf::ElfImage::Open(bin);
  Addr2lineNames names(*image);
  auto dwarf = DwarfInfo::Open(bin);
  ASSERT_TRUE(dwarf);
  TextRange text = TextOf(bin);
  bool found = false;
  for (uint64_t addr = text.lo; addr < text.hi && !found; ++addr) {
    if (names.NameAt(addr) != "MAIN__") continue;
    const DwarfInfo::Location& loc = dwarf->Lookup(addr);
    EXPECT_EQ(loc.function, "m");
    EXPECT_FALSE(loc.function_linkage);
    found = true;
  }
  EXPECT_TRUE(found) << "no address in MAIN__";
  unlink(bin.c_str());
  rmdir(dir);
}

// Opens `variant` (the same code as `plain`, its DWARF stored differently) and `plain`, and
// expects the same answers for every address.
void ExpectReadAsThePlainOne(const std::string& variant, const std::string& plain) {
  SCOPED_TRACE(variant);
  auto a = DwarfInfo::Open(variant);
  auto b = DwarfInfo::Open(plain);
  ASSERT_TRUE(a && b);
  EXPECT_GE(ExpectSameLookups(*a, *b, TextOf(plain), 1), 500u);
}

TEST(DwarfInfo, ZlibCompressedSectionsReadAsPlainOnes) {
  std::string plain = Program("inline_cxx_dwarf4"), gz = Program("inline_cxx_gz");
  ASSERT_TRUE(DebugInfoCompressed(gz)) << gz << " was built without -gz";
  ASSERT_FALSE(DebugInfoCompressed(plain));
  ExpectReadAsThePlainOne(gz, plain);
}

// The largest compressed section inflated on a thread of its own (as glibc's .debug_info is)
// or with the others: read alike.
TEST(DwarfInfo, SectionsInflatedAsideReadAsPlainOnes) {
  test::ScopedCacheDir scoped;
  setenv("PF_CACHE_DIR", "", 1);  // no cache: each open inflates
  const std::string plain = Program("inline_cxx_dwarf4"), gz = Program("inline_cxx_gz");
  auto b = DwarfInfo::Open(plain);
  ASSERT_TRUE(b);
  for (uint64_t aside : {uint64_t{0}, uint64_t{1} << 40}) {
    SCOPED_TRACE(aside);
    auto a = DwarfInfoTestPeer::OpenInflatingAside(gz, aside);
    ASSERT_TRUE(a);
    EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*a));
    EXPECT_GE(ExpectSameLookups(*a, *b, TextOf(plain), 1), 500u);
  }
}

TEST(DwarfInfo, ZstdCompressedSectionsReadAsPlainOnes) {
  std::string zst = Program("inline_cxx_zstd");
  if (access(zst.c_str(), R_OK) != 0 || !DebugInfoCompressed(zst)) {
    GTEST_SKIP() << "objcopy here cannot compress with zstd";
  }
  ExpectReadAsThePlainOne(zst, Program("inline_cxx"));
}

// The inflated image of a compressed debug file goes to the cache on disk and later opens map
// it; an entry for another version of the file, or one that fails its checks, is not used.
TEST(DwarfInfo, InflatedSectionsAreCachedOnDisk) {
  test::ScopedCacheDir scoped;
  ASSERT_TRUE(scoped.ok());
  const std::string gz = scoped.dir() + "/inline_cxx_gz";
  std::filesystem::copy_file(Program("inline_cxx_gz"), gz);
  auto entries = [&] { return scoped.Entries(); };
  const std::string plain_path = Program("inline_cxx_dwarf4");
  auto plain = DwarfInfo::Open(plain_path);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*plain));
  EXPECT_TRUE(entries().empty()) << "an uncompressed file was cached";

  auto first = DwarfInfo::Open(gz);
  ASSERT_TRUE(first);
  EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*first));
  ASSERT_EQ(entries().size(), 1u);
  const std::string entry = entries()[0];
  auto second = DwarfInfo::Open(gz);
  ASSERT_TRUE(second);
  EXPECT_TRUE(DwarfInfoTestPeer::FromCache(*second));
  EXPECT_GE(ExpectSameLookups(*second, *plain, TextOf(plain_path), 1), 500u);
  // An entry used after a day is marked used again (the trim keeps it the longest).
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(48);
  std::filesystem::last_write_time(entry, old);
  EXPECT_TRUE(DwarfInfoTestPeer::FromCache(*DwarfInfo::Open(gz)));
  EXPECT_GT(std::filesystem::last_write_time(entry), old + std::chrono::hours(24));
  // Without line tables: an entry of its own.
  auto no_lines = DwarfInfo::Open(gz, {.lines = false});
  EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*no_lines));
  EXPECT_EQ(entries().size(), 2u);

  // A byte changed in the entry: not used, and written again.
  {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(100);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(100);
    f.write(&c, 1);
  }
  auto after_flip = DwarfInfo::Open(gz);
  EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*after_flip));
  EXPECT_GE(ExpectSameLookups(*after_flip, *plain, TextOf(plain_path), 1), 500u);
  EXPECT_TRUE(DwarfInfoTestPeer::FromCache(*DwarfInfo::Open(gz)));
  // A cut entry: not used.
  std::filesystem::resize_file(entry, std::filesystem::file_size(entry) - 1);
  EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*DwarfInfo::Open(gz)));
  EXPECT_TRUE(DwarfInfoTestPeer::FromCache(*DwarfInfo::Open(gz)));
  // The file changed (a new modification time): a new entry.
  std::filesystem::last_write_time(gz, std::filesystem::last_write_time(gz) +
                                           std::chrono::seconds(5));
  EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*DwarfInfo::Open(gz)));
  EXPECT_EQ(entries().size(), 3u);
  // A memory file (no name outlives it): not cached.
  {
    std::ifstream in(gz, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int fd = memfd_create("dwarf-cache-test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*DwarfInfo::Open(path)));
    EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*DwarfInfo::Open(path)));
    EXPECT_EQ(entries().size(), 3u);
    close(fd);
  }
  // PF_CACHE_DIR set empty: no cache.
  setenv("PF_CACHE_DIR", "", 1);
  EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*DwarfInfo::Open(gz)));
}

// An entry stored later is written by its own thread, which keeps the image alive until then;
// a DwarfInfo that stores later answers at once, and its entry serves the next open.
TEST(DwarfCache, StoresLaterOnAThreadOfTheirOwn) {
  test::ScopedCacheDir scoped;
  ASSERT_TRUE(scoped.ok());
  auto image = std::make_shared<std::string>(100000, 'i');
  std::weak_ptr<std::string> watch = image;
  StoreCachedImageLater(scoped.cache(), "later", image, *image);
  image.reset();
  FinishCacheStores();
  EXPECT_TRUE(watch.expired()) << "the store kept the image after it was written";
  size_t size = 0, mapped = 0;
  char* entry = MapCachedImage(scoped.cache(), "later", &size, &mapped);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(std::string_view(entry, size), std::string(100000, 'i'));
  munmap(entry, mapped);

  const std::string gz = scoped.dir() + "/inline_cxx_gz";
  std::filesystem::copy_file(Program("inline_cxx_gz"), gz);
  auto plain = DwarfInfo::Open(Program("inline_cxx_dwarf4"));
  ASSERT_TRUE(plain);
  {
    auto first = DwarfInfo::Open(gz, {.store_later = true});
    ASSERT_TRUE(first);
    EXPECT_FALSE(DwarfInfoTestPeer::FromCache(*first));
    EXPECT_GE(ExpectSameLookups(*first, *plain, TextOf(Program("inline_cxx_dwarf4")), 1), 500u);
  }  // (closed before its entry may be written)
  FinishCacheStores();
  auto second = DwarfInfo::Open(gz, {.store_later = true});
  EXPECT_TRUE(DwarfInfoTestPeer::FromCache(*second));
  EXPECT_GE(ExpectSameLookups(*second, *plain, TextOf(Program("inline_cxx_dwarf4")), 1), 500u);
}

// An entry's checksum covers all of it, or, as for a DWARF image, its first and last 64 KiB
// (the ELF header and section table): a byte changed there fails it. One changed between them
// is left to the readers, which bound every offset: mapping the whole of glibc's 7 MB image
// to check it cost more than the lookups that read it.
TEST(DwarfCache, ChecksumCoversWhatTheWriterAsked) {
  test::ScopedCacheDir scoped;
  ASSERT_TRUE(scoped.ok());
  const std::string path = scoped.cache() + "/dwarf/e.img";
  auto changed_at = [&](size_t size, size_t checked_head, size_t at) {
    std::string image(size, 'i');
    EXPECT_TRUE(StoreCachedImage(scoped.cache(), "e", image, checked_head));
    {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(at));
      f.put('j');
    }
    size_t image_size = 0, mapped = 0;
    char* entry = MapCachedImage(scoped.cache(), "e", &image_size, &mapped);
    if (entry) munmap(entry, mapped);
    return entry != nullptr;
  };
  const size_t large = 3 << 20, head = kDwarfImageCheckedHead, tail = 64 << 10;
  for (size_t at : {size_t{0}, large / 2, large - 1, large + 8 /* the trailer's size */}) {
    EXPECT_FALSE(changed_at(large, kWholeEntry, at)) << at;
  }
  for (size_t at : {size_t{0}, head - 1, large - tail, large - 1, large + 8, large + 24}) {
    EXPECT_FALSE(changed_at(large, head, at)) << at;
  }
  for (size_t at : {head, large / 2, large - tail - 1}) {
    EXPECT_TRUE(changed_at(large, head, at)) << at;
  }
  // An image no larger than what is checked is checked whole.
  EXPECT_FALSE(changed_at(head + tail, head, head + 1));
}

// The cache keeps the most recently used entries within its size, and clears temporary files
// that a killed run left.
TEST(DwarfCache, TrimKeepsTheMostRecentlyUsedEntries) {
  char tmpl[] = "/tmp/pf-dwarf-trim-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::filesystem::create_directories(dir + "/dwarf");
  auto make = [&](const std::string& name, size_t size, int age_hours) {
    std::string path = dir + "/dwarf/" + name;
    std::ofstream(path) << std::string(size, 'x');
    std::filesystem::last_write_time(
        path, std::filesystem::file_time_type::clock::now() - std::chrono::hours(age_hours));
  };
  make("a.img", 1000, 30);
  make("b.img", 1000, 20);
  make("c.img", 1000, 10);
  make("d.img.k3J9x2", 500, 2);   // a temporary file, old
  make("e.img.Q81zzz", 500, 0);   // one being written now
  TrimCache(dir, 2500);
  auto there = [&](const std::string& name) {
    return std::filesystem::exists(dir + "/dwarf/" + name);
  };
  EXPECT_FALSE(there("a.img"));
  EXPECT_TRUE(there("b.img"));
  EXPECT_TRUE(there("c.img"));
  EXPECT_FALSE(there("d.img.k3J9x2"));
  EXPECT_TRUE(there("e.img.Q81zzz"));
  TrimCache(dir, 1000);
  EXPECT_FALSE(there("b.img"));
  EXPECT_TRUE(there("c.img"));
  std::filesystem::remove_all(dir);
}

// After a run's small stores the cache is trimmed at most every ten minutes.
TEST(DwarfCache, TrimNowAndThenWaitsTenMinutes) {
  char tmpl[] = "/tmp/pf-dwarf-trim-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::filesystem::create_directories(dir + "/dwarf");
  auto make = [&](const std::string& name) {
    std::ofstream(dir + "/dwarf/" + name) << std::string(1000, 'x');
  };
  auto there = [&](const std::string& name) {
    return std::filesystem::exists(dir + "/dwarf/" + name);
  };
  make("a.img");
  TrimCacheNowAndThen(dir, 500);  // never trimmed: now
  EXPECT_FALSE(there("a.img"));
  make("b.img");
  TrimCacheNowAndThen(dir, 500);  // trimmed a moment ago: not now
  EXPECT_TRUE(there("b.img"));
  std::filesystem::last_write_time(
      dir + "/dwarf/trimmed",
      std::filesystem::file_time_type::clock::now() - std::chrono::minutes(11));
  TrimCacheNowAndThen(dir, 500);
  EXPECT_FALSE(there("b.img"));
  std::filesystem::remove_all(dir);
}

TEST(DwarfInfo, FindsUnitsWithoutArangesByTheirRanges) {
  // clang writes no .debug_aranges by default, and libdw 0.188 finds CUs only through them.
  std::string bare = Program("inline_cxx_noaranges");
  if (access(bare.c_str(), R_OK) != 0) GTEST_SKIP() << "objcopy missing: " << bare;
  ASSERT_LT(elf::ElfImage::Open(bare)->FindSection(".debug_aranges"), 0);
  ExpectReadAsThePlainOne(bare, Program("inline_cxx"));
  // The CUs' ranges read here, as libdw reads them.
  ExpectScanMatchesLibdw(bare, 1, 500);
}

TEST(DwarfInfo, NotElfOrMissing) {
  EXPECT_EQ(DwarfInfo::Open("/nonexistent/file"), nullptr);
  EXPECT_EQ(DwarfInfo::Open("/proc/self/status"), nullptr);
}

}  // namespace
}  // namespace pf

// Addr2lineNames: the name binutils' addr2line gives from a symbol table, which perf prints as
// an inlined frame when it is another alias than perf's symbol. Oracle: addr2line itself, on
// files it reads no DWARF from.
namespace pf {
namespace {

// addr2line -f's answers for `addrs` in `path`: "FUNCTION FILE" ("??" for none; the file
// without its ":LINE").
std::vector<std::string> Addr2line(const std::string& path, const std::vector<uint64_t>& addrs) {
  char in[] = "/tmp/pf-a2l-XXXXXX";
  int fd = mkstemp(in);
  if (fd < 0) return {};
  std::string text;
  for (uint64_t a : addrs) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx\n", static_cast<unsigned long long>(a));
    text += buf;
  }
  bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  std::vector<std::string> answers;
  if (written) {
    std::string cmd = "addr2line -f -e '" + path + "' < " + in + " 2>/dev/null";
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char line[8192];
      std::string function;
      for (size_t n = 0; std::fgets(line, sizeof line, p); ++n) {
        std::string s(line);
        if (!s.empty() && s.back() == '\n') s.pop_back();
        if (n % 2 == 0) {
          function = s;
        } else {
          answers.push_back(function + " " + s.substr(0, s.rfind(':')));
        }
      }
      pclose(p);
    }
  }
  unlink(in);
  return answers;
}

void ExpectNamesLikeAddr2line(const std::string& path, uint64_t step) {
  SCOPED_TRACE(path);
  if (std::system("addr2line --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no addr2line";
  auto image = elf::ElfImage::Open(path);
  Addr2lineNames names(*image);
  std::vector<uint64_t> addrs;
  for (const elf::Section& s : image->sections()) {
    if (!(s.flags & SHF_EXECINSTR)) continue;
    for (uint64_t a = s.addr; a < s.addr + s.size; a += step) addrs.push_back(a);
  }
  ASSERT_GT(addrs.size(), 100u);
  std::vector<std::string> theirs = Addr2line(path, addrs);
  ASSERT_EQ(theirs.size(), addrs.size());
  size_t differing = 0, named = 0;
  for (size_t i = 0; i < addrs.size(); ++i) {
    Addr2lineNames::Answer a = names.At(addrs[i]);
    std::string ours = a.function.empty() ? "??" : std::string(a.function);
    named += ours != "??";
    ours.append(" ").append(a.has_file ? a.file : std::string_view("??"));
    if (ours != theirs[i] && ++differing <= 5) {
      ADD_FAILURE() << std::hex << addrs[i] << ": " << ours << " vs addr2line's " << theirs[i];
    }
  }
  EXPECT_EQ(differing, 0u);
  EXPECT_GT(named, addrs.size() / 2);
}

TEST(Addr2lineNames, SymtabLikeAddr2line) {
  std::string path = Program("inline_cxx_nodebug");
  if (access(path.c_str(), R_OK) != 0) GTEST_SKIP() << "objcopy missing: " << path;
  ExpectNamesLikeAddr2line(path, 1);
}

TEST(Addr2lineNames, DynsymLikeAddr2line) {
  // perl is stripped to its dynamic symbols on Debian (and is always there).
  std::string path = "/usr/bin/perl";
  if (access(path.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << path;
  auto image = elf::ElfImage::Open(path);
  if (image->FindSection(".debug_info") >= 0 || image->symtab() >= 0) {
    GTEST_SKIP() << path << " is not stripped here";
  }
  ExpectNamesLikeAddr2line(path, 13);
}

TEST(Addr2lineNames, GlibcAliasesLikeAddr2line) {
  std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (access(libc.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << libc;
  std::string id = elf::ElfImage::Open(libc)->BuildId();
  if (id.size() > 2 &&
      access(
          ("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug").c_str(),
          R_OK) == 0) {
    GTEST_SKIP() << "glibc's debug file is installed: addr2line names from DWARF";
  }
  ExpectNamesLikeAddr2line(libc, 29);
}

// The index is kept in the cache: a later Load restores it, with the same answers; an entry
// that is not a valid index (here: unsorted) is ignored and replaced.
TEST(Addr2lineNames, IndexKeptInTheCache) {
  test::ScopedCacheDir scoped;
  ASSERT_TRUE(scoped.ok());
  const std::string path = scoped.dir() + "/inline_cxx_nodebug";
  std::string original = Program("inline_cxx_nodebug");
  if (access(original.c_str(), R_OK) != 0) GTEST_SKIP() << "objcopy missing: " << original;
  std::filesystem::copy_file(original, path);
  auto image = elf::ElfImage::Open(path);
  Addr2lineNames fresh(*image);
  auto same_answers = [&](const Addr2lineNames& names) {
    size_t compared = 0;
    for (const elf::Section& s : image->sections()) {
      if (!(s.flags & SHF_EXECINSTR)) continue;
      for (uint64_t a = s.addr; a < s.addr + s.size; ++a, ++compared) {
        Addr2lineNames::Answer x = fresh.At(a), y = names.At(a);
        if (x.function != y.function || x.file != y.file || x.has_file != y.has_file ||
            x.value != y.value) {
          ADD_FAILURE() << std::hex << a << ": " << x.function << " vs " << y.function;
          return;
        }
      }
    }
    EXPECT_GT(compared, 1000u);
  };
  auto stored = Addr2lineNames::Load(*image, path);
  EXPECT_FALSE(Addr2lineNamesTestPeer::FromCache(*stored));
  same_answers(*stored);
  FinishCacheStores();
  auto cached = Addr2lineNames::Load(*image, path);
  EXPECT_TRUE(Addr2lineNamesTestPeer::FromCache(*cached));
  same_answers(*cached);

  // The entry, rewritten with its first two candidates swapped (a valid checksum: written by
  // StoreCachedImage).
  std::string key = Addr2lineNamesTestPeer::CacheKey(path);
  ASSERT_FALSE(key.empty());
  size_t size = 0, mapped = 0;
  char* entry = MapCachedImage(scoped.cache(), key, &size, &mapped);
  ASSERT_NE(entry, nullptr);
  std::string bytes(entry, size);
  munmap(entry, mapped);
  ASSERT_GE(bytes.size(), 16u + 64u);
  std::string first = bytes.substr(16, 32);
  bytes.replace(16, 32, bytes.substr(48, 32));
  bytes.replace(48, 32, first);
  ASSERT_TRUE(StoreCachedImage(scoped.cache(), key, bytes));
  auto rebuilt = Addr2lineNames::Load(*image, path);
  EXPECT_FALSE(Addr2lineNamesTestPeer::FromCache(*rebuilt));
  same_answers(*rebuilt);
}

}  // namespace
}  // namespace pf
