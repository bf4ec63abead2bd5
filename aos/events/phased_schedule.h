#ifndef AOS_EVENTS_PHASED_SCHEDULE_H_
#define AOS_EVENTS_PHASED_SCHEDULE_H_

// The boundaries `offset + k * interval` of the monotonic clock that a
// phased loop runs on, and how many of them passed between two moments: the
// arithmetic of AOS's time::PhasedLoop, which AOS code's phased loops (and
// their cycles_elapsed) depend on.
//
//   PhasedSchedule schedule(milliseconds(10), milliseconds(3), now);
//   const int cycles = schedule.Iterate(now);   // boundaries passed
//   timer->Schedule(schedule.sleep_time());     // the next one, after now
//
// Never allocates; exact integer arithmetic on nanoseconds.

#include <optional>

#include "aos/time/time.h"

namespace aos {

class PhasedSchedule {
 public:
  // 0 <= offset < interval (checked). The last boundary starts as the
  // latest one at or before `now` (Reset).
  PhasedSchedule(monotonic_clock::duration interval,
                 monotonic_clock::duration offset,
                 monotonic_clock::time_point now);

  // Moves to the first boundary strictly after `now` and returns how many
  // intervals that is from the last one: 1 when called once per boundary,
  // more when boundaries were passed, 0 (or less, if `now` went back) when
  // the last boundary is already after `now`.
  int Iterate(monotonic_clock::time_point now);

  // Makes the last boundary the latest one at or before `now`, so that
  // Iterate(now) returns 1.
  void Reset(monotonic_clock::time_point now) { Iterate(now - interval_); }

  // Changes the grid, as AOS's set_interval_and_offset does: the last
  // boundary moves by the change of offset, never later (by a whole new
  // interval less when the offset grows), so that, without `now`,
  // Iterate(old sleep_time()) returns 0 and sleep_time() does not grow;
  // with `now`, it then Iterate()s to the first new boundary after `now`.
  void SetIntervalAndOffset(
      monotonic_clock::duration interval, monotonic_clock::duration offset,
      std::optional<monotonic_clock::time_point> now = std::nullopt);

  // The last boundary Iterate() moved to: when to call next.
  monotonic_clock::time_point sleep_time() const { return last_; }
  monotonic_clock::duration interval() const { return interval_; }
  monotonic_clock::duration offset() const { return offset_; }

 private:
  monotonic_clock::duration interval_;
  monotonic_clock::duration offset_;
  monotonic_clock::time_point last_;
};

}  // namespace aos

#endif  // AOS_EVENTS_PHASED_SCHEDULE_H_
