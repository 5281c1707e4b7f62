#pragma once
// The caches of PerfScriptFolder (perf_script.cpp, the only file to include this): of frames
// named, and of whole samples by what the fold reads of their lines and by their text. They
// make a capture's fold a lookup per sample where its samples repeat, as most do.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "formats/frame_names.h"
#include "formats/perf_script.h"

namespace pf {

// A frame's names: one id, or `count` ids from Cache::frames[first].
struct PerfScriptFolder::Cached {
  uint32_t first = 0;
  uint32_t count = 0;
  bool skip_after = false;
  StrId one;  // the only name, when `count` is 1 and `one_name`
  bool one_name = false;
};

// A map from 128-bit XXH3 hashes to 32-bit values, open addressing. Both caches below key by
// the hash of a text and keep no text. A slot keeps 96 of the hash's bits (the high half and
// the low half's low 32 bits, where the slot's place comes from) in 16 bytes: at 2^-96 per
// pair of texts, a collision is not a practical concern, and it saves the copy and the
// compare (and a third of the bytes 24-byte slots cost, in memory to zero and in cache).
struct Table128 {
  struct Slot {
    uint64_t high;  // the hash's high half, 1 for 0: 0 is an empty slot
    uint32_t low;   // the low half's low 32 bits
    uint32_t value;
    bool used() const { return high != 0; }
  };
  static uint64_t High(XXH128_hash_t key) { return key.high64 | (key.high64 == 0); }
  // Small at first, doubled as it fills: a fold of a recording asks it only about the stacks
  // it has not seen (4,096 slots zero-filled were 64 page faults, 0.1 ms of a small fold).
  std::vector<Slot> slots = std::vector<Slot>(1 << 6);
  size_t used = 0;

  Slot* Find(XXH128_hash_t key, bool* found) {
    const uint64_t high = High(key);
    const uint32_t low = static_cast<uint32_t>(key.low64);
    size_t mask = slots.size() - 1;
    for (size_t i = low & mask;; i = (i + 1) & mask) {
      Slot& s = slots[i];
      if (!s.used()) {
        *found = false;
        return &s;
      }
      if (s.high == high && s.low == low) {
        *found = true;
        return &s;
      }
    }
  }
  void Prefetch(uint64_t low) const { __builtin_prefetch(&slots[low & (slots.size() - 1)]); }
  // `slot` is what Find returned for `key`, with nothing inserted since.
  void Insert(Slot* slot, XXH128_hash_t key, uint32_t value) {
    *slot = Slot{High(key), static_cast<uint32_t>(key.low64), value};
    if (++used * 2 > slots.size()) {
      std::vector<Slot> old(slots.size() * 2);
      old.swap(slots);
      size_t mask = slots.size() - 1;
      for (const Slot& o : old) {
        if (!o.used()) continue;
        size_t i = o.low & mask;
        while (slots[i].used()) i = (i + 1) & mask;
        slots[i] = o;
      }
    }
  }
};

// Whether a cache of whole samples is worth its lookups: one whose samples seldom repeat
// costs a hash (and a search) per sample for nothing. It is tried in rounds of kRound
// samples, and after a round where fewer than 1 in 8 were found it rests for 16 rounds,
// twice as long after each such round in a row (up to 1,024).
struct CacheRounds {
  static constexpr uint32_t kRound = 256;
  uint32_t round = 0, round_found = 0, rest = 0, failed = 0;
  bool Try() {
    if (rest == 0) return true;
    --rest;
    return false;
  }
  void Note(bool found) {
    round_found += found;
    if (++round < kRound) return;
    failed = round_found < kRound / 8 ? std::min(failed + 1, 7u) : 0;
    if (failed) rest = (8u << failed) * kRound;
    round = round_found = 0;
  }
};

// Frames already named: hash of a frame's key (AppendFrameKey, AppendLineKey) -> the frame's
// one name, kOneName | its id (most frames: the lookup is all it costs), or the index of its
// entry in `entries` (a frame of several names, or one of --skip-after's).
struct PerfScriptFolder::Cache {
  static constexpr size_t kMaxEntries = 1 << 22;
  static constexpr uint32_t kOneName = 1u << 31;
  Table128 lines;
  std::vector<Cached> entries;
  std::vector<StrId> frames;
  FrameNames names;  // scratch for Transform
  std::string key;   // scratch for AddFrame
  // The module of the last frame whose module was noted, and its dso.
  std::string module_dso;
  StrId module;
  bool module_named = false;
};

// Whole samples already folded: hash of what the fold reads of their stack lines (FoldStackLines),
// seeded by the root frame's id -> leaf. Tried by rounds (`rounds`): in text where no stack
// repeats, its hash of the sample's keys was 3% of the fold's instructions.
struct PerfScriptFolder::SampleCache {
  static constexpr size_t kMaxEntries = 1 << 22;
  Table128 table;
  CacheRounds rounds;
  // Scratch: the sample's line keys one after the other, key[0, key_size); the buffer only
  // grows, and is written through a pointer (no size kept up to date byte by byte).
  std::string key = std::string(4096, '\0');
  size_t key_size = 0;
  struct Frame {
    StackLine line;  // offset stripped
    size_t key_end;  // where its key ends in `key`
    KeyHash hash;    // of its key, for the frame cache (a new sample's)
  };
  std::vector<Frame> frames;  // the sample's frames, leaf first

  // Whole samples by their stack lines' text as it is (addresses and offsets too), up to the
  // empty line, seeded alike -> raw_leaves[value]: a text seen before needs no line read.
  // Four in five samples of a capture of ordinary programs repeat an earlier one's text.
  // Where few do, the search for the empty line is wasted: tried by rounds (`raw_rounds`; in
  // the capture, the first round found 58%).
  static constexpr size_t kMaxText = 64 << 10;  // bytes searched for the empty line
  struct RawLeaf {
    uint32_t leaf, lines;
  };
  Table128 raw;
  std::vector<RawLeaf> raw_leaves;
  CacheRounds raw_rounds;
  // The entry of a text's hash, or null.
  const RawLeaf* FindText(const XXH128_hash_t& key) {
    bool found;
    const Table128::Slot* slot = raw.Find(key, &found);
    return found ? &raw_leaves[slot->value] : nullptr;
  }
  void AddText(const XXH128_hash_t& key, NodeId leaf, uint64_t lines) {
    if (raw.used >= kMaxEntries) {  // bound memory on endless distinct texts
      raw = Table128();
      raw_leaves.clear();
    }
    bool seen;
    Table128::Slot* slot = raw.Find(key, &seen);
    if (seen) return;
    raw.Insert(slot, key, static_cast<uint32_t>(raw_leaves.size()));
    raw_leaves.push_back({leaf.value, static_cast<uint32_t>(lines)});
  }

  // Room for `n` more bytes of key.
  char* KeyRoom(size_t n) {
    if (key.size() - key_size < n) key.resize(std::max(2 * key.size(), key_size + n));
    return key.data() + key_size;
  }
};

}  // namespace pf
