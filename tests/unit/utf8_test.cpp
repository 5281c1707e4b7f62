#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pf {
namespace {

// "cp/len" per character, "!len" for an invalid byte.
std::string Decode(std::string_view s, Utf8Check check) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    Utf8Char c = DecodeUtf8(s, i, check);
    char buf[32];
    if (c.valid) {
      std::snprintf(buf, sizeof buf, "%x/%zu ", static_cast<unsigned>(c.cp), c.len);
    } else {
      std::snprintf(buf, sizeof buf, "!%zu ", c.len);
    }
    out += buf;
    i += c.len;
  }
  return out;
}

TEST(Utf8, StrictIsRfc3629) {
  const Utf8Check k = Utf8Check::kStrict;
  EXPECT_EQ(Decode("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x94\xA5", k), "61/1 e9/2 20ac/3 1f525/4 ");
  EXPECT_EQ(Decode("\x80\xC1\xBF", k), "!1 !1 !1 ");           // stray, overlong lead
  EXPECT_EQ(Decode("\xE0\x80\x80", k), "!1 !1 !1 ");           // overlong three bytes
  EXPECT_EQ(Decode("\xED\xA0\x80", k), "!1 !1 !1 ");           // surrogate
  EXPECT_EQ(Decode("\xF4\x90\x80\x80", k), "!1 !1 !1 !1 ");    // past U+10FFFF
  EXPECT_EQ(Decode("\xF5\x80\x80\x80", k), "!1 !1 !1 !1 ");
  EXPECT_EQ(Decode("\xE2\x82", k), "!1 !1 ");                  // truncated
  EXPECT_EQ(Decode("\xE2(\xAC", k), "!1 28/1 !1 ");            // broken: resynchronise
  EXPECT_EQ(Decode(std::string_view("\0", 1), k), "0/1 ");
}

TEST(Utf8, StructureAcceptsWhatPerlAndGraphvizAccept) {
  const Utf8Check k = Utf8Check::kStructure;
  EXPECT_EQ(Decode("\xED\xA0\x80", k), "d800/3 ");
  EXPECT_EQ(Decode("\xE0\x80\x80", k), "0/3 ");
  EXPECT_EQ(Decode("\xF4\x90\x80\x80", k), "110000/4 ");
  EXPECT_EQ(Decode("\xF7\xBF\xBF\xBF", k), "1fffff/4 ");
  EXPECT_EQ(Decode("\xF8\x80\xC1\x80", k), "!1 !1 !1 !1 ");
  EXPECT_EQ(Decode("\xE2\x82", k), "!1 !1 ");
}

}  // namespace
}  // namespace pf
