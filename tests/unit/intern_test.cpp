#include "base/intern.h"
#include "base/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <xxhash.h>

namespace pf {

TEST(Interner, SameStringSameId) {
  Interner in;
  StrId a = in.Intern("main");
  StrId b = in.Intern("work");
  EXPECT_NE(a.value, b.value);
  EXPECT_EQ(in.Intern(std::string("ma") + "in"), a);
  EXPECT_EQ(in.Name(a), "main");
  EXPECT_EQ(in.Name(b), "work");
  EXPECT_EQ(in.size(), 2u);
}

TEST(Interner, EmptyAndBinaryStrings) {
  Interner in;
  StrId e = in.Intern("");
  StrId z = in.Intern(std::string_view("a\0b", 3));
  EXPECT_EQ(in.Name(e), "");
  EXPECT_EQ(in.Name(z), std::string_view("a\0b", 3));
  EXPECT_NE(in.Intern(std::string_view("a\0c", 3)), z);
}

TEST(Interner, ManyStringsSurviveGrowthAndStayValid) {
  Interner in;
  std::vector<std::string_view> views;
  for (int i = 0; i < 100000; ++i) views.push_back(in.Name(in.Intern("frame_" + std::to_string(i))));
  // A large string gets a block of its own.
  std::string big(1 << 20, 'x');
  StrId bid = in.Intern(big);
  for (int i = 0; i < 100000; ++i) {
    StrId id;
    ASSERT_TRUE(in.Find("frame_" + std::to_string(i), &id));
    EXPECT_EQ(id.value, static_cast<uint32_t>(i));
    EXPECT_EQ(views[i], "frame_" + std::to_string(i));
  }
  EXPECT_EQ(in.Name(bid), big);
  StrId none;
  EXPECT_FALSE(in.Find("frame_100000", &none));
}

// Every name may be read kSlack bytes past its start, however short, the empty first one
// and a block's last included (ASan checks each read).
TEST(Interner, EveryNameHasSlackAfterIt) {
  Interner in;
  std::vector<StrId> ids{in.Intern("")};
  for (size_t n = 1; ids.size() < 40000; n = n % 300 + 1) {
    ids.push_back(in.Intern(std::to_string(ids.size()) + std::string(n, 'y')));
  }
  ids.push_back(in.Intern(std::string(1 << 19, 'z')));  // a block of its own
  char copy[Interner::kSlack];
  for (StrId id : ids) {
    std::string_view name = in.Name(id);
    ASSERT_NE(name.data(), nullptr);
    std::memcpy(copy, name.data(), sizeof copy);
    EXPECT_EQ(std::string_view(copy, std::min(name.size(), sizeof copy)),
              name.substr(0, sizeof copy));
  }
}

// `n` bytes from an xorshift generator seeded with `x`.
static std::string RandomBytes(size_t n, uint64_t x) {
  std::string bytes(n, '\0');
  for (char& c : bytes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>(x);
  }
  return bytes;
}

// The cache's checksum gives XXH3's 64-bit value at every length, in whichever code the CPU
// runs (each of XXH3's length classes, and a long buffer's stripes and tail).
TEST(Checksum, EqualsXxh3AtEveryLength) {
  const std::string bytes = RandomBytes(3 << 20, 0x9e3779b97f4a7c15);
  for (size_t n : std::initializer_list<size_t>{0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241,
                                              1023, 1024, 1025, 65536 + 7,
                                              (3u << 20) - 16}) {
    for (size_t offset : {size_t{0}, size_t{1}, size_t{13}}) {
      SCOPED_TRACE(testing::Message() << n << " bytes at " << offset);
      EXPECT_EQ(Checksum(bytes.data() + offset, n), XXH3_64bits(bytes.data() + offset, n));
    }
  }
  EXPECT_NE(Checksum(bytes.data(), 4096), Checksum(bytes.data() + 1, 4096));
}

// Hash128 gives XXH3's 128-bit value at every length, seeded or not, short ones inline and
// long ones in whichever code the CPU runs.
TEST(Checksum, Hash128EqualsXxh3AtEveryLength) {
  const std::string bytes = RandomBytes(1 << 16, 0x2545f4914f6cdd1d);
  for (size_t n : std::initializer_list<size_t>{0, 1, 16, 17, 128, 129, 239, 240, 241, 242,
                                              255, 256, 1023, 1024, 1025, (1 << 16) - 16}) {
    for (size_t offset : {size_t{0}, size_t{1}, size_t{13}}) {
      SCOPED_TRACE(testing::Message() << n << " bytes at " << offset);
      const XXH128_hash_t want = XXH3_128bits(bytes.data() + offset, n);
      const XXH128_hash_t got = Hash128(bytes.data() + offset, n);
      EXPECT_EQ(got.low64, want.low64);
      EXPECT_EQ(got.high64, want.high64);
      const XXH128_hash_t seeded = Hash128(bytes.data() + offset, n, 77);
      EXPECT_EQ(seeded.low64, XXH3_128bits_withSeed(bytes.data() + offset, n, 77).low64);
      EXPECT_EQ(seeded.high64, XXH3_128bits_withSeed(bytes.data() + offset, n, 77).high64);
    }
  }
}

}  // namespace pf
