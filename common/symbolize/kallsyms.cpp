// Kernel symbols from kallsyms text (kallsyms.h gives perf's rules and the lazy plan). The
// text is tens of thousands of lines and a run looks up a few hundred addresses, so the core
// kernel's lines, which the kernel prints sorted, are binary-searched in the text itself and
// only the few lines around an answer are parsed; the module lines after them are parsed into
// a table. Text that breaks the assumption (out of order, overlapping, all zero) is parsed
// whole, and the tests hold both ways to the same answers.

#include "symbolize/kallsyms.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "base/error.h"
#include "base/hex.h"
#include "base/regular_file.h"
#include "base/teardown.h"
#include "symbolize/cache_entry.h"
#include "symbolize/dwarf_cache.h"
#include "symbolize/elf_symbols.h"

namespace pf {

namespace {

// perf reads at most KSYM_NAME_LEN (512) + 1 bytes of a name.
constexpr size_t kMaxName = 513;
constexpr size_t kNone = std::string_view::npos;

// The start of the line holding text[pos] (pos <= size). Searched back in growing windows:
// lines are short, and a search of everything before pos would cost that much where memory
// reads are checked (AddressSanitizer checks the whole range memrchr is given).
size_t LineStart(std::string_view text, size_t pos) {
  for (size_t window = 256;; window *= 2) {
    size_t from = pos > window ? pos - window : 0;
    const void* nl = memrchr(text.data() + from, '\n', pos - from);
    if (nl != nullptr) return static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1;
    if (from == 0) return 0;
    pos = from;
  }
}

// The line starting at `pos`, without its newline, and where the next one starts.
std::string_view LineAt(std::string_view text, size_t pos, size_t* next) {
  size_t nl = text.find('\n', pos);
  if (nl == kNone) nl = text.size();
  *next = nl + 1;
  return text.substr(pos, nl - pos);
}

// Where the core kernel's lines end: the start of the first line with a tab (a module's), or
// the end.
size_t CoreEnd(std::string_view text) {
  size_t tab = text.find('\t');
  return tab == kNone ? text.size() : LineStart(text, tab);
}

// Whether `at` may be where the core's lines end: a line's start, the line there has a tab
// and the one before has none (a cached answer, checked where it is cheap).
bool IsCoreEnd(std::string_view text, uint64_t at) {
  if (at > text.size() || (at > 0 && text[at - 1] != '\n')) return false;
  size_t next;
  if (at < text.size() && LineAt(text, at, &next).find('\t') == kNone) return false;
  return at == 0 || LineAt(text, LineStart(text, at - 1), &next).find('\t') == kNone;
}

// The cache entry (dwarf_cache.h) that keeps CoreEnd for a kallsyms file.
constexpr uint64_t kCoreEndEntry = 0x6b616c6c73796d73;  // "kallsyms"

template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next;
    KallsymsLine line;
    if (ParseKallsymsLine(LineAt(text, pos, &next), &line)) fn(line);
    pos = next;
  }
}

bool KeptType(char type) {
  char t = static_cast<char>(std::toupper(static_cast<unsigned char>(type)));
  return t == 'T' || t == 'W' || t == 'D' || t == 'B';
}

bool Kept(const KallsymsLine& line) {
  return KeptType(line.type) && !line.field.empty() && line.field[0] != '$';
}

uint8_t Binding(char type) {
  if (type == 'W') return STB_WEAK;
  return std::isupper(static_cast<unsigned char>(type)) ? STB_GLOBAL : STB_LOCAL;
}

// The end perf gives the core kernel's last symbol before the modules, and the last symbol.
uint64_t PageAfter(uint64_t start) { return ((start + 4096) + 4095) & ~uint64_t{4095}; }

}  // namespace

bool ParseKallsymsLine(std::string_view line, KallsymsLine* out) {
  size_t i = 0;
  uint64_t address = 0;
  while (i < line.size() && HexDigit(line[i]) >= 0) {
    address = address << 4 | static_cast<uint64_t>(HexDigit(line[i]));
    ++i;
  }
  if (i == 0 || i + 2 >= line.size() || line[i] != ' ' || line[i + 2] != ' ') return false;
  out->address = address;
  out->type = line[i + 1];
  out->field = line.substr(i + 3, kMaxName);
  return true;
}

void KernelSymbols::BuildTable(size_t from) {
  std::string_view all = text_;
  std::string_view part = all.substr(from);
  std::vector<TableSymbol> table;
  std::vector<std::string_view> fields;
  bool any_address = false;
  ForEachLine(part, [&](const KallsymsLine& line) {
    if (line.address != 0) any_address = true;
    if (!Kept(line)) return;
    uint32_t id = static_cast<uint32_t>(fields.size());
    fields.push_back(line.field);
    table.push_back({line.address, line.address, id, Binding(line.type),
                     line.field.find('[') != std::string_view::npos});
  });
  if (!table.empty() && !any_address && !core_kept_) {
    restricted_ = true;
    return;
  }

  // The kernel lists its symbols in address order, modules' after: sorted, or nearly.
  auto by_start = [](const TableSymbol& a, const TableSymbol& b) { return a.start < b.start; };
  if (!std::is_sorted(table.begin(), table.end(), by_start)) {
    std::stable_sort(table.begin(), table.end(), by_start);
  }
  core_reaches_table_ = !table.empty() && !table.front().module;
  // perf's order for kallsyms: extend, then drop duplicates (so the last alias, the one
  // the extension reached, is the one with a size and wins).
  FixupSymbolEnds(table, true);
  RemoveDuplicateSymbols(table, [&](uint32_t id) { return fields[id]; });

  symbols_.reserve(table.size());
  for (const TableSymbol& t : table) {
    std::string_view field = fields[t.id];
    std::string_view name = field, module;
    size_t tab = field.find('\t');
    if (tab != std::string_view::npos) {
      name = field.substr(0, tab);
      module = field.substr(tab + 1);
      if (module.size() >= 2 && module.front() == '[') {
        module.remove_prefix(1);
        size_t close = module.find(']');
        if (close != std::string_view::npos) module = module.substr(0, close);
      }
    }
    symbols_.push_back({t.start, t.end, static_cast<uint32_t>(name.data() - all.data()),
                        static_cast<uint16_t>(name.size()),
                        static_cast<uint32_t>(module.empty() ? 0 : module.data() - all.data()),
                        static_cast<uint16_t>(module.size())});
  }
}

KernelSymbols KernelSymbols::FromText(std::shared_ptr<const void> owner, std::string_view text,
                                      bool eager, size_t core_end) {
  KernelSymbols k;
  k.owner_ = std::move(owner);
  k.text_ = text;
  // Names are stored as 32-bit offsets.
  if (text.size() >= (uint64_t{1} << 32)) k.text_ = text = text.substr(0, (uint64_t{1} << 32) - 1);
  if (eager) {
    k.BuildTable(0);
    return k;
  }

  // The core kernel: the lines before the first with a tab (a module's).
  if (core_end > text.size()) core_end = CoreEnd(text);

  // Its first and last lines with an address, the first kept symbol, and a spot check of
  // the order at 64 places: any doubt, and the whole text is parsed.
  auto lazy = [&]() {
    KallsymsLine line, first, last;
    size_t next;
    bool have_first = false, have_last = false;
    for (size_t p = 0; p < core_end && !k.core_kept_; p = next) {
      if (!ParseKallsymsLine(LineAt(text, p, &next), &line)) continue;
      if (!have_first) first = line, have_first = true;
      k.core_kept_ = Kept(line);
    }
    if (!k.core_kept_) return false;
    for (size_t p = core_end; p > 0 && !have_last;) {
      p = LineStart(text, p - 1);
      have_last = ParseKallsymsLine(LineAt(text, p, &next), &last);
    }
    if (!have_last || (first.address == 0 && last.address == 0)) return false;
    uint64_t previous = first.address;
    constexpr size_t kProbes = 64;
    for (size_t i = 1; i < kProbes; ++i) {
      size_t p = LineStart(text, core_end / kProbes * i);
      if (!ParseKallsymsLine(LineAt(text, p, &next), &line)) continue;
      if (line.address < previous) return false;
      previous = line.address;
    }
    return last.address >= previous;
  };
  if (!lazy()) {
    k.core_kept_ = false;
    k.BuildTable(0);
    return k;
  }
  k.core_end_ = core_end;
  k.BuildTable(core_end);
  // The table must start above the core's last kept symbol, as in the whole parse.
  if (!k.symbols_.empty()) {
    size_t next;
    KallsymsLine line;
    uint64_t last_kept = 0;
    for (size_t p = core_end; p > 0;) {
      p = LineStart(text, p - 1);
      if (ParseKallsymsLine(LineAt(text, p, &next), &line) && Kept(line)) {
        last_kept = line.address;
        break;
      }
    }
    if (k.symbols_.front().start <= last_kept) {
      k.core_end_ = 0;
      k.core_kept_ = false;
      k.core_reaches_table_ = false;
      k.symbols_.clear();
      k.BuildTable(0);
    }
  }
  return k;
}

KernelSymbols KernelSymbols::Parse(std::string_view text) {
  auto copy = std::make_shared<const std::string>(text);
  return FromText(copy, *copy, false);
}

KernelSymbols KernelSymbols::ParseEagerly(std::string_view text) {
  auto copy = std::make_shared<const std::string>(text);
  return FromText(copy, *copy, true);
}

KernelSymbols KernelSymbols::Load(const std::string& path) {
  int fd = OpenRegularFile(path);  // (/proc/kallsyms is a regular file too)
  if (fd < 0) throw Error(path, "cannot open kernel symbols");
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    // A copy in the build-id cache: mapped; a lookup touches only the pages it reads. Where
    // its core lines end is kept in the cache on disk: finding it reads the whole text.
    const std::string dir = CacheDir();
    const std::string key = dir.empty() ? "" : FileCacheKey(fd, 'k', kCoreEndEntry);
    size_t size = static_cast<size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) throw Error(path, "cannot map kernel symbols");
    std::shared_ptr<const void> owner(
        map, [size](const void* p) { UnmapWhenDone(const_cast<void*>(p), size); });
    std::string_view text(static_cast<const char*>(map), size);
    // The entry: u64 the text's size, u64 where its core lines end.
    size_t core_end = SIZE_MAX;
    if (MappedEntry entry = MapCachedEntry(dir, key)) {
      EntryReader r(entry.bytes);
      uint64_t cached_end;
      if (r.Expect<uint64_t>(size) && r.Get(&cached_end) && r.AtEnd() &&
          IsCoreEnd(text, cached_end)) {
        core_end = cached_end;
      }
    }
    if (core_end == SIZE_MAX) {
      core_end = CoreEnd(text);
      EntryWriter w;
      w.Put<uint64_t>(size);
      w.Put<uint64_t>(core_end);
      StoreCachedImage(dir, key, w.Take());
    }
    return FromText(std::move(owner), text, false, core_end);
  }
  // /proc/kallsyms has no size: read until the end into one buffer (not zero-filled).
  struct Buffer {
    char* data = nullptr;
    ~Buffer() { std::free(data); }
  } buffer;
  size_t capacity = 0, used = 0;
  for (;;) {
    if (used == capacity) {
      size_t grown = capacity == 0 ? size_t{8} << 20 : capacity * 2;
      char* data = static_cast<char*>(std::realloc(buffer.data, grown));
      if (data == nullptr) {
        close(fd);
        throw std::bad_alloc();
      }
      buffer.data = data;
      capacity = grown;
    }
    ssize_t n = read(fd, buffer.data + used, capacity - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      throw Error(path, "cannot read kernel symbols");
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  std::string_view text(buffer.data, used);
  std::shared_ptr<const void> owner(buffer.data,
                                    [](const void* p) { std::free(const_cast<void*>(p)); });
  buffer.data = nullptr;
  return FromText(std::move(owner), text, false);
}

bool KernelSymbols::LookupCore(uint64_t ip, Hit* hit, Sym* range) const {
  range->end = 0;
  std::string_view text = text_;
  // The last line with an address at or below ip (lines that do not parse are passed over).
  size_t lo = 0, hi = core_end_, best = kNone, next = 0;
  KallsymsLine line;
  while (lo < hi) {
    size_t mid = std::max(lo, LineStart(text, lo + (hi - lo) / 2));
    size_t p = mid;
    bool found = false;
    while (p < hi && !(found = ParseKallsymsLine(LineAt(text, p, &next), &line))) p = next;
    if (!found || line.address > ip) {
      hi = mid;
    } else {
      best = p;
      lo = next;
    }
  }
  if (best == kNone) return false;
  // Back to the last kept symbol at or below it: the last alias, the one perf keeps.
  KallsymsLine kept;
  size_t at = best;
  while (!(ParseKallsymsLine(LineAt(text, at, &next), &kept) && Kept(kept))) {
    if (at == 0) return false;
    at = LineStart(text, at - 1);
  }
  // It reaches the next kept symbol; the core's last one, the table's first symbol or a page.
  uint64_t end = 0;
  bool found = false;
  for (size_t p = next; p < core_end_ && !found; p = next)
    found = ParseKallsymsLine(LineAt(text, p, &next), &line) && Kept(line);
  // perf takes a name with a bracket for a module's, which changes how the symbols around it
  // end (and which alias wins). No kernel names its own symbols so; if one does, the whole
  // parse answers.
  auto bracket = [](const KallsymsLine& l) {
    return l.field.find('[') != std::string_view::npos;
  };
  bool odd = bracket(kept) || (found && bracket(line));
  for (size_t p = at; p > 0 && !odd;) {  // the aliases before it
    KallsymsLine alias;
    p = LineStart(text, p - 1);
    if (!ParseKallsymsLine(LineAt(text, p, &next), &alias)) continue;
    if (alias.address != kept.address) break;
    odd = Kept(alias) && bracket(alias);
  }
  if (odd) {
    if (!whole_) {
      whole_ = std::make_shared<KernelSymbols>();
      whole_->text_ = text_;
      whole_->BuildTable(0);
    }
    return whole_->Lookup(ip, hit);
  }
  if (found) {
    end = line.address;
  } else if (core_reaches_table_ && !symbols_.empty()) {
    end = symbols_.front().start;
  } else {
    end = PageAfter(kept.address);
  }
  if (ip < kept.address || ip >= end) return false;
  hit->name = kept.field;
  hit->module = {};
  hit->offset = ip - kept.address;
  // Every address in [kept, end) finds the same lines (the core is in address order).
  const size_t name_at = static_cast<size_t>(kept.field.data() - text.data());
  if (name_at <= UINT32_MAX && kept.field.size() <= UINT16_MAX) {
    *range = Sym{kept.address, end, static_cast<uint32_t>(name_at),
                 static_cast<uint16_t>(kept.field.size()), 0, 0};
  }
  return true;
}

bool KernelSymbols::Lookup(uint64_t ip, Hit* hit) const {
  if (core_kept_ && (symbols_.empty() || ip < symbols_.front().start)) {
    auto at = std::upper_bound(core_found_.begin(), core_found_.end(), ip,
                               [](uint64_t v, const Sym& s) { return v < s.start; });
    if (at != core_found_.begin() && ip < std::prev(at)->end) {
      const Sym& s = *std::prev(at);
      hit->name = text_.substr(s.name_offset, s.name_size);
      hit->module = {};
      hit->offset = ip - s.start;
      return true;
    }
    Sym range;
    if (!LookupCore(ip, hit, &range)) return false;
    // (Kept only where it overlaps no other: the table stays sorted and disjoint.)
    if (range.end != 0 && (at == core_found_.begin() || std::prev(at)->end <= range.start) &&
        (at == core_found_.end() || range.end <= at->start)) {
      core_found_.insert(at, range);
    }
    return true;
  }
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), ip,
                             [](uint64_t v, const Sym& s) { return v < s.start; });
  if (it == symbols_.begin()) return false;
  --it;
  if (ip >= it->end) return false;
  std::string_view text(text_);
  hit->name = text.substr(it->name_offset, it->name_size);
  hit->module =
      it->module_size ? text.substr(it->module_offset, it->module_size) : std::string_view();
  hit->offset = ip - it->start;
  return true;
}

bool KernelSymbols::AddressOf(std::string_view name, uint64_t* address) const {
  bool found = false;
  ForEachLine(text_, [&](const KallsymsLine& line) {
    if (found) return;
    std::string_view n = line.field.substr(0, line.field.find('\t'));
    if (n == name) {
      *address = line.address;
      found = true;
    }
  });
  return found;
}

}  // namespace pf
