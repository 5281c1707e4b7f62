// The DWARF expression evaluator of cfi.h (a template: the memory reader is inlined).
#pragma once

#include "base/dwarf_reader.h"

namespace pf {

template <typename ReadFn>
bool EvalCfiExpression(std::span<const uint8_t> ops, const uint64_t* regs, uint32_t known,
                       const ReadFn& read, bool push_cfa, uint64_t cfa, uint64_t* out) {
  constexpr size_t kDepth = 64;
  constexpr int kMaxSteps = 1000;  // DW_OP_skip/bra can loop
  uint64_t stack[kDepth];
  size_t n = 0;
  auto push = [&](uint64_t v) {
    if (n == kDepth) return false;
    stack[n++] = v;
    return true;
  };
  if (push_cfa) push(cfa);
  DwarfReader r(std::string_view(reinterpret_cast<const char*>(ops.data()), ops.size()));
  for (int steps = 0; !r.at_end(); ++steps) {
    if (steps > kMaxSteps) return false;
    uint8_t op = r.U8();
    if (op >= 0x30 && op <= 0x4f) {  // DW_OP_lit0..31
      if (!push(op - 0x30u)) return false;
      continue;
    }
    if ((op >= 0x70 && op <= 0x8f) || op == 0x92) {  // DW_OP_breg0..31, DW_OP_bregx
      uint64_t reg = op == 0x92 ? r.Uleb() : op - 0x70u;
      int64_t off = r.Sleb();
      if (!r.ok() || reg >= kDwRegs || !(known & (1u << reg))) return false;
      if (!push(regs[reg] + static_cast<uint64_t>(off))) return false;
      continue;
    }
    uint64_t a, b;
    auto pop = [&](uint64_t* v) {
      if (n == 0) return false;
      *v = stack[--n];
      return true;
    };
    auto binary = [&]() { return pop(&b) && pop(&a); };
    switch (op) {
      case 0x03: if (!push(r.U64())) return false; break;                 // addr
      case 0x06:                                                           // deref
        if (!pop(&a) || !read(a, &b) || !push(b)) return false;
        break;
      case 0x08: if (!push(r.U8())) return false; break;
      case 0x09: if (!push(static_cast<uint64_t>(static_cast<int8_t>(r.U8())))) return false; break;
      case 0x0a: if (!push(r.U16())) return false; break;
      case 0x0b: if (!push(static_cast<uint64_t>(static_cast<int16_t>(r.U16())))) return false; break;
      case 0x0c: if (!push(r.U32())) return false; break;
      case 0x0d: if (!push(static_cast<uint64_t>(static_cast<int32_t>(r.U32())))) return false; break;
      case 0x0e: case 0x0f: if (!push(r.U64())) return false; break;
      case 0x10: if (!push(r.Uleb())) return false; break;
      case 0x11: if (!push(static_cast<uint64_t>(r.Sleb()))) return false; break;
      case 0x12: if (n == 0 || !push(stack[n - 1])) return false; break;   // dup
      case 0x13: if (!pop(&a)) return false; break;                        // drop
      case 0x14: if (n < 2 || !push(stack[n - 2])) return false; break;    // over
      case 0x15: {                                                         // pick
        uint8_t i = r.U8();
        if (i >= n || !push(stack[n - 1 - i])) return false;
        break;
      }
      case 0x16: if (n < 2) return false; std::swap(stack[n - 1], stack[n - 2]); break;
      case 0x17:                                                           // rot
        if (n < 3) return false;
        a = stack[n - 1];
        stack[n - 1] = stack[n - 2];
        stack[n - 2] = stack[n - 3];
        stack[n - 3] = a;
        break;
      case 0x19:                                                           // abs
        if (!pop(&a)) return false;
        push(static_cast<int64_t>(a) < 0 ? -a : a);
        break;
      case 0x1a: if (!binary()) return false; push(a & b); break;
      case 0x1b:                                                           // div (signed)
        if (!binary() || b == 0) return false;
        // INT64_MIN / -1 overflows: the quotient wraps, as the hardware's would not.
        push(b == ~uint64_t{0} ? 0 - a
                               : static_cast<uint64_t>(static_cast<int64_t>(a) /
                                                       static_cast<int64_t>(b)));
        break;
      case 0x1c: if (!binary()) return false; push(a - b); break;
      case 0x1d: if (!binary() || b == 0) return false; push(a % b); break;
      case 0x1e: if (!binary()) return false; push(a * b); break;
      case 0x1f: if (!pop(&a)) return false; push(-a); break;
      case 0x20: if (!pop(&a)) return false; push(~a); break;
      case 0x21: if (!binary()) return false; push(a | b); break;
      case 0x22: if (!binary()) return false; push(a + b); break;
      case 0x23: if (!pop(&a)) return false; push(a + r.Uleb()); break;
      case 0x24: if (!binary()) return false; push(b >= 64 ? 0 : a << b); break;
      case 0x25: if (!binary()) return false; push(b >= 64 ? 0 : a >> b); break;
      case 0x26:
        if (!binary()) return false;
        push(static_cast<uint64_t>(static_cast<int64_t>(a) >> (b >= 64 ? 63 : b)));
        break;
      case 0x27: if (!binary()) return false; push(a ^ b); break;
      case 0x29: if (!binary()) return false; push(a == b); break;
      case 0x2a: if (!binary()) return false; push(static_cast<int64_t>(a) >= static_cast<int64_t>(b)); break;
      case 0x2b: if (!binary()) return false; push(static_cast<int64_t>(a) > static_cast<int64_t>(b)); break;
      case 0x2c: if (!binary()) return false; push(static_cast<int64_t>(a) <= static_cast<int64_t>(b)); break;
      case 0x2d: if (!binary()) return false; push(static_cast<int64_t>(a) < static_cast<int64_t>(b)); break;
      case 0x2e: if (!binary()) return false; push(a != b); break;
      case 0x2f: {                                                         // skip
        int16_t off = static_cast<int16_t>(r.U16());
        r.Seek(static_cast<size_t>(static_cast<int64_t>(r.pos()) + off));
        break;
      }
      case 0x28: {                                                         // bra
        int16_t off = static_cast<int16_t>(r.U16());
        if (!pop(&a)) return false;
        if (a != 0) r.Seek(static_cast<size_t>(static_cast<int64_t>(r.pos()) + off));
        break;
      }
      case 0x96: break;                                                    // nop
      default: return false;
    }
    if (!r.ok()) return false;
  }
  if (!r.ok() || n == 0) return false;
  *out = stack[n - 1];
  return true;
}

}  // namespace pf
