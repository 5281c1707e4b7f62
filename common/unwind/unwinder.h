#pragma once
// Unwinding a sampled user stack with compiled CFI tables (cfi.h): the kernel gave the user
// registers at the sample and a copy of the stack from the stack pointer up; each frame is a
// table lookup for its pc, an add for the CFA and a load for the return address.
//
// The addresses produced are the ones perf reports (and perf script prints): the sampled pc
// itself, then for each caller its return address minus one — an address inside the call
// instruction, so symbols, inline frames and lines name the call site — except after a
// signal frame (__restore_rt, whose CIE says 'S'), where the interrupted pc is exact.
//
// The walk ends cleanly where the CFI says the return address is undefined (_start, clone),
// or at a return address of 0. It ends early, as kTruncated, when a load falls outside the
// copied stack: the copy was smaller than the frames (a larger STACK_BYTES helps); or as
// kLostRegister when the CFA needs rbp and rbp was saved beyond the copy. Code without an FDE
// in a module that has CFI (crt code, assembly) is passed by following the frame pointer, as
// perf's unwinders do, when rbp looks like one; otherwise, and for a pc in no known module,
// the walk ends as kNoInfo. A row the table cannot express (CfiRow::k*Unsupported, or a rule
// that needs a register no longer known) ends it as kUnsupported, which callers hand to libdw
// (libdw_unwinder.h).

#include <cstdint>
#include <span>
#include <vector>

#include "unwind/cfi.h"

namespace pf {

/// The module holding a pc, as the unwinder needs it.
struct UnwindModule {
  CfiTable* cfi = nullptr;  // null: no CFI for this module
  uint64_t bias = 0;        // ELF address = runtime address - bias
};

/// Finds the module of a runtime address (in the sampled process).
class ModuleLookup {
 public:
  enum class Row { kNoModule, kNoRow, kFound };
  virtual ~ModuleLookup() = default;
  virtual bool Find(uint64_t ip, UnwindModule* module) = 0;
  /// The module of `ip` and its CFI row there: kNoModule without a module with CFI, kNoRow
  /// when the module has no FDE for it. An implementation may remember answers.
  virtual Row FindRow(uint64_t ip, UnwindModule* module, CfiRow* row) {
    if (!Find(ip, module) || module->cfi == nullptr) return Row::kNoModule;
    return module->cfi->Find(ip - module->bias, row) ? Row::kFound : Row::kNoRow;
  }
};

/// The user state a sample carries (PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER).
struct UserStack {
  uint64_t abi = 0;                    // PERF_SAMPLE_REGS_ABI_*: 2 for 64-bit processes
  uint64_t regs_mask = 0;              // the event's sample_regs_user
  std::span<const uint64_t> regs;      // one value per bit of regs_mask, low bit first
  std::span<const uint8_t> stack;      // the copy, from the user stack pointer up
};

enum class UnwindEnd : uint8_t {
  kComplete,     // the outermost frame was reached
  kTruncated,    // a load fell outside the stack copy
  kLostRegister, // the frame's CFA is in a register whose saved value lay beyond the copy
                 // (perf's unwinders end such chains without the [unknown] mark)
  kNoInfo,       // a pc without CFI (no module, or no FDE)
  kUnsupported,  // a rule the table cannot evaluate: ask libdw
  kNoRegisters,  // the sample has no usable user registers
  kMaxDepth,
  kBadFrame,     // the stack pointer did not move up: corrupt stack or CFI
  kZeroReturn,   // a return address read 0 (libunwind reports a caller at 0, which perf
                 // prints as the cut-chain mark, ffffffffffffffff, as for kTruncated)
};

/// The DWARF registers (rax..r15, rip) of a sample, and which are known; false when the
/// sample has no 64-bit user registers, or lacks ip or sp.
bool DwarfRegisters(const UserStack& in, uint64_t regs[kDwRegs], uint32_t* known);

/// Unwinds `in`, appending the reported addresses to `ips` (the sampled pc first), at most
/// `max_frames` of them. The stack copy must be readable as perf reads it: a word at
/// [sp, sp + size - 8) (perf's unwinders refuse the last word).
UnwindEnd UnwindUserStack(const UserStack& in, ModuleLookup& modules, size_t max_frames,
                          std::vector<uint64_t>* ips);

/// One stack of several to unwind together (UnwindUserStacks).
struct UnwindJob {
  UserStack in;
  ModuleLookup* modules = nullptr;
  size_t max_frames = 0;
  std::vector<uint64_t>* ips = nullptr;
  UnwindEnd end = UnwindEnd::kComplete;  // set by UnwindUserStacks
};

/// Unwinds each job as UnwindUserStack does (the same frames and end), a frame of each in
/// turn: a copied stack is read from main memory, and each frame's read waits for the one
/// before it, so one stack at a time waits on memory once per frame; several at a time wait
/// together. The jobs' ModuleLookups are asked in an order that mixes the stacks.
void UnwindUserStacks(std::span<UnwindJob> jobs);

/// The name of an end, for messages and statistics.
const char* UnwindEndName(UnwindEnd end);

}  // namespace pf
