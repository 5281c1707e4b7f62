#pragma once
// A value that either of two threads makes, once: a helper thread offers to make it ahead of
// need; the thread that needs it makes it itself when the helper has not begun, and waits for
// the helper otherwise. So work handed to a helper never delays the thread that needs it by
// more than the helper's head start on that one item (a helper that starts late, or is busy
// with other items, is simply overtaken).

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>

namespace pf {

template <typename T>
class Claim {
 public:
  /// Makes the value with `make` here unless a thread has claimed it already (then returns at
  /// once). An exception `make` throws is kept for Get to throw.
  template <typename Make>
  void Offer(Make&& make) {
    int expected = kFree;
    if (state_.compare_exchange_strong(expected, kMaking, std::memory_order_acquire)) Fill(make);
  }

  /// True while another thread makes the value (Get would wait for it).
  bool Busy() const { return state_.load(std::memory_order_acquire) == kMaking; }
  /// The value: made here with `make` when no thread has claimed it, else the other thread's,
  /// waited for. Throws what the making threw.
  template <typename Make>
  T& Get(Make&& make) {
    int expected = kFree;
    if (state_.compare_exchange_strong(expected, kMaking, std::memory_order_acquire)) {
      Fill(make);
    } else if (expected != kReady) {
      // (Not std::atomic::wait: libstdc++'s calls sched_yield before it sleeps, and a yield
      // on a machine whose CPUs are all busy gives the CPU away for milliseconds.)
      std::unique_lock lock(mu_);
      ready_.wait(lock, [this] { return state_.load(std::memory_order_acquire) == kReady; });
    }
    if (error_) std::rethrow_exception(error_);
    return value_;
  }

 private:
  enum : int { kFree, kMaking, kReady };

  template <typename Make>
  void Fill(Make& make) {
    try {
      value_ = make();
    } catch (...) {
      error_ = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      state_.store(kReady, std::memory_order_release);
    }
    ready_.notify_all();
  }

  std::atomic<int> state_{kFree};
  std::mutex mu_;
  std::condition_variable ready_;
  T value_{};
  std::exception_ptr error_;
};

}  // namespace pf
