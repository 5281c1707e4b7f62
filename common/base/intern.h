#pragma once
// String interning: every distinct byte string is stored once in an arena and named by a small
// dense id. Lookups hash with XXH3 into an open-addressing table of (hash, id) slots, so a hit
// costs one hash, one probe and one memcmp. Strings never move: the string_views handed out
// stay valid for the interner's lifetime.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/typed_id.h"

namespace pf {

/// A typed id for an interned string (frame names, line keys, ...).
using StrId = TypedId<struct StrTag>;

class Interner {
 public:
  Interner();
  Interner(const Interner&) = delete;
  Interner& operator=(const Interner&) = delete;

  /// The id of `s`, adding it when new.
  StrId Intern(std::string_view s);
  /// The id of `s` if present.
  bool Find(std::string_view s, StrId* id) const;
  std::string_view Name(StrId id) const { return names_[id.value]; }
  /// Bytes that may be read past the end of any Name(): a name of up to kSlack bytes can be
  /// copied as kSlack bytes at once (BufferedWriter::AppendPadded), with no choice by size.
  static constexpr size_t kSlack = 64;
  size_t size() const { return names_.size(); }

 private:
  struct Slot {
    uint64_t hash;
    uint32_t id_plus_one;  // 0 = empty
  };
  std::string_view Store(std::string_view s);
  void Grow();

  std::vector<Slot> slots_;
  std::vector<std::string_view> names_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* block_pos_ = nullptr;
  size_t block_left_ = 0;
};

/// XXH3 of a byte string (the project's one string hash).
uint64_t HashBytes(std::string_view s);

/// A strong 64-bit integer mixer for hash tables keyed by ids.
inline uint64_t MixU64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace pf
