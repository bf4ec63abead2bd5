#ifndef TOOLS_BENCH_BENCH_INPUTS_H_
#define TOOLS_BENCH_BENCH_INPUTS_H_

// What latency_bench reads from the aos programs it runs, each of which
// hands it JSON, never text to pick apart: ping's --summary_json file, the
// microbenchmarks' --benchmark_format=json output (Google Benchmark 1.7),
// and shm_wakeup_benchmark's --json file (rows of bench_figures.h's
// WriteFigures). Errors name the file and the path of what is missing.

#include <cmath>
#include <string_view>

#include "absl/status/statusor.h"
#include "aos/util/json_document.h"
#include "tools/bench/bench_figures.h"

namespace aos::bench {

// ping's round trip, from its --summary_json file.
struct RoundTrip {
  // NaN where ping got no answer (the file holds null).
  double avg_us = NAN;
  double p50_us = NAN;
};
absl::StatusOr<RoundTrip> ReadPingSummary(const JsonValue& root);

// The wall-clock time per iteration of benchmark `name` ("real_time" in
// "time_unit"), in nanoseconds. An error if the output holds no such
// benchmark or an unknown time unit.
absl::StatusOr<double> MicrobenchmarkNs(const JsonValue& root,
                                        std::string_view name);

// Row `key` of shm_wakeup_benchmark's --json file ("ping_pong",
// "timer_driven", "floor", "sigwaittest_f", "ptsematest").
absl::StatusOr<Figures> ReadShmWakeupRow(const JsonValue& root,
                                         std::string_view key);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_BENCH_INPUTS_H_
