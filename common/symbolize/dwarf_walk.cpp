// The fast walk over .debug_info (dwarf_info.h says why libdw's DIE functions were too slow).
// A CU is first indexed without entering its functions: each DIE's abbreviation is looked up
// once and its attributes read or skipped by form (a DIE whose forms all have fixed sizes is
// jumped over whole), and a function's subtree is jumped over by its DW_AT_sibling; what the
// index keeps is each function's DIE, entry and address ranges. A function's inline tree is
// read when one of its addresses is first asked for (LoadInlines), in tree order with depths,
// so that Locate needs one pass over it. What the walk does not read (split and type units,
// references to other units, forms it does not know, addresses through .debug_addr) is left
// to libdw's DIE functions (WalkDies), which are also the oracle the tests compare with.

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "base/dwarf_reader.h"
#include "symbolize/dwarf_info_internal.h"

namespace pf {

// The address ranges of a DIE (low_pc/high_pc or DW_AT_ranges).
void RangesOf(Dwarf_Die* die, Ranges* out) {
  out->clear();
  Dwarf_Addr base, start, end;
  ptrdiff_t off = 0;
  for (int n = 0; n < 100000 && (off = dwarf_ranges(die, off, &base, &start, &end)) > 0; ++n) {
    if (end > start) out->push_back({start, end});
  }
}

namespace {

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

namespace {

// One value of `form` (not DW_FORM_indirect), as ReadForm reads it.
bool ReadDirectForm(DwarfReader& r, uint64_t form, const DwarfInfo::Sections::Header& h,
                    int64_t implicit, uint64_t* value) {
  auto offset = [&]() { return h.offset_size == 8 ? r.U64() : r.U32(); };
  auto address = [&]() -> uint64_t { return h.address_size == 8 ? r.U64() : r.U32(); };
  auto three = [&]() -> uint64_t {
    uint64_t a = r.U8(), b = r.U8(), c = r.U8();
    return a | b << 8 | c << 16;
  };
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
    default:
      return false;
  }
}

}  // namespace

// Reads one attribute value of `form`, returning constants, addresses and references in
// *value (references as the form holds them); false on a form it does not know or a read
// past the end. DW_FORM_indirect names the form in the DIE: followed at most three times.
bool ReadForm(DwarfReader& r, uint64_t form, const DwarfInfo::Sections::Header& h, int64_t implicit,
              uint64_t* value) {
  *value = 0;
  for (int indirections = 0; form == DW_FORM_indirect; ++indirections) {
    form = r.Uleb();
    if (!r.ok() || indirections == 3) return false;
  }
  return ReadDirectForm(r, form, h, implicit, value);
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
  if (cu.unit.valid()) {
    // The header read here (checked again below).
    DwarfReader r(sections_->info);
    r.Seek(cu.unit.value);
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

namespace {

// What the fast walk reads of a DIE's attributes.
struct DieAttrs {
  uint64_t sibling = 0, call_file = 0, call_line = 0;
  int64_t language = -1;
  PcAttrs pc;
};

// Jumps over the attributes of a DIE whose forms all have fixed sizes (Abbrev::fixed_size),
// reading only its DW_AT_sibling. False on a read past the end.
bool SkipFixedAttrs(DwarfReader& die, const DwarfInfo::Sections::Header& h,
                    const DwarfInfo::Sections::Table& abbrevs, const DwarfInfo::Sections::Abbrev& a,
                    DieAttrs* out) {
  const size_t attrs = die.pos();
  if (a.sibling_at >= 0) {
    const DwarfInfo::Sections::Spec& spec = abbrevs.specs[a.sibling_spec];
    uint64_t v;
    die.Skip(static_cast<uint64_t>(a.sibling_at));
    if (!ReadForm(die, spec.form, h, spec.implicit, &v)) return false;
    out->sibling = h.start + v;
  }
  die.Seek(attrs);
  die.Skip(static_cast<uint64_t>(a.fixed_size));
  return die.ok();
}

// Reads the attributes of a DIE, stopping after its DW_AT_sibling when nothing is wanted from
// it (`unwanted`) and the sibling is ahead in the unit: *jump then says to go there. False on
// a form it does not read or a read past the end.
bool ReadAttrs(DwarfReader& die, const DwarfInfo::Sections::Header& h,
               const DwarfInfo::Sections::Table& abbrevs, const DwarfInfo::Sections::Abbrev& a,
               bool unwanted, DieAttrs* out, bool* jump) {
  *jump = false;
  for (uint32_t i = 0; i < a.count && !*jump; ++i) {
    const DwarfInfo::Sections::Spec& spec = abbrevs.specs[a.first + i];
    uint64_t v;
    if (!ReadForm(die, spec.form, h, spec.implicit, &v)) return false;
    if (out->pc.Take(spec.name, spec.form, v)) continue;
    switch (spec.name) {
      case DW_AT_sibling:
        if (spec.form != DW_FORM_ref_addr) {
          out->sibling = h.start + v;
          *jump = unwanted && out->sibling > die.pos() && out->sibling <= h.end;
        }
        break;
      case DW_AT_language:
        if (IsConstantForm(spec.form)) out->language = static_cast<int64_t>(v);
        break;
      case DW_AT_call_file:
        if (IsConstantForm(spec.form)) out->call_file = v;
        break;
      case DW_AT_call_line:
        if (IsConstantForm(spec.form)) out->call_line = v;
        break;
      default:
        break;
    }
  }
  return true;
}

}  // namespace

// The address ranges of the function or inlined subroutine at `offset` into `code`, as
// libdw's dwarf_ranges gives them: low and high pc when it has both, else DW_AT_ranges (read
// here, else through libdw).
void DwarfInfo::CodeOf(const Unit& u, const PcAttrs& pc, uint64_t offset, Code* code) {
  Ranges& out = code->ranges;
  const std::vector<uint64_t>& pairs = code->pairs;
  out.clear();
  if (pc.single()) {
    if (pc.end() > pc.low) out.push_back({pc.low, pc.end()});
  } else if (!pc.odd() && pc.has_ranges &&
             ReadRanges(u, pc.ranges_form, pc.ranges_at, &code->pairs)) {
    for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
      if (pairs[i + 1] > pairs[i]) out.push_back({pairs[i], pairs[i + 1]});
    }
  } else if (pc.odd() || pc.has_ranges) {
    ++libdw_reads_;
    Dwarf_Die d;
    if (dwarf_offdie(h_->dwarf, offset, &d) != nullptr) RangesOf(&d, &out);
  }
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
  Code scratch;
  const Ranges& code = scratch.ranges;
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
    DieAttrs attrs;
    const PcAttrs& pc = attrs.pc;
    // Below the first DIE only a function's and an inlined subroutine's attributes are read,
    // and any other DIE's sibling: a DIE of fixed-size attributes is jumped over at once.
    // (In a subtree nothing below is wanted from, only the sibling, whatever the tag.)
    if (fixed_layout && !first && a->fixed_size >= 0 &&
        ((a->tag != DW_TAG_subprogram && a->tag != DW_TAG_inlined_subroutine) ||
         (!levels.empty() && levels.back().skip))) {
      if (!SkipFixedAttrs(die, h, abbrevs, *a, &attrs)) return false;
    } else {
      // A DIE with children nothing is wanted from: its attributes after DW_AT_sibling are
      // not read either.
      const bool unwanted =
          !first && a->children &&
          ((!levels.empty() && levels.back().skip) ||
           (a->tag != DW_TAG_subprogram && a->tag != DW_TAG_inlined_subroutine &&
            NoCodeBelow(static_cast<int>(a->tag))));
      bool jump;
      if (!ReadAttrs(die, h, abbrevs, *a, unwanted, &attrs, &jump)) return false;
      if (jump) {
        die.Seek(attrs.sibling);
        continue;
      }
    }
    if (first) {  // the CU's DIE, or the function's
      first = false;
      if (mode != ScanMode::kFunction) {
        u.language = static_cast<int>(attrs.language);
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
      if ((sub && mode != ScanMode::kFunction) || inl) CodeOf(u, pc, offset, &scratch);
      if (sub && mode == ScanMode::kFunction) {
        descend = false;  // a nested function: its own entry
      } else if (sub) {
        // Entered only to look for nested functions.
        function = u.AddFunction(code, offset);
        descend = function >= 0 && mode == ScanMode::kFull;
      } else if (inl) {
        u.AddInline(function, depth, offset, code, attrs.call_file, attrs.call_line);
        ++depth;
      } else if (NoCodeBelow(static_cast<int>(a->tag))) {
        descend = false;
      }
    }
    if (!a->children) continue;
    if (!descend && attrs.sibling > die.pos() && attrs.sibling <= h.end) {
      die.Seek(attrs.sibling);  // past the subtree
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

}  // namespace pf
