#ifndef AOS_EVENTS_TIMER_ANTICIPATION_H_
#define AOS_EVENTS_TIMER_ANTICIPATION_H_

// Waking a loop's timers on time where the kernel wakes them late
// (ShmEventLoop's --timer_anticipation_us; Xenomai calls the same idea the
// clock's "gravity"): the loop arms its kernel timer `lead()` before a
// timer's scheduled time and, woken before that time, spins on the clock
// until it comes, so the handler starts at its time instead of after the
// kernel's wakeup path (on a VM whose idle CPUs halt, tens of us). The cost
// is the CPU spent spinning, counted here and published in the timing report
// with the lead and the wakeups that came early.
//
// A handler never starts before its scheduled time: the spin ends when the
// clock reaches it. The lead is either fixed (a given number of us) or
// automatic: it follows the kernel's own lateness, the 75th percentile of
// how late the loop's timer wakeups came after the time the kernel timer
// was armed for (a stochastic quantile estimate: no samples kept, no
// allocation), capped at kMaxAutomaticLeadNs. So three wakeups in four come
// early and their handlers start on time, and the spin per wakeup stays
// about the spread of the kernel's lateness.
//
// Spinning costs a CPU for the lead; a loop whose timers come often would
// spin most of the time. So the kernel timer is armed early only when the
// timer is due at least kMinWaitPerLead leads after the loop's last timer
// wakeup was due: a wakeup spins at most a lead, so the spin then takes at
// most 1/kMinWaitPerLead of the time between the wakeups of each kernel
// timer armed so (ShmEventLoop has two: at most twice that in all), and a
// loop whose timers come closer than that (many spread timers, a fast
// phased loop) runs as without it. It is measured from when the last wakeup was
// due, not from when its handlers returned: otherwise a loop whose handlers run
// longer (100 timers due together) would lose the lead where one timer keeps
// it.
//
// Not thread-safe: the loop's thread only. Allocates nothing.

#include <chrono>
#include <cstdint>

#include "aos/events/timer_anticipation_counters.h"
#include "aos/time/time.h"

namespace aos {

class TimerAnticipation {
 public:
  // The automatic lead's bound: above it, a kernel that late is not what a
  // spin should hide.
  static constexpr int64_t kMaxAutomaticLeadNs = 200'000;
  // The largest fixed lead a flag may give.
  static constexpr int64_t kMaxFixedLeadNs = 1'000'000;
  // Armed early only for waits of at least this many leads.
  static constexpr int64_t kMinWaitPerLead = 10;

  // Off: the kernel timer is armed for the timer's time.
  TimerAnticipation() = default;
  // A fixed lead (0 < lead_ns <= kMaxFixedLeadNs), or, with `automatic`,
  // one that follows the kernel's lateness, starting at 0. Counts into
  // `counters`, which must outlive this.
  TimerAnticipation(bool automatic, int64_t lead_ns,
                    TimerAnticipationCounters* counters);

  // The time to arm the kernel timer for, for a timer due at `due`, the
  // loop's last timer wakeup having been due at `since` (or, outside a
  // timer wakeup, the clock now): `due` - lead() if `due` is at least
  // kMinWaitPerLead leads after `since`, else `due`.
  monotonic_clock::time_point KernelTime(
      monotonic_clock::time_point due, monotonic_clock::time_point since) const;

  // A timer wakeup: the kernel timer armed for `armed` woke the loop at
  // `now` (not before `armed`). Counts it and, in automatic mode, learns
  // its lateness.
  void Woke(monotonic_clock::time_point armed, monotonic_clock::time_point now);

  // Whether a loop woken at `now` by a kernel timer armed `applied_lead_ns`
  // before its timer's time should wait for the timer due at `due`: only
  // when it is still to come and no further off than that lead, so a wait
  // is never longer than the lead the kernel timer was armed with.
  bool ShouldWait(monotonic_clock::time_point now,
                  monotonic_clock::time_point due,
                  int64_t applied_lead_ns) const {
    return counters_ != nullptr && now < due &&
           (due - now).count() <= applied_lead_ns;
  }

  // Spins until the clock reaches `due` and returns the clock then (at or
  // after `due`); counts an early wakeup and the time spun, from a clock
  // read of its own.
  monotonic_clock::time_point WaitUntil(monotonic_clock::time_point due);

  // The lateness estimate alone (automatic mode), for tests: what one
  // wakeup `lateness_ns` after its kernel timer does to the lead.
  void Learn(int64_t lateness_ns);

  int64_t lead_ns() const { return counters_ ? counters_->lead_ns : 0; }

 private:
  TimerAnticipationCounters* counters_ = nullptr;
};

}  // namespace aos

#endif  // AOS_EVENTS_TIMER_ANTICIPATION_H_
