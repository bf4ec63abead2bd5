#include "aos/network/match_resend.h"

#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

TEST(MatchResendTest, NothingAvailableNothingResent) {
  MatchResend resend;
  EXPECT_FALSE(resend.ShouldResend(0));
  EXPECT_FALSE(resend.ShouldResend(7));
}

TEST(MatchResendTest, TheNewestAtStartIsResent) {
  MatchResend resend;
  resend.MadeAvailable(4);
  EXPECT_TRUE(resend.ShouldResend(4));
}

TEST(MatchResendTest, CaughtUpWatcherLastForwardIsResentOnEveryMatch) {
  MatchResend resend;
  resend.MadeAvailable(4);
  resend.MadeAvailable(5);
  EXPECT_TRUE(resend.ShouldResend(5));
  // A second match (the peer restarted again), no message since: again.
  EXPECT_TRUE(resend.ShouldResend(5));
}

TEST(MatchResendTest, NewerThanForwardedIsLeftToTheWatcher) {
  MatchResend resend;
  resend.MadeAvailable(1);
  // 2 and 3 are in the queue, not forwarded yet: re-sending 3 would put it
  // before 2, which the peer would then drop as old.
  EXPECT_FALSE(resend.ShouldResend(3));
  resend.MadeAvailable(2);
  EXPECT_FALSE(resend.ShouldResend(3));
  resend.MadeAvailable(3);
  EXPECT_TRUE(resend.ShouldResend(3));
}

TEST(MatchResendTest, QueueIndicesThatWrapAreComparedForEquality) {
  MatchResend resend;
  resend.MadeAvailable(0xffffffffu);
  EXPECT_TRUE(resend.ShouldResend(0xffffffffu));
  EXPECT_FALSE(resend.ShouldResend(0));
  resend.MadeAvailable(0);
  EXPECT_TRUE(resend.ShouldResend(0));
}

}  // namespace
}  // namespace aos::message_bridge
