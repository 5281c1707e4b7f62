// Fuzz target: kallsyms text. The lookup that binary-searches the text (KernelSymbols::Parse)
// and the whole parse (ParseEagerly) must never crash or hang, and when the core kernel's
// lines (those before the first tab) are in address order, as every kernel lists them, they
// must give the same answers at every line's address and around it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "symbolize/kallsyms.h"

namespace {

bool ParseAddress(std::string_view line, uint64_t* address) {
  size_t i = 0;
  uint64_t a = 0;
  for (; i < line.size(); ++i) {
    char c = line[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) break;
    a = a << 4 | static_cast<uint64_t>(d);
  }
  if (i == 0 || i + 2 >= line.size() || line[i] != ' ' || line[i + 2] != ' ') return false;
  *address = a;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  pf::KernelSymbols lazy = pf::KernelSymbols::Parse(text);
  pf::KernelSymbols eager = pf::KernelSymbols::ParseEagerly(text);

  std::vector<uint64_t> probes = {0, ~uint64_t{0}};
  bool sorted = true, in_core = true;
  uint64_t previous = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (line.find('\t') != std::string_view::npos) in_core = false;
    uint64_t a;
    if (ParseAddress(line, &a)) {
      if (in_core && a < previous) sorted = false;
      if (in_core) previous = a;
      for (uint64_t d : {uint64_t{0}, uint64_t{1}, uint64_t{4096}})
        probes.insert(probes.end(), {a + d, a - d});
      probes.push_back((((a + 4096) + 4095) & ~uint64_t{4095}) - 1);
    }
    pos = nl + 1;
  }
  if (probes.size() > 4096) probes.resize(4096);
  for (uint64_t ip : probes) {
    pf::KernelSymbols::Hit a, b;
    bool found = lazy.Lookup(ip, &a);
    bool expected = eager.Lookup(ip, &b);
    if (!sorted) continue;
    if (found != expected || (found && (a.name != b.name || a.module != b.module ||
                                        a.offset != b.offset))) {
      std::abort();
    }
  }
  uint64_t address;
  lazy.AddressOf("_text", &address);
  return 0;
}
