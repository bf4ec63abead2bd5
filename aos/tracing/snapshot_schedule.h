#ifndef AOS_TRACING_SNAPSHOT_SCHEDULE_H_
#define AOS_TRACING_SNAPSHOT_SCHEDULE_H_

// When `aos_trace record` writes a snapshot: after a trigger, once the
// after-window has passed, and never more often than the rate limit allows.
// Pure logic over times given to it, so that a test drives it with fake
// time.
//
//   SnapshotSchedule schedule(after_ns, min_interval_ns);
//   schedule.Trigger(trigger_ns, new_triggers);   // from the rings' headers
//   if (std::optional<int64_t> t = schedule.Due(now_ns)) {
//     Write(window around *t, schedule.TakeSuppressed());
//   }
//
// A trigger inside the window of one waiting to be written joins it. A
// trigger less than `min_interval_ns` after the last written one is
// suppressed: counted (every trigger the rings counted, not every poll),
// and the count goes into the next snapshot written (TakeSuppressed).

#include <cstdint>
#include <optional>

namespace aos::tracing {

class SnapshotSchedule {
 public:
  SnapshotSchedule(int64_t after_ns, int64_t min_interval_ns)
      : after_ns_(after_ns), min_interval_ns_(min_interval_ns) {}

  // `count` triggers (1 or more), the last at `trigger_ns`.
  void Trigger(int64_t trigger_ns, uint64_t count);
  // The trigger time of the snapshot to write now, if one is due.
  std::optional<int64_t> Due(int64_t now_ns);
  // Triggers suppressed since the last call; resets the count.
  uint64_t TakeSuppressed();
  // Triggers suppressed in all.
  uint64_t total_suppressed() const { return total_suppressed_; }

 private:
  const int64_t after_ns_;
  const int64_t min_interval_ns_;
  std::optional<int64_t> pending_;
  std::optional<int64_t> last_written_;
  uint64_t suppressed_ = 0;
  uint64_t total_suppressed_ = 0;
};

}  // namespace aos::tracing

#endif  // AOS_TRACING_SNAPSHOT_SCHEDULE_H_
