#include "io/page_ahead.h"

#include <algorithm>

namespace pf {

PageAhead::PageAhead(std::string_view mapped, size_t block, size_t gap, size_t reach)
    : begin_(reinterpret_cast<uintptr_t>(mapped.data())),
      end_(begin_ + mapped.size()),
      block_(block),
      gap_(gap),
      reach_(reach) {}

const void* PageAhead::MapOne() {
  const uintptr_t at = reader_.load(std::memory_order_relaxed);
  if (at < begin_ || at >= end_) return nullptr;
  // Blocks are aligned as the kernel aligns its fault-around window: on the address.
  const uintptr_t from = std::max(next_, (at + gap_) & ~uintptr_t{block_ - 1});
  if (from >= end_ || from - at >= reach_) return nullptr;
  (void)*reinterpret_cast<const volatile char*>(from);
  next_ = from + block_;
  return reinterpret_cast<const void*>(from);
}

}  // namespace pf
