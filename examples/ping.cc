// ping: the first half of the reference benchmark, PingApplication
// (ping_application.h) on shared memory: a timer named "ping" sends
// aos.examples.Ping on /test every --sleep_ms; a watcher on Pong checks each
// reply and measures the round trip. Its timing reports (on /aos) show how
// late its timer and watcher run; aos_timing_report_streamer prints them.
#include <iostream>

#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "examples/ping_application.h"
#include "examples/ping_generated.h"
#include "examples/pingpong_flags.h"
#include "examples/pong_generated.h"

DEFINE_int32(sleep_ms, 10, "Milliseconds between pings.");
DEFINE_int32(sleep_us, 0, "Microseconds between pings; overrides --sleep_ms.");
DEFINE_int64(count, 0,
             "Send this many pings, then exit with the summary once the last "
             "one is answered (or a second later); 0: until Ctrl-C.");
DEFINE_double(duration, 0,
              "Exit with the summary after this many seconds; 0: until "
              "Ctrl-C.");
DEFINE_bool(phased_loop, false,
            "Send from a phased loop named \"ping\" instead of a timer.");
DEFINE_string(summary_json, "",
              "On exit, also write the summary line's figures to this file "
              "as JSON (docs/pingpong.md); the line still goes to stdout.");

namespace aos::examples {
namespace {

// Refuses a rate the channel's queue cannot hold: senders would fail with
// kMessagesSentTooFast on every message past frequency * storage duration.
void CheckRate(const Channel& channel, std::chrono::microseconds period,
               std::string_view flag) {
  const double per_second = 1e6 / static_cast<double>(period.count());
  if (per_second <= channel.frequency()) return;
  ExitForUserError(StrCat(
      flag, " sends ", per_second, " messages a second on ",
      channel.name()->string_view(), " ", channel.type()->string_view(),
      ", more than its \"frequency\" ", channel.frequency(),
      " in the config: raise that field (examples/pingpong.json) or sleep "
      "longer"));
}

int Main() {
  for (const auto& [flag, value] :
       {std::pair{"--sleep_us", static_cast<double>(FLAGS_sleep_us)},
        std::pair{"--count", static_cast<double>(FLAGS_count)},
        std::pair{"--duration", FLAGS_duration}}) {
    ExitOnFlagError(CheckNotNegative(flag, value));
  }
  if (FLAGS_sleep_us == 0) {
    ExitOnFlagError(
        CheckAtLeast("--sleep_ms", FLAGS_sleep_ms, 1,
                     " is not a period: give 1 or more (or --sleep_us)"));
  }
  const std::chrono::microseconds period(
      FLAGS_sleep_us > 0 ? FLAGS_sleep_us : int64_t{FLAGS_sleep_ms} * 1000);
  const std::string_view period_flag =
      FLAGS_sleep_us > 0 ? "--sleep_us" : "--sleep_ms";
  auto config = ReadPingPongConfig();
  // Opened before any ping, so that a path it cannot write fails first.
  FlagOutputFile summary_json("--summary_json", FLAGS_summary_json);

  // As AOS names a loop: --application_name, else the program's role.
  ShmEventLoop loop(
      &config.message(),
      FLAGS_application_name.empty() ? "ping" : FLAGS_application_name,
      ReadPingPongNode(config.message()));
  ApplyRealtimeFlags(&loop);
  CheckRate(*loop.FindChannel("/test", Ping::GetFullyQualifiedName(),
                              configuration::ChannelAccess::kSend),
            period, period_flag);
  CheckRate(*loop.FindChannel("/test", Pong::GetFullyQualifiedName()), period,
            period_flag);
  PingApplication ping(&loop, {.period = period,
                               .count = FLAGS_count,
                               .duration = std::chrono::nanoseconds(
                                   static_cast<int64_t>(FLAGS_duration * 1e9)),
                               .phased_loop = FLAGS_phased_loop,
                               .where = StrCat("--shm_base=", FLAGS_shm_base)});
  loop.Run();
  std::cout << ping.SummaryLine();
  if (summary_json.enabled()) summary_json.WriteAndClose(ping.SummaryJson());
  return 0;
}

}  // namespace
}  // namespace aos::examples

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: ping [--config=FILE] [--node=NAME] [--sleep_ms=N] [--count=N] "
      "[--duration=S] [--priority=N]\n"
      "            [--summary_json=FILE]\n"
      "Sends /test aos.examples.Ping every --sleep_ms and measures\n"
      "pong's answers; stops after --count pings, --duration, Ctrl-C or\n"
      "SIGTERM, and prints a summary. --config defaults to\n"
      "pingpong_config.json (examples/pingpong.json). docs/pingpong.md.");
  aos::RefuseArguments(argc, argv);
  return aos::examples::Main();
}
