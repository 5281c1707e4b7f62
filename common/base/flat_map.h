#pragma once
// A hash map for small trivially copyable keys and values, stored inline: open addressing with
// linear probing over one vector of slots, doubled at half full, no erase. A lookup costs the
// hash and, mostly, one cache line; std::unordered_map costs a bucket, a node (each its own
// allocation) and a division, and freeing it frees every node. The folds of recordings key
// their caches so (record_fold.h: a sample's addresses and names by their XXH3-128 hashes;
// frame_namer.h: a user frame by process, map and address), hundreds of thousands of entries
// for a system-wide capture.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/prefetch.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace pf {

/// An XXH3-128 hash as a FlatMap key: its low half is hash enough.
struct Hash128Key {
  size_t operator()(const XXH128_hash_t& k) const { return k.low64; }
};
struct Equal128Key {
  bool operator()(const XXH128_hash_t& a, const XXH128_hash_t& b) const {
    return a.low64 == b.low64 && a.high64 == b.high64;
  }
};

template <typename Key, typename Value, typename Hash, typename Equal = std::equal_to<Key>>
class FlatMap {
 public:
  /// The value of `key`, inserted as `value` when absent (*inserted then). The reference
  /// stays valid until the next insertion.
  Value& TryEmplace(const Key& key, const Value& value, bool* inserted) {
    if ((used_ + 1) * 2 > slots_.size()) Grow();
    Slot* s = Probe(key);
    *inserted = !s->used;
    if (!s->used) {
      *s = Slot{key, value, true};
      ++used_;
    }
    return s->value;
  }
  /// The value of `key`, or null.
  Value* Find(const Key& key) {
    if (slots_.empty()) return nullptr;
    Slot* s = Probe(key);
    return s->used ? &s->value : nullptr;
  }
  size_t size() const { return used_; }
  /// Asks the CPU to load the slot where a lookup of `key` starts (a big table's lookups
  /// wait on memory: a caller that knows its next keys asks ahead).
  void Prefetch(const Key& key) const {
    if (!slots_.empty()) pf::Prefetch(&slots_[Hash()(key) & (slots_.size() - 1)]);
  }

 private:
  struct Slot {
    Key key;
    Value value;
    bool used;
  };
  Slot* Probe(const Key& key) {
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash()(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!s.used || Equal()(s.key, key)) return &s;
    }
  }
  void Grow() {
    // Small at first (a small fold asks little; zero-filled slots are page faults).
    std::vector<Slot> old(slots_.empty() ? 64 : slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& o : old) {
      if (o.used) *Probe(o.key) = o;
    }
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;
};

}  // namespace pf
