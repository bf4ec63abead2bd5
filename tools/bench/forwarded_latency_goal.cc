#include "tools/bench/forwarded_latency_goal.h"

#include <cmath>

#include "aos/util/str_cat.h"
#include "tools/bench/bench_harness.h"

namespace aos::bench {

ForwardedLatencyVerdict JudgeForwardedLatency(double bridges_p50_us,
                                              double relay_p50_us,
                                              double hops_sum_us, double goal) {
  ForwardedLatencyVerdict verdict;
  verdict.ratio = SafeRatio(bridges_p50_us, hops_sum_us);
  verdict.relay_ratio = SafeRatio(relay_p50_us, hops_sum_us);
  // NaN compares false: an unmeasured link neither meets the goal nor
  // shows a floor.
  verdict.met = verdict.ratio <= goal;
  verdict.below_floor = !verdict.met && verdict.relay_ratio > goal;
  return verdict;
}

std::string ForwardedLatencyText(const ForwardedLatencyVerdict& verdict) {
  if (std::isnan(verdict.ratio)) {
    return "not measured (no hops' sum): MISSED";
  }
  const std::string relays = std::isnan(verdict.relay_ratio)
                                 ? std::string("not measured")
                                 : StrCat(Fixed(verdict.relay_ratio, 2), "x");
  std::string text = StrCat(Fixed(verdict.ratio, 2), "x: ");
  if (verdict.met) return StrCat(text, "met (the bare relays: ", relays, ")");
  text += "MISSED";
  if (verdict.below_floor) {
    return StrCat(
        text, "; below what this machine allows: the bare relays took ", relays,
        " the hops' sum in their better run (the bridges ",
        Fixed(SafeRatio(verdict.ratio, verdict.relay_ratio), 2), "x of that)");
  }
  if (std::isnan(verdict.relay_ratio)) {
    return StrCat(text, " (the bare relays: not measured)");
  }
  return StrCat(text, "; the bare relays took ", relays,
                ": the rest is the bridges'");
}

}  // namespace aos::bench
