#include "symbolize/dwarf_info.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "symbolize/demangle.h"

namespace pf {

struct DwarfInfo::Handle {
  int fd = -1;
  Dwarf* dwarf = nullptr;
  ~Handle() {
    if (dwarf) dwarf_end(dwarf);
    if (fd >= 0) close(fd);
  }
};

namespace {

// A string attribute, following DW_AT_abstract_origin and DW_AT_specification.
const char* StringAttr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, name, &attr) == nullptr) return nullptr;
  return dwarf_formstring(&attr);
}

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

DwarfInfo::~DwarfInfo() = default;

std::unique_ptr<DwarfInfo> DwarfInfo::Open(const std::string& path, bool demangle) {
  auto h = std::make_unique<Handle>();
  h->fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (h->fd < 0) return nullptr;
  h->dwarf = dwarf_begin(h->fd, DWARF_C_READ);
  if (h->dwarf == nullptr) return nullptr;
  auto info = std::unique_ptr<DwarfInfo>(new DwarfInfo);
  info->h_ = std::move(h);
  info->demangle_ = demangle;
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
  };
  struct FunctionRange {
    uint64_t lo, hi;
    uint32_t function;
  };
  std::vector<Range> ranges;                 // of the inlined subroutines
  std::vector<Inline> inlines;               // per function, in tree order
  std::vector<Function> functions;
  std::vector<FunctionRange> by_address;     // sorted by lo
  Dwarf_Files* files = nullptr;
  size_t nfiles = 0;
};

namespace {

// The address ranges of a DIE (low_pc/high_pc or DW_AT_ranges).
template <typename F>
void ForEachRange(Dwarf_Die* die, const F& f) {
  Dwarf_Addr base, start, end;
  ptrdiff_t off = 0;
  for (int n = 0; n < 100000 && (off = dwarf_ranges(die, off, &base, &start, &end)) > 0; ++n) {
    if (end > start) f(start, end);
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

}  // namespace

DwarfInfo::Unit& DwarfInfo::UnitFor(uint64_t offset, void* cu_die) {
  auto& slot = units_[offset];
  if (slot) return *slot;
  slot = std::make_unique<Unit>();
  Unit& u = *slot;
  Dwarf_Die* cu = static_cast<Dwarf_Die*>(cu_die);
  if (dwarf_getsrcfiles(cu, &u.files, &u.nfiles) != 0) u.files = nullptr;

  // One walk over the CU's DIEs. Each level remembers the function it is in (-1: none) and
  // how many inlined subroutines enclose it in that function.
  struct Level {
    Dwarf_Die die;
    int32_t function;
    uint32_t inline_depth;
  };
  std::vector<Level> stack;
  Dwarf_Die child;
  if (dwarf_child(cu, &child) != 0) return u;
  stack.push_back({child, -1, 0});
  while (!stack.empty()) {
    Level& cur = stack.back();
    int tag = dwarf_tag(&cur.die);
    int32_t function = cur.function;
    uint32_t depth = cur.inline_depth;
    bool descend = true;
    if (tag == DW_TAG_subprogram) {
      // A function with code: its ranges are looked up by address. Without code (a
      // declaration, an abstract instance) nothing under it has addresses.
      bool has_code = false;
      uint32_t index = static_cast<uint32_t>(u.functions.size());
      ForEachRange(&cur.die, [&](uint64_t lo, uint64_t hi) {
        u.by_address.push_back({lo, hi, index});
        has_code = true;
      });
      if (has_code) {
        u.functions.push_back({static_cast<uint32_t>(u.inlines.size()), 0});
        function = static_cast<int32_t>(index);
        depth = 0;
      } else {
        descend = false;
      }
    } else if (tag == DW_TAG_inlined_subroutine && function >= 0) {
      Unit::Inline in{static_cast<uint32_t>(u.ranges.size()), 0, depth,
                      dwarf_dieoffset(&cur.die), 0, 0};
      ForEachRange(&cur.die, [&](uint64_t lo, uint64_t hi) {
        u.ranges.push_back({lo, hi});
        ++in.range_count;
      });
      Dwarf_Attribute attr;
      Dwarf_Word v;
      if (dwarf_attr(&cur.die, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &v) == 0) {
        in.call_file = v;
      }
      if (dwarf_attr(&cur.die, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &v) == 0) {
        in.call_line = v;
      }
      // Inlines are kept contiguous per function: a nested function's would interleave, so
      // only those of the innermost function being walked are recorded.
      if (static_cast<uint32_t>(function) + 1 == u.functions.size()) {
        u.inlines.push_back(in);
        ++u.functions[static_cast<size_t>(function)].inline_count;
      }
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
  std::sort(u.by_address.begin(), u.by_address.end(),
            [](const Unit::FunctionRange& a, const Unit::FunctionRange& b) { return a.lo < b.lo; });
  return u;
}

const std::string& DwarfInfo::NameOf(uint64_t die_offset) {
  auto it = names_.find(die_offset);
  if (it != names_.end()) return it->second;
  Dwarf_Die die;
  std::string name = "??";
  if (dwarf_offdie(h_->dwarf, die_offset, &die) != nullptr) name = FunctionName(&die, demangle_);
  return names_.emplace(die_offset, std::move(name)).first->second;
}

const DwarfInfo::Location& DwarfInfo::Lookup(uint64_t vaddr) {
  auto it = cache_.find(vaddr);
  if (it != cache_.end()) return it->second;
  Location& loc = cache_[vaddr];
  Dwarf_Die cu;
  if (dwarf_addrdie(h_->dwarf, vaddr, &cu) == nullptr) return loc;

  // The line: the line table's row for the address, the file's base name.
  if (Dwarf_Line* line = dwarf_getsrc_die(&cu, vaddr)) {
    int lineno = 0;
    const char* file = dwarf_linesrc(line, nullptr, nullptr);
    if (file != nullptr && dwarf_lineno(line, &lineno) == 0 && lineno > 0) {
      const char* slash = std::strrchr(file, '/');
      loc.srcline = std::string(slash ? slash + 1 : file) + ":" + std::to_string(lineno);
    }
  }

  // The function holding the address, then the chain of its inlined subroutines that hold
  // it: in tree order, an entry at depth d holding the address is the chain's level d.
  Unit& u = UnitFor(dwarf_dieoffset(&cu), &cu);
  auto f = std::upper_bound(u.by_address.begin(), u.by_address.end(), vaddr,
                            [](uint64_t v, const Unit::FunctionRange& r) { return v < r.lo; });
  const Unit::Function* function = nullptr;
  // Ranges of distinct functions do not overlap, but a function's may start before another's
  // end in odd CUs: look back a few.
  for (int back = 0; back < 8 && f != u.by_address.begin(); ++back) {
    --f;
    if (vaddr >= f->lo && vaddr < f->hi) {
      function = &u.functions[f->function];
      break;
    }
  }
  if (function == nullptr) return loc;
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
    loc.inlined.push_back(NameOf(in.die));
    std::string site;
    if (u.files != nullptr && in.call_file < u.nfiles && in.call_line > 0) {
      if (const char* name = dwarf_filesrc(u.files, in.call_file, nullptr, nullptr)) {
        const char* slash = std::strrchr(name, '/');
        site = std::string(slash ? slash + 1 : name) + ":" + std::to_string(in.call_line);
      }
    }
    loc.call_sites.push_back(std::move(site));
  }
  return loc;
}

}  // namespace pf
