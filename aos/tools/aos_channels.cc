// aos_channels: every channel this node can read, with its live rate, the
// messages seen, the age of the last one, its size and who sends it (like
// `ros2 topic list -v` and `ros2 topic hz`). The work is ChannelRates'
// (channel_rates.h).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>

#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/node_flag.h"
#include "aos/tools/channel_rates.h"
#include "aos/tools/terminal.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"

DEFINE_double(duration, 0,
              "Stop after this many seconds (0: at Ctrl-C or SIGTERM; with "
              "--once, 1).");
DEFINE_bool(once, false,
            "Print only the last table, when it stops, instead of one every "
            "--interval_s.");
DEFINE_double(interval_s, 1, "Seconds between tables (and polls).");

namespace aos {
namespace {

int Main(int argc, char** argv) {
  RefuseArguments(argc, argv);
  for (const auto& [flag, value] :
       {std::pair{"--duration", FLAGS_duration},
        std::pair{"--interval_s", FLAGS_interval_s}}) {
    ExitOnFlagError(CheckInRange(flag, value, 0.0,
                                 std::numeric_limits<double>::max(),
                                 " is not a time: give 0 or more seconds"));
  }
  if (FLAGS_interval_s == 0) {
    ExitOnFlagError(FlagError("--interval_s", FLAGS_interval_s,
                              ": give more than 0 seconds"));
  }
  const double duration =
      FLAGS_once && FLAGS_duration == 0 ? 1.0 : FLAGS_duration;
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) ExitForUserError(StrCat(config.status().message()));
  auto node = ReadNodeFlag(config->message());
  if (!node.ok()) ExitForUserError(StrCat(node.status().message()));

  ShmEventLoop loop(&config->message(), "aos_channels", *node);
  loop.SkipTimingReport();
  ChannelRates rates(&loop);
  auto seconds = [](double s) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(s));
  };
  // On a terminal each table replaces the last; elsewhere they follow one
  // another, a blank line apart, without ANSI codes.
  auto print = [&]() {
    const Terminal terminal = QueryTerminal(STDOUT_FILENO);
    std::cout << (terminal.is_tty && !FLAGS_once ? kClearScreen : "")
              << rates.Render(loop.monotonic_now())
              << (terminal.is_tty ? "" : "\n") << std::flush;
  };
  // One timer polls every --interval_s and at the end of --duration.
  std::optional<monotonic_clock::time_point> end;
  bool ended = false;
  TimerHandler* tick = nullptr;
  tick = loop.AddTimer([&]() {
    rates.Poll();
    const monotonic_clock::time_point now = loop.monotonic_now();
    if (end.has_value() && now >= *end) {
      print();
      ended = true;
      loop.Exit();
      return;
    }
    if (!FLAGS_once) print();
    monotonic_clock::time_point next = now + seconds(FLAGS_interval_s);
    if (end.has_value()) next = std::min(next, *end);
    tick->Schedule(next);
  });
  loop.OnRun([&]() {
    const monotonic_clock::time_point now = loop.monotonic_now();
    if (duration > 0) end = now + seconds(duration);
    monotonic_clock::time_point next = now + seconds(FLAGS_interval_s);
    if (end.has_value()) next = std::min(next, *end);
    tick->Schedule(next);
  });
  loop.Run();
  if (!ended) {
    // Ctrl-C: what came since the last table.
    rates.Poll();
    print();
  }
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_channels [--config=FILE] [--node=NAME] [--duration=S] "
      "[--once]\n"
      "Every channel this node can read, with how many messages were sent\n"
      "on it while aos_channels watched and at what rate, the total its\n"
      "queue has had, how long ago the last one was sent, its size and the\n"
      "applications whose timing reports say they send on it. A table\n"
      "every --interval_s (redrawn on a terminal) until Ctrl-C or\n"
      "--duration; --once prints only the last one (after 1 s by default).\n"
      "It only polls: the system it watches is not woken for it. --config\n"
      "defaults to the framework's aos/aos.json (/aos only). See\n"
      "docs/aos_channels.md.");
  return aos::Main(argc, argv);
}
