// Claim: a value made once, by a helper that offers ahead of need or by the thread that needs
// it, whichever begins first. And the names helper threads go by.
#include "base/claim.h"
#include "base/thread_name.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace pf {
namespace {

TEST(Claim, MadeWhereNeededWhenNoHelperBegan) {
  Claim<std::string> c;
  int made = 0;
  EXPECT_EQ(c.Get([&] { ++made; return std::string("here"); }), "here");
  EXPECT_EQ(c.Get([&] { ++made; return std::string("again"); }), "here");
  c.Offer([&] { ++made; return std::string("late"); });  // claimed: not made again
  EXPECT_EQ(c.Get([&] { ++made; return std::string("again"); }), "here");
  EXPECT_EQ(made, 1);
}

TEST(Claim, TheHelpersValueIsTaken) {
  Claim<std::string> c;
  c.Offer([] { return std::string("ahead"); });
  bool made_here = false;
  EXPECT_EQ(c.Get([&] { made_here = true; return std::string("here"); }), "ahead");
  EXPECT_FALSE(made_here);
}

// The helper has begun: the value is waited for, not made twice.
TEST(Claim, WaitsForAHelperThatBegan) {
  Claim<int> c;
  std::atomic<bool> begun{false}, release{false};
  std::thread helper([&] {
    c.Offer([&] {
      begun = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return 42;
    });
  });
  while (!begun) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release = true;
  });
  bool made_here = false;
  EXPECT_EQ(c.Get([&] { made_here = true; return 7; }), 42);
  EXPECT_FALSE(made_here);
  helper.join();
  releaser.join();
}

// What the making threw, on whichever thread, is thrown where the value is asked for.
TEST(Claim, ErrorsReachTheThreadThatNeedsTheValue) {
  Claim<int> offered;
  offered.Offer([]() -> int { throw std::runtime_error("helper failed"); });
  EXPECT_THROW(offered.Get([] { return 1; }), std::runtime_error);
  EXPECT_THROW(offered.Get([] { return 1; }), std::runtime_error);
  Claim<int> here;
  EXPECT_THROW(here.Get([]() -> int { throw std::runtime_error("failed"); }), std::runtime_error);
}

// Many items shared by a helper and the needing thread, as Session::Prefetch shares them:
// each made exactly once, every value seen whole.
TEST(Claim, HelperAndNeederShareItems) {
  constexpr int kItems = 2000;
  std::vector<Claim<std::string>> items(kItems);
  std::atomic<int> made{0};
  auto make = [&](int i) {
    made.fetch_add(1);
    return std::string(64, static_cast<char>('a' + i % 26));
  };
  std::thread helper([&] {
    for (int i = 0; i < kItems; ++i) items[i].Offer([&] { return make(i); });
  });
  for (int i = kItems - 1; i >= 0; --i) {
    const std::string expected(64, static_cast<char>('a' + i % 26));
    EXPECT_EQ(items[i].Get([&] { return make(i); }), expected) << i;
  }
  helper.join();
  EXPECT_EQ(made.load(), kItems);
}

// A helper's name is what top -H and perf show for it; a name over the kernel's 15
// characters leaves the thread as it was.
TEST(ThreadName, ShowsInProc) {
  auto comm = [] {
    std::ifstream f("/proc/thread-self/comm");
    std::string name;
    std::getline(f, name);
    return name;
  };
  std::string named, unnamed, before;
  std::thread([&] {
    NameThisThread("pf-test-helper");
    named = comm();
  }).join();
  std::thread([&] {
    before = comm();
    NameThisThread("a-name-longer-than-fifteen");
    unnamed = comm();
  }).join();
  EXPECT_EQ(named, "pf-test-helper");
  EXPECT_EQ(unnamed, before);
  EXPECT_NE(before, "");
}

}  // namespace
}  // namespace pf
