// EntryWriter and EntryReader (symbolize/cache_entry.h): the fields of a cache entry written
// and read back, each check failing where it should, and a mapped entry refused when its
// bytes no longer match its checksum.

#include "symbolize/cache_entry.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "symbolize/dwarf_cache.h"
#include "test_util.h"

namespace pf {
namespace {

constexpr std::string_view kTag("pftest01", 8);

// Every kind of field, as an entry kind writes them.
std::string Sample() {
  EntryWriter w(kTag);
  w.Put<uint64_t>(3);
  w.Put<int32_t>(-7);
  w.Flag(true);
  w.Zero<uint16_t>();
  w.Str("name");
  w.Pad8();
  const std::array<uint64_t, 3> items = {10, 20, 30};
  w.Array(std::span<const uint64_t>(items));
  w.Append("xy");
  return w.Take();
}

// Reads Sample's fields back; false at the first that is not there or fails its check.
bool ReadSample(std::string_view bytes, std::vector<uint64_t>* items = nullptr) {
  // (8-aligned, for Array's view)
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  if (!bytes.empty()) std::memcpy(aligned.data(), bytes.data(), bytes.size());
  EntryReader r(std::string_view(reinterpret_cast<const char*>(aligned.data()), bytes.size()));
  uint64_t count;
  int32_t value;
  bool flag;
  std::string name;
  std::span<const uint64_t> array;
  std::string_view tail;
  if (!r.Tag(kTag) || !r.Count(&count, 8) || !r.Get(&value) || value != -7 || !r.Flag(&flag) ||
      !flag || !r.Zero<uint16_t>() || !r.Str(&name) || name != "name" || !r.Pad8() ||
      !r.Array(count, &array)) {
    return false;
  }
  tail = r.rest();
  if (!r.Skip(2) || tail != "xy" || !r.AtEnd()) return false;
  if (items) items->assign(array.begin(), array.end());
  return true;
}

TEST(CacheEntry, RoundTrip) {
  std::string bytes = Sample();
  // tag 8, count 8, value 4, flag 1, zero 2, string 4 + 4, padding 1, array 24, tail 2
  EXPECT_EQ(bytes.size(), 58u);
  std::vector<uint64_t> items;
  ASSERT_TRUE(ReadSample(bytes, &items));
  EXPECT_EQ(items, (std::vector<uint64_t>{10, 20, 30}));
}

TEST(CacheEntry, WritesFieldsAsPutRawDoes) {
  // The bytes are those the hand-written writers made (existing entries stay readable).
  std::string want(kTag);
  PutRaw<uint64_t>(&want, 3);
  PutRaw<int32_t>(&want, -7);
  PutRaw<uint8_t>(&want, 1);
  PutRaw<uint16_t>(&want, 0);
  PutStr(&want, "name");
  PutPad8(&want);
  for (uint64_t v : {10, 20, 30}) PutRaw(&want, v);
  want += "xy";
  EXPECT_EQ(Sample(), want);
}

TEST(CacheEntry, TruncatedEntryFails) {
  std::string bytes = Sample();
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(ReadSample(bytes.substr(0, n))) << n << " bytes";
  }
}

TEST(CacheEntry, TrailingBytesFail) { EXPECT_FALSE(ReadSample(Sample() + "z")); }

TEST(CacheEntry, EachCheckFails) {
  const std::string good = Sample();
  auto with = [&](size_t at, char c) {
    std::string b = good;
    b[at] = c;
    return b;
  };
  EXPECT_FALSE(ReadSample(with(0, 'q')));   // the tag
  EXPECT_FALSE(ReadSample(with(8, 6)));     // a count beyond what is left
  EXPECT_FALSE(ReadSample(with(20, 2)));    // a flag neither 0 nor 1
  EXPECT_FALSE(ReadSample(with(21, 1)));    // a reserved field not zero
  EXPECT_FALSE(ReadSample(with(23, 100)));  // a string longer than the entry
  EXPECT_FALSE(ReadSample(with(31, 1)));    // padding not zero
}

TEST(CacheEntry, CountIsBoundedByWhatIsLeft) {
  EntryWriter w;
  w.Put<uint32_t>(UINT32_MAX);
  w.Put<uint64_t>(0);
  std::string bytes = w.Take();
  EntryReader r(bytes);
  uint32_t n;
  EXPECT_FALSE(r.Count(&n, 1));
  EntryWriter fits;
  fits.Put<uint32_t>(2);
  fits.Put<uint64_t>(0);
  std::string fitting = fits.Take();
  EntryReader two(fitting);
  EXPECT_TRUE(two.Count(&n, 4));
  EXPECT_EQ(n, 2u);
  EntryReader three(fitting);
  EXPECT_FALSE(three.Count(&n, 5));
}

TEST(CacheEntry, ReaderAtReadsPartOfTheBytes) {
  std::string bytes = Sample();
  EntryReader r = EntryReader::At(bytes, 8, 8);
  uint64_t count;
  ASSERT_TRUE(r.Get(&count));
  EXPECT_EQ(count, 3u);
  EXPECT_TRUE(r.AtEnd());
  EXPECT_FALSE(EntryReader::At(bytes, bytes.size() + 1).Get(&count));
}

TEST(CacheEntry, MappedEntryFailsItsChecksumOrSize) {
  test::ScopedCacheDir scoped;
  ASSERT_TRUE(scoped.ok());
  const std::string bytes = Sample();
  ASSERT_TRUE(StoreCachedImage(scoped.cache(), "e", bytes));
  {
    MappedEntry entry = MapCachedEntry(scoped.cache(), "e");
    ASSERT_TRUE(entry);
    EXPECT_EQ(entry.bytes, bytes);
    EXPECT_TRUE(ReadSample(entry.bytes));
  }
  EXPECT_FALSE(MapCachedEntry(scoped.cache(), "missing"));
  EXPECT_FALSE(MapCachedEntry(scoped.cache(), ""));
  EXPECT_FALSE(MapCachedEntry("", "e"));
  const std::string path = scoped.cache() + "/dwarf/e.img";
  std::string file;
  {
    std::ifstream in(path, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto rewrite = [&](const std::string& content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  };
  std::string flipped = file;
  flipped[10] ^= 1;  // a byte of the count: the checksum no longer matches
  rewrite(flipped);
  EXPECT_FALSE(MapCachedEntry(scoped.cache(), "e"));
  rewrite(file.substr(0, file.size() - 1));  // cut short
  EXPECT_FALSE(MapCachedEntry(scoped.cache(), "e"));
  rewrite(file);
  EXPECT_TRUE(MapCachedEntry(scoped.cache(), "e"));
}

}  // namespace
}  // namespace pf
