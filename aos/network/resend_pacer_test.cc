#include "aos/network/resend_pacer.h"

#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using std::chrono::milliseconds;

monotonic_clock::time_point At(milliseconds t) {
  return monotonic_clock::epoch() + t;
}

// Four messages within 100 ms: a refusal is explained by the oldest of the
// last four re-sends, and the retry is when it is 100 ms old.
TEST(ResendPacerTest, RetriesWhenTheOldestOfTheLastQueueAgesOut) {
  ResendPacer pacer(4, milliseconds(100));
  for (int i = 0; i < 4; ++i) pacer.Sent(At(milliseconds(10 + i)));
  EXPECT_EQ(pacer.Refused(At(milliseconds(20))), At(milliseconds(110)));
  // Refused again (the timer fired early): the same oldest, the same time.
  EXPECT_EQ(pacer.Refused(At(milliseconds(60))), At(milliseconds(110)));
  pacer.Sent(At(milliseconds(110)));
  // The next oldest is the second re-send.
  EXPECT_EQ(pacer.Refused(At(milliseconds(110))), At(milliseconds(111)));
  EXPECT_EQ(pacer.refusals(), 3u);
}

// The channel refuses although this pacer's re-sends do not explain it
// (it holds a restarted bridge's messages): one slot's share, doubling
// with each refusal in a row, never more than the storage duration; a
// send starts the doubling over.
TEST(ResendPacerTest, AnUnexplainedRefusalBacksOffUpToTheStorageDuration) {
  ResendPacer pacer(4, milliseconds(100));
  const monotonic_clock::time_point now = At(milliseconds(1000));
  EXPECT_EQ(pacer.Refused(now), now + milliseconds(25));
  EXPECT_EQ(pacer.Refused(now), now + milliseconds(50));
  EXPECT_EQ(pacer.Refused(now), now + milliseconds(100));
  EXPECT_EQ(pacer.Refused(now), now + milliseconds(100));
  pacer.Sent(now);
  EXPECT_EQ(pacer.Refused(now + milliseconds(200)), now + milliseconds(225));
}

// Re-sends older than the storage duration explain nothing either.
TEST(ResendPacerTest, SendsThatAgedOutDoNotExplainARefusal) {
  ResendPacer pacer(2, milliseconds(100));
  pacer.Sent(At(milliseconds(0)));
  pacer.Sent(At(milliseconds(1)));
  EXPECT_EQ(pacer.Refused(At(milliseconds(500))), At(milliseconds(550)));
}

// A re-send later than the storage duration is not worth holding.
TEST(ResendPacerTest, HoldsOnlyWhatIsNoLaterThanTheStorageDuration) {
  ResendPacer pacer(4, milliseconds(100));
  EXPECT_TRUE(pacer.WorthHolding(milliseconds(0)));
  EXPECT_TRUE(pacer.WorthHolding(milliseconds(100)));
  EXPECT_FALSE(
      pacer.WorthHolding(milliseconds(100) + std::chrono::nanoseconds(1)));
}

// A queue larger than the storage duration in ns still waits at least 1 ns.
TEST(ResendPacerTest, TheSmallestWaitIsOneNanosecond) {
  ResendPacer pacer(1000, std::chrono::nanoseconds(10));
  const monotonic_clock::time_point now = At(milliseconds(5));
  EXPECT_EQ(pacer.Refused(now), now + std::chrono::nanoseconds(1));
}

}  // namespace
}  // namespace aos::message_bridge
