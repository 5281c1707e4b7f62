// The table unwinder (unwinder.h). A Walk holds the registers unwinding needs (rip, rsp, rbp)
// and steps one frame at a time: the module of the pc, its CFI row, the CFA, the return
// address loaded from the stack copy. Every load is checked against the copy and ends the
// walk with a reason (UnwindEnd) rather than a guess. UnwindUserStacks walks several stacks in
// turn, so that the table lookups of one stack overlap the memory loads of another.

#include "unwind/unwinder.h"

#include <algorithm>
#include <cstring>

#include "base/prefetch.h"

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
  /// Asks for the word at `addr` ahead of its read, when it is in the copy.
  void Prefetch(uint64_t addr) const {
    if (addr >= base && addr - base < bytes.size()) pf::Prefetch(bytes.data() + (addr - base));
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

namespace {

// An address and a signed CFI offset (wrapping, as the unsigned sum does).
uint64_t Plus(uint64_t base, int64_t offset) { return base + static_cast<uint64_t>(offset); }

// One stack's walk, a frame at a time. Look finds the frame's CFI row and asks for the
// stack words the step will read; Step reads them and moves to the caller. Between the two,
// other walks can take their turns (UnwindUserStacks), so that the reads of several stacks
// wait on memory together rather than one after another: a stack copy is read once, from
// main memory, and each frame's read depends on the one before.
class Walk {
 public:
  /// False when the walk ends before its first frame (end()).
  bool Start(const UserStack& in, size_t max_frames, std::vector<uint64_t>* ips) {
    ips_ = ips;
    max_frames_ = max_frames;
    if (!DwarfRegisters(in, regs_, &known_)) return Stop(UnwindEnd::kNoRegisters);
    if (max_frames == 0) return Stop(UnwindEnd::kMaxDepth);
    read_ = StackReader{regs_[kDwRsp], in.stack};
    ips->push_back(regs_[kDwRip]);
    return true;
  }

  void Look(ModuleLookup& modules) {
    if (ips_->size() >= max_frames_) {
      depth_reached_ = true;
      return;
    }
    const uint64_t ip = regs_[kDwRip];
    found_ = modules.FindRow(activation_ ? ip : ip - 1, &module_, &row_);
    if (found_ == ModuleLookup::Row::kNoRow) {
      if (known_ & (1u << kDwRbp)) read_.Prefetch(regs_[kDwRbp]);
    } else if (found_ == ModuleLookup::Row::kFound && row_.cfa == CfiRow::kCfaReg &&
               (known_ & (1u << row_.cfa_reg))) {
      const uint64_t cfa = Plus(regs_[row_.cfa_reg], row_.cfa_offset);
      if (row_.ra == CfiRow::kAtCfa) {
        read_.Prefetch(Plus(cfa, row_.ra_offset));
      }
      if (row_.rbp == CfiRow::kAtCfa) {
        read_.Prefetch(Plus(cfa, row_.rbp_offset));
      }
    }
  }

  /// The frame Look found: false when the walk ends there (end()).
  bool Step();

  UnwindEnd end() const { return end_; }

 private:
  bool Stop(UnwindEnd end) {
    end_ = end;
    return false;
  }
  // The steps of Step: the first three return false when the walk ends there (Stop); the
  // last one whether the caller's rbp is known.
  bool StepByFramePointer();
  bool FindCfa(uint64_t* cfa);
  bool FindReturnAddress(uint64_t cfa, uint64_t* ra);
  bool FindCallerRbp(uint64_t cfa, uint64_t* rbp);

  uint64_t regs_[kDwRegs] = {};
  uint32_t known_ = 0;
  bool activation_ = true;  // the pc is exact (the sampled one, or after a signal frame)
  bool rbp_lost_ = false;   // the caller's rbp was saved beyond the copy
  bool depth_reached_ = false;
  StackReader read_{0, {}};
  size_t max_frames_ = 0;
  std::vector<uint64_t>* ips_ = nullptr;
  // What Look found.
  ModuleLookup::Row found_ = ModuleLookup::Row::kNoModule;
  UnwindModule module_;
  CfiRow row_;
  UnwindEnd end_ = UnwindEnd::kComplete;
};

bool Walk::Step() {
  if (depth_reached_) return Stop(UnwindEnd::kMaxDepth);
  if (found_ == ModuleLookup::Row::kNoModule) return Stop(UnwindEnd::kNoInfo);
  if (found_ == ModuleLookup::Row::kNoRow) return StepByFramePointer();
  const CfiRow& row = row_;
  uint64_t cfa, ra, rbp;
  if (!FindCfa(&cfa) || !FindReturnAddress(cfa, &ra)) return false;
  const bool rbp_known = FindCallerRbp(cfa, &rbp);

  // A return address of 0 where the CFI says where it is: libunwind takes 0 for the
  // caller, and perf prints it as the mark of a cut chain (ffffffffffffffff). Rules from
  // .debug_frame, which libunwind does not read, end as libdw ends there: cleanly (Go's
  // goroutines start at runtime.goexit, whose return address is 0).
  if (ra == 0) return Stop(row.debug_frame ? UnwindEnd::kComplete : UnwindEnd::kZeroReturn);
  // A frame must move up the stack, except out of a signal handler (sigaltstack).
  if (cfa <= regs_[kDwRsp] && !row.signal_frame) return Stop(UnwindEnd::kBadFrame);

  regs_[kDwRsp] = cfa;
  regs_[kDwRip] = ra;
  regs_[kDwRbp] = rbp;
  known_ = (1u << kDwRsp) | (1u << kDwRip) | (rbp_known ? 1u << kDwRbp : 0);
  activation_ = row.signal_frame;
  ips_->push_back(activation_ ? ra : ra - 1);
  return true;
}

// Code without an FDE in a module that has CFI (crt code, hand-written assembly): the
// frame-pointer chain, as perf's unwinders fall back to it.
bool Walk::StepByFramePointer() {
  uint64_t caller_rbp, ra;
  const uint64_t rbp = regs_[kDwRbp], sp = regs_[kDwRsp];
  if (!(known_ & (1u << kDwRbp)) || rbp == 0 || rbp < sp || rbp - sp > kMaxFrameChainGap ||
      !read_(rbp, &caller_rbp) || !read_(rbp + 8, &ra) || ra == 0) {
    return Stop(UnwindEnd::kNoInfo);
  }
  regs_[kDwRsp] = rbp + 16;
  regs_[kDwRbp] = caller_rbp;
  regs_[kDwRip] = ra;
  known_ = (1u << kDwRsp) | (1u << kDwRip) | (1u << kDwRbp);
  activation_ = false;
  rbp_lost_ = false;
  ips_->push_back(ra - 1);
  return true;
}

// The CFA by the row's rule.
bool Walk::FindCfa(uint64_t* cfa) {
  const CfiRow& row = row_;
  read_.failed = false;
  if (row.cfa == CfiRow::kCfaReg) {
    if (!(known_ & (1u << row.cfa_reg))) {
      return Stop(row.cfa_reg == kDwRbp && rbp_lost_ ? UnwindEnd::kLostRegister
                                                     : UnwindEnd::kUnsupported);
    }
    *cfa = Plus(regs_[row.cfa_reg], row.cfa_offset);
  } else if (row.cfa == CfiRow::kCfaExpr) {
    if (!EvalCfiExpression(module_.cfi->Expression(row.cfa_expr), regs_, known_, read_, false,
                           0, cfa)) {
      return Stop(read_.failed ? UnwindEnd::kTruncated
                  : rbp_lost_  ? UnwindEnd::kLostRegister
                               : UnwindEnd::kUnsupported);
    }
  } else {
    return Stop(UnwindEnd::kUnsupported);
  }
  return true;
}

// The return address by the row's rule (an undefined one ends the walk: the outermost frame).
bool Walk::FindReturnAddress(uint64_t cfa, uint64_t* ra) {
  const CfiRow& row = row_;
  switch (row.ra) {
    case CfiRow::kUndefined: return Stop(UnwindEnd::kComplete);
    case CfiRow::kAtCfa:
      if (!read_(Plus(cfa, row.ra_offset), ra)) {
        return Stop(UnwindEnd::kTruncated);
      }
      break;
    case CfiRow::kValCfa:
      *ra = Plus(cfa, row.ra_offset);
      break;
    case CfiRow::kAtExpr: {
      uint64_t at;
      read_.failed = false;
      if (!EvalCfiExpression(module_.cfi->Expression(row.ra_expr), regs_, known_, read_, true,
                             cfa, &at)) {
        return Stop(read_.failed ? UnwindEnd::kTruncated : UnwindEnd::kUnsupported);
      }
      if (!read_(at, ra)) return Stop(UnwindEnd::kTruncated);
      break;
    }
    default: return Stop(UnwindEnd::kUnsupported);
  }
  return true;
}

// The caller's rbp, false when it cannot be had (only a later rule needing it fails then);
// notes in rbp_lost_ whether it was saved beyond the stack copy.
bool Walk::FindCallerRbp(uint64_t cfa, uint64_t* rbp_out) {
  const CfiRow& row = row_;
  uint64_t rbp = regs_[kDwRbp];
  bool rbp_known = known_ & (1u << kDwRbp);
  switch (row.rbp) {
    case CfiRow::kSame: break;
    case CfiRow::kAtCfa:
      rbp_known = read_(Plus(cfa, row.rbp_offset), &rbp);
      rbp_lost_ = !rbp_known;
      break;
    case CfiRow::kValCfa:
      rbp = Plus(cfa, row.rbp_offset);
      rbp_known = true;
      break;
    case CfiRow::kAtExpr: {
      uint64_t at;
      read_.failed = false;
      rbp_known = EvalCfiExpression(module_.cfi->Expression(row.rbp_expr), regs_, known_, read_,
                                    true, cfa, &at) &&
                  read_(at, &rbp);
      rbp_lost_ = !rbp_known && read_.failed;
      break;
    }
    default: rbp_known = false; rbp_lost_ = false; break;
  }
  if (row.rbp == CfiRow::kSame || row.rbp == CfiRow::kValCfa) rbp_lost_ = rbp_lost_ && !rbp_known;
  *rbp_out = rbp;
  return rbp_known;
}

}  // namespace

UnwindEnd UnwindUserStack(const UserStack& in, ModuleLookup& modules, size_t max_frames,
                          std::vector<uint64_t>* ips) {
  Walk walk;
  if (!walk.Start(in, max_frames, ips)) return walk.end();
  for (;;) {
    walk.Look(modules);
    if (!walk.Step()) return walk.end();
  }
}

void UnwindUserStacks(std::span<UnwindJob> jobs) {
  constexpr size_t kGroup = 16;
  for (size_t from = 0; from < jobs.size(); from += kGroup) {
    const size_t n = std::min(kGroup, jobs.size() - from);
    UnwindJob* group = jobs.data() + from;
    // The first reads of each: its registers and the top of its stack.
    for (size_t i = 0; i < n; ++i) {
      PrefetchBytes(group[i].in.regs.data(), group[i].in.regs.size_bytes());
      if (!group[i].in.stack.empty()) Prefetch(group[i].in.stack.data());
    }
    Walk walks[kGroup];
    uint8_t active[kGroup];
    size_t live = 0;
    for (size_t i = 0; i < n; ++i) {
      if (walks[i].Start(group[i].in, group[i].max_frames, group[i].ips)) {
        active[live++] = static_cast<uint8_t>(i);
      } else {
        group[i].end = walks[i].end();
      }
    }
    while (live > 0) {
      for (size_t k = 0; k < live; ++k) walks[active[k]].Look(*group[active[k]].modules);
      size_t still = 0;
      for (size_t k = 0; k < live; ++k) {
        const uint8_t i = active[k];
        if (walks[i].Step()) {
          active[still++] = i;
        } else {
          group[i].end = walks[i].end();
        }
      }
      live = still;
    }
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
