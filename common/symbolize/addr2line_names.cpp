// addr2line's names from a symbol table (addr2line_names.h states BFD's rule). The table
// addr2line reads (.symtab, else .dynsym) is indexed once into candidates sorted by address,
// with names read only for the answers, so an answer is a binary search and a short scan where
// addr2line searches the table for every address. The index is kept in the cache on disk
// (dwarf_cache.h) under a tag that changes with the candidate rules, and an entry read back is
// bounds-checked as it is restored.

#include "symbolize/addr2line_names.h"

#include <elf.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "base/regular_file.h"
#include "base/teardown.h"
#include "symbolize/cache_entry.h"
#include "symbolize/dwarf_cache.h"

namespace pf {

namespace {

// The symbol table addr2line reads: .symtab, and the dynamic symbols only when there is none.
int NamesTable(const elf::ElfImage& image) {
  return image.symtab() >= 0 ? image.symtab() : image.dynsym();
}

// A cache entry: this tag (new whenever Candidate or the choice of candidates changes), the
// candidate count, the candidates as they are in memory.
constexpr uint64_t kNamesFormat = 0x70666e616d657301;

}  // namespace

Addr2lineNames::Addr2lineNames(const elf::ElfImage& image) : Addr2lineNames(image, Tables{}) {
  Index(image);
}

Addr2lineNames::Addr2lineNames(const elf::ElfImage& image, Tables) {
  const std::vector<elf::Section>& sections = image.sections();
  for (size_t i = 0; i < sections.size(); ++i) {
    const elf::Section& s = sections[i];
    if ((s.flags & SHF_ALLOC) && s.size > 0) {
      sections_.push_back({s.addr, s.addr + s.size, static_cast<uint16_t>(i)});
    }
  }
  int table = NamesTable(image);
  if (table < 0) return;
  const elf::Section& t = sections[static_cast<size_t>(table)];
  if (t.link < sections.size()) strings_ = image.SectionData(sections[t.link]);
}

std::string Addr2lineNames::CacheKey(const std::string& path) {
  int fd = OpenRegularFile(path);
  if (fd < 0) return "";
  std::string key = FileCacheKey(fd, 'n', kNamesFormat);
  close(fd);
  return key;
}

std::unique_ptr<Addr2lineNames> Addr2lineNames::Load(const elf::ElfImage& image,
                                                     const std::string& path) {
  auto names = std::unique_ptr<Addr2lineNames>(new Addr2lineNames(image, Tables{}));
  const std::string dir = CacheDir();
  const std::string key = dir.empty() ? "" : CacheKey(path);
  if (MappedEntry entry = MapCachedEntry(dir, key)) {
    if (names->Restore(entry.bytes, image)) return names;
  }
  names->Index(image);
  if (!key.empty()) {
    auto saved = std::make_shared<const std::string>(names->Saved());
    StoreCachedImageLater(dir, key, saved, *saved);
  }
  return names;
}

std::string Addr2lineNames::Saved() const {
  EntryWriter w;
  w.Put(kNamesFormat);
  w.Put<uint64_t>(candidates_.size());
  w.Array(std::span<const Candidate>(candidates_));
  return w.Take();
}

std::unique_ptr<Addr2lineNames> Addr2lineNames::Restored(const elf::ElfImage& image,
                                                         std::string_view entry) {
  auto names = std::unique_ptr<Addr2lineNames>(new Addr2lineNames(image, Tables{}));
  if (!names->Restore(entry, image)) return nullptr;
  return names;
}

// An entry's checksum was checked (MapCachedImage); what is read is still bounded, so that no
// entry can make At() misbehave: its size, each flag a bool, each section one of the image's,
// and the order At() searches in.
bool Addr2lineNames::Restore(std::string_view entry, const elf::ElfImage& image) {
  EntryReader r(entry);
  uint64_t n;
  if (!r.Expect(kNamesFormat) || !r.Count(&n, sizeof(Candidate)) ||
      r.left() != n * sizeof(Candidate)) {
    return false;
  }
  std::vector<Candidate> candidates(static_cast<size_t>(n));
  for (size_t i = 0; i < candidates.size(); ++i) {
    Candidate& d = candidates[i];
    if (!ReadCandidate(r, &d) || d.section >= image.sections().size()) return false;
    if (i > 0) {
      const Candidate& p = candidates[i - 1];
      if (p.section != d.section ? p.section > d.section
                                 : p.value != d.value ? p.value > d.value : p.order >= d.order) {
        return false;
      }
    }
  }
  candidates_ = std::move(candidates);
  from_cache_ = true;
  return true;
}

// A candidate as Saved wrote it (as it is in memory), bounded once and copied field by field:
// its flags are bools, which a byte other than 0 or 1 must not become. (A bounded read per
// field made restoring glibc's 13,000 candidates measurably slower.)
bool Addr2lineNames::ReadCandidate(EntryReader& r, Candidate* d) {
  static_assert(sizeof(Candidate) == 32, "no padding: an entry holds candidates as they are");
  std::span<const uint8_t> bytes;
  if (!r.Bytes(sizeof(Candidate), &bytes)) return false;
  const uint8_t* c = bytes.data();
  std::memcpy(&d->value, c + offsetof(Candidate, value), 8);
  std::memcpy(&d->size, c + offsetof(Candidate, size), 8);
  std::memcpy(&d->order, c + offsetof(Candidate, order), 4);
  std::memcpy(&d->name, c + offsetof(Candidate, name), 4);
  std::memcpy(&d->file, c + offsetof(Candidate, file), 4);
  std::memcpy(&d->section, c + offsetof(Candidate, section), 2);
  const uint8_t function = c[offsetof(Candidate, function)];
  const uint8_t has_file = c[offsetof(Candidate, has_file)];
  if (function > 1 || has_file > 1) return false;
  d->function = function;
  d->has_file = has_file;
  return true;
}

void Addr2lineNames::Index(const elf::ElfImage& image) {
  const std::vector<elf::Section>& sections = image.sections();
  int table = NamesTable(image);
  if (table < 0) return;
  const elf::Section& t = sections[static_cast<size_t>(table)];
  std::string_view data = image.SectionData(t);
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
