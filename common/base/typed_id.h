#pragma once
// Typed ids: a dense index or a serial number wrapped in a type of its own, one type per kind,
// so that two integers of different meaning (a node of the stack tree and a frame name, a
// map's serial and the generation of a process's maps, a symbol's index and an offset) cannot
// be passed for each other, and a map keyed by one kind cannot be asked with another. The idea
// is heaptrack's src/util/indices.h (`Index<Base>`).
//
// An id is made only on purpose (`NodeId{3}`, explicit), never from a bare integer or from
// an id of another kind; it compares and orders as its integer, hashes as it (std::hash, so
// an unordered_map keyed by ids iterates as one keyed by the integers), counts up (`++`, for
// walks in id order), and gives its integer back for indexing (`index()`) or for bytes and
// arithmetic (`value`). Everything is inline and the struct is the integer: ids compile to
// the code the bare integers gave.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>

namespace pf {

/// An id of the kind `Tag` (any type, usually a declared-only struct) over the integer `Rep`.
template <typename Tag, typename Rep = uint32_t>
struct TypedId {
  static_assert(std::is_unsigned_v<Rep>);
  using rep_type = Rep;

  Rep value = 0;

  constexpr TypedId() = default;
  constexpr explicit TypedId(Rep v) : value(v) {}

  /// A value no id takes, for "none" where a kind needs one (all bits set).
  static constexpr TypedId Invalid() { return TypedId(std::numeric_limits<Rep>::max()); }
  constexpr bool valid() const { return value != std::numeric_limits<Rep>::max(); }

  /// The integer as a position in a vector indexed by this kind.
  constexpr size_t index() const { return value; }

  /// The next id (ids handed out in order; walks in id order).
  constexpr TypedId& operator++() {
    ++value;
    return *this;
  }

  friend constexpr bool operator==(TypedId a, TypedId b) = default;
  friend constexpr auto operator<=>(TypedId a, TypedId b) = default;
};

}  // namespace pf

/// Ids hash as their integers.
template <typename Tag, typename Rep>
struct std::hash<pf::TypedId<Tag, Rep>> {
  size_t operator()(pf::TypedId<Tag, Rep> id) const noexcept { return std::hash<Rep>()(id.value); }
};
