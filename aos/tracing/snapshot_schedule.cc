#include "aos/tracing/snapshot_schedule.h"

namespace aos::tracing {

void SnapshotSchedule::Trigger(int64_t trigger_ns, uint64_t count) {
  if (pending_.has_value() && trigger_ns <= *pending_ + after_ns_) return;
  if (pending_.has_value() ||
      (last_written_.has_value() &&
       trigger_ns - *last_written_ < min_interval_ns_)) {
    suppressed_ += count;
    total_suppressed_ += count;
    return;
  }
  pending_ = trigger_ns;
}

std::optional<int64_t> SnapshotSchedule::Due(int64_t now_ns) {
  if (!pending_.has_value() || now_ns < *pending_ + after_ns_) {
    return std::nullopt;
  }
  const int64_t trigger = *pending_;
  pending_.reset();
  last_written_ = trigger;
  return trigger;
}

uint64_t SnapshotSchedule::TakeSuppressed() {
  const uint64_t suppressed = suppressed_;
  suppressed_ = 0;
  return suppressed;
}

}  // namespace aos::tracing
