#ifndef AOS_EVENTS_BUSY_POLL_COUNTERS_H_
#define AOS_EVENTS_BUSY_POLL_COUNTERS_H_

// What a loop's busy-polling cost and won in one timing report window
// (ShmEventLoop's --busy_poll_us): counted by the epoll loop as it polls,
// published in the report (busy_poll_time, busy_poll_wakeups) and reset with
// the window.

#include <cstdint>

namespace aos {

struct BusyPollCounters {
  // Time spent checking for events without blocking, in ns: CPU the loop
  // burned instead of sleeping.
  uint64_t polling_ns = 0;
  // Wakeups served by such a check, which a blocking wait would have served
  // later (after the thread slept and its CPU went idle).
  uint64_t caught = 0;

  void Reset() { *this = BusyPollCounters(); }
};

}  // namespace aos

#endif  // AOS_EVENTS_BUSY_POLL_COUNTERS_H_
