#include "aos/util/str_cat.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(StrCatTest, MixesStringsCharsAndNumbers) {
  const std::string_view name = "/test";
  EXPECT_EQ(StrCat("channel ", name, ' ', std::string("x"), ": ", -5, " ", 7u,
                   " ", true),
            "channel /test x: -5 7 true");
}

TEST(StrCatTest, IntegersPrintAtFullWidth) {
  EXPECT_EQ(StrCat(std::numeric_limits<int64_t>::min()),
            "-9223372036854775808");
  EXPECT_EQ(StrCat(std::numeric_limits<uint64_t>::max()),
            "18446744073709551615");
  EXPECT_EQ(StrCat(static_cast<uint8_t>(200)), "200");
}

TEST(StrCatTest, FloatsPrintShortestExact) {
  EXPECT_EQ(StrCat(0.1), "0.1");
  EXPECT_EQ(StrCat(1e300), "1e+300");
  EXPECT_EQ(StrCat(0.1f), "0.1");
}

TEST(StrCatTest, AppendAndJoin) {
  std::string out = "a";
  StrAppend(&out, "b", 1);
  EXPECT_EQ(out, "ab1");
  EXPECT_EQ(StrJoin(std::vector<std::string_view>{"pi1", "pi2"}, ", "),
            "pi1, pi2");
  EXPECT_EQ(StrJoin(std::vector<int>{}, ", "), "");
  EXPECT_EQ(StrJoin(std::vector<int>{1, 2, 3}, "-"), "1-2-3");
}

}  // namespace
}  // namespace aos
