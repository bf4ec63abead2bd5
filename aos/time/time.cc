#include "aos/time/time.h"

#include <time.h>

#include <cinttypes>
#include <cstdio>

namespace aos {
namespace {

int64_t ReadClock(clockid_t clock) {
  struct timespec now;
  clock_gettime(clock, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

}  // namespace

monotonic_clock::time_point monotonic_clock::now() noexcept {
  return time_point(duration(ReadClock(CLOCK_MONOTONIC)));
}

realtime_clock::time_point realtime_clock::now() noexcept {
  return time_point(duration(ReadClock(CLOCK_REALTIME)));
}

std::ostream& operator<<(std::ostream& stream,
                         const monotonic_clock::time_point& time) {
  if (time == monotonic_clock::min_time) return stream << "min_time";
  const int64_t ns = time.time_since_epoch().count();
  const int64_t seconds = ns / 1000000000;
  int64_t fraction = ns % 1000000000;
  char buffer[64];
  if (ns < 0 && fraction != 0) {
    snprintf(buffer, sizeof(buffer), "-%" PRId64 ".%09" PRId64 "sec", -seconds,
             -fraction);
  } else {
    snprintf(buffer, sizeof(buffer), "%" PRId64 ".%09" PRId64 "sec", seconds,
             fraction);
  }
  return stream << buffer;
}

std::ostream& operator<<(std::ostream& stream,
                         const realtime_clock::time_point& time) {
  if (time == realtime_clock::min_time) return stream << "min_time";
  const int64_t ns = time.time_since_epoch().count();
  int64_t seconds = ns / 1000000000;
  int64_t fraction = ns % 1000000000;
  if (fraction < 0) {
    fraction += 1000000000;
    --seconds;
  }
  const time_t whole = static_cast<time_t>(seconds);
  struct tm broken_down;
  gmtime_r(&whole, &broken_down);
  char date[32];
  strftime(date, sizeof(date), "%Y-%m-%d_%H-%M-%S", &broken_down);
  char buffer[64];
  snprintf(buffer, sizeof(buffer), "%s.%09" PRId64, date, fraction);
  return stream << buffer;
}

}  // namespace aos
