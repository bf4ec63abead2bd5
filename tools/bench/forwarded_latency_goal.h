#ifndef TOOLS_BENCH_FORWARDED_LATENCY_GOAL_H_
#define TOOLS_BENCH_FORWARDED_LATENCY_GOAL_H_

// Issue 27's goal for the forwarded round trip, judged on the rounds of one
// run of bridge_bench: the bridges' p50 at most `goal` times the hops' sum
// (ddsperf's round trip plus two local round trips), with the bare relays
// (tools/bench/bare_relay: one dds_write out, taken and re-sent in
// Cyclone's receive thread, nothing else) as the machine's floor.

#include <cmath>
#include <string>
#include <vector>

namespace aos::bench {

// One round of the latency measurements, run back to back (ddsperf's round
// trip, the local one, the relays', the bridges'): p50s in us, NaN where
// not measured.
struct LatencyRound {
  // ddsperf's round trip plus two local round trips.
  double hops_sum_us = NAN;
  double relays_us = NAN;
  double bridges_us = NAN;
};

// The verdict of one link. Ratios are NaN where no round measured them.
struct ForwardedLatencyVerdict {
  // The median over the rounds of the bridges' p50 / that round's sum.
  double ratio = NAN;
  // The median over the rounds of the relays' p50 / that round's sum.
  double relay_ratio = NAN;
  // The median over the rounds of the bridges' p50 / that round's relays'.
  double bridges_over_relays = NAN;
  // How many rounds measured the sum and the bridges (ratio's rounds).
  int rounds = 0;
  // ratio <= the goal.
  bool met = false;
  // Missed, and the relays missed it too: with none of a bridge's own
  // work, this machine did not reach the goal in this run.
  bool below_floor = false;
};

// Judges the bridges against `goal` x the hops' sum, round by round: each
// ratio is of figures measured back to back, so that a machine that drifts
// during the run weighs on both; the median of the rounds' ratios (each
// ratio's own median: the bridges' and the relays' may come from different
// rounds, and of an even count it is the mean of the middle two) is the
// verdict. Relays that meet the goal are not evidence that the machine
// cannot: then a miss is the bridges' own.
ForwardedLatencyVerdict JudgeForwardedLatency(
    const std::vector<LatencyRound>& rounds, double goal);

// The goal line's words for a verdict: "1.13x (median of 3 rounds):
// MISSED; below what this machine allows: the bare relays took 1.08x the
// hops' sum (the bridges 1.05x the relays)", with bridges_over_relays, "0.95x
// (median of 3 rounds): met (the bare relays: 0.97x)", or "1.13x (median of 3
// rounds): MISSED; the bare relays took 0.97x: the rest is the bridges'"; "not
// measured" where no round was.
std::string ForwardedLatencyText(const ForwardedLatencyVerdict& verdict);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_FORWARDED_LATENCY_GOAL_H_
