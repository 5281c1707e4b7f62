// Mapping a perf event's ring buffer (ring_buffer.h): one metadata page and a power of two of
// data pages, mapped writable so that the reader can publish data_tail and the kernel never
// overwrites unread records. Draining is in the header, inlined into the recorder's loop.

#include "perf/ring_buffer.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace pf {

RingBuffer::~RingBuffer() { Unmap(); }

RingBuffer& RingBuffer::operator=(RingBuffer&& other) noexcept {
  if (this != &other) {
    Unmap();
    base_ = std::exchange(other.base_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    data_ = std::exchange(other.data_, {});
    scratch_ = std::move(other.scratch_);
    corrupt_ = other.corrupt_;
  }
  return *this;
}

void RingBuffer::Unmap() {
  if (base_) munmap(base_, map_bytes_);
  base_ = nullptr;
  data_ = {};
}

int RingBuffer::Map(int fd, size_t data_pages) {
  Unmap();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = (1 + data_pages) * page;
  // PROT_WRITE makes this a reader that owns data_tail: the kernel stops (and counts the
  // loss in a PERF_RECORD_LOST) rather than overwrite records we have not read.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return errno;
  base_ = p;
  map_bytes_ = bytes;
  auto* meta = static_cast<perf_event_mmap_page*>(p);
  // data_offset/data_size exist since Linux 4.1; before, data starts at the next page.
  uint64_t off = meta->data_offset ? meta->data_offset : page;
  uint64_t size = meta->data_size ? meta->data_size : data_pages * page;
  data_ = std::span<const uint8_t>(static_cast<const uint8_t*>(p) + off, size);
  return 0;
}

unsigned long long* RingBuffer::DataHead() {
  return &static_cast<perf_event_mmap_page*>(base_)->data_head;
}

unsigned long long* RingBuffer::DataTail() {
  return &static_cast<perf_event_mmap_page*>(base_)->data_tail;
}

}  // namespace pf
