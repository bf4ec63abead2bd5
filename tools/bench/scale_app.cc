// scale_app: a load for the scale section of tools/bench/latency.sh.
// --timers=N runs N timers every --interval_us, their due times spread
// evenly over the interval (--phases=spread: timer i at i/N of it) or all
// on the same instant (--phases=aligned); --watch watches /test
// aos.examples.Ping. Its own timing reports carry the figures; run it beside
// aos_timing_report_streamer.
#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "examples/ping_generated.h"

DEFINE_string(name, "scale_app", "The application name in timing reports.");
DEFINE_int32(timers, 0, "Timers to run.");
DEFINE_int32(interval_us, 1000, "Period of each timer.");
DEFINE_string(phases, "spread",
              "spread: timer i is due at i/N of the interval; aligned: every "
              "timer is due at the same instant.");
DEFINE_bool(watch, false, "Watch /test aos.examples.Ping.");
DEFINE_int32(priority, 0, "SCHED_FIFO priority (0 = normal).");

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: scale_app [--timers=N] [--interval_us=US] "
                  "[--phases=spread|aligned] [--watch] [--name=NAME]\n"
                  "Load for tools/bench/latency.sh's scale section.");
  aos::ExitOnFlagError(aos::CheckNotNegative("--timers", FLAGS_timers));
  aos::ExitOnFlagError(
      aos::CheckInRange("--interval_us", FLAGS_interval_us, 1, 1000000));
  aos::ExitOnFlagError(aos::CheckInRange("--priority", FLAGS_priority, 0, 99));
  if (FLAGS_phases != "spread" && FLAGS_phases != "aligned") {
    std::cerr << "scale_app: --phases=" << FLAGS_phases
              << " is not a phase layout: give spread or aligned\n";
    return 1;
  }
  auto config = aos::ReadConfigFlag("examples/pingpong_config.json");
  if (!config.ok()) {
    std::cerr << "scale_app: " << config.status().message() << "\n";
    return 1;
  }
  aos::ShmEventLoop loop(&config->message(), FLAGS_name);
  loop.SetRuntimeRealtimePriority(FLAGS_priority);
  const std::chrono::microseconds interval(FLAGS_interval_us);
  const bool spread = FLAGS_phases == "spread";
  std::vector<aos::TimerHandler*> timers;
  for (int i = 0; i < FLAGS_timers; ++i) {
    timers.push_back(loop.AddTimer([]() {}));
    timers.back()->set_name(aos::StrCat("timer_", i));
  }
  loop.OnRun([&]() {
    // One start for all, so that aligned timers are due at the same instant.
    const aos::monotonic_clock::time_point start =
        loop.monotonic_now() + interval;
    const int64_t count = static_cast<int64_t>(timers.size());
    for (int64_t i = 0; i < count; ++i) {
      const aos::monotonic_clock::duration phase =
          spread ? std::chrono::duration_cast<aos::monotonic_clock::duration>(
                       interval * i) /
                       count
                 : aos::monotonic_clock::duration(0);
      timers[i]->Schedule(start + phase, interval);
    }
  });
  if (FLAGS_watch) loop.MakeWatcher("/test", [](const aos::examples::Ping&) {});
  loop.Run();
  return 0;
}
