// The DWARF expression evaluator of cfi.h (a template: the memory reader is inlined). A stack
// machine of 64 values over the operations CFI uses; every push, pop and read is checked, and
// DW_OP_skip/bra loops end after 1000 steps. The operations that do not read memory are
// evaluated by two plain functions (the constants and the stack's own operations; the
// arithmetic, logic and comparisons), so only the loop and DW_OP_deref depend on the reader.
#pragma once

#include <utility>

#include "base/dwarf_reader.h"

namespace pf {

namespace cfi_detail {

// The evaluation stack: every push and pop checked.
struct ExprStack {
  static constexpr size_t kDepth = 64;
  uint64_t v[kDepth];
  size_t n = 0;

  bool Push(uint64_t x) {
    if (n == kDepth) return false;
    v[n++] = x;
    return true;
  }
  bool Pop(uint64_t* x) {
    if (n == 0) return false;
    *x = v[--n];
    return true;
  }
  // The two operands of a binary operation: `a` below, `b` on top.
  bool Pop2(uint64_t* a, uint64_t* b) { return Pop(b) && Pop(a); }
};

// DW_OP_addr, the constants (DW_OP_const*) and the stack's own operations (dup, drop, over,
// pick, swap, rot). False when `op` is none of them or the stack is too short or full.
inline bool EvalStackOp(uint8_t op, DwarfReader& r, ExprStack& s) {
  uint64_t a;
  size_t n = s.n;
  switch (op) {
    case 0x03: return s.Push(r.U64());  // addr
    case 0x08: return s.Push(r.U8());
    case 0x09: return s.Push(static_cast<uint64_t>(static_cast<int8_t>(r.U8())));
    case 0x0a: return s.Push(r.U16());
    case 0x0b: return s.Push(static_cast<uint64_t>(static_cast<int16_t>(r.U16())));
    case 0x0c: return s.Push(r.U32());
    case 0x0d: return s.Push(static_cast<uint64_t>(static_cast<int32_t>(r.U32())));
    case 0x0e: case 0x0f: return s.Push(r.U64());
    case 0x10: return s.Push(r.Uleb());
    case 0x11: return s.Push(static_cast<uint64_t>(r.Sleb()));
    case 0x12: return n != 0 && s.Push(s.v[n - 1]);  // dup
    case 0x13: return s.Pop(&a);                     // drop
    case 0x14: return n >= 2 && s.Push(s.v[n - 2]);  // over
    case 0x15: {                                     // pick
      uint8_t i = r.U8();
      return i < n && s.Push(s.v[n - 1 - i]);
    }
    case 0x16:  // swap
      if (n < 2) return false;
      std::swap(s.v[n - 1], s.v[n - 2]);
      return true;
    case 0x17:  // rot
      if (n < 3) return false;
      a = s.v[n - 1];
      s.v[n - 1] = s.v[n - 2];
      s.v[n - 2] = s.v[n - 3];
      s.v[n - 3] = a;
      return true;
    default: return false;
  }
}

// The arithmetic, logic and comparison operations. False when `op` is none of them, the
// stack is too short, or a division by zero.
inline bool EvalArithmetic(uint8_t op, DwarfReader& r, ExprStack& s) {
  uint64_t a, b;
  switch (op) {
    case 0x19:  // abs
      if (!s.Pop(&a)) return false;
      s.Push(static_cast<int64_t>(a) < 0 ? -a : a);
      return true;
    case 0x1f: if (!s.Pop(&a)) return false; s.Push(-a); return true;
    case 0x20: if (!s.Pop(&a)) return false; s.Push(~a); return true;
    case 0x23: if (!s.Pop(&a)) return false; s.Push(a + r.Uleb()); return true;  // plus_uconst
    case 0x1b:  // div (signed)
      if (!s.Pop2(&a, &b) || b == 0) return false;
      // INT64_MIN / -1 overflows: the quotient wraps, as the hardware's would not.
      s.Push(b == ~uint64_t{0} ? 0 - a
                               : static_cast<uint64_t>(static_cast<int64_t>(a) /
                                                       static_cast<int64_t>(b)));
      return true;
    case 0x1d: if (!s.Pop2(&a, &b) || b == 0) return false; s.Push(a % b); return true;
    default: break;
  }
  if (!s.Pop2(&a, &b)) return false;  // (an unknown op fails here or below: either way false)
  switch (op) {
    case 0x1a: s.Push(a & b); return true;
    case 0x1c: s.Push(a - b); return true;
    case 0x1e: s.Push(a * b); return true;
    case 0x21: s.Push(a | b); return true;
    case 0x22: s.Push(a + b); return true;
    case 0x24: s.Push(b >= 64 ? 0 : a << b); return true;
    case 0x25: s.Push(b >= 64 ? 0 : a >> b); return true;
    case 0x26:
      s.Push(static_cast<uint64_t>(static_cast<int64_t>(a) >> (b >= 64 ? 63 : b)));
      return true;
    case 0x27: s.Push(a ^ b); return true;
    case 0x29: s.Push(a == b); return true;
    case 0x2a: s.Push(static_cast<int64_t>(a) >= static_cast<int64_t>(b)); return true;
    case 0x2b: s.Push(static_cast<int64_t>(a) > static_cast<int64_t>(b)); return true;
    case 0x2c: s.Push(static_cast<int64_t>(a) <= static_cast<int64_t>(b)); return true;
    case 0x2d: s.Push(static_cast<int64_t>(a) < static_cast<int64_t>(b)); return true;
    case 0x2e: s.Push(a != b); return true;
    default: return false;
  }
}

}  // namespace cfi_detail

template <typename ReadFn>
bool EvalCfiExpression(std::span<const uint8_t> ops, const uint64_t* regs, uint32_t known,
                       const ReadFn& read, bool push_cfa, uint64_t cfa, uint64_t* out) {
  constexpr int kMaxSteps = 1000;  // DW_OP_skip/bra can loop
  cfi_detail::ExprStack s;
  if (push_cfa) s.Push(cfa);
  DwarfReader r(std::string_view(reinterpret_cast<const char*>(ops.data()), ops.size()));
  for (int steps = 0; !r.at_end(); ++steps) {
    if (steps > kMaxSteps) return false;
    uint8_t op = r.U8();
    if (op >= 0x30 && op <= 0x4f) {  // DW_OP_lit0..31
      if (!s.Push(op - 0x30u)) return false;
      continue;
    }
    if ((op >= 0x70 && op <= 0x8f) || op == 0x92) {  // DW_OP_breg0..31, DW_OP_bregx
      uint64_t reg = op == 0x92 ? r.Uleb() : op - 0x70u;
      int64_t off = r.Sleb();
      if (!r.ok() || reg >= kDwRegs || !(known & (1u << reg))) return false;
      if (!s.Push(regs[reg] + static_cast<uint64_t>(off))) return false;
      continue;
    }
    uint64_t a, b;
    switch (op) {
      case 0x06:  // deref
        if (!s.Pop(&a) || !read(a, &b) || !s.Push(b)) return false;
        break;
      case 0x2f: {  // skip
        int16_t off = static_cast<int16_t>(r.U16());
        r.Seek(static_cast<size_t>(static_cast<int64_t>(r.pos()) + off));
        break;
      }
      case 0x28: {  // bra
        int16_t off = static_cast<int16_t>(r.U16());
        if (!s.Pop(&a)) return false;
        if (a != 0) r.Seek(static_cast<size_t>(static_cast<int64_t>(r.pos()) + off));
        break;
      }
      case 0x96: break;  // nop
      default:
        if (op <= 0x17 ? !cfi_detail::EvalStackOp(op, r, s)
                       : !cfi_detail::EvalArithmetic(op, r, s)) {
          return false;
        }
        break;
    }
    if (!r.ok()) return false;
  }
  if (!r.ok() || s.n == 0) return false;
  *out = s.v[s.n - 1];
  return true;
}

}  // namespace pf
