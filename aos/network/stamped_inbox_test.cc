#include "aos/network/stamped_inbox.h"

#include <thread>

#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

// Entries come out oldest first with their stamps, across the ring's end.
TEST(StampedInboxTest, DrainsInOrderWithStamps) {
  StampedInbox<int, 4> inbox;
  std::array<StampedInbox<int, 4>::Entry, 4> out;
  EXPECT_EQ(inbox.Drain(&out), 0u);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(inbox.Push(10 * round + i, 100 * round + i));
    }
    ASSERT_EQ(inbox.Drain(&out), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(out[i].value, 10 * round + i);
      EXPECT_EQ(out[i].stamp_ns, 100 * round + i);
    }
  }
  EXPECT_EQ(inbox.dropped(), 0u);
}

// Full: the newest is refused and counted; draining makes room again.
TEST(StampedInboxTest, FullDropsTheNewestAndCountsIt) {
  StampedInbox<int, 2> inbox;
  EXPECT_TRUE(inbox.Push(1, 1));
  EXPECT_TRUE(inbox.Push(2, 2));
  EXPECT_FALSE(inbox.Push(3, 3));
  EXPECT_EQ(inbox.dropped(), 1u);
  std::array<StampedInbox<int, 2>::Entry, 2> out;
  ASSERT_EQ(inbox.Drain(&out), 2u);
  EXPECT_EQ(out[0].value, 1);
  EXPECT_EQ(out[1].value, 2);
  EXPECT_TRUE(inbox.Push(4, 4));
}

// One thread pushes, another drains: every value arrives once, in order.
TEST(StampedInboxTest, OnePusherOneDrainerLoseNothing) {
  constexpr int kValues = 100000;
  StampedInbox<int, 64> inbox;
  std::thread pusher([&]() {
    for (int i = 0; i < kValues; ++i) {
      while (!inbox.Push(i, i)) std::this_thread::yield();
    }
  });
  std::array<StampedInbox<int, 64>::Entry, 64> out;
  int next = 0;
  while (next < kValues) {
    const size_t count = inbox.Drain(&out);
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(out[i].value, next);
      ASSERT_EQ(out[i].stamp_ns, next);
      ++next;
    }
  }
  pusher.join();
}

}  // namespace
}  // namespace aos::message_bridge
