// What the timing instrumentation costs an event loop, next to what it costs
// to read the clock at all.
//
//   timing_benchmark [--benchmark_filter=...]
//
// BM_RecordBoth is the per-callback cost: one sample into a RunningStatistic
// and a LatencyHistogram, as a loop does for every wakeup latency and handler
// time. BM_SteadyClockNow is the baseline (clock_gettime(CLOCK_MONOTONIC)
// through std::chrono): every callback reads the clock at least twice anyway.
// The record benchmarks also measure the clock in the same run and report
// `x_clock_read`, their cost in clock reads, which travels between machines
// better than nanoseconds do.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "benchmark/benchmark.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::timing {
namespace {

using Clock = std::chrono::steady_clock;

// Latency-like samples: log-normal around 20 us, spread over a few
// octaves, so the histogram touches many buckets and branches vary.
std::vector<int64_t> Samples(size_t n) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> distribution(std::log(20'000.0), 1.0);
  std::vector<int64_t> samples(n);
  for (int64_t& sample : samples) {
    sample = static_cast<int64_t>(distribution(rng));
  }
  return samples;
}

// Nanoseconds per steady_clock::now(), measured here and now.
double ClockReadNs() {
  constexpr int kReads = 1 << 18;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < kReads; ++i) benchmark::DoNotOptimize(Clock::now());
  const Clock::time_point end = Clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() / kReads;
}

// Runs `record(sample)` once per iteration over a precomputed sample array
// and reports its cost in clock reads.
template <typename Record>
void RunRecordBenchmark(benchmark::State& state, Record record) {
  const std::vector<int64_t> samples = Samples(4096);
  size_t i = 0;
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    record(samples[i]);
    i = (i + 1) & (samples.size() - 1);
  }
  const Clock::time_point end = Clock::now();
  const double per_record_ns =
      std::chrono::duration<double, std::nano>(end - start).count() /
      static_cast<double>(state.iterations());
  state.counters["x_clock_read"] = per_record_ns / ClockReadNs();
}

void BM_RecordBoth(benchmark::State& state) {
  RunningStatistic statistic;
  LatencyHistogram histogram;
  RunRecordBenchmark(state, [&](int64_t ns) {
    statistic.Add(static_cast<double>(ns) * 1e-9);
    histogram.Record(ns);
  });
  benchmark::DoNotOptimize(statistic.average());
  benchmark::DoNotOptimize(histogram.count());
}
BENCHMARK(BM_RecordBoth);

void BM_HistogramRecord(benchmark::State& state) {
  LatencyHistogram histogram;
  RunRecordBenchmark(state, [&](int64_t ns) { histogram.Record(ns); });
  benchmark::DoNotOptimize(histogram.count());
}
BENCHMARK(BM_HistogramRecord);

void BM_StatisticAdd(benchmark::State& state) {
  RunningStatistic statistic;
  RunRecordBenchmark(state, [&](int64_t ns) {
    statistic.Add(static_cast<double>(ns) * 1e-9);
  });
  benchmark::DoNotOptimize(statistic.average());
}
BENCHMARK(BM_StatisticAdd);

void BM_SteadyClockNow(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Clock::now());
}
BENCHMARK(BM_SteadyClockNow);

// Encoding a histogram with 50 non-empty buckets into a builder reused
// across reports, as a report builder does once a second per histogram.
void BM_HistogramEncode50Buckets(benchmark::State& state) {
  LatencyHistogram histogram;
  for (int64_t sample : Samples(100'000)) {
    histogram.Record(sample);
    if (histogram.non_empty_buckets() == 50) break;
  }
  flatbuffers::FlatBufferBuilder fbb(64 * 1024);
  for (auto _ : state) {
    fbb.Clear();
    benchmark::DoNotOptimize(histogram.Encode(&fbb));
  }
  state.counters["buckets"] =
      static_cast<double>(histogram.non_empty_buckets());
  state.counters["bytes"] = static_cast<double>(fbb.GetSize());
}
BENCHMARK(BM_HistogramEncode50Buckets);

void BM_StatisticEncode(benchmark::State& state) {
  RunningStatistic statistic;
  for (int64_t sample : Samples(1000)) statistic.Add(sample * 1e-9);
  flatbuffers::FlatBufferBuilder fbb(64 * 1024);
  for (auto _ : state) {
    fbb.Clear();
    benchmark::DoNotOptimize(statistic.Encode(&fbb));
  }
}
BENCHMARK(BM_StatisticEncode);

}  // namespace
}  // namespace aos::timing

BENCHMARK_MAIN();
