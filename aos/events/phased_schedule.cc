#include "aos/events/phased_schedule.h"

#include "glog/logging.h"

namespace aos {
namespace {

void CheckGrid(monotonic_clock::duration interval,
               monotonic_clock::duration offset) {
  CHECK_GT(interval.count(), 0) << "phased loop: interval must be positive";
  CHECK(offset >= monotonic_clock::duration::zero() && offset < interval)
      << "phased loop: offset " << offset.count()
      << "ns must be in [0, interval " << interval.count() << "ns)";
}

// floor(a / b) for b > 0.
int64_t FloorDivide(int64_t a, int64_t b) {
  const int64_t quotient = a / b;
  return (a % b != 0 && a < 0) ? quotient - 1 : quotient;
}

}  // namespace

PhasedSchedule::PhasedSchedule(monotonic_clock::duration interval,
                               monotonic_clock::duration offset,
                               monotonic_clock::time_point now)
    : interval_(interval), offset_(offset) {
  CheckGrid(interval, offset);
  last_ = monotonic_clock::time_point(offset);
  Reset(now);
}

int PhasedSchedule::Iterate(monotonic_clock::time_point now) {
  // The first k with offset + k * interval > now.
  const int64_t since_phase = (now.time_since_epoch() - offset_).count();
  const int64_t k = FloorDivide(since_phase, interval_.count()) + 1;
  const monotonic_clock::time_point next(offset_ + k * interval_);
  const int cycles = static_cast<int>((next - last_) / interval_);
  last_ = next;
  return cycles;
}

void PhasedSchedule::SetIntervalAndOffset(
    monotonic_clock::duration interval, monotonic_clock::duration offset,
    std::optional<monotonic_clock::time_point> now) {
  CheckGrid(interval, offset);
  // Keep the last boundary where the old grid had it, moved to the new
  // offset, and never later than it was.
  last_ += offset - offset_ -
           (offset > offset_ ? interval : monotonic_clock::duration::zero());
  interval_ = interval;
  offset_ = offset;
  if (now.has_value()) Iterate(*now);
}

}  // namespace aos
