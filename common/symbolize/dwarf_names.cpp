// Names, range lists and the CU of an address, read by DwarfInfo itself where libdw would be
// slow: a function's name (following DW_AT_abstract_origin and DW_AT_specification) and a
// DW_AT_ranges list read from the raw sections in a CU the fast walk reads, else through
// libdw; the CU holding an address from .debug_aranges (libdw's dwarf_getaranges reads the
// header of every CU it lists: 4,126 for glibc, 2-3 ms, where a lookup needs one), else from
// the CUs' own ranges, as libdw's dwarf_addrdie finds it.

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/dwarf_reader.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_info_internal.h"

namespace pf {

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
      out.push_back({addr, len, DwarfUnitOffset(cu)});
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

bool DwarfInfo::UnitDie(DwarfUnitOffset unit, uint64_t* die) const {
  DwarfReader h(sections_->info);
  h.Seek(unit.value);
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
bool DwarfInfo::ReadUnitRanges(DwarfUnitOffset unit, uint64_t die,
                               std::vector<uint64_t>* out) {
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
      if (!libdw_walk_ && ReadUnitRanges(DwarfUnitOffset(off), off + header, &pairs)) {
        for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
          if (pairs[i + 1] > pairs[i])
            unit_ranges_.push_back({pairs[i], pairs[i + 1], off + header, DwarfUnitOffset(off)});
        }
        continue;
      }
      Dwarf_Die die;
      if (dwarf_offdie(h_->dwarf, off + header, &die) == nullptr) continue;
      RangesOf(&die, &code);
      for (const Unit::Range& r : code) {
        unit_ranges_.push_back({r.lo, r.hi, off + header, DwarfUnitOffset(off)});
      }
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

}  // namespace pf
