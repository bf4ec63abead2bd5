#include "tools/bench/forwarded_latency_goal.h"

#include <cmath>

#include "aos/util/str_cat.h"
#include "tools/bench/bench_harness.h"

namespace aos::bench {

ForwardedLatencyVerdict JudgeForwardedLatency(
    const std::vector<LatencyRound>& rounds, double goal) {
  ForwardedLatencyVerdict verdict;
  std::vector<double> ratios, relay_ratios, bridges_over_relays;
  for (const LatencyRound& round : rounds) {
    ratios.push_back(SafeRatio(round.bridges_us, round.hops_sum_us));
    relay_ratios.push_back(SafeRatio(round.relays_us, round.hops_sum_us));
    bridges_over_relays.push_back(SafeRatio(round.bridges_us, round.relays_us));
    if (!std::isnan(ratios.back())) ++verdict.rounds;
  }
  verdict.ratio = MedianOfMeasured(ratios);
  verdict.relay_ratio = MedianOfMeasured(relay_ratios);
  verdict.bridges_over_relays = MedianOfMeasured(bridges_over_relays);
  // NaN compares false: an unmeasured link neither meets the goal nor
  // shows a floor.
  verdict.met = verdict.ratio <= goal;
  verdict.below_floor = !verdict.met && verdict.relay_ratio > goal;
  return verdict;
}

std::string ForwardedLatencyText(const ForwardedLatencyVerdict& verdict) {
  if (std::isnan(verdict.ratio)) {
    return "not measured (no round with the hops' sum and the bridges): "
           "MISSED";
  }
  const std::string relays = std::isnan(verdict.relay_ratio)
                                 ? std::string("not measured")
                                 : StrCat(Fixed(verdict.relay_ratio, 2), "x");
  std::string text =
      StrCat(Fixed(verdict.ratio, 2), "x (median of ", verdict.rounds,
             verdict.rounds == 1 ? " round" : " rounds", "): ");
  if (verdict.met) return StrCat(text, "met (the bare relays: ", relays, ")");
  text += "MISSED";
  if (verdict.below_floor) {
    return StrCat(text,
                  "; below what this machine allows: the bare relays took ",
                  relays, " the hops' sum (the bridges ",
                  Fixed(verdict.bridges_over_relays, 2), "x the relays)");
  }
  if (std::isnan(verdict.relay_ratio)) {
    return StrCat(text, " (the bare relays: not measured)");
  }
  return StrCat(text, "; the bare relays took ", relays,
                ": the rest is the bridges'");
}

}  // namespace aos::bench
