#pragma once
// Reading a perf_event ring buffer (the mmap of a perf_event_open descriptor).
//
// The mapping is one metadata page (struct perf_event_mmap_page) followed by 2^n data
// pages. The kernel appends records at data_head and never overwrites what we have not
// released: we read from data_tail to data_head, then store the new data_tail. Both are
// byte counters that only grow; the position in the buffer is the counter modulo its size.
// The ordering rules are in the comment above data_head in linux/perf_event.h and in
// tools/include/linux/ring_buffer.h
// (https://github.com/torvalds/linux/blob/master/tools/include/linux/ring_buffer.h):
// load data_head with acquire semantics before reading the records, and store data_tail
// with release semantics after reading them, so the kernel cannot reuse the space early.
//
// A record may wrap around the end of the buffer; it is then copied into a scratch buffer
// so every record handed out is contiguous. ExtractRecords() is that walk over plain
// memory, so the tests run it on a fake buffer.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace pf {

/// Calls fn(record) for every whole record (perf_event_header included) between `tail`
/// and `head` of `ring`, whose size is a power of two. A record that wraps around the end
/// of `ring` is copied into `*scratch` first. Returns the new tail, always `head`: when a
/// record header is impossible (size < 8, or beyond head) *corrupt is set and the rest is
/// skipped, since nothing after a broken header can be trusted.
template <typename Fn>
uint64_t ExtractRecords(std::span<const uint8_t> ring, uint64_t tail, uint64_t head,
                        std::vector<uint8_t>* scratch, Fn&& fn, bool* corrupt = nullptr) {
  const uint64_t size = ring.size();
  const uint64_t mask = size - 1;
  while (head - tail >= 8) {
    const uint64_t off = tail & mask;
    uint8_t hdr[8];
    if (off + 8 <= size) {
      std::memcpy(hdr, ring.data() + off, 8);
    } else {
      size_t first = size - off;
      std::memcpy(hdr, ring.data() + off, first);
      std::memcpy(hdr + first, ring.data(), 8 - first);
    }
    uint16_t rec_size;
    std::memcpy(&rec_size, hdr + 6, 2);
    if (rec_size < 8 || rec_size > head - tail) {
      if (corrupt) *corrupt = true;
      return head;
    }
    if (off + rec_size <= size) {
      fn(ring.subspan(off, rec_size));
    } else {
      scratch->resize(rec_size);
      size_t first = size - off;
      std::memcpy(scratch->data(), ring.data() + off, first);
      std::memcpy(scratch->data() + first, ring.data(), rec_size - first);
      fn(std::span<const uint8_t>(scratch->data(), rec_size));
    }
    tail += rec_size;
  }
  if (head != tail && corrupt) *corrupt = true;  // fewer than 8 bytes cannot be a record
  return head;
}

/// The ring buffer of one perf event descriptor.
class RingBuffer {
 public:
  RingBuffer() = default;
  ~RingBuffer();
  RingBuffer(RingBuffer&& other) noexcept { *this = std::move(other); }
  RingBuffer& operator=(RingBuffer&& other) noexcept;
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;

  /// Maps the metadata page and `data_pages` (a power of two) data pages of `fd`.
  /// Returns 0, or the errno of mmap.
  int Map(int fd, size_t data_pages);
  bool mapped() const { return base_ != nullptr; }
  /// Whether a malformed record was ever seen (the rest of that pass was skipped).
  bool corrupt() const { return corrupt_; }

  /// Hands every record written since the last call to fn, then releases their space to
  /// the kernel. Returns the number of bytes consumed.
  template <typename Fn>
  uint64_t Drain(Fn&& fn) {
    if (!base_) return 0;
    // Pairs with the kernel's smp_wmb() before it publishes data_head.
    const uint64_t head = __atomic_load_n(DataHead(), __ATOMIC_ACQUIRE);
    const uint64_t tail = *DataTail();  // only we write it
    if (head == tail) return 0;
    uint64_t new_tail = ExtractRecords(data_, tail, head, &scratch_, fn, &corrupt_);
    // Our reads of the records happen before the kernel may overwrite them.
    __atomic_store_n(DataTail(), static_cast<unsigned long long>(new_tail), __ATOMIC_RELEASE);
    return new_tail - tail;
  }

 private:
  unsigned long long* DataHead();  // perf_event_mmap_page fields (__u64)
  unsigned long long* DataTail();
  void Unmap();

  void* base_ = nullptr;
  size_t map_bytes_ = 0;
  std::span<const uint8_t> data_;
  std::vector<uint8_t> scratch_;
  bool corrupt_ = false;
};

}  // namespace pf
