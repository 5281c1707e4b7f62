#pragma once
// A hash map for small trivially copyable keys and values, stored inline: open addressing with
// linear probing over one array of slots, doubled at half full, no erase. A lookup costs the
// hash and, mostly, one cache line; std::unordered_map costs a bucket, a node (each its own
// allocation) and a division, and freeing it frees every node. The folds of recordings key
// their caches so (record_fold.h: a sample's addresses and names by their XXH3-128 hashes;
// frame_namer.h: a user frame by process, map and address), hundreds of thousands of entries
// for a system-wide capture.
//
// Such a table's lookups land on pages at random: with 4 KB pages nearly each misses the TLB as
// well as the cache. From kHugeBytes on, the slots are an anonymous mapping aligned to 2 MB and
// marked MADV_HUGEPAGE (where transparent huge pages are "madvise" or "always"), so one TLB
// entry covers 2 MB of them (a 61 MB recording's fold: 485 -> 449 ms of CPU on one thread).
// Slots start zero-filled either way (calloc below it), which is an unused slot.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

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

/// Zero-filled memory for a FlatMap's slots: calloc'd, or from kHugeBytes on mapped on 2 MB
/// boundaries and marked for huge pages. Move-only.
class ZeroedBlock {
 public:
  static constexpr size_t kHugeBytes = size_t{2} << 20;

  ZeroedBlock() = default;
  explicit ZeroedBlock(size_t bytes) : bytes_(bytes) {
    if (bytes < kHugeBytes) {
      data_ = std::calloc(bytes, 1);
      if (data_ == nullptr) throw std::bad_alloc();
      return;
    }
    // Mapped with a huge page's room to spare, then trimmed to 2 MB boundaries.
    bytes_ = (bytes + kHugeBytes - 1) & ~(kHugeBytes - 1);
    size_t span = bytes_ + kHugeBytes;
    void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    uintptr_t begin = reinterpret_cast<uintptr_t>(m);
    uintptr_t aligned = (begin + kHugeBytes - 1) & ~(uintptr_t{kHugeBytes} - 1);
    if (aligned > begin) munmap(m, aligned - begin);
    if (size_t tail = begin + span - (aligned + bytes_)) {
      munmap(reinterpret_cast<void*>(aligned + bytes_), tail);
    }
    data_ = reinterpret_cast<void*>(aligned);
    madvise(data_, bytes_, MADV_HUGEPAGE);  // a hint: without it, 4 KB pages
    mapped_ = true;
  }
  ZeroedBlock(ZeroedBlock&& o) noexcept { swap(o); }
  ZeroedBlock& operator=(ZeroedBlock&& o) noexcept {
    ZeroedBlock(std::move(o)).swap(*this);
    return *this;
  }
  ~ZeroedBlock() {
    if (mapped_) {
      munmap(data_, bytes_);
    } else {
      std::free(data_);
    }
  }
  void swap(ZeroedBlock& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    std::swap(mapped_, o.mapped_);
  }
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool mapped_ = false;
};

template <typename Key, typename Value, typename Hash, typename Equal = std::equal_to<Key>>
class FlatMap {
 public:
  FlatMap() = default;
  FlatMap(FlatMap&& o) noexcept
      : block_(std::move(o.block_)), size_(std::exchange(o.size_, 0)),
        used_(std::exchange(o.used_, 0)) {}
  FlatMap& operator=(FlatMap&& o) noexcept {
    block_ = std::move(o.block_);
    size_ = std::exchange(o.size_, 0);
    used_ = std::exchange(o.used_, 0);
    return *this;
  }

  /// The value of `key`, inserted as `value` when absent (*inserted then). The reference
  /// stays valid until the next insertion.
  Value& TryEmplace(const Key& key, const Value& value, bool* inserted) {
    if ((used_ + 1) * 2 > size_) Grow();
    Slot* s = Probe(key);
    *inserted = !s->used;
    if (!s->used) {
      new (s) Slot{key, value, true};
      ++used_;
    }
    return s->value;
  }
  /// The value of `key`, or null.
  Value* Find(const Key& key) {
    if (size_ == 0) return nullptr;
    Slot* s = Probe(key);
    return s->used ? &s->value : nullptr;
  }
  size_t size() const { return used_; }
  /// Empties the table, keeping its slots (their pages stay mapped).
  void Clear() {
    if (size_ != 0) std::memset(static_cast<void*>(slots()), 0, size_ * sizeof(Slot));
    used_ = 0;
  }
  /// Asks the CPU to load the slot where a lookup of `key` starts (a big table's lookups
  /// wait on memory: a caller that knows its next keys asks ahead).
  void Prefetch(const Key& key) const {
    if (size_ != 0) pf::Prefetch(&slots()[Hash()(key) & (size_ - 1)]);
  }

 private:
  // (Zero bytes are an unused slot; an unused slot's key and value are never read.)
  struct Slot {
    Key key;
    Value value;
    bool used;
  };
  static_assert(std::is_trivially_copy_constructible_v<Slot> &&
                std::is_trivially_destructible_v<Slot>);

  Slot* slots() const { return static_cast<Slot*>(block_.data()); }
  Slot* Probe(const Key& key) {
    size_t mask = size_ - 1;
    Slot* slots = this->slots();
    for (size_t i = Hash()(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots[i];
      if (!s.used || Equal()(s.key, key)) return &s;
    }
  }
  void Grow() {
    // Small at first (a small fold asks little; zero-filled slots are page faults).
    const size_t old_size = size_;
    size_ = size_ == 0 ? 64 : size_ * 2;
    ZeroedBlock old(size_ * sizeof(Slot));
    old.swap(block_);
    const Slot* from = static_cast<const Slot*>(old.data());
    for (size_t i = 0; i < old_size; ++i) {
      if (from[i].used) new (Probe(from[i].key)) Slot(from[i]);
    }
  }

  ZeroedBlock block_;
  size_t size_ = 0;  // slots, a power of two (or none)
  size_t used_ = 0;
};

}  // namespace pf
