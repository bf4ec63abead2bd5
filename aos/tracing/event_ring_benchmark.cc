// What the flight recorder costs a loop per event, next to one clock read.
//
//   event_ring_benchmark [--benchmark_filter=...]
//
// BM_RecordEvent writes one event (the send hook: a plain Write);
// BM_RecordCallStart the start of a callback with its threshold check;
// BM_SteadyClockNow is the baseline: every callback reads the clock at least
// twice anyway. docs/tracing.md has the figures.

#include <chrono>
#include <cstdint>

#include "aos/tracing/event_ring.h"
#include "benchmark/benchmark.h"

namespace aos::tracing {
namespace {

RingIdentity Identity() {
  RingIdentity identity;
  identity.pid = 1;
  identity.boot_id = "";
  identity.node = "bench";
  identity.application = "bench";
  return identity;
}

void BM_SteadyClockNow(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::chrono::steady_clock::now());
  }
}
BENCHMARK(BM_SteadyClockNow);

void BM_RecordEvent(benchmark::State& state) {
  std::unique_ptr<EventRing> ring = EventRing::InMemory(8192, Identity());
  uint32_t queue_index = 0;
  for (auto _ : state) {
    ring->Send(3, queue_index, static_cast<int64_t>(queue_index) * 1000);
    ++queue_index;
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RecordEvent);

void BM_RecordCallStart(benchmark::State& state) {
  std::unique_ptr<EventRing> ring = EventRing::InMemory(8192, Identity());
  TriggerThresholds thresholds;
  thresholds.wakeup_latency_ns = 1'000'000;
  ring->set_thresholds(thresholds);
  int64_t now = 0;
  for (auto _ : state) {
    ring->CallStart(EventKind::kTimerStart, 2, now + 5000, now);
    now += 1000;
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_RecordCallStart);

}  // namespace
}  // namespace aos::tracing

BENCHMARK_MAIN();
