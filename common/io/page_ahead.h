#pragma once
// Mapping a mapped input's pages ahead of the thread that reads it, from a thread that has
// nothing else to do.
//
// A read fault on a file mapping maps the 64 KiB around it (the kernel's fault-around), and
// costs a few microseconds in this kind of VM: on a 100 MB recording the reading stage of
// pf-collapse spent about a third of its time in them. The folding stage, whenever it waits
// for the next batch, touches the next block ahead of the reader instead, so that the
// reader (the longer of the two stages) finds those pages mapped.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pf {

class PageAhead {
 public:
  static constexpr size_t kBlock = size_t{64} << 10;  // what one read fault maps
  static constexpr size_t kGap = size_t{1} << 20;     // this far ahead of the reader at least
  static constexpr size_t kReach = size_t{16} << 20;  // and no further: memory stays flat

  /// `mapped`: the whole input as mapped (empty: MapOne never touches anything). The sizes
  /// are for tests; `block` is a power of two, below `gap`, and `gap` below `reach`.
  explicit PageAhead(std::string_view mapped, size_t block = kBlock, size_t gap = kGap,
                     size_t reach = kReach);

  /// The reading thread: it is at `p`.
  void ReaderAt(const void* p) {
    reader_.store(reinterpret_cast<uintptr_t>(p), std::memory_order_relaxed);
  }
  /// The waiting thread: reads a byte of the next block that starts `gap` to `reach` bytes
  /// ahead of the reader, and returns its address; null (nothing touched) when there is none
  /// (the reader has not said where it is or is outside the input, the blocks up to `reach`
  /// are done, or the input ends).
  const void* MapOne();

 private:
  const uintptr_t begin_, end_;
  const size_t block_, gap_, reach_;
  std::atomic<uintptr_t> reader_{0};
  uintptr_t next_ = 0;  // the waiting thread's
};

}  // namespace pf
