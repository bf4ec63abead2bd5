#include "aos/util/display_width.h"

#include "gtest/gtest.h"

namespace aos {
namespace {

TEST(DisplayWidthTest, CountsCodePoints) {
  EXPECT_EQ(DisplayWidth(""), 0u);
  EXPECT_EQ(DisplayWidth("abc"), 3u);
  EXPECT_EQ(DisplayWidth("a → b"), 5u);
  EXPECT_EQ(DisplayWidth("±12.0"), 5u);
}

TEST(DisplayWidthTest, FitsByCuttingTheMiddleBetweenCodePoints) {
  EXPECT_EQ(FitDisplayWidth("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(FitDisplayWidth("abcdefghij", 7), "ab...ij");
  EXPECT_EQ(FitDisplayWidth("abcdefghij", 4), "abcdefghij");
  // The arrows are never split: each is one column.
  EXPECT_EQ(FitDisplayWidth("a→b→c→d→e", 7), "a→...→e");
  const std::string fitted = FitDisplayWidth("→→→→→→→→→→", 8);
  EXPECT_EQ(fitted, "→→→...→→");
  EXPECT_EQ(DisplayWidth(fitted), 8u);
}

}  // namespace
}  // namespace aos
