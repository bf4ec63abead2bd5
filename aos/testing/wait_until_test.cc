#include "aos/testing/wait_until.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace aos::testing {
namespace {

TEST(WaitUntilTest, ReturnsAtOnceWhenAlreadyTrue) {
  int calls = 0;
  EXPECT_TRUE(WaitUntil(
      [&]() {
        ++calls;
        return true;
      },
      std::chrono::seconds(60), "nothing"));
  EXPECT_EQ(calls, 1);
}

TEST(WaitUntilTest, SeesWhatAnotherThreadDoes) {
  std::atomic<bool> done{false};
  std::thread other([&]() { done = true; });
  EXPECT_TRUE(WaitUntil([&]() { return done.load(); }, std::chrono::seconds(60),
                        "the other thread"));
  other.join();
}

TEST(WaitUntilTest, StopsCallingOnceTrue) {
  int calls = 0;
  EXPECT_TRUE(WaitUntil([&]() { return ++calls == 3; },
                        std::chrono::seconds(60), "the third call"));
  EXPECT_EQ(calls, 3);
}

TEST(WaitUntilTest, CallsOnceEvenPastTheDeadline) {
  int calls = 0;
  EXPECT_TRUE(WaitUntil(
      [&]() {
        ++calls;
        return true;
      },
      std::chrono::steady_clock::time_point(), "an old deadline"));
  EXPECT_EQ(calls, 1);
}

// The deadline has passed already, so this fails without waiting.
TEST(WaitUntilTest, FailsNamingWhatItWaitedFor) {
  EXPECT_NONFATAL_FAILURE(
      {
        const bool result = WaitUntil([]() { return false; },
                                      std::chrono::steady_clock::time_point(),
                                      "the answer from pong");
        EXPECT_FALSE(result);
      },
      "waiting for the answer from pong");
}

TEST(WaitUntilTest, FailsAtTheCallersLine) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::
            INTERCEPT_ONLY_CURRENT_THREAD,
        &results);
    WaitUntil([]() { return false; }, std::chrono::nanoseconds(0), "x");
  }
  ASSERT_EQ(results.size(), 1);
  EXPECT_TRUE(results.GetTestPartResult(0).nonfatally_failed());
  EXPECT_STREQ(results.GetTestPartResult(0).file_name(), __FILE__);
}

}  // namespace
}  // namespace aos::testing
