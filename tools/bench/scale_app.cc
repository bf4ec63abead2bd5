// scale_app: a load for the scale benchmarks of tools/bench/latency.sh.
// --timers=N runs N timers every --interval_us, phases spread over the
// interval; --watch watches /test aos.examples.Ping. Its own timing reports
// carry the figures; run it beside aos_timing_report_streamer.
#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "examples/ping_generated.h"

DEFINE_string(name, "scale_app", "The application name in timing reports.");
DEFINE_int32(timers, 0, "Timers to run.");
DEFINE_int32(interval_us, 1000, "Period of each timer.");
DEFINE_bool(watch, false, "Watch /test aos.examples.Ping.");
DEFINE_int32(priority, 0, "SCHED_FIFO priority (0 = normal).");

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: scale_app [--timers=N] [--watch] [--name=NAME]\n"
                  "Load for tools/bench/latency.sh's scale runs.");
  aos::ExitOnFlagError(aos::CheckNotNegative("--timers", FLAGS_timers));
  aos::ExitOnFlagError(
      aos::CheckInRange("--interval_us", FLAGS_interval_us, 1, 1000000));
  aos::ExitOnFlagError(aos::CheckInRange("--priority", FLAGS_priority, 0, 99));
  auto config = aos::ReadConfigFlag("examples/pingpong_config.json");
  if (!config.ok()) {
    std::cerr << "scale_app: " << config.status().message() << "\n";
    return 1;
  }
  aos::ShmEventLoop loop(&config->message(), FLAGS_name);
  loop.SetRuntimeRealtimePriority(FLAGS_priority);
  const std::chrono::microseconds interval(FLAGS_interval_us);
  std::vector<aos::TimerHandler*> timers;
  for (int i = 0; i < FLAGS_timers; ++i) {
    timers.push_back(loop.AddTimer([]() {}));
    timers.back()->set_name(aos::StrCat("timer_", i));
  }
  loop.OnRun([&]() {
    for (size_t i = 0; i < timers.size(); ++i) {
      timers[i]->Schedule(loop.monotonic_now() + interval * i / timers.size(),
                          interval);
    }
  });
  if (FLAGS_watch) loop.MakeWatcher("/test", [](const aos::examples::Ping&) {});
  loop.Run();
  return 0;
}
