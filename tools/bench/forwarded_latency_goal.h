#ifndef TOOLS_BENCH_FORWARDED_LATENCY_GOAL_H_
#define TOOLS_BENCH_FORWARDED_LATENCY_GOAL_H_

// Issue 27's goal for the forwarded round trip, judged on one run of
// bridge_bench: the bridges' p50 at most `goal` times the hops' sum
// (ddsperf's round trip plus two local round trips), with the bare relays
// (tools/bench/bare_relay: one dds_write out, taken and re-sent in
// Cyclone's receive thread, nothing else) as the machine's floor.

#include <cmath>
#include <string>

namespace aos::bench {

// The verdict of one link. Ratios are NaN where the sum was not measured.
struct ForwardedLatencyVerdict {
  // The bridges' round trip p50 / the hops' sum.
  double ratio = NAN;
  // The bare relays' better run's p50 / the hops' sum.
  double relay_ratio = NAN;
  // ratio <= the goal.
  bool met = false;
  // Missed, and the relays' better run missed it too: with none of a
  // bridge's own work, this machine did not reach the goal in this run.
  bool below_floor = false;
};

// Judges the bridges' p50 against `goal` x `hops_sum_us` (all in us), with
// the lower p50 of the relays' runs as the floor. A floor that meets the
// goal is not evidence that the machine cannot: then a miss is the
// bridges' own.
ForwardedLatencyVerdict JudgeForwardedLatency(double bridges_p50_us,
                                              double relay_p50_us,
                                              double hops_sum_us, double goal);

// The goal line's words for a verdict: "1.13x: MISSED; below what this
// machine allows: the bare relays took 1.08x the hops' sum in their better
// run (the bridges 1.05x of that)", "0.95x: met (the bare relays: 0.97x)",
// or "1.13x: MISSED; the bare relays took 0.97x: the rest is the bridges'";
// "not measured" for a ratio that was not.
std::string ForwardedLatencyText(const ForwardedLatencyVerdict& verdict);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_FORWARDED_LATENCY_GOAL_H_
