#ifndef TOOLS_BENCH_BENCH_FIGURES_H_
#define TOOLS_BENCH_BENCH_FIGURES_H_

// Latency figures of one measurement (ours or a baseline tool's), and how
// they are read from each source: our merged timing-report histograms,
// cyclictest's --histogram output, and rt-tests' --json files.

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"

namespace aos::bench {

// One latency distribution, in microseconds. NAN marks a figure the source
// does not give (rt-tests print no percentiles).
struct Figures {
  std::string name;
  int64_t count = 0;
  double min_us = NAN, avg_us = NAN, p50_us = NAN, p99_us = NAN, p999_us = NAN,
         max_us = NAN;
  // 1 us classes for the plot: class (whole us, rounded down) -> samples.
  std::map<int64_t, uint64_t> bins;
  // Samples beyond the last class (cyclictest's histogram overflows).
  uint64_t overflows = 0;
};

// Figures of our own latency histogram and statistic. The histogram's
// buckets are spread evenly over the 1 us classes they cover. Without a
// histogram (a report that dropped it to fit max_size), only count, min,
// avg and max, from the statistic.
Figures FromHistogram(std::string name,
                      const timing::LatencyHistogram& histogram,
                      const timing::RunningStatistic& statistic);

// Fills count, avg and the percentiles from `bins` and `overflows`. A 1 us
// class holds whole microseconds rounded down (3.7 us counts in class 3),
// so each is read at its middle, as our histogram reads its buckets. With
// overflows the average is left as it was (the tool's own) and a
// percentile in the overflow is max_us.
void FillPercentiles(Figures* f);

// Pools runs of one measurement: bins and overflows add up, min and max
// are the extremes, the average is weighted by count; percentiles come
// from the pooled bins. Runs without bins (rt-tests) pool only count, min,
// avg and max.
Figures Merge(std::string name, const std::vector<Figures>& runs);

// Reads `cyclictest -q --histogram=N` output: the "class count" lines and
// the "# Min/Avg/Max Latencies" and "# Histogram Overflows" lines.
// An error names what is missing.
absl::StatusOr<Figures> ParseCyclictest(std::string_view output);

// Reads the receiver's min, avg (0.01 us) and max, and the sample count,
// from the --json file of sigwaittest or ptsematest (`name` is used in
// figures and errors).
absl::StatusOr<Figures> ParseRtTestsJson(std::string name,
                                         std::string_view json);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_BENCH_FIGURES_H_
