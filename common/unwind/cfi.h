#pragma once
// The unwind module (common/unwind/): DWARF unwinding of the user stacks copied into samples:
// CFI compiled into tables (this file), the walk (unwinder.h), and libdw's unwinder as
// fallback and oracle (libdw_unwinder.h).
//
// Call frame information of one x86-64 ELF module, compiled into rows that unwinding reads
// with a lookup, an add and a load per frame.
//
// Where the rules come from: .eh_frame, whose FDEs are found through the sorted table of
// .eh_frame_hdr (no parsing of the section up front), else by one scan of .eh_frame, else
// the binary's .debug_frame; a pc that no .eh_frame FDE covers is looked up in .debug_frame
// too, as libdw does (perf's libunwind reads no .debug_frame on x86-64). Rules are compiled
// lazily, per FDE, the first time a pc inside it is looked up: the CIE's initial
// instructions and the FDE's instructions are run once (every DW_CFA_* operation of DWARF 5 and GNU's two), and each
// row of the resulting table is reduced to what an unwinder needs on x86-64:
//   CFA      = register + offset, or a DWARF expression (PLT stubs, signal frames);
//   rbp      = unchanged, saved at CFA + offset, or at an expression's address;
//   return   = saved at CFA + offset, at an expression's address, or undefined (the outermost
//              frame: _start, clone, thread starts).
// Rules about other registers are dropped; a row whose CFA or rbp rule cannot be written this
// way is marked unsupported, and the unwinder hands the sample to libdw.
//
// Every read of the sections is bounds-checked; corrupt CFI gives rows marked unsupported or
// no rows, never a crash or an endless loop.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

namespace elf {
class ElfImage;
}

/// DWARF register numbers on x86-64 (the System V ABI's table).
enum DwarfReg : uint8_t {
  kDwRax = 0, kDwRdx = 1, kDwRcx = 2, kDwRbx = 3, kDwRsi = 4, kDwRdi = 5, kDwRbp = 6,
  kDwRsp = 7, kDwR8 = 8, kDwR15 = 15, kDwRip = 16, kDwRegs = 17,
};

/// One row of unwind rules, for pcs [pc, next row's pc).
struct CfiRow {
  enum Cfa : uint8_t {
    kCfaReg,          // CFA = reg + offset
    kCfaExpr,         // CFA = value of expression `expr`
    kCfaUnsupported,
  };
  enum Reg : uint8_t {
    kSame,         // the caller's value is this frame's (rbp only)
    kAtCfa,        // saved at CFA + offset
    kValCfa,       // the value CFA + offset
    kAtExpr,       // saved at the address an expression computes
    kUndefined,    // no value: for the return address, the end of the stack
    kUnsupported,
  };
  uint64_t pc = 0;
  int32_t cfa_offset = 0;
  int32_t rbp_offset = 0;
  int32_t ra_offset = 0;
  uint16_t cfa_expr = 0, rbp_expr = 0, ra_expr = 0;  // indices into the table's expressions
  uint8_t cfa_reg = kDwRsp;
  Cfa cfa = kCfaUnsupported;
  Reg rbp = kSame;
  Reg ra = kUnsupported;
  bool signal_frame = false;  // the CIE says 'S': a signal trampoline (__restore_rt)
  bool debug_frame = false;   // from .debug_frame, which perf's libunwind does not read
};

class CfiTable {
 public:
  /// Reads the unwind sections of `image` (which must outlive the table). Returns a table
  /// with no FDEs when there is no usable CFI.
  static std::unique_ptr<CfiTable> FromElf(std::shared_ptr<const elf::ElfImage> image);
  /// The same over raw section bytes (tests, fuzzing): `eh_frame` at ELF address
  /// `eh_frame_vaddr`, optional `eh_frame_hdr` at `hdr_vaddr`, optional `debug_frame`.
  static std::unique_ptr<CfiTable> FromSections(std::string_view eh_frame, uint64_t eh_frame_vaddr,
                                                std::string_view eh_frame_hdr, uint64_t hdr_vaddr,
                                                std::string_view debug_frame);
  ~CfiTable();

  /// The row covering ELF address `pc`; false when no FDE covers it. Compiles the FDE on
  /// first use (so this is not const, and a table is used by one thread).
  bool Find(uint64_t pc, CfiRow* row);
  /// The ELF address of a file offset, through the PT_LOAD segment holding it (tables made
  /// from sections alone map offsets to themselves).
  bool FileOffsetToVaddr(uint64_t offset, uint64_t* vaddr) const;
  /// An expression a row refers to.
  std::span<const uint8_t> Expression(uint16_t index) const;

 private:
  struct Fde {
    uint64_t pc_begin;
    uint64_t pc_end;    // 0 until compiled when indexed from .eh_frame_hdr
    uint32_t offset;    // of the FDE in its section
    int32_t rows = -1;  // first row in rows_ (-1: not compiled; -2: unusable)
    uint32_t row_count = 0;
    bool debug = false;  // in .debug_frame
  };
  struct Cie;
  CfiTable() = default;
  std::string_view SectionBytes(const char* name, uint64_t* vaddr);
  void Index();
  void IndexFromHdr();
  void IndexByScan(std::string_view section, bool debug, std::vector<Fde>* into);
  void IndexDebugFrame(std::vector<Fde>* into);
  bool FindIn(std::vector<Fde>& fdes, uint64_t pc, CfiRow* row);
  bool ParseCie(std::string_view section, uint64_t offset, bool debug, Cie* cie) const;
  bool Compile(Fde& fde);
  bool ReadFdeHeader(const Fde& fde, Cie* cie, uint64_t* pc_begin, uint64_t* pc_end,
                     std::string_view* instructions) const;

  std::shared_ptr<const elf::ElfImage> image_;
  std::string_view eh_frame_, eh_frame_hdr_, debug_frame_;
  std::string debug_frame_copy_;  // a decompressed .debug_frame
  uint64_t eh_frame_vaddr_ = 0, hdr_vaddr_ = 0;
  std::vector<Fde> fdes_;           // sorted by pc_begin
  std::vector<Fde> fallback_fdes_;  // .debug_frame's, where .eh_frame's do not cover a pc
  bool debug_indexed_ = false;      // .debug_frame was read (into one of the two)
  std::vector<CfiRow> rows_;
  std::vector<std::span<const uint8_t>> expressions_;
  size_t compiled_ = 0;  // FDEs compiled so far
  // Where the FDE index came from: ".eh_frame_hdr", ".eh_frame", ".debug_frame" or "".
  // (.debug_frame also backs an .eh_frame index, for pcs none of its FDEs cover.)
  const char* source_ = "";
  friend struct CfiTableTestPeer;  // tests/unit/unwind_test.cpp
};

/// Evaluates a DWARF location expression on x86-64 (the operations CFI uses: literals,
/// constants, DW_OP_breg*, arithmetic, comparisons, DW_OP_deref). `regs`/`known` give the
/// register values; `read` loads 8 bytes of memory. With `push_cfa`, the CFA is pushed first
/// (DW_CFA_expression and DW_CFA_val_expression). False when an operation is unsupported, a
/// register is unknown or memory unreadable.
template <typename ReadFn>
bool EvalCfiExpression(std::span<const uint8_t> ops, const uint64_t* regs, uint32_t known,
                       const ReadFn& read, bool push_cfa, uint64_t cfa, uint64_t* out);

}  // namespace pf

#include "unwind/cfi_expression.inl"
