#pragma once
// The distinct stacks of a profile as a flat list of frame-id sequences, for drawing folded
// text that comes in any order without a stack tree.
//
// A flame graph needs the stacks in frame-by-frame order. Sorted folded text streams into the
// frame merger as it is read (StreamSortedFolded); text in another order (profile-bpfcc -f,
// bpftrace, `cat host*.folded`) used to be folded into a StackTree first, a node per
// distinct prefix, reached through a hash probe per frame: a tree of millions of nodes is a
// cache miss per frame and tens of bytes per node. A StackList keeps each distinct stack
// once, as its frames' interned ids (4 bytes a frame, its counts beside it), found again
// through one hash of its text, so a stack seen before (a fleet's files repeat each one
// thousands of times) costs no work per frame; SortedOrder then gives the order a
// depth-first walk of their tree would visit them in, which the frame merger takes as it
// takes sorted text (LineOrder, the order pf-diff writes). Memory follows the distinct
// stacks, and no node is made for a prefix.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/flat_map.h"
#include "base/intern.h"
#include "base/prefetch.h"
#include "io/input.h"
#include "io/output.h"
#include "stacks/folded.h"
#include "stacks/weight.h"

namespace pf {

class StackList {
 public:
  /// `columns` counts per stack: 1, or 2 for a differential profile (BEFORE, AFTER).
  explicit StackList(int columns = 1);
  StackList(const StackList&) = delete;
  StackList& operator=(const StackList&) = delete;

  Interner& names() { return names_; }
  const Interner& names() const { return names_; }
  int columns() const { return columns_; }

  /// Adds `counts` (columns() of them) to the stack whose folded text is `stack` ("a;b;c",
  /// root first), made when new: only then are its frames split and named. A stack is found
  /// again by 96 bits of a hash of its bytes alone, a frame name by 128 (no string compare:
  /// a fleet's files repeat each stack thousands of times; texts that collide in 96 bits
  /// are not to be met below 2^40 stacks). Sums stop at UINT64_MAX and are counted
  /// (saturated()).
  void Add(std::string_view stack, const uint64_t* counts) {
    Add(stack, Hash(stack), counts);
  }
  /// The same with the stack's hash (Hash) made before: a reader that hashes the next line
  /// and asks for its slot (PrefetchSlot) before it adds this one waits on memory less.
  void Add(std::string_view stack, const XXH128_hash_t& hash, const uint64_t* counts);
  static XXH128_hash_t Hash(std::string_view stack);
  /// For a reader that names the frames itself, in names(): the stack of `frames` (root
  /// first), made when new, found again by 96 bits of a hash of their ids; returns its index.
  /// A list is fed either this way or by text (Add), never both: the two hash different bytes.
  uint32_t AddFrames(std::span<const StrId> frames);
  /// Adds `count` to column `column` of stack `stack` (saturating, as Add).
  void AddCount(uint32_t stack, int column, uint64_t count) {
    uint64_t& sum = counts_[stack * columns_ + column];
    if (__builtin_add_overflow(sum, count, &sum)) {
      sum = UINT64_MAX;
      ++saturated_;
    }
  }
  void PrefetchSlot(const XXH128_hash_t& hash) const {
    pf::Prefetch(&slots_[hash.low64 & (slots_.size() - 1)]);
  }

  size_t size() const { return where_.size(); }
  std::span<const StrId> frames(uint32_t stack) const {
    const Where& w = where_[stack];
    return std::span<const StrId>(window_[w.start >> kWindowBits] + (w.start & (kChunk - 1)),
                                  w.length);
  }
  uint64_t count(uint32_t stack, int column) const { return counts_[stack * columns_ + column]; }
  /// Asks the CPU to load where frames(stack) and count(stack, ...) read. A walk in sorted
  /// order visits the list at random: ask this some stacks ahead, and for the frames a few
  /// stacks ahead (FetchAhead).
  void Prefetch(uint32_t stack) const {
    pf::Prefetch(&where_[stack]);
    pf::Prefetch(&counts_[stack * columns_]);
  }
  /// The prefetches of a walk over `order`, at step k: a stack's frames span a few cache
  /// lines (about 70 bytes on average), each asked for.
  void FetchAhead(const std::vector<uint32_t>& order, size_t k) const {
    if (k + 16 < order.size()) Prefetch(order[k + 16]);
    if (k + 8 < order.size()) {
      const std::span<const StrId> f = frames(order[k + 8]);
      const uintptr_t first = reinterpret_cast<uintptr_t>(f.data()) & ~uintptr_t{63};
      const uintptr_t end = reinterpret_cast<uintptr_t>(f.data() + f.size());
      pf::PrefetchBytes(reinterpret_cast<const void*>(first), std::min<size_t>(end - first, 256));
    }
  }
  uint64_t saturated() const { return saturated_; }

  /// Makes room for `more` stacks beyond those listed (address space only: nothing is
  /// touched until used), so that the per-stack arrays never hold two copies while they grow
  /// (a list read from several inputs: reserve for all of them first, GuessFoldedLines).
  void Reserve(size_t more);

  /// After the last Add: frees what finds a stack or a frame name again (the hashes and
  /// their tables, a third of the list), before the sort asks for memory of its own. No
  /// Add after it.
  void DoneAdding();

  /// The stacks in frame-by-frame order: frames compared bytewise by name, root first, a
  /// stack before the stacks it is a prefix of (the order in which a depth-first walk of
  /// their tree, children sorted by name, visits them).
  std::vector<uint32_t> SortedOrder() const;
  /// The stacks in the order of their folded lines, "a;b;c", compared bytewise (as
  /// LC_ALL=C sort and WriteFolded order them: "foo::bar" before "foo;baz").
  std::vector<uint32_t> LineOrder() const;

 private:
  StrId Frame(std::string_view name, const XXH128_hash_t& hash);
  void NewChunk(size_t frames);  // room for at least `frames` frames
  std::vector<uint32_t> Order(const std::vector<uint32_t>& end_rank,
                              const std::vector<uint32_t>& more_rank) const;

  int columns_;
  Interner names_;
  // Every stack's frames, one after the other in chunks that never move (a vector of them
  // all would hold two copies while it grows); a stack is never split between chunks. A
  // stack's frames are found by a 32-bit start: a window of kChunk frames (a chunk, or a
  // part of a chunk made for a longer stack) and the offset in it. That is 8 bytes a stack
  // with the length, not 12, and at most 2^32 frames in all (16 GB of them; more is an
  // error).
  static constexpr int kWindowBits = 20;
  static constexpr size_t kChunk = size_t{1} << kWindowBits;  // frames
  static constexpr size_t kWindows = size_t{1} << (32 - kWindowBits);
  struct Where {
    uint32_t start, length;
  };
  // Raw storage, not new StrId[]: StrId's member initializer would zero a chunk's every page
  // up front, where a chunk's untouched tail costs no memory.
  struct FreeChunk {
    void operator()(StrId* p) const { ::operator delete(p); }
  };
  std::vector<std::unique_ptr<StrId[], FreeChunk>> chunks_;
  std::vector<StrId*> window_;  // where each window's frames begin
  size_t chunk_used_ = 0, chunk_size_ = 0;
  std::vector<Where> where_;       // by stack
  std::vector<uint64_t> counts_;   // stack * columns_ + column
  // The stacks by their text's XXH3-128: 8-byte slots (a stack and 32 bits of its hash's
  // high half) at most three quarters full, the low half kept by stack: 96 bits compared
  // (a FlatMap's slot would be 24 bytes, and 16 more kept by stack).
  struct Slot {
    uint32_t stack_plus_one;  // 0: empty
    uint32_t tag;             // the hash's high half's top bits
  };
  uint32_t FindOrAdd(const XXH128_hash_t& hash, bool* fresh);
  // Room for a new stack's `n` frames (FindOrAdd gave it its index), its counts 0.
  StrId* Room(size_t n);
  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  std::vector<uint64_t> hash_;  // by stack: its hash's low half
  FlatMap<XXH128_hash_t, StrId, Hash128Key, Equal128Key> frame_of_;      // name's hash
  struct Piece {
    std::string_view name;
    XXH128_hash_t hash;
  };
  std::vector<Piece> pieces_;  // a new stack's frames' names, hashed
  uint64_t saturated_ = 0;
};

/// Calls f(line) for each stack line of folded text `data` (FoldedLine, `columns` counts),
/// as the readers without a tree take them: the `# pf-unit:` lines go to *unit, pf's other
/// comment lines to *comments (at most 16; null: such a line ends the reading); `lines`
/// counts the stack lines. With `release`, the pages before the line f was last given are
/// given back as it goes (a mapped file's, ReleaseInput), and the rest at the end. Returns
/// false where the tree's readers have more to say: a malformed line, decimals, a count too
/// large, a unit line that disagrees, a comment where none is taken.
template <typename F>
bool ForEachFoldedLine(std::string_view data, int columns, bool release, FoldedUnit* unit,
                       std::vector<std::string>* comments, uint64_t* lines, F&& f) {
  FoldedLines in(data, columns);
  size_t released = 0;
  constexpr size_t kReleaseEvery = 2 << 20;  // keep the resident set small
  while (in.Next()) {
    if (in.kind() == FoldedLines::kMalformed) return false;
    if (in.kind() == FoldedLines::kPfComment) {
      if (unit->Take(in.line(), "", in.line_number())) {
        if (!unit->warning().empty()) return false;
      } else if (!comments) {
        return false;
      } else if (comments->size() < 16) {
        comments->emplace_back(in.line());
      }
      continue;
    }
    const FoldedLine& fl = in.folded();
    if (fl.fractional || fl.cut || fl.too_large) return false;
    ++*lines;
    f(fl);
    // (Not this line's pages: f may hold on to it until the next.)
    const size_t at = static_cast<size_t>(fl.stack.data() - data.data());
    if (release && at - released > kReleaseEvery) {
      ReleaseInput(data.substr(released, at - released));
      released = at;
    }
  }
  if (release) ReleaseInput(data.substr(released));
  return true;
}

/// Reads folded text `data` into `list`: each line's count into column `column`, or with
/// column -1 its counts into the columns (a line then holds list->columns() of them). The
/// `# pf-unit:` lines go to *unit, pf's other comment lines to *comments (at most 16; null:
/// such a line ends the reading); `lines` counts the stacks read. With `release`, the pages
/// read are given back (a mapped file's, ReleaseInput). Returns false where the tree's
/// readers have more to say: a malformed line, decimals, a count too large, a unit line that
/// disagrees, a comment where none is taken.
bool ListFolded(std::string_view data, int column, bool release, StackList* list,
                FoldedUnit* unit, std::vector<std::string>* comments, uint64_t* lines);

/// Reads the folded text of every source (each stable: a mapped file's or a buffer's whole
/// text) into `list`, each line's counts into its columns, as ListFolded does, and the
/// sources' unit into *unit; their pf comment lines to *comments when there is one source
/// (else such a line ends the reading). False where the tree's readers have more to say
/// (ListFolded's cases, a source of another column count, sources of different units).
bool ListFoldedSources(std::span<ByteSource* const> sources, StackList* list, WeightUnit* unit,
                       std::vector<std::string>* comments);

/// About as many lines as folded text `data` holds, or a little more (from its first 64 KiB):
/// the room to reserve for its stacks.
size_t GuessFoldedLines(std::string_view data);

/// Appends stack `stack`'s folded text ("a;b;c") to `out`.
void AppendStack(const StackList& list, uint32_t stack, BufferedWriter& out);

}  // namespace pf
