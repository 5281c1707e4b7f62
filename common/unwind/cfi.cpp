// Compiling CFI (cfi.h describes the rows and where the rules come from). FDEs are indexed
// from .eh_frame_hdr's sorted table when there is one (no parsing up front), else by one scan;
// .debug_frame is indexed only when .eh_frame has no FDEs or on the first pc it does not cover.
// An FDE is compiled the first time a pc in it is looked up: the CIE's and the FDE's
// instructions are run by an interpreter of every DW_CFA_ operation, and each row is reduced to
// the three rules x86-64 unwinding needs, DWARF expressions kept aside for
// cfi_expression.inl to evaluate. Malformed CFI makes an FDE unusable, never a crash: every read
// goes through the bounds-checked DwarfReader.

#include "unwind/cfi.h"

#include <algorithm>
#include <unordered_map>

#include "elf/elf_image.h"
#include "elf/section_data.h"
#include "base/dwarf_reader.h"

namespace pf {

namespace {

constexpr size_t kMaxStateStack = 64;       // DW_CFA_remember_state nesting
constexpr size_t kMaxRowsPerFde = 1 << 16;  // more is corrupt (or not worth keeping)

// One register's rule while a CFA program runs.
struct Rule {
  enum Kind : uint8_t { kNone, kSame, kUndefined, kOffset, kValOffset, kRegister, kExpr, kValExpr };
  Kind kind = kNone;
  int64_t value = 0;
  std::span<const uint8_t> expr;
};

// What the program has said so far: the CFA and the three registers unwinding needs.
struct State {
  bool cfa_is_expr = false;
  uint64_t cfa_reg = kDwRsp;
  int64_t cfa_offset = 0;
  std::span<const uint8_t> cfa_expr;
  Rule rbp, rsp, ra;

  Rule* For(uint64_t reg) {
    switch (reg) {
      case kDwRbp: return &rbp;
      case kDwRsp: return &rsp;
      case kDwRip: return &ra;
      default: return nullptr;  // rules for other registers are not kept
    }
  }
};

bool FitsInt32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

// A factored offset times the data alignment, wrapping as the hardware does: corrupt CFI may
// ask for anything, and a signed overflow would be undefined (FitsInt32 then rejects it).
int64_t Factor(uint64_t value, int64_t align) {
  return static_cast<int64_t>(value * static_cast<uint64_t>(align));
}

}  // namespace

struct CfiTable::Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  uint64_t ra_reg = kDwRip;
  uint8_t fde_encoding = kPeAbsptr;
  uint8_t address_size = 8;
  bool augmented = false;  // 'z': FDEs carry an augmentation length
  bool signal = false;     // 'S'
  std::string_view instructions;
};

CfiTable::~CfiTable() = default;

std::string_view CfiTable::SectionBytes(const char* name, uint64_t* vaddr) {
  if (!image_) return {};
  const elf::ElfImage& im = *image_;
  int i = im.FindSection(name);
  if (i < 0) return {};
  const elf::Section& s = im.sections()[static_cast<size_t>(i)];
  if (vaddr) *vaddr = s.addr;
  if (s.flags & SHF_COMPRESSED) {
    if (std::string_view(name) != ".debug_frame") return {};
    if (!DecompressSection(im.SectionData(s), &debug_frame_copy_)) return {};
    return debug_frame_copy_;
  }
  return im.SectionData(s);
}

std::unique_ptr<CfiTable> CfiTable::FromElf(std::shared_ptr<const elf::ElfImage> image) {
  auto t = std::unique_ptr<CfiTable>(new CfiTable);
  t->image_ = std::move(image);
  t->eh_frame_ = t->SectionBytes(".eh_frame", &t->eh_frame_vaddr_);
  t->eh_frame_hdr_ = t->SectionBytes(".eh_frame_hdr", &t->hdr_vaddr_);
  t->Index();
  return t;
}

std::unique_ptr<CfiTable> CfiTable::FromSections(std::string_view eh_frame, uint64_t eh_frame_vaddr,
                                                 std::string_view eh_frame_hdr, uint64_t hdr_vaddr,
                                                 std::string_view debug_frame) {
  auto t = std::unique_ptr<CfiTable>(new CfiTable);
  t->eh_frame_ = eh_frame;
  t->eh_frame_vaddr_ = eh_frame_vaddr;
  t->eh_frame_hdr_ = eh_frame_hdr;
  t->hdr_vaddr_ = hdr_vaddr;
  t->debug_frame_ = debug_frame;
  t->Index();
  return t;
}

void CfiTable::Index() {
  IndexFromHdr();
  if (fdes_.empty() && !eh_frame_.empty()) IndexByScan(eh_frame_, false, &fdes_);
  if (fdes_.empty()) IndexDebugFrame(&fdes_);
}

// .debug_frame: the index when .eh_frame has no FDEs (Go's binaries), else the fallback for
// pcs no .eh_frame FDE covers (C built with -fno-asynchronous-unwind-tables), read on the
// first such pc. libdw's unwinder looks there too; perf's libunwind does not, on x86-64.
void CfiTable::IndexDebugFrame(std::vector<Fde>* into) {
  debug_indexed_ = true;
  if (debug_frame_.empty()) debug_frame_ = SectionBytes(".debug_frame", nullptr);
  if (!debug_frame_.empty()) IndexByScan(debug_frame_, true, into);
}

// .eh_frame_hdr: version 1, three encodings, eh_frame_ptr, fde_count, then the binary-search
// table of (initial location, FDE address) pairs, sorted by location (LSB Core 10.6.2).
void CfiTable::IndexFromHdr() {
  if (eh_frame_hdr_.size() < 4 || eh_frame_.empty()) return;
  DwarfReader r(eh_frame_hdr_, hdr_vaddr_);
  uint8_t version = r.U8(), ptr_enc = r.U8(), count_enc = r.U8(), table_enc = r.U8();
  if (version != 1 || table_enc == kPeOmit || count_enc == kPeOmit) return;
  r.Pointer(ptr_enc, hdr_vaddr_);
  uint64_t count = r.Pointer(count_enc, hdr_vaddr_);
  size_t entry = 2 * DwarfReader::EncodedSize(table_enc);
  if (!r.ok() || entry == 0 || count > r.left() / entry) return;
  fdes_.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t pc = r.Pointer(table_enc, hdr_vaddr_);
    uint64_t fde = r.Pointer(table_enc, hdr_vaddr_);
    if (!r.ok()) break;
    uint64_t offset = fde - eh_frame_vaddr_;
    if (fde < eh_frame_vaddr_ || offset >= eh_frame_.size()) continue;
    fdes_.push_back({pc, 0, static_cast<uint32_t>(offset), -1, 0, false});
  }
  if (!std::is_sorted(fdes_.begin(), fdes_.end(),
                      [](const Fde& a, const Fde& b) { return a.pc_begin < b.pc_begin; })) {
    std::stable_sort(fdes_.begin(), fdes_.end(),
                     [](const Fde& a, const Fde& b) { return a.pc_begin < b.pc_begin; });
  }
  source_ = fdes_.empty() ? "" : ".eh_frame_hdr";
}

// Without a usable .eh_frame_hdr: one pass over the entries, reading each FDE's range.
void CfiTable::IndexByScan(std::string_view section, bool debug, std::vector<Fde>* into) {
  std::vector<Fde>& fdes = *into;
  std::unordered_map<uint64_t, Cie> cies;
  DwarfReader r(section);
  while (!r.at_end()) {
    size_t start = r.pos();
    uint64_t length = r.U32();
    bool dwarf64 = length == 0xffffffff;
    if (dwarf64) length = r.U64();
    if (!r.ok()) break;
    if (length == 0) {
      if (!debug) break;  // the .eh_frame terminator
      continue;
    }
    size_t body = r.pos();
    if (length > r.left()) break;
    size_t next = body + length;
    uint64_t id = dwarf64 && debug ? r.U64() : r.U32();
    bool is_cie = debug ? id == (dwarf64 ? ~uint64_t{0} : 0xffffffffu) : id == 0;
    if (!is_cie) {
      uint64_t cie_offset = debug ? id : body - id;
      if (!debug && id > body) cie_offset = UINT64_MAX;
      auto it = cies.find(cie_offset);
      if (it == cies.end()) {
        Cie cie;
        if (cie_offset < section.size() && ParseCie(section, cie_offset, debug, &cie)) {
          it = cies.emplace(cie_offset, cie).first;
        }
      }
      if (it != cies.end()) {
        DwarfReader p(section, debug ? 0 : eh_frame_vaddr_);
        p.Seek(r.pos());
        uint64_t begin, range;
        if (debug) {
          begin = it->second.address_size == 4 ? p.U32() : p.U64();
          range = it->second.address_size == 4 ? p.U32() : p.U64();
        } else {
          begin = p.Pointer(it->second.fde_encoding);
          range = p.Pointer(it->second.fde_encoding & 0x0f);
        }
        if (p.ok() && range > 0 && start <= UINT32_MAX) {
          fdes.push_back({begin, begin + range, static_cast<uint32_t>(start), -1, 0, debug});
        }
      }
    }
    r.Seek(next);
  }
  std::stable_sort(fdes.begin(), fdes.end(),
                   [](const Fde& a, const Fde& b) { return a.pc_begin < b.pc_begin; });
  if (into == &fdes_) source_ = fdes_.empty() ? "" : debug ? ".debug_frame" : ".eh_frame";
}

bool CfiTable::ParseCie(std::string_view section, uint64_t offset, bool debug, Cie* cie) const {
  DwarfReader r(section, debug ? 0 : eh_frame_vaddr_);
  r.Seek(offset);
  uint64_t length = r.U32();
  bool dwarf64 = length == 0xffffffff;
  if (dwarf64) length = r.U64();
  if (!r.ok() || length == 0 || length > r.left()) return false;
  size_t end = r.pos() + length;
  uint64_t id = dwarf64 && debug ? r.U64() : r.U32();
  if (debug ? id != (dwarf64 ? ~uint64_t{0} : 0xffffffffu) : id != 0) return false;
  uint8_t version = r.U8();
  if (version != 1 && version != 3 && version != 4) return false;
  std::string_view aug = r.CString();
  if (!r.ok()) return false;
  if (aug.size() >= 2 && aug.substr(0, 2) == "eh") r.Skip(8);  // old GCC's eh_data
  if (version == 4) {
    cie->address_size = r.U8();
    r.U8();  // segment selector size
    if (cie->address_size != 4 && cie->address_size != 8) return false;
  }
  cie->code_align = r.Uleb();
  cie->data_align = r.Sleb();
  cie->ra_reg = version == 1 ? r.U8() : r.Uleb();
  if (!r.ok()) return false;
  size_t instructions = r.pos();
  if (!aug.empty() && aug[0] == 'z') {
    cie->augmented = true;
    uint64_t aug_len = r.Uleb();
    if (!r.ok() || aug_len > r.left()) return false;
    instructions = r.pos() + aug_len;
    for (char c : aug.substr(1)) {
      if (c == 'R') {
        cie->fde_encoding = r.U8();
      } else if (c == 'L') {
        r.U8();
      } else if (c == 'P') {
        uint8_t enc = r.U8();
        r.Pointer(enc & 0x7f);  // the personality routine (maybe indirect): skipped
      } else if (c == 'S') {
        cie->signal = true;
      } else if (c == 'B' || c == 'G') {
        // AArch64 pointer authentication, memory tagging: nothing to read
      } else {
        break;  // unknown: the augmentation length lets us skip the rest
      }
    }
    if (!r.ok()) return false;
  } else if (!aug.empty() && aug != "eh") {
    return false;  // an augmentation we cannot skip
  }
  if (instructions > end) return false;
  cie->instructions = section.substr(instructions, end - instructions);
  return true;
}

bool CfiTable::ReadFdeHeader(const Fde& fde, Cie* cie, uint64_t* pc_begin, uint64_t* pc_end,
                             std::string_view* instructions) const {
  std::string_view section = fde.debug ? debug_frame_ : eh_frame_;
  DwarfReader r(section, fde.debug ? 0 : eh_frame_vaddr_);
  r.Seek(fde.offset);
  uint64_t length = r.U32();
  bool dwarf64 = length == 0xffffffff;
  if (dwarf64) length = r.U64();
  if (!r.ok() || length == 0 || length > r.left()) return false;
  size_t body = r.pos();
  size_t end = body + length;
  uint64_t id = dwarf64 && fde.debug ? r.U64() : r.U32();
  if (!r.ok()) return false;
  uint64_t cie_offset;
  if (fde.debug) {
    if (id == (dwarf64 ? ~uint64_t{0} : 0xffffffffu)) return false;  // a CIE
    cie_offset = id;
  } else {
    if (id == 0 || id > body) return false;
    cie_offset = body - id;
  }
  if (!ParseCie(section, cie_offset, fde.debug, cie)) return false;
  if (fde.debug) {
    *pc_begin = cie->address_size == 4 ? r.U32() : r.U64();
    *pc_end = *pc_begin + (cie->address_size == 4 ? r.U32() : r.U64());
  } else {
    *pc_begin = r.Pointer(cie->fde_encoding);
    *pc_end = *pc_begin + r.Pointer(cie->fde_encoding & 0x0f);
  }
  if (cie->augmented) r.Skip(r.Uleb());
  if (!r.ok() || r.pos() > end || *pc_end <= *pc_begin) return false;
  *instructions = section.substr(r.pos(), end - r.pos());
  return true;
}

// Runs the CIE's and the FDE's instructions and keeps the rows, reduced to CfiRow.
bool CfiTable::Compile(Fde& fde) {
  Cie cie;
  uint64_t begin, end;
  std::string_view program;
  if (!ReadFdeHeader(fde, &cie, &begin, &end, &program)) return false;
  fde.pc_end = end;

  auto expr_index = [&](std::span<const uint8_t> e, uint16_t* index) {
    if (expressions_.size() >= UINT16_MAX) return false;
    *index = static_cast<uint16_t>(expressions_.size());
    expressions_.push_back(e);
    return true;
  };
  std::vector<CfiRow> rows;
  auto emit = [&](const State& s, uint64_t pc) {
    CfiRow row;
    row.pc = pc;
    row.signal_frame = cie.signal;
    row.debug_frame = fde.debug;
    if (s.cfa_is_expr) {
      row.cfa = expr_index(s.cfa_expr, &row.cfa_expr) ? CfiRow::kCfaExpr : CfiRow::kCfaUnsupported;
    } else if (s.cfa_reg < kDwRegs && FitsInt32(s.cfa_offset)) {
      row.cfa = CfiRow::kCfaReg;
      row.cfa_reg = static_cast<uint8_t>(s.cfa_reg);
      row.cfa_offset = static_cast<int32_t>(s.cfa_offset);
    }
    auto reduce = [&](const Rule& rule, CfiRow::Reg* kind, int32_t* offset, uint16_t* expr,
                      CfiRow::Reg none) {
      switch (rule.kind) {
        case Rule::kNone: *kind = none; break;
        case Rule::kSame: *kind = none == CfiRow::kSame ? CfiRow::kSame : CfiRow::kUnsupported; break;
        case Rule::kUndefined: *kind = CfiRow::kUndefined; break;
        case Rule::kOffset:
        case Rule::kValOffset:
          if (!FitsInt32(rule.value)) {
            *kind = CfiRow::kUnsupported;
            break;
          }
          *kind = rule.kind == Rule::kOffset ? CfiRow::kAtCfa : CfiRow::kValCfa;
          *offset = static_cast<int32_t>(rule.value);
          break;
        case Rule::kExpr:
          *kind = expr_index(rule.expr, expr) ? CfiRow::kAtExpr : CfiRow::kUnsupported;
          break;
        default: *kind = CfiRow::kUnsupported; break;
      }
    };
    reduce(s.rbp, &row.rbp, &row.rbp_offset, &row.rbp_expr, CfiRow::kSame);
    reduce(s.ra, &row.ra, &row.ra_offset, &row.ra_expr, CfiRow::kUnsupported);
    // The caller's rsp is the CFA (the x86-64 convention). A rule for rsp is only accepted
    // when it says the same: the value CFA + 0, or (signal frames) the saved rsp that the CFA
    // expression also loads.
    bool rsp_ok = s.rsp.kind == Rule::kNone || s.rsp.kind == Rule::kSame ||
                  (s.rsp.kind == Rule::kValOffset && s.rsp.value == 0) ||
                  (s.rsp.kind == Rule::kExpr && s.cfa_is_expr);
    if (!rsp_ok) row.cfa = CfiRow::kCfaUnsupported;
    if (!rows.empty() && rows.back().pc == pc) {
      rows.back() = row;
    } else {
      rows.push_back(row);
    }
  };

  // Run the CIE's initial instructions, then the FDE's.
  State initial, state;
  std::vector<State> saved;
  uint64_t loc = begin;
  bool ok = true;
  for (int pass = 0; pass < 2 && ok; ++pass) {
    std::string_view code = pass == 0 ? cie.instructions : program;
    DwarfReader r(code);
    while (!r.at_end() && ok) {
      uint8_t op = r.U8();
      uint8_t high = op & 0xc0, low = op & 0x3f;
      auto set_rule = [&](uint64_t reg, Rule rule) {
        if (Rule* p = state.For(reg)) *p = rule;
      };
      auto restore = [&](uint64_t reg) {
        if (Rule* p = state.For(reg)) *p = *initial.For(reg);
      };
      auto advance = [&](uint64_t delta) {
        if (pass == 0) {
          ok = false;  // a CIE cannot advance
          return;
        }
        uint64_t next = loc + delta * cie.code_align;
        if (next > loc) {
          emit(state, loc);
          loc = next;
        }
      };
      auto block = [&]() {
        uint64_t n = r.Uleb();
        if (!r.ok() || n > r.left()) {
          ok = false;
          return std::span<const uint8_t>();
        }
        auto s = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(code.data() + r.pos()),
                                          n);
        r.Skip(n);
        return s;
      };
      if (high == 0x40) {
        advance(low);
      } else if (high == 0x80) {
        set_rule(low, {Rule::kOffset, Factor(r.Uleb(), cie.data_align), {}});
      } else if (high == 0xc0) {
        restore(low);
      } else {
        switch (op) {
          case 0x00: break;  // nop
          case 0x01: {       // set_loc
            uint64_t to = r.Pointer(cie.fde_encoding);
            if (pass == 0 || to < loc) {
              ok = false;
              break;
            }
            if (to > loc) {
              emit(state, loc);
              loc = to;
            }
            break;
          }
          case 0x02: advance(r.U8()); break;
          case 0x03: advance(r.U16()); break;
          case 0x04: advance(r.U32()); break;
          case 0x05: {
            uint64_t reg = r.Uleb();
            set_rule(reg, {Rule::kOffset, Factor(r.Uleb(), cie.data_align), {}});
            break;
          }
          case 0x06: restore(r.Uleb()); break;
          case 0x07: set_rule(r.Uleb(), {Rule::kUndefined, 0, {}}); break;
          case 0x08: set_rule(r.Uleb(), {Rule::kSame, 0, {}}); break;
          case 0x09: {
            uint64_t reg = r.Uleb();
            set_rule(reg, {Rule::kRegister, static_cast<int64_t>(r.Uleb()), {}});
            break;
          }
          case 0x0a:  // remember_state
            if (saved.size() >= kMaxStateStack) ok = false;
            else saved.push_back(state);
            break;
          case 0x0b:  // restore_state: the CFA comes back with the rules, as in libgcc
                      // (GCC's epilogues rely on it)
            if (saved.empty()) {
              ok = false;
            } else {
              state = saved.back();
              saved.pop_back();
            }
            break;
          case 0x0c:  // def_cfa
            state.cfa_is_expr = false;
            state.cfa_reg = r.Uleb();
            state.cfa_offset = static_cast<int64_t>(r.Uleb());
            break;
          case 0x0d:  // def_cfa_register
            state.cfa_is_expr = false;
            state.cfa_reg = r.Uleb();
            break;
          case 0x0e: state.cfa_offset = static_cast<int64_t>(r.Uleb()); break;
          case 0x0f:  // def_cfa_expression
            state.cfa_is_expr = true;
            state.cfa_expr = block();
            break;
          case 0x10: {  // expression
            uint64_t reg = r.Uleb();
            set_rule(reg, {Rule::kExpr, 0, block()});
            break;
          }
          case 0x11: {  // offset_extended_sf
            uint64_t reg = r.Uleb();
            set_rule(reg, {Rule::kOffset, Factor(static_cast<uint64_t>(r.Sleb()), cie.data_align), {}});
            break;
          }
          case 0x12:  // def_cfa_sf
            state.cfa_is_expr = false;
            state.cfa_reg = r.Uleb();
            state.cfa_offset = Factor(static_cast<uint64_t>(r.Sleb()), cie.data_align);
            break;
          case 0x13: state.cfa_offset = Factor(static_cast<uint64_t>(r.Sleb()), cie.data_align); break;
          case 0x14: {  // val_offset
            uint64_t reg = r.Uleb();
            set_rule(reg, {Rule::kValOffset, Factor(r.Uleb(), cie.data_align), {}});
            break;
          }
          case 0x15: {  // val_offset_sf
            uint64_t reg = r.Uleb();
            set_rule(reg, {Rule::kValOffset, Factor(static_cast<uint64_t>(r.Sleb()), cie.data_align), {}});
            break;
          }
          case 0x16: {  // val_expression
            uint64_t reg = r.Uleb();
            set_rule(reg, {Rule::kValExpr, 0, block()});
            break;
          }
          case 0x2e: r.Uleb(); break;  // GNU_args_size
          case 0x2f: {                 // GNU_negative_offset_extended
            uint64_t reg = r.Uleb();
            set_rule(reg, {Rule::kOffset, Factor(0 - r.Uleb(), cie.data_align), {}});
            break;
          }
          default: ok = false; break;
        }
      }
      if (!r.ok()) ok = false;
      if (rows.size() > kMaxRowsPerFde) ok = false;
    }
    if (pass == 0) initial = state;
  }
  if (!ok) return false;
  if (loc < end) emit(state, loc);
  fde.rows = static_cast<int32_t>(rows_.size());
  fde.row_count = static_cast<uint32_t>(rows.size());
  rows_.insert(rows_.end(), rows.begin(), rows.end());
  ++compiled_;
  return true;
}

bool CfiTable::Find(uint64_t pc, CfiRow* row) {
  if (FindIn(fdes_, pc, row)) return true;
  if (!debug_indexed_) IndexDebugFrame(&fallback_fdes_);
  return FindIn(fallback_fdes_, pc, row);
}

bool CfiTable::FindIn(std::vector<Fde>& fdes, uint64_t pc, CfiRow* row) {
  auto it = std::upper_bound(fdes.begin(), fdes.end(), pc,
                             [](uint64_t v, const Fde& f) { return v < f.pc_begin; });
  if (it == fdes.begin()) return false;
  Fde& fde = *--it;
  if (fde.rows == -1 && !Compile(fde)) fde.rows = -2;
  if (fde.rows < 0 || pc >= fde.pc_end || fde.row_count == 0) return false;
  const CfiRow* first = rows_.data() + fde.rows;
  const CfiRow* last = first + fde.row_count;
  const CfiRow* r = std::upper_bound(first, last, pc,
                                     [](uint64_t v, const CfiRow& x) { return v < x.pc; });
  if (r == first) return false;
  *row = *(r - 1);
  return true;
}

bool CfiTable::FileOffsetToVaddr(uint64_t offset, uint64_t* vaddr) const {
  if (!image_) {
    *vaddr = offset;
    return true;
  }
  for (const elf::ProgramHeader& p : image_->segments()) {
    if (p.type == PT_LOAD && offset >= p.offset && offset - p.offset < std::max(p.filesz, p.memsz)) {
      *vaddr = offset - p.offset + p.vaddr;
      return true;
    }
  }
  return false;
}

std::span<const uint8_t> CfiTable::Expression(uint16_t index) const {
  return index < expressions_.size() ? expressions_[index] : std::span<const uint8_t>();
}

}  // namespace pf
