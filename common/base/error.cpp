#include "base/error.h"

namespace pf {

std::string Error::Describe() const {
  if (where_.empty()) return what();
  return where_ + ": " + what();
}

std::string Where(std::string_view file, uint64_t line) {
  std::string s(file);
  s += ':';
  s += std::to_string(line);
  return s;
}

}  // namespace pf
