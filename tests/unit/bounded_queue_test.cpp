// BoundedQueue: order, the bound, and how each end stops the other (Close, Cancel).
#include "base/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace pf {
namespace {

TEST(BoundedQueue, ItemsComeOutInOrder) {
  BoundedQueue<std::string> q(3);
  EXPECT_TRUE(q.Push("a"));
  EXPECT_TRUE(q.Push("b"));
  EXPECT_EQ(q.size(), 2u);
  std::string s;
  ASSERT_TRUE(q.Pop(&s));
  EXPECT_EQ(s, "a");
  bool ended = true;
  ASSERT_TRUE(q.TryPop(&s, &ended));
  EXPECT_EQ(s, "b");
  EXPECT_FALSE(ended);
  EXPECT_FALSE(q.TryPop(&s, &ended));  // empty, but more may come
  EXPECT_FALSE(ended);
  EXPECT_EQ(q.size(), 0u);
}

TEST(BoundedQueue, MoveOnlyItems) {
  BoundedQueue<std::unique_ptr<int>> q(1);
  EXPECT_TRUE(q.Push(std::make_unique<int>(7)));
  std::unique_ptr<int> p;
  ASSERT_TRUE(q.Pop(&p));
  EXPECT_EQ(*p, 7);
}

TEST(BoundedQueue, PushWaitsWhileFull) {
  BoundedQueue<int> q(1);
  ASSERT_TRUE(q.Push(1));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_TRUE(q.Push(2));  // waits for the consumer
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(pushed);
  EXPECT_EQ(q.size(), 1u);
  int v = 0;
  ASSERT_TRUE(q.Pop(&v));
  EXPECT_EQ(v, 1);
  ASSERT_TRUE(q.Pop(&v));  // waits for the producer's second item
  EXPECT_EQ(v, 2);
  producer.join();
  EXPECT_TRUE(pushed);
}

TEST(BoundedQueue, CloseLetsConsumersDrainThenEnd) {
  BoundedQueue<int> q(4);
  q.Push(1);
  q.Push(2);
  q.Close();
  int v = 0;
  bool ended = false;
  ASSERT_TRUE(q.TryPop(&v, &ended));
  EXPECT_EQ(v, 1);
  EXPECT_FALSE(ended);
  ASSERT_TRUE(q.Pop(&v));
  EXPECT_EQ(v, 2);
  EXPECT_FALSE(q.Pop(&v));
  EXPECT_FALSE(q.TryPop(&v, &ended));
  EXPECT_TRUE(ended);
}

TEST(BoundedQueue, CloseWakesAWaitingConsumer) {
  BoundedQueue<int> q(1);
  std::atomic<int> result{-1};
  std::thread consumer([&] {
    int v;
    result = q.Pop(&v) ? 1 : 0;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  q.Close();
  consumer.join();
  EXPECT_EQ(result, 0);
}

TEST(BoundedQueue, CancelWakesAWaitingProducerAndDropsLaterItems) {
  BoundedQueue<int> q(1);
  ASSERT_TRUE(q.Push(1));
  std::atomic<int> result{-1};
  std::thread producer([&] { result = q.Push(2) ? 1 : 0; });  // full: waits
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  q.Cancel();
  producer.join();
  EXPECT_EQ(result, 0);
  EXPECT_FALSE(q.Push(3));
  EXPECT_EQ(q.size(), 1u);  // what was queued before stays
}

TEST(BoundedQueue, ManyConsumersEachItemOnce) {
  constexpr int kItems = 10000, kConsumers = 3;
  BoundedQueue<int> q(8);
  std::vector<long> sums(kConsumers, 0);
  std::vector<int> counts(kConsumers, 0);
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&, c] {
      int v;
      while (q.Pop(&v)) {
        sums[c] += v;
        ++counts[c];
      }
    });
  }
  for (int i = 1; i <= kItems; ++i) ASSERT_TRUE(q.Push(i));
  q.Close();
  for (auto& t : consumers) t.join();
  long sum = 0;
  int count = 0;
  for (int c = 0; c < kConsumers; ++c) {
    sum += sums[c];
    count += counts[c];
  }
  EXPECT_EQ(count, kItems);
  EXPECT_EQ(sum, long{kItems} * (kItems + 1) / 2);
}

}  // namespace
}  // namespace pf
