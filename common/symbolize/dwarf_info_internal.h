#pragma once
// What the parts of DwarfInfo share (dwarf_info.cpp, dwarf_image.cpp, dwarf_walk.cpp,
// dwarf_names.cpp, dwarf_saved.cpp), and nothing else includes: the open debug file and its
// inflated image, the raw sections the fast walk reads, one CU's index, and the attribute
// readers the walk and the name and range readers have in common.

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/dwarf_reader.h"
#include "symbolize/dwarf_info.h"

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

/// The image libdw is given for `file` when its wanted DWARF sections are compressed
/// (dwarf_image.cpp); false: use the file as it is.
bool DecompressedImage(std::string_view file, bool lines, uint64_t aside_bytes, ImageBuffer* image);

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
  DwarfUnitOffset unit = DwarfUnitOffset::Invalid();  // when known without libdw
  Dwarf_Die handle{};
  bool have_handle = false;
};

using Ranges = std::vector<DwarfInfo::Unit::Range>;

// The address ranges of a DIE (low_pc/high_pc or DW_AT_ranges), through libdw.
void RangesOf(Dwarf_Die* die, Ranges* out);

// Reads one attribute value of `form`, returning constants, addresses and references in
// *value (references as the form holds them); false on a form it does not know or a read
// past the end.
bool ReadForm(DwarfReader& r, uint64_t form, const DwarfInfo::Sections::Header& h, int64_t implicit,
              uint64_t* value);

// A form of a constant (DW_FORM_data*, sdata, udata, implicit_const).
bool IsConstantForm(uint64_t form);

// The attributes that place a DIE's code, as the fast walk reads them: "odd" ones come in a
// form read through .debug_addr, left to libdw.
struct DwarfInfo::Code {
  Ranges ranges;
  std::vector<uint64_t> pairs;  // a range list as ReadRanges reads it
};

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

}  // namespace pf
