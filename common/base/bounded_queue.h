#pragma once
// A queue of bounded length between producer and consumer threads: Push waits while it is
// full, Pop while it is empty. The bound keeps memory flat when the producer outruns the
// consumers (a reader of blocks ahead of the threads that fold them). Either end can stop
// the other: the producer Closes (no more items: consumers drain what is queued, then Pop
// says so), a consumer Cancels (no more items wanted: a waiting Push returns false, and the
// producer can unwind with Cancelled).

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace pf {

template <typename T>
class BoundedQueue {
 public:
  struct Cancelled {};  // for a producer to unwind with when Push says the consumer gave up

  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

  /// Waits for room; false when the queue was cancelled (the item is dropped).
  bool Push(T item) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_ || cancelled_; });
    if (cancelled_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }
  /// Waits for an item; false once the queue is closed and empty.
  bool Pop(T* item) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    *item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }
  /// Pop without waiting: false when no item is there now (*ended: none will come).
  bool TryPop(T* item, bool* ended) {
    std::lock_guard lock(mu_);
    *ended = items_.empty() && closed_;
    if (items_.empty()) return false;
    *item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }
  /// Items waiting (a producer may leave more of the work to a consumer that has none).
  size_t size() {
    std::lock_guard lock(mu_);
    return items_.size();
  }
  /// No more items will come (the producer's end).
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }
  /// No more items are wanted (the consumer's end).
  void Cancel() {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    not_full_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> items_;
  size_t capacity_;
  bool closed_ = false, cancelled_ = false;
};

}  // namespace pf
