#include "base/typed_id.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace pf {
namespace {

using AppleId = TypedId<struct AppleTag>;
using PearId = TypedId<struct PearTag>;
using Serial = TypedId<struct SerialTag, uint64_t>;

// Distinct kinds never convert into each other, nor from or to bare integers.
static_assert(!std::is_convertible_v<AppleId, PearId>);
static_assert(!std::is_convertible_v<PearId, AppleId>);
static_assert(!std::is_constructible_v<AppleId, PearId>);
static_assert(!std::is_convertible_v<uint32_t, AppleId>);
static_assert(!std::is_convertible_v<AppleId, uint32_t>);
static_assert(!std::is_convertible_v<AppleId, size_t>);
static_assert(std::is_constructible_v<AppleId, uint32_t>);  // on purpose only
// The struct is its integer.
static_assert(sizeof(AppleId) == sizeof(uint32_t) && sizeof(Serial) == sizeof(uint64_t));
static_assert(std::is_trivially_copyable_v<AppleId> && std::is_standard_layout_v<AppleId>);
static_assert(AppleId().value == 0 && AppleId{7}.index() == 7);

TEST(TypedId, OrdersAndComparesAsItsInteger) {
  AppleId a{3}, b{5};
  EXPECT_LT(a, b);
  EXPECT_GT(b, a);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, AppleId{3});
  std::vector<AppleId> v{AppleId{9}, AppleId{1}, AppleId{4}};
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (std::vector<AppleId>{AppleId{1}, AppleId{4}, AppleId{9}}));
  std::map<AppleId, int> ordered{{AppleId{2}, 20}, {AppleId{1}, 10}};
  EXPECT_EQ(ordered.begin()->second, 10);
}

TEST(TypedId, HashesAsItsInteger) {
  EXPECT_EQ(std::hash<AppleId>()(AppleId{42}), std::hash<uint32_t>()(42));
  EXPECT_EQ(std::hash<Serial>()(Serial{1ull << 40}), std::hash<uint64_t>()(1ull << 40));
  std::unordered_map<Serial, int> by_serial;
  by_serial[Serial{1ull << 40}] = 1;
  by_serial[Serial{7}] = 2;
  EXPECT_EQ(by_serial.at(Serial{1ull << 40}), 1);
  EXPECT_EQ(by_serial.count(Serial{8}), 0u);
}

TEST(TypedId, CountsUpAndHasAnInvalidValue) {
  AppleId a{0};
  ++a;
  EXPECT_EQ(a.value, 1u);
  EXPECT_TRUE(a.valid());
  EXPECT_FALSE(AppleId::Invalid().valid());
  EXPECT_EQ(AppleId::Invalid().value, UINT32_MAX);
  EXPECT_EQ(Serial::Invalid().value, UINT64_MAX);
}

}  // namespace
}  // namespace pf
