// Cross-process wakeup latency: a message sent by one process's ShmEventLoop
// until the watcher handler starts in another, side by side in the same run
// with rt-tests' sigwaittest -f (signals between forked processes) and
// ptsematest (mutexes between threads) at the same priority, interval and
// loop count. Prints one table; the goal is an average within 1.10x of
// sigwaittest -f.
//
//   bazel run //aos/events:shm_wakeup_benchmark -- --priority=80 --loops=10000
//
// Without realtime permission, use --priority=0 (the figures then measure
// the normal scheduler, for every tool alike).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/init.h"
#include "aos/util/str_cat.h"
#include "examples/ping_generated.h"

DEFINE_int32(loops, 10000, "Messages (and tool cycles) to measure.");
DEFINE_int32(interval_us, 1000, "Microseconds between sends.");
DEFINE_int32(priority, 0,
             "SCHED_FIFO priority of both sides (0 = normal scheduling).");
DEFINE_bool(run_tools, true, "Also run sigwaittest -f and ptsematest.");

namespace aos {
namespace {

using std::chrono::microseconds;

struct Figures {
  std::string what;
  double min_us = 0;
  double avg_us = 0;
  std::optional<double> p99_us;
  double max_us = 0;
  int64_t count = 0;
};

// What the receiving process reports back through a pipe.
struct ReceiverResult {
  int64_t count;
  double average_s;
  int64_t min_ns;
  int64_t p99_ns;
  int64_t max_ns;
};

constexpr std::string_view kConfig = R"({ "channels": [
  { "name": "/bench", "type": "aos.examples.Ping", "frequency": 100000,
    "max_size": 64, "channel_storage_duration": 100000000 } ] })";

[[noreturn]] void RunReceiver(const Configuration* config, int ready_fd,
                              int result_fd) {
  ShmEventLoop loop(config, "receiver");
  loop.SkipTimingReport();
  if (FLAGS_priority > 0) loop.SetRuntimeRealtimePriority(FLAGS_priority);
  timing::LatencyHistogram histogram;
  timing::RunningStatistic statistic;
  loop.MakeWatcher("/bench", [&](const examples::Ping& ping) {
    const auto latency =
        loop.monotonic_now() - loop.context().monotonic_event_time;
    histogram.Record(latency.count());
    statistic.Add(DurationInSeconds(latency));
    if (ping.value() >= FLAGS_loops) loop.Exit();
  });
  loop.OnRun([&]() {
    const char ready = 'R';
    CHECK_EQ(write(ready_fd, &ready, 1), 1);
  });
  loop.Run();
  const ReceiverResult result{static_cast<int64_t>(histogram.count()),
                              statistic.average(), histogram.min_ns(),
                              histogram.PercentileNs(99), histogram.max_ns()};
  CHECK_EQ(write(result_fd, &result, sizeof(result)),
           static_cast<ssize_t>(sizeof(result)));
  _exit(0);
}

Figures MeasureAos(const Configuration* config) {
  int ready[2];
  int results[2];
  PCHECK(pipe(ready) == 0);
  PCHECK(pipe(results) == 0);
  const pid_t child = fork();
  PCHECK(child >= 0);
  if (child == 0) RunReceiver(config, ready[1], results[1]);

  char byte;
  CHECK_EQ(read(ready[0], &byte, 1), 1) << "the receiver did not start";
  {
    ShmEventLoop loop(config, "sender");
    loop.SkipTimingReport();
    if (FLAGS_priority > 0) loop.SetRuntimeRealtimePriority(FLAGS_priority);
    Sender<examples::Ping> sender = loop.MakeSender<examples::Ping>("/bench");
    int value = 0;
    TimerHandler* timer = loop.AddTimer([&]() {
      auto builder = sender.MakeBuilder();
      examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
      ping.add_value(++value);
      builder.CheckOk(builder.Send(ping.Finish()));
      if (value >= FLAGS_loops) loop.Exit();
    });
    loop.OnRun([&]() {
      timer->Schedule(loop.monotonic_now() + microseconds(FLAGS_interval_us),
                      microseconds(FLAGS_interval_us));
    });
    loop.Run();
  }
  ReceiverResult result;
  CHECK_EQ(read(results[0], &result, sizeof(result)),
           static_cast<ssize_t>(sizeof(result)))
      << "the receiver did not report";
  int status;
  waitpid(child, &status, 0);
  return Figures{"aos ShmEventLoop (send -> watcher, processes)",
                 result.min_ns / 1e3,
                 result.average_s * 1e6,
                 result.p99_ns / 1e3,
                 result.max_ns / 1e3,
                 result.count};
}

// Runs an rt-tests tool and reads its "Min x, Cur y, Avg z, Max w" line.
std::optional<Figures> RunTool(const std::string& what,
                               const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  const std::regex line(
      R"(Min\s+(\d+),\s*Cur\s+(\d+),\s*Avg\s+(\d+),\s*Max\s+(\d+))");
  std::smatch match;
  if (status != 0 || !std::regex_search(output, match, line)) {
    fprintf(stderr, "%s failed or printed no summary:\n%s\n", command.c_str(),
            output.c_str());
    return std::nullopt;
  }
  return Figures{what,         std::stod(match[1]), std::stod(match[3]),
                 std::nullopt, std::stod(match[4]), FLAGS_loops};
}

int Main() {
  auto config = configuration::ReadConfigFromJson(kConfig);
  CHECK(config.ok()) << config.status().message();
  char base[] = "/dev/shm/aos_wakeup_benchmark_XXXXXX";
  PCHECK(mkdtemp(base) != nullptr);
  FLAGS_shm_base = base;

  std::vector<Figures> figures = {MeasureAos(&config->message())};
  std::filesystem::remove_all(base);
  if (FLAGS_run_tools) {
    const std::string common =
        StrCat(" -p ", FLAGS_priority, " -i ", FLAGS_interval_us, " -l ",
               FLAGS_loops, " -q");
    for (const auto& [what, command] :
         std::vector<std::pair<std::string, std::string>>{
             {"sigwaittest -f (signal, processes)", "sigwaittest -f" + common},
             {"ptsematest (mutex, threads)", "ptsematest" + common}}) {
      if (auto tool = RunTool(what, command)) figures.push_back(*tool);
    }
  }

  printf(
      "\nWakeup latency, %d messages every %d us, SCHED_FIFO priority %d "
      "(0 = normal), us:\n\n",
      FLAGS_loops, FLAGS_interval_us, FLAGS_priority);
  printf("%-48s %8s %8s %8s %8s %12s\n", "", "min", "avg", "p99", "max",
         "avg/sigwait");
  const Figures* sigwait = nullptr;
  for (const Figures& f : figures) {
    if (f.what.starts_with("sigwaittest")) sigwait = &f;
  }
  for (const Figures& f : figures) {
    const std::string p99 =
        f.p99_us.has_value()
            ? StrCat(static_cast<int64_t>(*f.p99_us * 10) / 10.0)
            : "-";
    std::string ratio = "-";
    if (sigwait != nullptr && sigwait->avg_us > 0) {
      char text[32];
      snprintf(text, sizeof(text), "%.2fx", f.avg_us / sigwait->avg_us);
      ratio = text;
    }
    printf("%-48s %8.1f %8.1f %8s %8.1f %12s\n", f.what.c_str(), f.min_us,
           f.avg_us, p99.c_str(), f.max_us, ratio.c_str());
  }
  printf(
      "\n(rt-tests print whole microseconds; aos figures come from its "
      "own histogram, p99 within 1.6%%.)\n");
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: shm_wakeup_benchmark [--priority=N] [--loops=N] "
      "[--interval_us=N]\nCross-process wakeup latency of ShmEventLoop beside "
      "sigwaittest -f and ptsematest, measured in the same run.");
  return aos::Main();
}
