#include "base/intern.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace pf
