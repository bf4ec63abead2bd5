#ifndef TOOLS_BENCH_BENCH_FIGURES_H_
#define TOOLS_BENCH_BENCH_FIGURES_H_

// Latency figures of one measurement, ours or a baseline tool's: the one
// type every benchmark of tools/bench measures into, pools and hands over
// as JSON. rt_tests.h reads them from rt-tests' --json files.

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/util/json_document.h"
#include "aos/util/json_writer.h"

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

// Fills count and the percentiles from `bins` and `overflows`; leaves the
// average as it is (each source measures its own more exactly than the
// classes can). A 1 us class holds whole microseconds rounded down (3.7 us
// counts in class 3), so each is read at its middle, as our histogram reads
// its buckets. A percentile that falls in the overflow is max_us.
void FillPercentiles(Figures* f);

// Pools runs of one measurement: bins and overflows add up, min and max
// are the extremes, the average is weighted by count; percentiles come
// from the pooled bins. Runs without bins (rt-tests' sender/receiver tools)
// pool only count, min, avg and max.
Figures Merge(std::string name, const std::vector<Figures>& runs);

// Writes `f` as one JSON object: name, count, min_us, avg_us, p50_us,
// p99_us, p999_us, max_us (null where NaN), histogram_overflows, and
// classes_us, an object of the non-empty 1 us classes ("12": 4 is 4 samples
// of 12-13 us).
void WriteFigures(const Figures& f, JsonWriter* json);

// Adds to `bins` an object of 1 us classes, {"class in whole us": count},
// the way WriteFigures writes them and cyclictest's --json file holds its
// histogram. An error names the file and the class that is no whole number
// or whose count is not a count.
absl::Status ReadClasses(const JsonValue& classes,
                         std::map<int64_t, uint64_t>* bins);

// Reads what WriteFigures wrote. An error names the file and the path of
// what is missing or malformed.
absl::StatusOr<Figures> ReadFigures(const JsonValue& value);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_BENCH_FIGURES_H_
