#include "aos/testing/wait_until.h"

#include <algorithm>
#include <thread>

#include "gtest/gtest.h"

namespace aos::testing {

bool WaitUntil(const std::function<bool()>& pred,
               std::chrono::steady_clock::time_point deadline,
               std::string_view what, std::source_location where) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    if (pred()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) break;
    // Not past the deadline: one more call comes after this sleep.
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        kWaitUntilPollPeriod, deadline - now));
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ADD_FAILURE_AT(where.file_name(), static_cast<int>(where.line()))
      << "gave up after " << waited << " s waiting for " << what;
  return false;
}

bool WaitUntil(const std::function<bool()>& pred,
               std::chrono::steady_clock::duration timeout,
               std::string_view what, std::source_location where) {
  return WaitUntil(pred, std::chrono::steady_clock::now() + timeout, what,
                   where);
}

}  // namespace aos::testing
