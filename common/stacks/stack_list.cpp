// The list of distinct stacks (stack_list.h): a hash of each stack's text finds it again;
// sorting compares names through their ranks, so a comparison reads integers.

#include "stacks/stack_list.h"

#include "base/checksum.h"
#include "base/error.h"
#include "io/input.h"
#include "stacks/folded.h"

#include <algorithm>
#include <new>
#include <string_view>
#include <utility>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace pf {

StackList::StackList(int columns) : columns_(columns) {}

uint32_t StackList::FindOrAdd(const XXH128_hash_t& hash, bool* fresh) {
  const uint32_t tag = static_cast<uint32_t>(hash.high64 >> 32);
  size_t mask = slots_.size() - 1;
  size_t i = hash.low64 & mask;
  for (; slots_[i].stack_plus_one != 0; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.tag == tag && hash_[slot.stack_plus_one - 1] == hash.low64) {
      *fresh = false;
      return slot.stack_plus_one - 1;
    }
  }
  *fresh = true;
  const uint32_t stack = static_cast<uint32_t>(hash_.size());
  hash_.push_back(hash.low64);
  slots_[i] = Slot{stack + 1, tag};
  if (hash_.size() * 4 > slots_.size() * 3) {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask = slots_.size() - 1;
    for (const Slot& o : old) {
      if (o.stack_plus_one == 0) continue;
      size_t j = hash_[o.stack_plus_one - 1] & mask;
      while (slots_[j].stack_plus_one != 0) j = (j + 1) & mask;
      slots_[j] = o;
    }
  }
  return stack;
}

void StackList::Reserve(size_t more) {
  const size_t n = where_.size() + more;
  if (n <= where_.capacity()) return;
  where_.reserve(n);
  hash_.reserve(n);
  counts_.reserve(n * static_cast<size_t>(columns_));
}

void StackList::DoneAdding() {
  std::vector<Slot>().swap(slots_);
  std::vector<uint64_t>().swap(hash_);
  frame_of_ = {};
  std::vector<Piece>().swap(pieces_);
}

XXH128_hash_t StackList::Hash(std::string_view stack) {
  return Hash128(stack.data(), stack.size());
}

void StackList::Add(std::string_view stack, const XXH128_hash_t& hash, const uint64_t* counts) {
  bool fresh;
  const uint32_t s = FindOrAdd(hash, &fresh);
  if (fresh) {
    // Every frame hashed and its slot asked for first, then looked up: the table of names
    // outgrows the caches, and a stack's lookups then wait on memory together, not in turn.
    pieces_.clear();
    ForEachFrame(stack, [this](std::string_view f) {
      Piece& piece = pieces_.emplace_back();
      piece.hash = XXH3_128bits(f.data(), f.size());
      piece.name = f;
      frame_of_.Prefetch(piece.hash);
    });
    // The frames' ids go straight to their place in the chunk.
    StrId* out = Room(pieces_.size());
    for (const Piece& p : pieces_) *out++ = Frame(p.name, p.hash);
  }
  for (int c = 0; c < columns_; ++c) AddCount(s, c, counts[c]);
}

uint32_t StackList::AddFrames(std::span<const StrId> frames) {
  bool fresh;
  const uint32_t s = FindOrAdd(XXH3_128bits(frames.data(), frames.size_bytes()), &fresh);
  if (fresh) std::copy(frames.begin(), frames.end(), Room(frames.size()));
  return s;
}

StrId* StackList::Room(size_t n) {
  if (chunks_.empty() || chunk_size_ - chunk_used_ < n) NewChunk(n);
  StrId* out = chunks_.back().get() + chunk_used_;
  // (A longer stack's chunk begins at its last window's start.)
  const size_t window = window_.size() - (chunk_size_ + kChunk - 1) / kChunk;
  where_.push_back(Where{static_cast<uint32_t>(window << kWindowBits | chunk_used_),
                         static_cast<uint32_t>(n)});
  chunk_used_ += n;
  counts_.resize(counts_.size() + static_cast<size_t>(columns_), 0);
  return out;
}

void StackList::NewChunk(size_t frames) {
  chunk_size_ = std::max(kChunk, frames);
  const size_t windows = (chunk_size_ + kChunk - 1) / kChunk;
  if (window_.size() + windows > kWindows || frames > UINT32_MAX) {
    throw Error("too many frames in distinct stacks (more than 2^32)");
  }
  chunks_.emplace_back(static_cast<StrId*>(::operator new(chunk_size_ * sizeof(StrId))));
  for (size_t w = 0; w < windows; ++w) window_.push_back(chunks_.back().get() + w * kChunk);
  chunk_used_ = 0;
}

StrId StackList::Frame(std::string_view name, const XXH128_hash_t& hash) {
  bool fresh;
  StrId& id = frame_of_.TryEmplace(hash, StrId{}, &fresh);
  if (fresh) id = names_.Intern(name);
  return id;
}

std::vector<uint32_t> StackList::SortedOrder() const {
  // Each name's rank in bytewise order, for a frame with frames after it or not alike.
  std::vector<uint32_t> by_name(names_.size());
  for (uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(), [this](uint32_t a, uint32_t b) {
    return names_.Name(StrId{a}) < names_.Name(StrId{b});
  });
  std::vector<uint32_t> rank(names_.size());
  for (uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r + 1;
  return Order(rank, rank);
}

// A line is its frames' names each followed by ';' but the last: pieces "name;" and, last,
// "name". The pieces ending in ';' hold no other ';', so none is a prefix of another, and
// lines compare as the sequences of their pieces' ranks among all such pieces.
std::vector<uint32_t> StackList::LineOrder() const {
  struct Piece {
    uint32_t name;
    bool more;  // "name;"
  };
  std::vector<Piece> pieces;
  pieces.reserve(names_.size() * 2);
  for (uint32_t i = 0; i < names_.size(); ++i) {
    pieces.push_back({i, false});
    pieces.push_back({i, true});
  }
  std::sort(pieces.begin(), pieces.end(), [this](const Piece& a, const Piece& b) {
    std::string_view na = names_.Name(StrId{a.name}), nb = names_.Name(StrId{b.name});
    size_t m = std::min(na.size(), nb.size());
    if (int c = na.compare(0, m, nb, 0, m); c != 0) return c < 0;
    // One name starts the other (or they are one): compare what follows, ';' or the end.
    auto next = [m](std::string_view n, bool more) -> int {
      return m < n.size() ? static_cast<unsigned char>(n[m]) : more ? ';' : -1;
    };
    int x = next(na, a.more), y = next(nb, b.more);
    if (x != y) return x < y;
    return na.size() + a.more < nb.size() + b.more;
  });
  std::vector<uint32_t> end_rank(names_.size()), more_rank(names_.size());
  for (uint32_t r = 0; r < pieces.size(); ++r) {
    (pieces[r].more ? more_rank : end_rank)[pieces[r].name] = r + 1;
  }
  return Order(end_rank, more_rank);
}

namespace {

// Sorts the stacks `stack[0, n)` by their keys `head[0, n)` (the two arrays move together),
// 11 bits at a time from the least significant, skipping the bits all keys share: one pass
// to count every digit, then a pass per digit into `scratch` and back. It replaced a sort in
// place, most significant byte first, whose buckets split little on the first frames (the
// processes, main) and much below them: pf-flamegraph of 300k stacks in random order 7 ms
// faster, of 10M 1.2 s (10%). The scratch, 12 bytes a stack, is taken after DoneAdding has
// freed more than that: the peak stays where it was at 300k and 1M stacks, and at 10M grows
// 2% (1,118 to 1,141 MB).
struct SortScratch {
  std::vector<uint64_t> head;
  std::vector<uint32_t> stack;
};
void SortByHead(uint64_t* head, uint32_t* stack, size_t n, SortScratch& scratch) {
  constexpr int kBits = 11, kPasses = 6;
  constexpr size_t kDigits = size_t{1} << kBits;
  uint32_t count[kPasses][kDigits] = {};
  for (size_t i = 0; i < n; ++i) {
    for (int p = 0; p < kPasses; ++p) ++count[p][head[i] >> (p * kBits) & (kDigits - 1)];
  }
  if (scratch.head.size() < n) {
    scratch.head.resize(n);
    scratch.stack.resize(n);
  }
  uint64_t* from_head = head;
  uint32_t* from_stack = stack;
  uint64_t* to_head = scratch.head.data();
  uint32_t* to_stack = scratch.stack.data();
  for (int p = 0; p < kPasses; ++p) {
    uint32_t* c = count[p];
    if (c[from_head[0] >> (p * kBits) & (kDigits - 1)] == n) continue;  // a digit all share
    uint32_t at = 0;
    for (size_t d = 0; d < kDigits; ++d) at += std::exchange(c[d], at);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t to = c[from_head[i] >> (p * kBits) & (kDigits - 1)]++;
      to_head[to] = from_head[i];
      to_stack[to] = from_stack[i];
    }
    std::swap(from_head, to_head);
    std::swap(from_stack, to_stack);
  }
  if (from_head != head) {
    std::copy(from_head, from_head + n, head);
    std::copy(from_stack, from_stack + n, stack);
  }
}

}  // namespace

// The stacks ordered by the sequences of their frames' ranks (`more_rank` for a frame with
// frames after it, `end_rank` for the last), a sequence before its extensions. The first
// frames' ranks make a key that settles most comparisons (0 past a stack's end), sorted by
// radix; stacks of one key are then sorted by the next frames' key, until each stands alone.
std::vector<uint32_t> StackList::Order(const std::vector<uint32_t>& end_rank,
                                       const std::vector<uint32_t>& more_rank) const {
  auto rank_at = [&](std::span<const StrId> f, size_t i) -> uint64_t {
    if (i >= f.size()) return 0;
    return (i + 1 < f.size() ? more_rank : end_rank)[f[i].value];
  };
  // As many of the first frames' ranks as fit in 64 bits make the key.
  uint64_t max_rank = 1;
  for (uint32_t r : end_rank) max_rank = std::max<uint64_t>(max_rank, r);
  for (uint32_t r : more_rank) max_rank = std::max<uint64_t>(max_rank, r);
  const int bits = 64 - __builtin_clzll(max_rank);
  const size_t in_key = bits > 32 ? 1 : static_cast<size_t>(64 / bits);
  auto key_from = [&](std::span<const StrId> f, size_t first_frame) {
    uint64_t key = 0;
    for (size_t i = first_frame; i < first_frame + in_key; ++i) {
      key = (in_key > 1 ? key << bits : 0) | rank_at(f, i);
    }
    return key << (64 - bits * in_key);
  };
  // The keys beside the stacks (two arrays, not an array of pairs: 12 bytes a stack, not 16);
  // the stacks' array is the order returned.
  std::vector<uint64_t> head(size());
  std::vector<uint32_t> order(size());
  for (uint32_t s = 0; s < size(); ++s) {
    head[s] = key_from(frames(s), 0);
    order[s] = s;
  }
  SortScratch scratch;
  SortByHead(head.data(), order.data(), order.size(), scratch);
  // Stacks of one key: the next frames' ranks make their next key, sorted in turn, until
  // every run holds one stack (distinct stacks differ somewhere, or one ends first).
  struct Run {
    size_t begin, end, first_frame;
  };
  std::vector<Run> runs;
  auto note_runs = [&](size_t begin, size_t end, size_t first_frame) {
    for (size_t run = begin; run < end;) {
      size_t stop = run + 1;
      while (stop < end && head[stop] == head[run]) ++stop;
      if (stop - run > 1) runs.push_back({run, stop, first_frame});
      run = stop;
    }
  };
  note_runs(0, order.size(), in_key);
  struct Pair {
    uint64_t head;
    uint32_t stack;
  };
  constexpr size_t kSmallRun = 4096;
  std::vector<Pair> pairs;
  while (!runs.empty()) {
    const Run r = runs.back();
    runs.pop_back();
    bool more = false;  // a stack of the run has frames past this key's
    for (size_t k = r.begin; k < r.end; ++k) {
      // (A run's stacks lie anywhere in the list: ask for them ahead, as FetchAhead.)
      if (k + 16 < r.end) Prefetch(order[k + 16]);
      if (k + 8 < r.end) {
        std::span<const StrId> ahead = frames(order[k + 8]);
        pf::Prefetch(ahead.data() + std::min(r.first_frame, ahead.size()));
      }
      std::span<const StrId> f = frames(order[k]);
      head[k] = key_from(f, r.first_frame);
      more |= f.size() > r.first_frame + in_key;
    }
    if (r.end - r.begin <= kSmallRun) {  // through a copy of pairs: std::sort's small case
      pairs.clear();
      for (size_t k = r.begin; k < r.end; ++k) pairs.push_back({head[k], order[k]});
      std::sort(pairs.begin(), pairs.end(),
                [](const Pair& x, const Pair& y) { return x.head < y.head; });
      for (size_t k = r.begin; k < r.end; ++k) {
        head[k] = pairs[k - r.begin].head;
        order[k] = pairs[k - r.begin].stack;
      }
    } else {
      SortByHead(head.data() + r.begin, order.data() + r.begin, r.end - r.begin, scratch);
    }
    if (more) note_runs(r.begin, r.end, r.first_frame + in_key);
  }
  return order;
}

bool ListFoldedSources(std::span<ByteSource* const> sources, StackList* list, WeightUnit* unit,
                       std::vector<std::string>* comments) {
  uint64_t lines = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    ByteSource* src = sources[i];
    if (!src->stable()) return false;
    std::string_view data = src->Next();
    if (FoldedColumns(data) != list->columns()) return false;
    FoldedUnit file_unit;
    // (pf-diff's line among several inputs: the tree path picks which.)
    if (!ListFolded(data, -1, src->releasable(), list, &file_unit,
                    sources.size() > 1 ? nullptr : comments, &lines)) {
      return false;
    }
    if (i > 0 && file_unit.unit() != *unit) return false;  // the tree path says how
    *unit = file_unit.unit();
  }
  return true;
}

size_t GuessFoldedLines(std::string_view data) {
  const std::string_view head = data.substr(0, 64 << 10);
  const size_t head_lines = static_cast<size_t>(std::count(head.begin(), head.end(), '\n'));
  if (head_lines == 0) return 0;
  return std::min<size_t>(data.size() / head.size() * head_lines * 11 / 10, 1u << 30);
}

bool ListFolded(std::string_view data, int column, bool release, StackList* list,
                FoldedUnit* unit, std::vector<std::string>* comments, uint64_t* lines) {
  // Room for as many stacks as the input has lines: at most that many are new (reserved, not
  // touched, the room costs no memory).
  list->Reserve(GuessFoldedLines(data));
  struct Pending {
    std::string_view stack;
    XXH128_hash_t hash;
    uint64_t counts[2];
    bool set = false;
  } pending;
  auto add_pending = [&] {
    if (pending.set) list->Add(pending.stack, pending.hash, pending.counts);
    pending.set = false;
  };
  const int columns = column < 0 ? list->columns() : 1;
  const bool ok = ForEachFoldedLine(data, columns, release, unit, comments, lines,
                                    [&](const FoldedLine& fl) {
    // Each line is added once the next is hashed and its slot asked for (in a large list
    // the slot is a cache miss).
    const XXH128_hash_t hash = StackList::Hash(fl.stack);
    list->PrefetchSlot(hash);
    add_pending();
    pending = {fl.stack, hash, {0, 0}, true};
    if (column < 0) {
      std::copy(fl.counts, fl.counts + list->columns(), pending.counts);
    } else {
      pending.counts[column] = fl.counts[0];
    }
  });
  if (!ok) return false;
  add_pending();
  return list->saturated() == 0;
}

void AppendStack(const StackList& list, uint32_t stack, BufferedWriter& out) {
  static_assert(Interner::kSlack >= BufferedWriter::kPad);
  bool first = true;
  for (StrId f : list.frames(stack)) {
    if (!first) out.Append(';');
    out.AppendPadded(list.names().Name(f));
    first = false;
  }
}

}  // namespace pf
