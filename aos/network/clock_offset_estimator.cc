#include "aos/network/clock_offset_estimator.h"

namespace aos::message_bridge {

ClockOffsetEstimator::ClockOffsetEstimator(std::chrono::nanoseconds window)
    : window_ns_(window.count()) {}

bool ClockOffsetEstimator::Add(int64_t t0, int64_t t1, int64_t t2, int64_t t3) {
  if (t3 < t0 || t2 < t1) return false;
  // In __int128: t1 - t0 and t2 - t3 cross clocks and may be anything.
  const __int128 round_trip =
      (static_cast<__int128>(t3) - t0) - (static_cast<__int128>(t2) - t1);
  // Negative, or too long for an int64 (and its half rounded up): only
  // damaged or forged times give either.
  if (round_trip < 0 || round_trip >= INT64_MAX) return false;
  const __int128 offset =
      (static_cast<__int128>(t1) - t0 + static_cast<__int128>(t2) - t3) / 2;
  if (offset > INT64_MAX || offset < INT64_MIN) return false;
  exchanges_[next_] = {.completed_ns = t3,
                       .offset_ns = static_cast<int64_t>(offset),
                       .round_trip_ns = static_cast<int64_t>(round_trip)};
  next_ = (next_ + 1) % kMaxExchanges;
  if (count_ < kMaxExchanges) ++count_;
  Recompute();
  return true;
}

void ClockOffsetEstimator::Recompute() {
  const Exchange& latest =
      exchanges_[(next_ + kMaxExchanges - 1) % kMaxExchanges];
  estimate_ = Estimate();
  int64_t best_round_trip = INT64_MAX;
  for (size_t i = 0; i < count_; ++i) {
    const Exchange& exchange = exchanges_[i];
    if (latest.completed_ns - exchange.completed_ns > window_ns_) continue;
    if (exchange.round_trip_ns < best_round_trip) {
      best_round_trip = exchange.round_trip_ns;
      estimate_ = {.valid = true,
                   .offset_ns = exchange.offset_ns,
                   .uncertainty_ns = (exchange.round_trip_ns + 1) / 2};
    }
  }
}

void ClockOffsetEstimator::Reset() {
  next_ = 0;
  count_ = 0;
  estimate_ = Estimate();
}

}  // namespace aos::message_bridge
