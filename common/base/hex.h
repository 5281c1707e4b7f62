#pragma once
// Hexadecimal digits, for the text readers that parse addresses and escapes (kallsyms, JIT
// maps, JSON's \u escapes, Rust's mangled names).

namespace pf {

/// The value of the hex digit `c` (either case), or -1 when it is none.
constexpr int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace pf
