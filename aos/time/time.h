#ifndef AOS_TIME_TIME_H_
#define AOS_TIME_TIME_H_

// The clocks every aos event loop runs on.
//
//   aos::monotonic_clock::time_point now = aos::monotonic_clock::now();
//   std::cout << now;  // "12345.678901234sec"
//
// Both are std::chrono clocks with nanosecond ticks in an int64. The
// monotonic clock is CLOCK_MONOTONIC (it never jumps; all timing figures use
// it); the realtime clock is CLOCK_REALTIME (wall time, for logs and people).
// An event loop's own notion of "now" (EventLoop::monotonic_now()) is what
// handlers should use: in simulation it is simulated time.

#include <time.h>

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace aos {

class monotonic_clock {
 public:
  using rep = int64_t;
  using period = std::nano;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<monotonic_clock>;
  static constexpr bool is_steady = true;

  // CLOCK_MONOTONIC. Never allocates; about 20 ns through the vDSO.
  static time_point now() noexcept;

  // The epoch, and sentinels for "never" / "unset".
  static constexpr time_point epoch() { return time_point(duration(0)); }
  static constexpr time_point min_time = time_point(duration(INT64_MIN));
  static constexpr time_point max_time = time_point(duration(INT64_MAX));
};

class realtime_clock {
 public:
  using rep = int64_t;
  using period = std::nano;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<realtime_clock>;
  static constexpr bool is_steady = false;

  // CLOCK_REALTIME. Never allocates.
  static time_point now() noexcept;

  static constexpr time_point epoch() { return time_point(duration(0)); }
  static constexpr time_point min_time = time_point(duration(INT64_MIN));
  static constexpr time_point max_time = time_point(duration(INT64_MAX));
};

// Seconds as a double, for statistics.
constexpr double DurationInSeconds(std::chrono::nanoseconds duration) {
  return static_cast<double>(duration.count()) * 1e-9;
}

// A non-negative duration (or a time's time_since_epoch()) as the POSIX
// calls (timerfd_settime, clock_nanosleep, epoll_pwait2) take it.
constexpr struct timespec ToTimespec(std::chrono::nanoseconds duration) {
  return {.tv_sec = static_cast<time_t>(duration.count() / 1000000000),
          .tv_nsec = static_cast<long>(duration.count() % 1000000000)};
}

// "12345.678901234sec"; min_time prints as "min_time".
std::ostream& operator<<(std::ostream& stream,
                         const monotonic_clock::time_point& time);

// "2026-11-21_20-43-12.123456789" (UTC); min_time prints as "min_time".
std::ostream& operator<<(std::ostream& stream,
                         const realtime_clock::time_point& time);

}  // namespace aos

#endif  // AOS_TIME_TIME_H_
