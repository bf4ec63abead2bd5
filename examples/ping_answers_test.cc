#include "examples/ping_answers.h"

#include "gtest/gtest.h"

namespace aos::examples {
namespace {

using Verdict = PingAnswers::Verdict;

TEST(PingAnswersTest, AnAnswerAfterTheNextPingIsLateNotOutOfOrder) {
  PingAnswers answers;
  answers.Sent(1, 1000, 900);
  answers.Sent(2, 2000, 1900);
  EXPECT_EQ(answers.Take(1, 1000), Verdict::kLateAnswer);
  EXPECT_EQ(answers.Take(2, 2000), Verdict::kAnswer);
  EXPECT_EQ(answers.answers(), 2);
  EXPECT_EQ(answers.late(), 1);
  EXPECT_EQ(answers.ScheduledNs(1), 900);
}

// Another ping on the same channel sends the same values at other times;
// its pongs are not this ping's answers.
TEST(PingAnswersTest, PongsOfAnotherPingAreForeign) {
  PingAnswers answers;
  answers.Sent(1, 1000, 900);
  EXPECT_EQ(answers.Take(1, 1234), Verdict::kForeign);
  EXPECT_EQ(answers.Take(2, 2000), Verdict::kForeign);  // Never sent here.
  EXPECT_EQ(answers.Take(0, 0), Verdict::kForeign);
  EXPECT_EQ(answers.Take(1, 1000), Verdict::kAnswer);
  EXPECT_EQ(answers.answers(), 1);
  EXPECT_EQ(answers.foreign(), 3);
}

// Two pongs answer every ping twice: the second answer is a repeat.
TEST(PingAnswersTest, ASecondAnswerIsARepeat) {
  PingAnswers answers;
  answers.Sent(1, 1000, 900);
  EXPECT_EQ(answers.Take(1, 1000), Verdict::kAnswer);
  EXPECT_EQ(answers.Take(1, 1000), Verdict::kRepeat);
  EXPECT_EQ(answers.answers(), 1);
  EXPECT_EQ(answers.repeats(), 1);
}

TEST(PingAnswersTest, AnswersOlderThanTheRingAreLate) {
  PingAnswers answers;
  const int sent = static_cast<int>(PingAnswers::kRing) + 10;
  for (int value = 1; value <= sent; ++value) {
    answers.Sent(value, value * 1000, value * 1000 - 100);
  }
  EXPECT_EQ(answers.Take(5, 1), Verdict::kLateAnswer);
  EXPECT_EQ(answers.ScheduledNs(5), -1);
  EXPECT_EQ(answers.Take(sent, sent * 1000), Verdict::kAnswer);
}

}  // namespace
}  // namespace aos::examples
