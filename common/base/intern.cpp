// The interner (intern.h). Frame names repeat millions of times in a profile and must compare
// in one instruction, so each distinct string is copied once into an arena of 1 MiB blocks
// (allocated without zero-filling, a string longer than a quarter block getting its own) and
// named by its index. The table is open addressing with linear probing over 16-byte slots that
// keep the XXH3 hash beside the id: a probe compares hashes first and touches the string only
// on a hash match, and growing rehashes from the stored hashes without reading any string. The
// table doubles when half full, which keeps probe chains short at a cost of 16 bytes a slot.
// Every string is followed by at least kSlack readable bytes (those of the next strings, or
// a block's spare end), so that a short name can be copied out as a fixed 64 bytes.

#include "base/intern.h"

#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace pf {

namespace {
constexpr size_t kBlockSize = 1 << 20;
constexpr size_t kInitialSlots = 1 << 10;
}  // namespace

uint64_t HashBytes(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }

Interner::Interner() : slots_(kInitialSlots, Slot{0, 0}) {}

std::string_view Interner::Store(std::string_view s) {
  if (s.size() > block_left_ || block_pos_ == nullptr) {  // (even "" is in a block)
    size_t size = s.size() > kBlockSize / 4 ? s.size() : kBlockSize;
    // Not zero-filled: a block's pages are touched only as strings fill it. Its last string
    // is followed by kSlack bytes, for a reader that copies a fixed 64 bytes.
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size + kSlack));
    if (size == s.size()) {  // a large string gets a block of its own
      std::memcpy(blocks_.back().get(), s.data(), s.size());
      return {blocks_.back().get(), s.size()};
    }
    block_pos_ = blocks_.back().get();
    block_left_ = size;
  }
  if (!s.empty()) std::memcpy(block_pos_, s.data(), s.size());
  std::string_view stored(block_pos_, s.size());
  block_pos_ += s.size();
  block_left_ -= s.size();
  return stored;
}

bool Interner::Find(std::string_view s, StrId* id) const {
  uint64_t h = HashBytes(s);
  size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.id_plus_one == 0) return false;
    if (slot.hash == h && names_[slot.id_plus_one - 1] == s) {
      id->value = slot.id_plus_one - 1;
      return true;
    }
  }
}

StrId Interner::Intern(std::string_view s) {
  uint64_t h = HashBytes(s);
  size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.id_plus_one == 0) break;
    if (slot.hash == h && names_[slot.id_plus_one - 1] == s) return StrId{slot.id_plus_one - 1};
  }
  uint32_t id = static_cast<uint32_t>(names_.size());
  names_.push_back(Store(s));
  slots_[i] = Slot{h, id + 1};
  if (names_.size() * 2 > slots_.size()) Grow();
  return StrId{id};
}

void Interner::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Slot{0, 0});
  size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.id_plus_one == 0) continue;
    size_t i = slot.hash & mask;
    while (slots_[i].id_plus_one != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

}  // namespace pf
