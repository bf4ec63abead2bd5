// ping: the first half of the reference benchmark. A timer named "ping"
// sends aos.examples.Ping on /test every --sleep_ms; a watcher on Pong checks
// each reply and measures the round trip. Its timing reports (on /aos) show
// how late its timer and watcher run; aos_timing_report_streamer prints them.
#include <array>
#include <cmath>
#include <iostream>

#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/init.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/json_writer.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
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
    if (value < 0 || std::isnan(value)) {
      ExitForUserError(
          StrCat(flag, "=", value, " is negative: give 0 or more"));
    }
  }
  if (FLAGS_sleep_us == 0 && FLAGS_sleep_ms <= 0) {
    ExitForUserError(
        StrCat("--sleep_ms=", FLAGS_sleep_ms,
               " is not a period: give 1 or more (or --sleep_us)"));
  }
  const std::chrono::microseconds period(
      FLAGS_sleep_us > 0 ? FLAGS_sleep_us : int64_t{FLAGS_sleep_ms} * 1000);
  const std::string_view period_flag =
      FLAGS_sleep_us > 0 ? "--sleep_us" : "--sleep_ms";
  auto config = ReadPingPongConfig();
  // Opened before any ping, so that a path it cannot write fails first.
  FlagOutputFile summary_json("--summary_json", FLAGS_summary_json);

  ShmEventLoop loop(&config.message(), "ping",
                    ReadPingPongNode(config.message()));
  loop.SetVersionString("ping_version");
  ApplyRealtimeFlags(&loop);
  CheckRate(*loop.FindChannel("/test", Ping::GetFullyQualifiedName(),
                              configuration::ChannelAccess::kSend),
            period, period_flag);
  CheckRate(*loop.FindChannel("/test", Pong::GetFullyQualifiedName()), period,
            period_flag);

  Sender<Ping> sender = loop.MakeSender<Ping>("/test");
  int value = 0;
  int64_t send_errors = 0;
  // Path latency's truth check (docs/timing_reports.md): each Pong's origin
  // must be exactly the timer call that sent the Ping it answers. The time
  // each ping was scheduled for, by value (a ring: never allocates).
  std::array<int64_t, 4096> scheduled_at{};
  const uint32_t* ping_origin_id = nullptr;
  int64_t origins_checked = 0;
  int64_t origins_wrong = 0;
  TimerHandler* give_up = loop.AddTimer([&]() { loop.Exit(); });
  give_up->set_name("stop");
  auto send = [&]() {
    if (FLAGS_count > 0 && value >= FLAGS_count) return;
    auto builder = sender.MakeBuilder();
    Ping::Builder ping = builder.MakeBuilder<Ping>();
    ping.add_value(++value);
    ping.add_send_time(loop.monotonic_now().time_since_epoch().count());
    scheduled_at[static_cast<size_t>(value) % scheduled_at.size()] =
        loop.context().monotonic_event_time.time_since_epoch().count();
    // Counted, not logged: logging allocates, and a realtime handler must
    // not (--die_on_malloc). The timing reports count them too.
    if (builder.Send(ping.Finish()) != RawSender::Error::kOk) ++send_errors;
    // The last one: wait a second at most for its answer.
    if (value == FLAGS_count) {
      give_up->Schedule(loop.monotonic_now() + std::chrono::seconds(1));
    }
  };

  // Round trip: from the ping's send_time to the pong's arrival.
  timing::RunningStatistic round_trip;
  timing::LatencyHistogram round_trip_histogram;
  int64_t mismatches = 0;
  loop.MakeWatcher("/test", [&](const Pong& pong) {
    if (pong.value() != value) ++mismatches;  // It answers an older ping.
    if (ping_origin_id != nullptr && pong.value() > 0 &&
        value - pong.value() < static_cast<int>(scheduled_at.size())) {
      ++origins_checked;
      bool right = false;
      // Exact on one node; after crossing to another node and back, within
      // the uncertainty of the two translations.
      const int64_t scheduled =
          scheduled_at[static_cast<size_t>(pong.value()) % scheduled_at.size()];
      for (const PathOrigin& origin : loop.context().origins) {
        right |= origin.id == *ping_origin_id && origin.hops == 2 &&
                 std::abs(origin.monotonic_time_ns - scheduled) <=
                     int64_t{origin.uncertainty_us} * 1000;
      }
      if (!right) ++origins_wrong;
    }
    const int64_t ns = loop.monotonic_now().time_since_epoch().count() -
                       pong.initial_send_time();
    round_trip.Add(ns * 1e-9);
    round_trip_histogram.Record(ns);
    if (FLAGS_count > 0 && pong.value() == FLAGS_count) loop.Exit();
  });

  if (FLAGS_phased_loop) {
    PhasedLoopHandler* phased =
        loop.AddPhasedLoop([&](int) { send(); }, period);
    phased->set_name("ping");
    ping_origin_id = &phased->timing().origin_id;
  } else {
    TimerHandler* timer = loop.AddTimer(send);
    timer->set_name("ping");
    ping_origin_id = &timer->timing().origin_id;
    // `timer` by value: this block ends before the loop runs.
    loop.OnRun([&loop, timer, period]() {
      timer->Schedule(loop.monotonic_now(), period);
    });
  }
  if (FLAGS_duration > 0) {
    loop.OnRun([&]() {
      give_up->Schedule(
          loop.monotonic_now() +
          std::chrono::nanoseconds(static_cast<int64_t>(FLAGS_duration * 1e9)));
    });
  }
  loop.Run();

  std::cout << "ping: " << value << " pings, " << send_errors << " not sent, "
            << round_trip.count() << " pongs, " << mismatches
            << " out of order; round trip avg " << round_trip.average() * 1e6
            << " us, p50 " << round_trip_histogram.PercentileNs(50) / 1e3
            << " us, p99 " << round_trip_histogram.PercentileNs(99) / 1e3
            << " us, max " << round_trip.max() * 1e6 << " us; origins "
            << origins_checked << " checked, " << origins_wrong << " wrong\n";
  if (summary_json.enabled()) {
    // Without pongs there is no round trip: null, not a made-up number.
    const bool answered = round_trip.count() > 0;
    auto us = [&](double value) { return answered ? value : NAN; };
    JsonWriter json(2);
    json.BeginObject();
    json.Key("pings").Number(value);
    json.Key("not_sent").Number(send_errors);
    json.Key("pongs").Number(round_trip.count());
    json.Key("out_of_order").Number(mismatches);
    json.Key("origins_checked").Number(origins_checked);
    json.Key("origins_wrong").Number(origins_wrong);
    json.Key("round_trip_us").BeginObject();
    json.Key("avg").Number(us(round_trip.average() * 1e6));
    json.Key("p50").Number(us(round_trip_histogram.PercentileNs(50) / 1e3));
    json.Key("p99").Number(us(round_trip_histogram.PercentileNs(99) / 1e3));
    json.Key("max").Number(us(round_trip.max() * 1e6));
    json.EndObject();
    json.EndObject();
    summary_json.WriteAndClose(json.Text());
  }
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
