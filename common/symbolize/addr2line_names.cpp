#include "symbolize/addr2line_names.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

namespace pf {

Addr2lineNames::Addr2lineNames(const elf::ElfImage& image) {
  const std::vector<elf::Section>& sections = image.sections();
  for (size_t i = 0; i < sections.size(); ++i) {
    const elf::Section& s = sections[i];
    if ((s.flags & SHF_ALLOC) && s.size > 0) {
      sections_.push_back({s.addr, s.addr + s.size, static_cast<uint16_t>(i)});
    }
  }
  // addr2line reads .symtab, and the dynamic symbols only when there is none.
  int table = image.symtab() >= 0 ? image.symtab() : image.dynsym();
  if (table < 0) return;
  const elf::Section& t = sections[static_cast<size_t>(table)];
  std::string_view data = image.SectionData(t);
  if (t.link < sections.size()) strings_ = image.SectionData(sections[t.link]);
  // A symbol's name is its string when the table holds one there, NUL-terminated within
  // kMaxName bytes (elf::CString). In a table that ends in a NUL with one in every block of
  // half that size, any offset in it starts such a string: its first byte tells whether it
  // is empty, and names are read only for the answers.
  bool terminated = !strings_.empty() && strings_.back() == '\0';
  constexpr size_t kBlock = elf::kMaxName / 2;
  for (size_t at = 0; terminated && at < strings_.size(); at += kBlock) {
    std::string_view block = strings_.substr(at, kBlock);
    terminated = std::memchr(block.data(), '\0', block.size()) != nullptr;
  }
  auto named = [&](uint32_t offset) {
    if (terminated) return offset < strings_.size() && strings_[offset] != '\0';
    return !elf::CString(strings_, offset).empty();
  };
  const size_t n = image.SymbolCount(t);
  candidates_.reserve(n);
  // BFD's walk: the latest STT_FILE symbol names the file of the symbols after it, but once
  // a file symbol follows other symbols, only of local ones.
  enum { kNothingSeen, kSymbolSeen, kFileAfterSymbol } state = kNothingSeen;
  uint32_t file = 0;
  bool have_file = false;
  for (size_t i = 1; i < n; ++i) {
    elf::RawSymbol sym = image.ReadSymbol(data, i);
    unsigned type = ELF64_ST_TYPE(sym.info);
    if (type == STT_FILE) {
      file = sym.name;
      have_file = true;
      if (state == kSymbolSeen) state = kFileAfterSymbol;
      continue;
    }
    if (state == kNothingSeen) state = kSymbolSeen;
    if (type == STT_OBJECT || type == STT_TLS || type == STT_SECTION || type == STT_COMMON) {
      continue;
    }
    if (sym.shndx == SHN_UNDEF || sym.shndx >= SHN_LORESERVE || sym.shndx >= sections.size()) {
      continue;
    }
    if (!named(sym.name)) continue;
    bool local = ELF64_ST_BIND(sym.info) == STB_LOCAL;
    bool own_file = have_file && (local || state != kFileAfterSymbol);
    candidates_.push_back({sym.value, sym.size == 0 ? 1 : sym.size, static_cast<uint32_t>(i),
                           sym.name, own_file ? file : 0, sym.shndx,
                           type == STT_FUNC || type == STT_GNU_IFUNC, own_file});
  }
  std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
    if (a.section != b.section) return a.section < b.section;
    if (a.value != b.value) return a.value < b.value;
    return a.order < b.order;
  });
}

Addr2lineNames::Answer Addr2lineNames::At(uint64_t vaddr) const {
  // The section holding the address (the first, in section order).
  const SectionRange* section = nullptr;
  for (const SectionRange& s : sections_) {
    if (vaddr >= s.lo && vaddr < s.hi) {
      section = &s;
      break;
    }
  }
  if (section == nullptr) return {};
  // The last candidate of that section at or below the address: its value is the nearest.
  auto past = std::upper_bound(candidates_.begin(), candidates_.end(),
                               std::make_pair(section->index, vaddr),
                               [](const std::pair<uint16_t, uint64_t>& k, const Candidate& c) {
                                 if (k.first != c.section) return k.first < c.section;
                                 return k.second < c.value;
                               });
  if (past == candidates_.begin()) return {};
  auto last = past - 1;
  if (last->section != section->index) return {};
  auto first = last;
  while (first != candidates_.begin() && (first - 1)->section == last->section &&
         (first - 1)->value == last->value) {
    --first;
  }
  // Of those at that value, in symbol table order: BFD's better_fit.
  const Candidate* best = &*first;
  for (auto c = first + 1; c <= last; ++c) {
    bool better;
    if (best->value + best->size <= vaddr) {
      better = c->size > best->size;  // neither may reach it: the larger gets closer
    } else if (c->value + c->size <= vaddr) {
      better = false;
    } else if (best->function != c->function) {
      better = c->function;
    } else {
      better = c->size < best->size;
    }
    if (better) best = &*c;
  }
  std::string_view file = best->has_file ? elf::CString(strings_, best->file) : std::string_view();
  return {elf::CString(strings_, best->name), file, best->has_file, best->value};
}

}  // namespace pf
