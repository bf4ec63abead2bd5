#include "tools/bench/flood_loss.h"

#include <algorithm>
#include <cmath>

#include "aos/util/str_cat.h"
#include "tools/bench/bench_harness.h"

namespace aos::bench {

FloodLoss SplitFloodLoss(int64_t sent, int64_t written, int64_t write_failures,
                         int64_t lost, int64_t refused_on_pi2) {
  FloodLoss loss;
  loss.unread_on_pi1 = std::max<int64_t>(
      sent - written - std::max<int64_t>(write_failures, 0), 0);
  loss.refused_on_pi2 = std::max<int64_t>(refused_on_pi2, 0);
  loss.in_dds =
      std::max<int64_t>(lost - loss.unread_on_pi1 - loss.refused_on_pi2, 0);
  return loss;
}

std::string FloodLossText(const FloodLoss& loss, const FloodDelays& delays) {
  auto ms = [](double us) { return StrCat(Fixed(us / 1e3, 1), " ms"); };
  std::string text;
  auto part = [&](int64_t count, std::string what) {
    if (count <= 0) return;
    if (!text.empty()) text += ", ";
    text += StrCat(count, " ", what);
  };
  part(loss.unread_on_pi1,
       std::isnan(delays.lag_headroom_us)
           ? std::string("unread on pi1 (the channel lapped its bridge)")
           : StrCat("unread on pi1 (the channel lapped its bridge: more than ",
                    ms(delays.lag_headroom_us), " behind)"));
  part(loss.in_dds, "in DDS");
  std::string refused =
      "refused on pi2 (a catch-up faster than the channel's rate";
  if (!std::isnan(delays.catch_up_headroom_us)) {
    refused += StrCat(": a stall over ", ms(delays.catch_up_headroom_us));
  }
  if (!std::isnan(delays.longest_one_way_us)) {
    refused +=
        StrCat("; the longest delay was ", ms(delays.longest_one_way_us));
  }
  if (delays.flood_largest_burst > 0) {
    refused += StrCat("; the flood sent up to ", delays.flood_largest_burst,
                      " in one tick");
  }
  part(loss.refused_on_pi2, refused + ")");
  return text;
}

namespace {

bool HeadroomDefined(double frequency, double storage_s, double rate) {
  return rate > 0 && rate < frequency && storage_s > 0 &&
         std::isfinite(frequency) && std::isfinite(storage_s);
}

}  // namespace

double CatchUpHeadroomSeconds(double frequency, double storage_s, double rate) {
  if (!HeadroomDefined(frequency, storage_s, rate)) return NAN;
  return storage_s * (frequency - rate) / rate;
}

double ReaderLagHeadroomSeconds(double frequency, double storage_s,
                                double rate) {
  if (!HeadroomDefined(frequency, storage_s, rate)) return NAN;
  return frequency * storage_s / rate;
}

int64_t LargestAddedNs(const timing::LatencyHistogram& before,
                       const timing::LatencyHistogram& after) {
  if (after.count() <= before.count()) return -1;
  if (after.max_ns() > before.max_ns()) return after.max_ns();
  for (size_t index = timing::LatencyHistogram::kBucketCount; index-- > 0;) {
    if (after.bucket_count(index) > before.bucket_count(index)) {
      return std::min(after.max_ns(),
                      timing::LatencyHistogram::BucketUpperNs(index));
    }
  }
  return -1;
}

}  // namespace aos::bench
