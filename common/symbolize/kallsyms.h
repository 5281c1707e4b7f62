#pragma once
// Kernel symbols from /proc/kallsyms text, looked up the way perf names `[kernel.kallsyms]`
// frames when there is no vmlinux: only text and data symbols (types T, W, D, B in either
// case) are kept, every symbol reaches to the next one (the last to the page after its own),
// and of the symbols sharing an address the one perf prefers stays (the last one, which the
// extension gave a size, e.g. `__pi__text` over `_text` and `_stext`). Module symbols
// (`name\t[module]`) carry their module's name; the core kernel's symbol before the first
// module symbol ends one page after its start instead of reaching the modules.
//
// The core kernel's lines (those before the first line with a tab) are listed in address
// order (scripts/kallsyms sorts them), so they are not parsed up front: a lookup binary-
// searches the text and reads the few lines around the answer (near a core name with a
// bracket, which perf takes for a module's, the whole parse answers); the symbol found answers
// the later lookups in its range. Only the module and trampoline lines after them are parsed
// into a table. (Finding where the core's lines end reads the text up to there; for a copy
// in a file, the cache on disk keeps the answer.) A file whose core lines are out of order
// (spot-checked when loading) or overlap the modules' is parsed whole, as is text with every
// address zero. Either way the answers are those of the whole parse (ParseEagerly, which the
// tests compare against).
//
// When kptr_restrict hides the addresses (all zero), the table is empty.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pf {

/// One line of kallsyms text: "ADDRESS TYPE NAME[\t[MODULE]]".
struct KallsymsLine {
  uint64_t address = 0;
  char type = 0;
  std::string_view field;  ///< the name, with "\t[module]" when there is one (at most 513 bytes)
};
/// Parses one line (without its newline); false when it is not "HEX TYPE NAME". The one
/// kallsyms parser: KernelSymbols reads every line through it, pf-record's _text/_etext too.
bool ParseKallsymsLine(std::string_view line, KallsymsLine* out);

class KernelSymbols {
 public:
  /// An empty table.
  KernelSymbols() = default;
  /// Kallsyms text ("ADDRESS TYPE NAME[\t[MODULE]]" per line; bad lines are skipped), copied.
  static KernelSymbols Parse(std::string_view text);
  /// The same, with every line parsed into the table now (no binary search of the text).
  static KernelSymbols ParseEagerly(std::string_view text);
  /// A kallsyms file (/proc/kallsyms, or perf's copy in the build-id cache, which is mapped
  /// rather than read). Throws pf::Error when unreadable.
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

  /// True when no symbol is kept.
  bool empty() const { return symbols_.empty() && !core_kept_; }

 private:
  friend struct KernelSymbolsTestPeer;  // tests/unit/symbolize_test.cpp
  struct Sym {
    uint64_t start;
    uint64_t end;
    uint32_t name_offset;  // into text_
    uint16_t name_size;
    uint32_t module_offset;
    uint16_t module_size;
  };
  // `core_end`: where the core's lines end (the first line with a tab), when known.
  static KernelSymbols FromText(std::shared_ptr<const void> owner, std::string_view text,
                                bool eager, size_t core_end = SIZE_MAX);
  // Parses text_[from, end) into symbols_ (perf's rules over those lines alone).
  void BuildTable(size_t from);
  // *range: the answer's symbol, to keep (its end 0 when it is not to be kept).
  bool LookupCore(uint64_t ip, Hit* hit, Sym* range) const;

  std::shared_ptr<const void> owner_;  // keeps text_ alive (a copy, a buffer or a mapping)
  std::string_view text_;
  size_t core_end_ = 0;     // text_[0, core_end_) is binary-searched; 0 when not lazy
  bool core_kept_ = false;  // that part has a kept symbol
  // How the core's last kept symbol ends when the table's first symbol is not a module's:
  // at that symbol (perf extends across); otherwise one page after it.
  bool core_reaches_table_ = false;
  std::vector<Sym> symbols_;  // sorted by start, disjoint
  bool restricted_ = false;  // the text had symbols, every address zero (kptr_restrict)
  // The whole parse, for a lookup near a core name with a bracket (built when first needed).
  mutable std::shared_ptr<KernelSymbols> whole_;
  // LookupCore's answers by their symbols (sorted by start, disjoint): a capture's kernel
  // frames are many addresses in a few thousand functions, and each binary search of the text
  // reads lines at random across megabytes.
  mutable std::vector<Sym> core_found_;
};

}  // namespace pf
