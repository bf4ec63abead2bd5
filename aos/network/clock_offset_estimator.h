#ifndef AOS_NETWORK_CLOCK_OFFSET_ESTIMATOR_H_
#define AOS_NETWORK_CLOCK_OFFSET_ESTIMATOR_H_

// How far a peer's monotonic clock is from ours, from NTP-style exchanges:
// we send a probe at t0 (our clock), the peer receives it at t1 and sends
// its own at t2 (its clock, echoing t0 and t1), and we receive that at t3.
// Then
//   offset = ((t1 - t0) + (t2 - t3)) / 2     (peer clock minus ours)
//   round trip = (t3 - t0) - (t2 - t1)
// and the true offset is within round trip / 2 of that offset whatever the
// split of the delay between the two directions. The estimate is the
// exchange with the shortest round trip among those completed in the last
// `window` (the least queueing, so the tightest bound), as NTP's clock
// filter does.
//
//   ClockOffsetEstimator estimator(std::chrono::seconds(10));
//   estimator.Add(t0, t1, t2, t3);
//   if (estimator.estimate().valid) use(estimator.estimate().offset_ns);
//
// Never allocates (a fixed ring of the last kMaxExchanges exchanges).

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace aos::message_bridge {

class ClockOffsetEstimator {
 public:
  // Exchanges kept; older ones leave the window anyway at 10 per second.
  static constexpr size_t kMaxExchanges = 128;

  struct Estimate {
    // False until an exchange is in the window.
    bool valid = false;
    // Peer clock minus ours, ns.
    int64_t offset_ns = 0;
    // Half the round trip of the exchange used: the truth is within
    // offset_ns +- uncertainty_ns.
    int64_t uncertainty_ns = -1;
  };

  explicit ClockOffsetEstimator(std::chrono::nanoseconds window);

  // Adds an exchange completed at t3 (all in ns; t0, t3 ours, t1, t2 the
  // peer's). Returns false, adding nothing, for an impossible one (t3 < t0,
  // t2 < t1, a negative round trip or one of 2^63 - 1 ns or more, an
  // offset beyond int64): damaged, replayed or forged probe data.
  bool Add(int64_t t0, int64_t t1, int64_t t2, int64_t t3);

  // The estimate from the exchanges completed within `window` before the
  // latest one.
  Estimate estimate() const { return estimate_; }

  // Forgets every exchange (the peer rebooted: its clock is another one).
  void Reset();

 private:
  struct Exchange {
    int64_t completed_ns;
    int64_t offset_ns;
    int64_t round_trip_ns;
  };

  void Recompute();

  const int64_t window_ns_;
  std::array<Exchange, kMaxExchanges> exchanges_{};
  size_t next_ = 0;
  size_t count_ = 0;
  Estimate estimate_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_CLOCK_OFFSET_ESTIMATOR_H_
