#pragma once
// Shortening function names for call graph labels without losing what tells them apart.
//
// A C++ name is mostly scope: `std::_Rb_tree<...500 bytes of template arguments...>::_M_erase`.
// Cutting such a name at the end (what pf-dot did, and gprof2dot does) leaves every method of
// the class with the same label. ElideName cuts the middle instead, in order: the template
// argument lists of the enclosing scopes, then the function's own template arguments and
// parameters, then the leading namespaces and classes; the function's own name is kept.
// DistinctLabels then makes sure two different functions never share a label.

#include <string>
#include <string_view>
#include <vector>

namespace pf {

/// `name` in at most about `max` bytes (see above): "ns::Tree<long args>::f" ->
/// "ns::Tree<...>::f" -> "...::Tree<...>::f". Only a name whose own part alone is longer
/// than `max` is cut in its middle. Names within `max` are returned unchanged.
std::string ElideName(std::string_view name, size_t max);

/// The label of each of `names` elided to `max` (ElideName), made distinct among those with
/// the same `group` (say, the same module): colliding labels are first elided less (up to
/// 8 * max), and those still equal get " [1/2]", " [2/2]"... in the order of `names`.
std::vector<std::string> DistinctLabels(const std::vector<std::string>& names,
                                        const std::vector<std::string>& groups, size_t max);

}  // namespace pf
