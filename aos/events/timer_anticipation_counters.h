#ifndef AOS_EVENTS_TIMER_ANTICIPATION_COUNTERS_H_
#define AOS_EVENTS_TIMER_ANTICIPATION_COUNTERS_H_

#include <cstdint>

namespace aos {

// What anticipation cost and won in one timing report window, published in
// the report (timer_anticipation_*); Reset() starts the next window and
// keeps the lead.
struct TimerAnticipationCounters {
  // How early the kernel timer is armed now, in ns (0: not anticipating),
  // and whether the loop chooses it (automatic) or a flag fixed it.
  int64_t lead_ns = 0;
  bool automatic = false;
  // Timer wakeups in the window, and those of them that came before the
  // timer's time (whose handlers then started on time).
  uint64_t wakeups = 0;
  uint64_t early_wakeups = 0;
  // CPU time spent spinning until a timer's time, in ns.
  uint64_t spin_ns = 0;

  void Reset() {
    wakeups = 0;
    early_wakeups = 0;
    spin_ns = 0;
  }
};

}  // namespace aos

#endif  // AOS_EVENTS_TIMER_ANTICIPATION_COUNTERS_H_
