// The input format names' look-ups (base/input_formats.h).

#include "base/input_formats.h"

namespace pf {

std::string_view CanonicalFormatName(std::string_view name) {
  for (const InputFormatName& f : kInputFormatNames) {
    if (name == f.name) return f.name;
    std::string_view aliases = f.aliases;
    while (!aliases.empty()) {
      size_t blank = aliases.find(' ');
      if (aliases.substr(0, blank) == name) return f.name;
      if (blank == std::string_view::npos) break;
      aliases.remove_prefix(blank + 1);
    }
  }
  return {};
}

std::string FormatsPfReads() {
  std::string out;
  for (const InputFormatName& f : kInputFormatNames) {
    if (!out.empty()) out += ", ";
    out += f.what;
  }
  return out;
}

}  // namespace pf
