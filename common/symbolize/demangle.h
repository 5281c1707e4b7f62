#pragma once
// Symbol names as `perf script` prints them. perf 6.1 (Debian's build, without libbfd) hands
// every ELF symbol name to libiberty's cplus_demangle with no options, so C++ names lose their
// parameter lists, return types and `[clone .constprop.0]` suffixes
// (`outer::Box<long, 2>::operator()`, `main::{lambda(int)#1}::operator()`,
// `(anonymous namespace)::spin`), special names keep theirs (`non-virtual thunk to
// Foo::bar()`), symbol versions are dropped (`_Znwm@GLIBCXX_3.4` -> `operator new`), Rust
// legacy names lose their hash (`core::fmt::write`) and Rust v0 names their crate
// disambiguators (`main::spin::<u8>`). Names libiberty does not take are tried as OCaml
// (`camlStdlib__list__map_12` -> `Stdlib.list.map_12`); anything else is left as it is.

#include <string>
#include <string_view>

namespace pf {

/// The name perf prints for the symbol-table name `mangled` (unchanged when not mangled).
std::string Demangle(std::string_view mangled);

/// False when Demangle(name) is certainly `name` itself: only the Itanium ABI's names
/// (`_Z`, `_GLOBAL_`), Rust v0's (`_R`) and OCaml's (`caml`) can change.
inline bool MayDemangle(std::string_view name) {
  return name.starts_with("_Z") || name.starts_with("_R") || name.starts_with("_GLOBAL_") ||
         name.starts_with("caml");
}

}  // namespace pf
