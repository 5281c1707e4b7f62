#include "symbolize/kallsyms.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "base/error.h"
#include "symbolize/elf_symbols.h"

namespace pf {

namespace {

// perf reads at most KSYM_NAME_LEN (512) + 1 bytes of a name.
constexpr size_t kMaxName = 513;

struct Line {
  uint64_t address = 0;
  char type = 0;
  std::string_view field;  // name, with "\t[module]" when there is one
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One kallsyms line; false when it is not "HEX TYPE NAME".
bool ParseLine(std::string_view line, Line* out) {
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

template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    Line line;
    if (ParseLine(text.substr(pos, nl - pos), &line)) fn(line);
    pos = nl + 1;
  }
}

bool KeptType(char type) {
  char t = static_cast<char>(std::toupper(static_cast<unsigned char>(type)));
  return t == 'T' || t == 'W' || t == 'D' || t == 'B';
}

uint8_t Binding(char type) {
  if (type == 'W') return STB_WEAK;
  return std::isupper(static_cast<unsigned char>(type)) ? STB_GLOBAL : STB_LOCAL;
}

}  // namespace

KernelSymbols KernelSymbols::ParseOwned(std::string&& text) {
  KernelSymbols k;
  k.text_ = std::move(text);
  std::string_view all(k.text_);

  std::vector<TableSymbol> table;
  std::vector<std::string_view> fields;
  table.reserve(all.size() / 32);
  fields.reserve(all.size() / 32);
  bool any_address = false;
  ForEachLine(all, [&](const Line& line) {
    if (line.address != 0) any_address = true;
    if (!KeptType(line.type) || line.field.empty() || line.field[0] == '$') return;
    uint32_t id = static_cast<uint32_t>(fields.size());
    fields.push_back(line.field);
    table.push_back({line.address, line.address, id, Binding(line.type),
                     line.field.find('[') != std::string_view::npos});
  });
  if (!table.empty() && !any_address) {
    k.restricted_ = true;
    return k;
  }

  // The kernel lists its symbols in address order, modules' after: sorted, or nearly.
  auto by_start = [](const TableSymbol& a, const TableSymbol& b) { return a.start < b.start; };
  if (!std::is_sorted(table.begin(), table.end(), by_start)) {
    std::stable_sort(table.begin(), table.end(), by_start);
  }
  // perf's order for kallsyms: extend, then drop duplicates (so the last alias, the one
  // the extension reached, is the one with a size and wins).
  FixupSymbolEnds(table, true);
  RemoveDuplicateSymbols(table, [&](uint32_t id) { return fields[id]; });

  k.symbols_.reserve(table.size());
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
    k.symbols_.push_back({t.start, t.end, static_cast<uint32_t>(name.data() - all.data()),
                          static_cast<uint16_t>(name.size()),
                          static_cast<uint32_t>(module.empty() ? 0 : module.data() - all.data()),
                          static_cast<uint16_t>(module.size())});
  }
  return k;
}

KernelSymbols KernelSymbols::Load(const std::string& path) {
  // One read into one buffer (/proc/kallsyms has no size: read until the end).
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path, "cannot open kernel symbols");
  struct stat st;
  std::string text;
  text.resize(fstat(fd, &st) == 0 && st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1
                                                      : size_t{1} << 20);
  size_t used = 0;
  for (;;) {
    if (used == text.size()) text.resize(text.size() * 2);
    ssize_t n = read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      throw Error(path, "cannot read kernel symbols");
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(used);
  return ParseOwned(std::move(text));
}

bool KernelSymbols::Lookup(uint64_t ip, Hit* hit) const {
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
  ForEachLine(text_, [&](const Line& line) {
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
