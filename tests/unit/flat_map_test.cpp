#include "base/flat_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace pf {
namespace {

struct MixHash {
  size_t operator()(uint64_t k) const { return k * 0x9E3779B97F4A7C15ull; }
};
using Map = FlatMap<uint64_t, std::pair<uint32_t, uint32_t>, MixHash>;

// A table grown past ZeroedBlock::kHugeBytes (its slots then mapped on 2 MB boundaries)
// keeps every entry through each doubling, and its new slots read as unused.
TEST(FlatMap, KeepsEntriesAcrossHugeSlotArrays) {
  Map map;
  constexpr uint64_t kKeys = 300000;  // 32-byte slots: 16 MB at the last doubling
  for (uint64_t k = 0; k < kKeys; ++k) {
    bool inserted;
    auto& v = map.TryEmplace(k * 7 + 1, {static_cast<uint32_t>(k), 5}, &inserted);
    ASSERT_TRUE(inserted);
    ASSERT_EQ(v.first, k);
  }
  EXPECT_EQ(map.size(), kKeys);
  for (uint64_t k = 0; k < kKeys; ++k) {
    auto* v = map.Find(k * 7 + 1);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->first, k);
    EXPECT_EQ(v->second, 5u);
    ASSERT_EQ(map.Find(k * 7 + 2), nullptr);
  }
  bool inserted;
  map.TryEmplace(1, {9, 9}, &inserted);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(map.Find(1)->first, 0u);
}

TEST(FlatMap, MovesItsSlots) {
  Map a;
  bool inserted;
  a.TryEmplace(3, {4, 5}, &inserted);
  Map b = std::move(a);
  ASSERT_NE(b.Find(3), nullptr);
  EXPECT_EQ(b.Find(3)->second, 5u);
  EXPECT_EQ(b.size(), 1u);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): empty, and usable
  EXPECT_EQ(a.Find(3), nullptr);
  a.TryEmplace(3, {6, 7}, &inserted);
  EXPECT_TRUE(inserted);
}

// Cleared, a table holds nothing, and takes new entries (and an old key as new).
TEST(FlatMap, ClearForgetsEveryEntry) {
  Map map;
  bool inserted;
  for (uint64_t k = 1; k <= 1000; ++k) map.TryEmplace(k, {1, 1}, &inserted);
  map.Clear();
  EXPECT_EQ(map.size(), 0u);
  for (uint64_t k = 1; k <= 1000; ++k) ASSERT_EQ(map.Find(k), nullptr);
  EXPECT_EQ(map.TryEmplace(7, {2, 3}, &inserted).second, 3u);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(map.size(), 1u);
  Map empty;
  empty.Clear();
  EXPECT_EQ(empty.Find(7), nullptr);
}

TEST(ZeroedBlock, IsZeroAndAligned) {
  for (size_t bytes : {size_t{100}, ZeroedBlock::kHugeBytes + 1}) {
    ZeroedBlock block(bytes);
    const unsigned char* p = static_cast<const unsigned char*>(block.data());
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; ++i) nonzero += p[i] != 0;
    EXPECT_EQ(nonzero, 0u);
    if (bytes >= ZeroedBlock::kHugeBytes) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % ZeroedBlock::kHugeBytes, 0u);
    }
  }
}

}  // namespace
}  // namespace pf
