// The list of distinct stacks (stack_list.h): a hash of each frame-id sequence finds its
// stack again; sorting compares names through their ranks, so a comparison reads integers.

#include "stacks/stack_list.h"

#include <algorithm>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace pf {

namespace {
uint64_t HashIds(std::span<const StrId> frames) {
  return XXH3_64bits(frames.data(), frames.size() * sizeof(StrId));
}
}  // namespace

StackList::StackList(int columns) : columns_(columns), first_{0}, slots_(1024) {}

bool StackList::Same(uint32_t stack, std::span<const StrId> frames) const {
  std::span<const StrId> have = this->frames(stack);
  return have.size() == frames.size() &&
         std::memcmp(have.data(), frames.data(), frames.size() * sizeof(StrId)) == 0;
}

void StackList::Add(std::span<const StrId> frames, const uint64_t* counts) {
  uint64_t hash = HashIds(frames);
  uint32_t tag = static_cast<uint32_t>(hash >> 32);
  size_t mask = slots_.size() - 1;
  size_t i = hash & mask;
  for (; slots_[i].stack_plus_one != 0; i = (i + 1) & mask) {
    if (slots_[i].tag == tag && Same(slots_[i].stack_plus_one - 1, frames)) break;
  }
  uint32_t stack;
  if (slots_[i].stack_plus_one != 0) {
    stack = slots_[i].stack_plus_one - 1;
  } else {
    stack = static_cast<uint32_t>(size());
    slots_[i] = Slot{stack + 1, tag};
    ids_.insert(ids_.end(), frames.begin(), frames.end());
    first_.push_back(ids_.size());
    counts_.resize(counts_.size() + static_cast<size_t>(columns_), 0);
    if (size() * 4 > slots_.size() * 3) Grow();
  }
  for (int c = 0; c < columns_; ++c) {
    uint64_t& sum = counts_[stack * columns_ + c];
    if (__builtin_add_overflow(sum, counts[c], &sum)) {
      sum = UINT64_MAX;
      ++saturated_;
    }
  }
}

void StackList::Grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.stack_plus_one == 0) continue;
    // The low bits of the hash are not kept: hash the stack again.
    size_t i = HashIds(frames(s.stack_plus_one - 1)) & mask;
    while (slots_[i].stack_plus_one != 0) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

std::vector<uint32_t> StackList::SortedOrder() const {
  // Each name's rank in bytewise order; then a stack's first two frames' ranks make a key
  // that settles most comparisons (0 past a stack's end: a prefix comes first).
  std::vector<uint32_t> by_name(names_.size());
  for (uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(), [this](uint32_t a, uint32_t b) {
    return names_.Name(StrId{a}) < names_.Name(StrId{b});
  });
  std::vector<uint32_t> rank(names_.size());
  for (uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r + 1;
  struct Key {
    uint64_t first_two;
    uint32_t stack;
  };
  std::vector<Key> keys(size());
  for (uint32_t s = 0; s < size(); ++s) {
    std::span<const StrId> f = frames(s);
    uint64_t a = f.size() > 0 ? rank[f[0].value] : 0, b = f.size() > 1 ? rank[f[1].value] : 0;
    keys[s] = Key{a << 32 | b, s};
  }
  // By key first (a radix sort, 16 bits a pass), then each run of equal keys by the rest.
  std::vector<Key> other(keys.size());
  for (int shift = 0; shift < 64; shift += 16) {
    std::vector<uint32_t> start(1 << 16 | 1, 0);
    for (const Key& k : keys) ++start[(k.first_two >> shift & 0xffff) + 1];
    if (start[(keys.empty() ? 0 : keys[0].first_two >> shift & 0xffff) + 1] == keys.size()) {
      continue;  // one digit for all: the pass would change nothing
    }
    for (size_t d = 1; d < start.size(); ++d) start[d] += start[d - 1];
    for (const Key& k : keys) other[start[k.first_two >> shift & 0xffff]++] = k;
    keys.swap(other);
  }
  auto rest_less = [&](const Key& x, const Key& y) {
    std::span<const StrId> a = frames(x.stack), b = frames(y.stack);
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 2; i < n; ++i) {
      if (a[i] != b[i]) return rank[a[i].value] < rank[b[i].value];
    }
    return a.size() < b.size();
  };
  for (size_t run = 0; run < keys.size();) {
    size_t end = run + 1;
    while (end < keys.size() && keys[end].first_two == keys[run].first_two) ++end;
    if (end - run > 1) std::sort(keys.begin() + run, keys.begin() + end, rest_less);
    run = end;
  }
  std::vector<uint32_t> order(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].stack;
  return order;
}

}  // namespace pf
