#include "unwind/unwinder.h"

#include <cstring>

namespace pf {

namespace {

// How far above the stack pointer a frame pointer may be for the frame-pointer fallback
// (libunwind's bound for its frame-chain guess).
constexpr uint64_t kMaxFrameChainGap = 0x4000;

// PERF_REG_X86_* (arch/x86/include/uapi/asm/perf_regs.h) -> DWARF register number.
constexpr int kPerfToDwarf[24] = {
    kDwRax, kDwRbx, kDwRcx, kDwRdx, kDwRsi, kDwRdi, kDwRbp, kDwRsp,  // AX..SP
    kDwRip, -1, -1, -1, -1, -1, -1, -1,                             // IP, FLAGS, segments
    8, 9, 10, 11, 12, 13, 14, 15,                                   // R8..R15
};
constexpr uint64_t kAbi64 = 2;  // PERF_SAMPLE_REGS_ABI_64

// Reads of the copied stack, as perf's unwinders allow them.
struct StackReader {
  uint64_t base;
  std::span<const uint8_t> bytes;
  mutable bool failed = false;
  bool operator()(uint64_t addr, uint64_t* value) const {
    if (addr < base || addr - base >= bytes.size() || bytes.size() - (addr - base) <= 8) {
      failed = true;
      return false;
    }
    std::memcpy(value, bytes.data() + (addr - base), 8);
    return true;
  }
};

}  // namespace

bool DwarfRegisters(const UserStack& in, uint64_t regs[kDwRegs], uint32_t* known) {
  *known = 0;
  if (in.abi != kAbi64) return false;
  size_t i = 0;
  for (unsigned bit = 0; bit < 64 && i < in.regs.size(); ++bit) {
    if (!(in.regs_mask & (uint64_t{1} << bit))) continue;
    uint64_t v = in.regs[i++];
    if (bit < 24 && kPerfToDwarf[bit] >= 0) {
      regs[kPerfToDwarf[bit]] = v;
      *known |= 1u << kPerfToDwarf[bit];
    }
  }
  constexpr uint32_t kNeeded = (1u << kDwRip) | (1u << kDwRsp);
  return (*known & kNeeded) == kNeeded;
}

UnwindEnd UnwindUserStack(const UserStack& in, ModuleLookup& modules, size_t max_frames,
                          std::vector<uint64_t>* ips) {
  uint64_t regs[kDwRegs] = {};
  uint32_t known = 0;
  if (!DwarfRegisters(in, regs, &known)) return UnwindEnd::kNoRegisters;
  if (max_frames == 0) return UnwindEnd::kMaxDepth;
  StackReader read{regs[kDwRsp], in.stack};
  ips->push_back(regs[kDwRip]);
  bool activation = true;  // the pc is exact (the sampled one, or after a signal frame)
  bool rbp_lost = false;   // the caller's rbp was saved beyond the copy
  for (;;) {
    if (ips->size() >= max_frames) return UnwindEnd::kMaxDepth;
    const uint64_t ip = regs[kDwRip];
    const uint64_t lookup = activation ? ip : ip - 1;
    UnwindModule module;
    CfiRow row;
    const ModuleLookup::Row found = modules.FindRow(lookup, &module, &row);
    if (found == ModuleLookup::Row::kNoModule) return UnwindEnd::kNoInfo;
    if (found == ModuleLookup::Row::kNoRow) {
      // Code without an FDE in a module that has CFI (crt code, hand-written assembly): the
      // frame-pointer chain, as perf's unwinders fall back to it.
      uint64_t caller_rbp, ra;
      const uint64_t rbp = regs[kDwRbp], sp = regs[kDwRsp];
      if (!(known & (1u << kDwRbp)) || rbp == 0 || rbp < sp || rbp - sp > kMaxFrameChainGap ||
          !read(rbp, &caller_rbp) || !read(rbp + 8, &ra) || ra == 0) {
        return UnwindEnd::kNoInfo;
      }
      regs[kDwRsp] = rbp + 16;
      regs[kDwRbp] = caller_rbp;
      regs[kDwRip] = ra;
      known = (1u << kDwRsp) | (1u << kDwRip) | (1u << kDwRbp);
      activation = false;
      rbp_lost = false;
      ips->push_back(ra - 1);
      continue;
    }

    // The CFA.
    uint64_t cfa;
    read.failed = false;
    if (row.cfa == CfiRow::kCfaReg) {
      if (!(known & (1u << row.cfa_reg))) {
        return row.cfa_reg == kDwRbp && rbp_lost ? UnwindEnd::kLostRegister
                                                 : UnwindEnd::kUnsupported;
      }
      cfa = regs[row.cfa_reg] + static_cast<uint64_t>(static_cast<int64_t>(row.cfa_offset));
    } else if (row.cfa == CfiRow::kCfaExpr) {
      if (!EvalCfiExpression(module.cfi->Expression(row.cfa_expr), regs, known, read, false, 0,
                             &cfa)) {
        return read.failed ? UnwindEnd::kTruncated
               : rbp_lost  ? UnwindEnd::kLostRegister
                           : UnwindEnd::kUnsupported;
      }
    } else {
      return UnwindEnd::kUnsupported;
    }

    // The return address.
    uint64_t ra;
    switch (row.ra) {
      case CfiRow::kUndefined: return UnwindEnd::kComplete;
      case CfiRow::kAtCfa:
        if (!read(cfa + static_cast<uint64_t>(static_cast<int64_t>(row.ra_offset)), &ra)) {
          return UnwindEnd::kTruncated;
        }
        break;
      case CfiRow::kValCfa:
        ra = cfa + static_cast<uint64_t>(static_cast<int64_t>(row.ra_offset));
        break;
      case CfiRow::kAtExpr: {
        uint64_t at;
        read.failed = false;
        if (!EvalCfiExpression(module.cfi->Expression(row.ra_expr), regs, known, read, true, cfa,
                               &at)) {
          return read.failed ? UnwindEnd::kTruncated : UnwindEnd::kUnsupported;
        }
        if (!read(at, &ra)) return UnwindEnd::kTruncated;
        break;
      }
      default: return UnwindEnd::kUnsupported;
    }

    // The caller's rbp (unknown when it cannot be had: only a later rule needing it fails).
    uint64_t rbp = regs[kDwRbp];
    bool rbp_known = known & (1u << kDwRbp);
    switch (row.rbp) {
      case CfiRow::kSame: break;
      case CfiRow::kAtCfa:
        rbp_known = read(cfa + static_cast<uint64_t>(static_cast<int64_t>(row.rbp_offset)), &rbp);
        rbp_lost = !rbp_known;
        break;
      case CfiRow::kValCfa:
        rbp = cfa + static_cast<uint64_t>(static_cast<int64_t>(row.rbp_offset));
        rbp_known = true;
        break;
      case CfiRow::kAtExpr: {
        uint64_t at;
        read.failed = false;
        rbp_known = EvalCfiExpression(module.cfi->Expression(row.rbp_expr), regs, known, read,
                                      true, cfa, &at) &&
                    read(at, &rbp);
        rbp_lost = !rbp_known && read.failed;
        break;
      }
      default: rbp_known = false; rbp_lost = false; break;
    }
    if (row.rbp == CfiRow::kSame || row.rbp == CfiRow::kValCfa) rbp_lost = rbp_lost && !rbp_known;

    // A return address of 0 where the CFI says where it is: libunwind takes 0 for the
    // caller, and perf prints it as the mark of a cut chain (ffffffffffffffff). Rules from
    // .debug_frame, which libunwind does not read, end as libdw ends there: cleanly (Go's
    // goroutines start at runtime.goexit, whose return address is 0).
    if (ra == 0) return row.debug_frame ? UnwindEnd::kComplete : UnwindEnd::kZeroReturn;
    // A frame must move up the stack, except out of a signal handler (sigaltstack).
    if (cfa <= regs[kDwRsp] && !row.signal_frame) return UnwindEnd::kBadFrame;

    regs[kDwRsp] = cfa;
    regs[kDwRip] = ra;
    regs[kDwRbp] = rbp;
    known = (1u << kDwRsp) | (1u << kDwRip) | (rbp_known ? 1u << kDwRbp : 0);
    activation = row.signal_frame;
    ips->push_back(activation ? ra : ra - 1);
  }
}

const char* UnwindEndName(UnwindEnd end) {
  switch (end) {
    case UnwindEnd::kComplete: return "complete";
    case UnwindEnd::kTruncated: return "truncated";
    case UnwindEnd::kLostRegister: return "truncated (a register)";
    case UnwindEnd::kNoInfo: return "no unwind info";
    case UnwindEnd::kUnsupported: return "unsupported rule";
    case UnwindEnd::kNoRegisters: return "no user registers";
    case UnwindEnd::kMaxDepth: return "too deep";
    case UnwindEnd::kBadFrame: return "bad frame";
    case UnwindEnd::kZeroReturn: return "return address 0";
  }
  return "?";
}

}  // namespace pf
