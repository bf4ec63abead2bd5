// What building one timing report costs, for a loop with 50 measured
// entries (20 timers, 10 watchers, 10 fetchers, 10 senders) whose histograms
// hold realistic spreads of samples. Goal: <= 20 us per report.
//
//   bazel run -c opt //tools/bench:timing_report_benchmark
#include <random>

#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/events/timing_report.h"
#include "aos/util/str_cat.h"
#include "benchmark/benchmark.h"
#include "examples/ping_generated.h"

namespace aos {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

void BM_BuildReport50Entries(benchmark::State& state) {
  std::string json = R"({ "channels": [
      { "name": "/aos", "type": "aos.timing.Report", "max_size": 16384, "num_senders": 20 })";
  for (int i = 0; i < 10; ++i) {
    StrAppend(
        &json, R"(, { "name": "/c)", i,
        R"(", "type": "aos.examples.Ping", "frequency": 2000, "max_size": 64 })");
  }
  json += "] }";
  auto config = configuration::ReadConfigFromJson(json);
  CHECK(config.ok()) << config.status().message();
  SimulatedEventLoopFactory factory(&config->message());
  auto loop = factory.MakeEventLoop("benchmark");
  loop->SkipTimingReport();
  std::mt19937 random(971);
  std::lognormal_distribution<double> handler_us(1.0, 1.0);
  std::vector<Sender<examples::Ping>> senders;
  std::vector<Fetcher<examples::Ping>> fetchers;
  for (int i = 0; i < 10; ++i) {
    const std::string channel = StrCat("/c", i);
    senders.push_back(loop->MakeSender<examples::Ping>(channel));
    fetchers.push_back(loop->MakeFetcher<examples::Ping>(channel));
    loop->MakeWatcher(channel, [&](const examples::Ping&) {
      factory.AdvanceTime(
          nanoseconds(static_cast<int64_t>(handler_us(random) * 1000)));
    });
  }
  std::vector<TimerHandler*> timers;
  for (int i = 0; i < 20; ++i) {
    timers.push_back(loop->AddTimer([&, i]() {
      factory.AdvanceTime(
          nanoseconds(static_cast<int64_t>(handler_us(random) * 1000)));
      if (i < 10) {
        auto builder = senders[i].MakeBuilder();
        (void)builder.Send(builder.MakeBuilder<examples::Ping>().Finish());
        fetchers[i].Fetch();
      }
    }));
    timers.back()->set_name(StrCat("timer_", i));
  }
  loop->OnRun([&]() {
    for (size_t i = 0; i < timers.size(); ++i) {
      timers[i]->Schedule(loop->monotonic_now() + microseconds(i * 7),
                          microseconds(1000 + i));
    }
  });
  TimingReporter reporter(
      loop.get(),
      loop->MakeRawSender(loop->GetChannel<timing::Report>("/aos")));
  factory.RunFor(std::chrono::seconds(1));

  size_t size = 0;
  for (auto _ : state) {
    size = reporter.Build(loop->monotonic_now()).size();
    benchmark::DoNotOptimize(size);
  }
  state.counters["entries"] = 20 + 10 + 10 + 11;
  state.counters["report_bytes"] = static_cast<double>(size);
}
BENCHMARK(BM_BuildReport50Entries);

}  // namespace
}  // namespace aos

BENCHMARK_MAIN();
