// Fuzz target: the CFI reader and the stack walk. An input starting with ELF magic is an ELF
// image (unwind sections found by name); any other is [u16 eh_frame size][u16 hdr size]
// [eh_frame][.eh_frame_hdr][the rest: .debug_frame, and the stack to walk]. Every FDE the
// index holds is compiled (probing pcs across the address range), and a walk runs over a
// stack made of the input's last bytes. Must never crash, hang or read out of bounds.
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "elf/elf_image.h"
#include "unwind/cfi.h"
#include "unwind/unwinder.h"

namespace {

class OneModule : public pf::ModuleLookup {
 public:
  explicit OneModule(pf::CfiTable* t) : t_(t) {}
  bool Find(uint64_t, pf::UnwindModule* m) override {
    m->cfi = t_;
    m->bias = 0;
    return true;
  }

 private:
  pf::CfiTable* t_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<pf::CfiTable> table;
  try {
    if (size >= 4 && std::memcmp(data, "\x7f" "ELF", 4) == 0) {
      table = pf::CfiTable::FromElf(pf::elf::ElfImage::FromBytes(in, "fuzz"));
    } else {
      if (size < 4) return 0;
      const size_t body = size - 4;
      size_t eh = static_cast<size_t>(data[0] | data[1] << 8) % (body + 1);
      size_t hdr = static_cast<size_t>(data[2] | data[3] << 8) % (body - eh + 1);
      std::string_view all(in);
      std::string_view eh_frame = all.substr(4, eh);
      std::string_view eh_hdr = all.substr(4 + eh, hdr);
      std::string_view debug = all.substr(4 + eh + hdr);
      table = pf::CfiTable::FromSections(eh_frame, 0x10000, eh_hdr, 0x20000, debug);
    }
  } catch (const pf::Error&) {
    return 0;
  }
  // Probe pcs: FDEs are compiled on first use.
  pf::CfiRow row;
  for (uint64_t pc = 0; pc < 0x40000; pc += 0x3f1) table->Find(pc, &row);
  // A walk over the input's last bytes as a stack, from a few pcs.
  std::vector<uint64_t> stack(64, 0);
  std::memcpy(stack.data(), data + (size > 512 ? size - 512 : 0), std::min<size_t>(size, 512));
  uint64_t regs[20] = {};
  regs[6] = 0x7ff0000010;  // rbp
  regs[7] = 0x7ff0000000;  // sp
  OneModule modules(table.get());
  // Each pc's walk alone, then all together (UnwindUserStacks): the same frames and end.
  constexpr uint64_t kPcs[] = {0x1000, 0x1100, 0x10010, 0x2ff00};
  constexpr size_t kWalks = std::size(kPcs);
  uint64_t walk_regs[kWalks][20];
  std::vector<uint64_t> alone[kWalks], together[kWalks];
  pf::UnwindEnd ends[kWalks];
  pf::UnwindJob jobs[kWalks];
  for (size_t i = 0; i < kWalks; ++i) {
    std::memcpy(walk_regs[i], regs, sizeof regs);
    walk_regs[i][8] = kPcs[i];
    pf::UserStack u{2, 0xff0fff, std::span<const uint64_t>(walk_regs[i], 20),
                    std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(stack.data()),
                                             stack.size() * 8)};
    ends[i] = pf::UnwindUserStack(u, modules, 127, &alone[i]);
    jobs[i] = {u, &modules, 127, &together[i]};
  }
  pf::UnwindUserStacks(jobs);
  for (size_t i = 0; i < kWalks; ++i) {
    if (jobs[i].end != ends[i] || together[i] != alone[i]) __builtin_trap();
  }
  return 0;
}
