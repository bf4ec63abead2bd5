// What a tracepoint call site costs the event loop when nothing traces it:
//
//   trace_points_benchmark
//
// BM_NoCall is the baseline: the loop the other benchmarks run, with the
// same work (a counter kept in memory) and no call. BM_Disabled* call
// TraceCallbackStart/End and TraceSend with no provider loaded, as every
// untraced process does: a load and a not-taken branch each. Run with
// LD_PRELOAD=libaos_lttng_tp.so (and no session) to see the cost of a
// loaded provider whose events no session enables: the same branch.

#include <cstdint>

#include "aos/tracing/lttng/trace_points.h"
#include "benchmark/benchmark.h"

namespace aos::tracing::lttng {
namespace {

int64_t timing_entry = 0;

// The loop every benchmark runs: a counter kept in memory, then `call`
// with it.
template <typename Call>
void Loop(benchmark::State& state, Call call) {
  int64_t time = 0;
  for (auto _ : state) {
    ++time;
    benchmark::DoNotOptimize(time);
    call(time);
  }
}

void BM_NoCall(benchmark::State& state) {
  Loop(state, [](int64_t) {});
}
BENCHMARK(BM_NoCall);

void BM_DisabledCallbackStart(benchmark::State& state) {
  Loop(state, [](int64_t time) { TraceCallbackStart(&timing_entry, time); });
}
BENCHMARK(BM_DisabledCallbackStart);

// What a callback pays in all: start and end.
void BM_DisabledStartAndEnd(benchmark::State& state) {
  Loop(state, [](int64_t time) {
    TraceCallbackStart(&timing_entry, time);
    TraceCallbackEnd(&timing_entry);
  });
}
BENCHMARK(BM_DisabledStartAndEnd);

void BM_DisabledSend(benchmark::State& state) {
  Loop(state, [](int64_t time) {
    TraceSend(&timing_entry, "/test", static_cast<uint32_t>(time), 32, time);
  });
}
BENCHMARK(BM_DisabledSend);

}  // namespace
}  // namespace aos::tracing::lttng

BENCHMARK_MAIN();
