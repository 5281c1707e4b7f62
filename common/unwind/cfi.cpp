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

namespace {

// Reduces the states a CFA program goes through to CfiRows, one per address where the state
// changes: the three rules x86-64 unwinding needs, a DWARF expression kept in the table's list
// and named by its index.
class RowWriter {
 public:
  RowWriter(bool signal, bool debug, std::vector<std::span<const uint8_t>>* expressions)
      : signal_(signal), debug_(debug), expressions_(*expressions) {}

  /// The row for `s` from `pc` on (replacing the last one when it starts at `pc` too).
  void Emit(const State& s, uint64_t pc) {
    CfiRow row;
    row.pc = pc;
    row.signal_frame = signal_;
    row.debug_frame = debug_;
    if (s.cfa_is_expr) {
      row.cfa = AddExpression(s.cfa_expr, &row.cfa_expr) ? CfiRow::kCfaExpr
                                                         : CfiRow::kCfaUnsupported;
    } else if (s.cfa_reg < kDwRegs && FitsInt32(s.cfa_offset)) {
      row.cfa = CfiRow::kCfaReg;
      row.cfa_reg = static_cast<uint8_t>(s.cfa_reg);
      row.cfa_offset = static_cast<int32_t>(s.cfa_offset);
    }
    Reduce(s.rbp, &row.rbp, &row.rbp_offset, &row.rbp_expr, CfiRow::kSame);
    Reduce(s.ra, &row.ra, &row.ra_offset, &row.ra_expr, CfiRow::kUnsupported);
    // The caller's rsp is the CFA (the x86-64 convention). A rule for rsp is only accepted
    // when it says the same: the value CFA + 0, or (signal frames) the saved rsp that the CFA
    // expression also loads.
    bool rsp_ok = s.rsp.kind == Rule::kNone || s.rsp.kind == Rule::kSame ||
                  (s.rsp.kind == Rule::kValOffset && s.rsp.value == 0) ||
                  (s.rsp.kind == Rule::kExpr && s.cfa_is_expr);
    if (!rsp_ok) row.cfa = CfiRow::kCfaUnsupported;
    if (!rows_.empty() && rows_.back().pc == pc) {
      rows_.back() = row;
    } else {
      rows_.push_back(row);
    }
  }

  const std::vector<CfiRow>& rows() const { return rows_; }

 private:
  bool AddExpression(std::span<const uint8_t> e, uint16_t* index) {
    if (expressions_.size() >= UINT16_MAX) return false;
    *index = static_cast<uint16_t>(expressions_.size());
    expressions_.push_back(e);
    return true;
  }

  // One register's rule as a row holds it; `none` is what no rule means for the register.
  void Reduce(const Rule& rule, CfiRow::Reg* kind, int32_t* offset, uint16_t* expr,
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
        *kind = AddExpression(rule.expr, expr) ? CfiRow::kAtExpr : CfiRow::kUnsupported;
        break;
      default: *kind = CfiRow::kUnsupported; break;
    }
  }

  bool signal_, debug_;
  std::vector<std::span<const uint8_t>>& expressions_;
  std::vector<CfiRow> rows_;
};

// The interpreter of DW_CFA_ operations: runs a CIE's initial instructions, then an FDE's,
// keeping the rules for the CFA and the three registers, and hands the state to a RowWriter
// each time the location advances. Any malformed operation stops it (ok() false).
class CfaProgram {
 public:
  CfaProgram(uint64_t code_align, int64_t data_align, uint8_t fde_encoding, uint64_t begin,
             RowWriter* rows)
      : code_align_(code_align), data_align_(data_align), fde_encoding_(fde_encoding),
        loc_(begin), rows_(*rows) {}

  /// Runs `code`: the CIE's instructions (`in_cie`: they may not advance; the state they
  /// leave is what DW_CFA_restore goes back to), or the FDE's. False when malformed.
  bool Run(std::string_view code, bool in_cie) {
    in_cie_ = in_cie;
    code_ = code;
    DwarfReader r(code);
    r_ = &r;
    while (!r.at_end() && ok_) {
      Execute(r.U8());
      if (!r.ok()) ok_ = false;
      if (rows_.rows().size() > kMaxRowsPerFde) ok_ = false;
    }
    r_ = nullptr;
    if (in_cie) initial_ = state_;
    return ok_;
  }

  /// The last row, up to the FDE's `end`.
  void Finish(uint64_t end) {
    if (loc_ < end) rows_.Emit(state_, loc_);
  }

 private:
  // One operation: the primary ones (the opcode's high two bits), the location and the
  // state stack here, the others by what they set.
  void Execute(uint8_t op) {
    DwarfReader& r = *r_;
    const uint8_t high = op & 0xc0, low = op & 0x3f;
    if (high == 0x40) return Advance(low);
    if (high == 0x80) return SetRule(low, {Rule::kOffset, Factor(r.Uleb(), data_align_), {}});
    if (high == 0xc0) return Restore(low);
    switch (op) {
      case 0x00: break;  // nop
      case 0x01: SetLoc(r.Pointer(fde_encoding_)); break;
      case 0x02: Advance(r.U8()); break;
      case 0x03: Advance(r.U16()); break;
      case 0x04: Advance(r.U32()); break;
      case 0x0a:  // remember_state
        if (saved_.size() >= kMaxStateStack) ok_ = false;
        else saved_.push_back(state_);
        break;
      case 0x0b:  // restore_state: the CFA comes back with the rules, as in libgcc
                  // (GCC's epilogues rely on it)
        if (saved_.empty()) {
          ok_ = false;
        } else {
          state_ = saved_.back();
          saved_.pop_back();
        }
        break;
      case 0x0c: case 0x0d: case 0x0e: case 0x0f: case 0x12: case 0x13: DefineCfa(op); break;
      case 0x2e: r.Uleb(); break;  // GNU_args_size
      default: SetRegisterRule(op); break;
    }
  }

  // def_cfa and its variants.
  void DefineCfa(uint8_t op) {
    DwarfReader& r = *r_;
    switch (op) {
      case 0x0c:  // def_cfa
        state_.cfa_is_expr = false;
        state_.cfa_reg = r.Uleb();
        state_.cfa_offset = static_cast<int64_t>(r.Uleb());
        break;
      case 0x0d:  // def_cfa_register
        state_.cfa_is_expr = false;
        state_.cfa_reg = r.Uleb();
        break;
      case 0x0e: state_.cfa_offset = static_cast<int64_t>(r.Uleb()); break;
      case 0x0f:  // def_cfa_expression
        state_.cfa_is_expr = true;
        state_.cfa_expr = Block();
        break;
      case 0x12:  // def_cfa_sf
        state_.cfa_is_expr = false;
        state_.cfa_reg = r.Uleb();
        state_.cfa_offset = Factor(static_cast<uint64_t>(r.Sleb()), data_align_);
        break;
      case 0x13: state_.cfa_offset = Factor(static_cast<uint64_t>(r.Sleb()), data_align_); break;
    }
  }

  // The operations that set one register's rule (each names the register first), and
  // anything that is no operation at all.
  void SetRegisterRule(uint8_t op) {
    DwarfReader& r = *r_;
    switch (op) {
      case 0x05: {  // offset_extended
        uint64_t reg = r.Uleb();
        SetRule(reg, {Rule::kOffset, Factor(r.Uleb(), data_align_), {}});
        break;
      }
      case 0x06: Restore(r.Uleb()); break;
      case 0x07: SetRule(r.Uleb(), {Rule::kUndefined, 0, {}}); break;
      case 0x08: SetRule(r.Uleb(), {Rule::kSame, 0, {}}); break;
      case 0x09: {  // register
        uint64_t reg = r.Uleb();
        SetRule(reg, {Rule::kRegister, static_cast<int64_t>(r.Uleb()), {}});
        break;
      }
      case 0x10: {  // expression
        uint64_t reg = r.Uleb();
        SetRule(reg, {Rule::kExpr, 0, Block()});
        break;
      }
      case 0x11: {  // offset_extended_sf
        uint64_t reg = r.Uleb();
        SetRule(reg, {Rule::kOffset, Factor(static_cast<uint64_t>(r.Sleb()), data_align_), {}});
        break;
      }
      case 0x14: {  // val_offset
        uint64_t reg = r.Uleb();
        SetRule(reg, {Rule::kValOffset, Factor(r.Uleb(), data_align_), {}});
        break;
      }
      case 0x15: {  // val_offset_sf
        uint64_t reg = r.Uleb();
        SetRule(reg,
                {Rule::kValOffset, Factor(static_cast<uint64_t>(r.Sleb()), data_align_), {}});
        break;
      }
      case 0x16: {  // val_expression
        uint64_t reg = r.Uleb();
        SetRule(reg, {Rule::kValExpr, 0, Block()});
        break;
      }
      case 0x2f: {  // GNU_negative_offset_extended
        uint64_t reg = r.Uleb();
        SetRule(reg, {Rule::kOffset, Factor(0 - r.Uleb(), data_align_), {}});
        break;
      }
      default: ok_ = false; break;
    }
  }

  void SetRule(uint64_t reg, Rule rule) {
    if (Rule* p = state_.For(reg)) *p = rule;
  }

  void Restore(uint64_t reg) {
    if (Rule* p = state_.For(reg)) *p = *initial_.For(reg);
  }

  void Advance(uint64_t delta) {
    if (in_cie_) {
      ok_ = false;  // a CIE cannot advance
      return;
    }
    uint64_t next = loc_ + delta * code_align_;
    if (next > loc_) {
      rows_.Emit(state_, loc_);
      loc_ = next;
    }
  }

  void SetLoc(uint64_t to) {
    if (in_cie_ || to < loc_) {
      ok_ = false;
      return;
    }
    if (to > loc_) {
      rows_.Emit(state_, loc_);
      loc_ = to;
    }
  }

  // A block (an expression) of ULEB128 length, as a view into the instructions.
  std::span<const uint8_t> Block() {
    DwarfReader& r = *r_;
    uint64_t n = r.Uleb();
    if (!r.ok() || n > r.left()) {
      ok_ = false;
      return std::span<const uint8_t>();
    }
    auto s = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(code_.data() + r.pos()), n);
    r.Skip(n);
    return s;
  }

  const uint64_t code_align_;
  const int64_t data_align_;
  const uint8_t fde_encoding_;
  uint64_t loc_;
  RowWriter& rows_;
  State initial_, state_;
  std::vector<State> saved_;
  bool ok_ = true;
  bool in_cie_ = true;
  std::string_view code_;
  DwarfReader* r_ = nullptr;  // over code_, while Run runs
};

}  // namespace

// Runs the CIE's and the FDE's instructions and keeps the rows, reduced to CfiRow.
bool CfiTable::Compile(Fde& fde) {
  Cie cie;
  uint64_t begin, end;
  std::string_view program;
  if (!ReadFdeHeader(fde, &cie, &begin, &end, &program)) return false;
  fde.pc_end = end;
  RowWriter rows(cie.signal, fde.debug, &expressions_);
  CfaProgram cfa(cie.code_align, cie.data_align, cie.fde_encoding, begin, &rows);
  if (!cfa.Run(cie.instructions, true) || !cfa.Run(program, false)) return false;
  cfa.Finish(end);
  fde.rows = static_cast<int32_t>(rows_.size());
  fde.row_count = static_cast<uint32_t>(rows.rows().size());
  rows_.insert(rows_.end(), rows.rows().begin(), rows.rows().end());
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
  return image_->FileOffsetToVaddr(offset, vaddr);
}

std::span<const uint8_t> CfiTable::Expression(uint16_t index) const {
  return index < expressions_.size() ? expressions_[index] : std::span<const uint8_t>();
}

}  // namespace pf
