// The libdw unwinder (libdw_unwinder.h). libdw pulls what it needs through callbacks: the
// thread's initial registers, reads of stack memory, and the frames as they are found. The
// callbacks reach the sample being unwound through a pointer set before each walk, since a
// Dwfl's state can be attached only once; memory reads are served from the stack copy with the
// same bounds as the table unwinder, so the two can be compared frame by frame.

#include "unwind/libdw_unwinder.h"

#include <elfutils/libdwfl.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "base/regular_file.h"

namespace pf {

namespace {

// What the callbacks see of the sample being unwound.
struct Current {
  uint32_t tid = 0;
  uint64_t regs[kDwRegs] = {};
  uint32_t known = 0;
  uint64_t sp = 0;
  std::span<const uint8_t> stack;
  size_t max_frames = 0;
  std::vector<uint64_t>* ips = nullptr;
  size_t first = 0;  // where this sample's frames start in ips
  Dwfl* dwfl = nullptr;
  bool truncated = false;
};

pid_t NextThread(Dwfl*, void* arg, void** thread_arg) {
  if (*thread_arg != nullptr) return 0;
  *thread_arg = arg;
  return static_cast<pid_t>(static_cast<Current*>(arg)->tid);
}

// The stack copy, read as perf reads it (the last word is refused, as in the table unwinder).
bool MemoryRead(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  const Current& c = *static_cast<Current*>(arg);
  if (addr < c.sp || addr - c.sp >= c.stack.size() || c.stack.size() - (addr - c.sp) <= 8) {
    static_cast<Current*>(arg)->truncated = true;
    return false;
  }
  std::memcpy(result, c.stack.data() + (addr - c.sp), 8);
  return true;
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* arg) {
  const Current& c = *static_cast<Current*>(arg);
  for (int r = 0; r < kDwRegs; ++r) {
    if (!(c.known & (1u << r))) continue;
    Dwarf_Word v = c.regs[r];
    if (!dwfl_thread_state_registers(thread, r, 1, &v)) return false;
  }
  return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {NextThread, nullptr, MemoryRead,
                                                SetInitialRegisters, nullptr, nullptr};

// True when `pc` lies in a signal trampoline (its CIE says 'S').
bool InSignalFrame(Dwfl* dwfl, Dwarf_Addr pc) {
  Dwfl_Module* mod = dwfl_addrmodule(dwfl, pc);
  if (mod == nullptr) return false;
  Dwarf_Addr bias = 0;
  Dwarf_CFI* cfi = dwfl_module_eh_cfi(mod, &bias);
  if (cfi == nullptr) cfi = dwfl_module_dwarf_cfi(mod, &bias);
  Dwarf_Frame* frame = nullptr;
  if (cfi == nullptr || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) return false;
  bool signal = false;
  dwarf_frame_info(frame, nullptr, nullptr, &signal);
  free(frame);
  return signal;
}

int OnFrame(Dwfl_Frame* frame, void* arg) {
  Current& c = *static_cast<Current*>(arg);
  Dwarf_Addr pc;
  bool activation = false;
  if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
  // libdw counts a signal trampoline itself as an activation; perf's unwinders (and the
  // tables) report its return address minus one, like any caller's.
  if (activation && c.ips->size() > c.first && InSignalFrame(c.dwfl, pc - 1)) activation = false;
  c.ips->push_back(activation ? pc : pc - 1);
  return c.ips->size() >= c.max_frames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

char* g_debuginfo_path = nullptr;
const Dwfl_Callbacks kCallbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo, nullptr,
                                   &g_debuginfo_path};

}  // namespace

struct LibdwUnwinder::Process {
  Dwfl* dwfl = nullptr;
  uint64_t generation = ~uint64_t{0};
  bool attached = false;
  Current current;
  ~Process() {
    if (dwfl) dwfl_end(dwfl);
  }
};

LibdwUnwinder::LibdwUnwinder() = default;
LibdwUnwinder::~LibdwUnwinder() = default;

UnwindEnd LibdwUnwinder::Unwind(uint32_t pid, uint32_t tid, uint64_t generation,
                                const std::vector<LibdwMap>& maps, const UserStack& in,
                                size_t max_frames, std::vector<uint64_t>* ips) {
  auto& slot = procs_[pid];
  if (!slot) slot = std::make_unique<Process>();
  Process& p = *slot;
  if (p.generation != generation || p.dwfl == nullptr) {
    // The maps changed: a new Dwfl (a reported module cannot be moved or removed).
    if (p.dwfl) dwfl_end(p.dwfl);
    p.dwfl = dwfl_begin(&kCallbacks);
    p.attached = false;
    if (p.dwfl == nullptr) return UnwindEnd::kUnsupported;
    dwfl_report_begin(p.dwfl);
    // A file can be there at two load addresses: a child keeps the maps its parent had
    // before it called exec, and only one of the copies is live.
    std::set<std::pair<std::string, uint64_t>> reported;
    for (const LibdwMap& m : maps) {
      if (m.file.empty() || !reported.emplace(m.file, m.bias).second) continue;
      // Opened here, not by libdw: a FIFO named by the recording must not block (libdw
      // owns the descriptor once the module is reported).
      int fd = OpenRegularFile(m.file);
      if (fd < 0) continue;
      if (dwfl_report_elf(p.dwfl, m.file.c_str(), m.file.c_str(), fd, m.bias, false) == nullptr) {
        close(fd);
      }
    }
    dwfl_report_end(p.dwfl, nullptr, nullptr);
    p.generation = generation;
  }
  Current& c = p.current;
  if (!DwarfRegisters(in, c.regs, &c.known)) return UnwindEnd::kNoRegisters;
  if (!p.attached) {
    if (!dwfl_attach_state(p.dwfl, nullptr, static_cast<pid_t>(pid), &kThreadCallbacks, &c)) {
      return UnwindEnd::kUnsupported;
    }
    p.attached = true;
  }
  c.tid = tid;
  c.sp = c.regs[kDwRsp];
  c.stack = in.stack;
  c.max_frames = max_frames;
  c.ips = ips;
  c.first = ips->size();
  c.dwfl = p.dwfl;
  c.truncated = false;
  size_t before = ips->size();
  int rc = dwfl_getthread_frames(p.dwfl, static_cast<pid_t>(tid), OnFrame, &c);
  if (ips->size() >= max_frames) return UnwindEnd::kMaxDepth;
  // libdw ends a walk quietly (rc 0) when it cannot load a return address: a failed read of
  // the stack copy is what tells the copy was too small.
  if (c.truncated) return UnwindEnd::kTruncated;
  if (rc == 0) return UnwindEnd::kComplete;
  return ips->size() > before ? UnwindEnd::kNoInfo : UnwindEnd::kUnsupported;
}

}  // namespace pf
