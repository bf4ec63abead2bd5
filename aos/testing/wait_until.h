#ifndef AOS_TESTING_WAIT_UNTIL_H_
#define AOS_TESTING_WAIT_UNTIL_H_

// Waiting in a test for something another thread, process or library thread
// does, without a hand-written poll loop and without asserting how long it
// takes:
//
//   ASSERT_TRUE(aos::testing::WaitUntil([&]() { return started == 2; },
//                                       std::chrono::seconds(60),
//                                       "both loops running"));
//
// The deadline only ends a wait that would otherwise hang (something that
// never happens), so make it generous: tests never assert wall-clock timing.
// Use the simulated event loop where the timing itself is what a test checks.

#include <chrono>
#include <functional>
#include <source_location>
#include <string_view>

namespace aos::testing {

// How often WaitUntil calls its predicate.
inline constexpr std::chrono::milliseconds kWaitUntilPollPeriod{1};

// Calls `pred` until it returns true or `deadline` (steady clock) has passed,
// sleeping kWaitUntilPollPeriod between calls; `pred` is called at least
// once, even when the deadline has passed already, and once more after the
// deadline, so it never loses a last chance to the sleep. Returns whether
// `pred` returned true. On timeout it records a non-fatal googletest failure
// at the caller's line: "gave up after N s waiting for <what>" (wrap the call
// in ASSERT_TRUE to stop the test there). `pred` runs on the calling thread
// and may have side effects (take a message, send a request); it is never
// called again after it returned true.
bool WaitUntil(const std::function<bool()>& pred,
               std::chrono::steady_clock::time_point deadline,
               std::string_view what,
               std::source_location where = std::source_location::current());

// The same with a deadline of now + `timeout`.
bool WaitUntil(const std::function<bool()>& pred,
               std::chrono::steady_clock::duration timeout,
               std::string_view what,
               std::source_location where = std::source_location::current());

}  // namespace aos::testing

#endif  // AOS_TESTING_WAIT_UNTIL_H_
