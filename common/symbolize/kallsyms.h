#pragma once
// Kernel symbols from /proc/kallsyms text, looked up the way perf names `[kernel.kallsyms]`
// frames when there is no vmlinux: only text and data symbols (types T, W, D, B in either
// case) are kept, every symbol reaches to the next one (the last to the page after its own),
// and of the symbols sharing an address the one perf prefers stays (the last one, which the
// extension gave a size, e.g. `__pi__text` over `_text` and `_stext`). Module symbols
// (`name\t[module]`) carry their module's name; the core kernel's symbol before the first
// module symbol ends one page after its start instead of reaching the modules.
//
// When kptr_restrict hides the addresses (all zero), the table is empty and restricted()
// says why.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

class KernelSymbols {
 public:
  /// An empty table.
  KernelSymbols() = default;
  /// Parses kallsyms text ("ADDRESS TYPE NAME[\t[MODULE]]" per line); bad lines are skipped.
  static KernelSymbols Parse(std::string_view text) { return ParseOwned(std::string(text)); }
  /// The same, keeping `text` (no copy).
  static KernelSymbols ParseOwned(std::string&& text);
  /// Reads and parses a kallsyms file (/proc/kallsyms). Throws pf::Error when unreadable.
  static KernelSymbols Load(const std::string& path);

  /// What a lookup found.
  struct Hit {
    std::string_view name;
    std::string_view module;  ///< "" for the core kernel
    uint64_t offset = 0;      ///< from the symbol's start
  };
  /// The symbol containing `ip`. False when none does.
  bool Lookup(uint64_t ip, Hit* hit) const;
  /// The address of the first symbol called `name` of any type (e.g. "_text", "_etext").
  bool AddressOf(std::string_view name, uint64_t* address) const;

  /// Number of symbols kept.
  size_t size() const { return symbols_.size(); }
  /// True when the text had symbols but every address was zero (kptr_restrict).
  bool restricted() const { return restricted_; }

 private:
  struct Sym {
    uint64_t start;
    uint64_t end;
    uint32_t name_offset;  // into text_
    uint16_t name_size;
    uint32_t module_offset;
    uint16_t module_size;
  };
  std::string text_;
  std::vector<Sym> symbols_;  // sorted by start, disjoint
  bool restricted_ = false;
};

}  // namespace pf
