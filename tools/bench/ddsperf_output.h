#ifndef TOOLS_BENCH_DDSPERF_OUTPUT_H_
#define TOOLS_BENCH_DDSPERF_OUTPUT_H_

// What tools/bench/bridge.sh reads from Cyclone DDS's ddsperf (0.10), the
// baseline of the message bridge's bench. ddsperf has no machine-readable
// output: it prints one line a second per peer, so this is the one place
// that picks its text apart, and it refuses lines it does not understand
// rather than guessing.
//
//   ping:  "[17511] 2.000  vm:17501 size 12 mean 50.184us min 11.863us
//           50% 45.116us 90% 59.347us 99% 136.746us max 1157.520us cnt 917"
//   sub:   "[17694] 2.002  size 32 total 944891 lost 0 delta 658690 lost 0
//           rate 657.67 kS/s 168.36 Mb/s (94.34 kS/s 24.15 Mb/s)"
//
// Other lines (participants, rss, discarded/rexmit) are skipped.

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/bench_figures.h"

namespace aos::bench {

// ddsperf ping's round trip over a run. ddsperf prints a distribution per
// second, never a pooled one, so p50 and p99 are the count-weighted means of
// the per-second percentiles, avg the weighted mean of the per-second means,
// min and max the extremes. An error names the line that has a latency line's
// start but not its fields, or says that no latency line came.
absl::StatusOr<Figures> ReadDdsperfPing(std::string_view output,
                                        std::string name);

// ddsperf sub's receive rate in samples a second, over the lines whose
// delta was not 0 (the publisher running), leaving out the first interval
// (discovery, the publisher starting) and, with four or more lines, the
// last (the publisher stopping within it). With fewer than three such
// lines, the total over the time of the last line. An error if no sub line
// came or none received anything.
struct DdsperfRate {
  double per_s = 0;
  int64_t total = 0;
  int64_t lost = 0;
  int32_t size_bytes = 0;
};
absl::StatusOr<DdsperfRate> ReadDdsperfSub(std::string_view output);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_DDSPERF_OUTPUT_H_
