#include "tools/netdelay/delay_line.h"

#include <chrono>

#include "gtest/gtest.h"

namespace aos::netdelay {
namespace {

monotonic_clock::time_point At(int ms) {
  return monotonic_clock::epoch() + std::chrono::milliseconds(ms);
}

TEST(DelayLineTest, FirstInFirstOutAcrossTheWrap) {
  DelayLine line(3);
  EXPECT_TRUE(line.empty());
  uint32_t next_out = 0;
  for (uint32_t id = 0; id < 10; ++id) {
    ASSERT_TRUE(line.Push(id, At(id)));
    if (line.size() == 2) {
      EXPECT_EQ(line.front().id, next_out);
      EXPECT_EQ(line.front().deadline, At(next_out));
      line.Pop();
      ++next_out;
    }
  }
  EXPECT_EQ(line.size(), 1u);
  EXPECT_EQ(line.front().id, 9u);
}

TEST(DelayLineTest, FullRefusesAndKeepsWhatItHolds) {
  DelayLine line(2);
  ASSERT_TRUE(line.Push(1, At(1)));
  ASSERT_TRUE(line.Push(2, At(2)));
  EXPECT_TRUE(line.full());
  EXPECT_FALSE(line.Push(3, At(3)));
  EXPECT_EQ(line.size(), 2u);
  EXPECT_EQ(line.front().id, 1u);
  line.Pop();
  EXPECT_EQ(line.front().id, 2u);
}

TEST(DelayLineDeathTest, PopWhenEmpty) {
  DelayLine line(1);
  EXPECT_DEATH(line.Pop(), "Pop\\(\\) on an empty DelayLine");
}

}  // namespace
}  // namespace aos::netdelay
