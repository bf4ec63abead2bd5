// ping: the first half of the reference benchmark. A timer named "ping"
// sends aos.examples.Ping on /test every --sleep_ms; a watcher on Pong checks
// each reply and measures the round trip. Its timing reports (on /aos) show
// how late its timer and watcher run; aos_timing_report_streamer prints them.
#include <cmath>
#include <iostream>

#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/init.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/json_writer.h"
#include "examples/ping_generated.h"
#include "examples/pingpong_flags.h"
#include "examples/pong_generated.h"

DEFINE_int32(sleep_ms, 10, "Milliseconds between pings.");
DEFINE_int32(sleep_us, 0, "Microseconds between pings; overrides --sleep_ms.");
DEFINE_bool(phased_loop, false,
            "Send from a phased loop named \"ping\" instead of a timer.");
DEFINE_string(summary_json, "",
              "On exit, also write the summary line's figures to this file "
              "as JSON (docs/pingpong.md); the line still goes to stdout.");

namespace aos::examples {
namespace {

int Main() {
  auto config = ReadPingPongConfig("ping");
  if (!config.has_value()) return 1;
  const std::chrono::microseconds period(
      FLAGS_sleep_us > 0 ? FLAGS_sleep_us : int64_t{FLAGS_sleep_ms} * 1000);
  if (period.count() <= 0) {
    std::cerr << "ping: --sleep_ms/--sleep_us must be positive\n";
    return 1;
  }

  // Opened first, so that a path it cannot write fails before any ping.
  FlagOutputFile summary_json("ping", "summary_json", FLAGS_summary_json);
  if (!summary_json.ok()) return 1;

  ShmEventLoop loop(&config->message(), "ping");
  loop.SetVersionString("ping_version");
  if (!ApplyRealtimeFlags("ping", &loop)) return 1;

  Sender<Ping> sender = loop.MakeSender<Ping>("/test");
  int value = 0;
  auto send = [&]() {
    auto builder = sender.MakeBuilder();
    Ping::Builder ping = builder.MakeBuilder<Ping>();
    ping.add_value(++value);
    ping.add_send_time(loop.monotonic_now().time_since_epoch().count());
    const RawSender::Error error = builder.Send(ping.Finish());
    if (error != RawSender::Error::kOk) {
      LOG_EVERY_N(WARNING, 100) << "sending ping " << value << ": " << error;
    }
  };

  // Round trip: from the ping's send_time to the pong's arrival.
  timing::RunningStatistic round_trip;
  timing::LatencyHistogram round_trip_histogram;
  int64_t mismatches = 0;
  loop.MakeWatcher("/test", [&](const Pong& pong) {
    if (pong.value() != value) {
      ++mismatches;
      LOG_EVERY_N(WARNING, 100)
          << "pong " << pong.value() << " answers an old ping (latest " << value
          << ")";
    }
    const int64_t ns = loop.monotonic_now().time_since_epoch().count() -
                       pong.initial_send_time();
    round_trip.Add(ns * 1e-9);
    round_trip_histogram.Record(ns);
  });

  if (FLAGS_phased_loop) {
    loop.AddPhasedLoop([&](int) { send(); }, period)->set_name("ping");
  } else {
    TimerHandler* timer = loop.AddTimer(send);
    timer->set_name("ping");
    // `timer` by value: this block ends before the loop runs.
    loop.OnRun([&loop, timer, period]() {
      timer->Schedule(loop.monotonic_now(), period);
    });
  }
  loop.Run();

  std::cout << "ping: " << value << " pings, " << round_trip.count()
            << " pongs, " << mismatches << " out of order; round trip avg "
            << round_trip.average() * 1e6 << " us, p50 "
            << round_trip_histogram.PercentileNs(50) / 1e3 << " us, p99 "
            << round_trip_histogram.PercentileNs(99) / 1e3 << " us, max "
            << round_trip.max() * 1e6 << " us\n";
  if (summary_json.enabled()) {
    // Without pongs there is no round trip: null, not a made-up number.
    const bool answered = round_trip.count() > 0;
    auto us = [&](double value) { return answered ? value : NAN; };
    JsonWriter json(2);
    json.BeginObject();
    json.Key("pings").Number(value);
    json.Key("pongs").Number(round_trip.count());
    json.Key("out_of_order").Number(mismatches);
    json.Key("round_trip_us").BeginObject();
    json.Key("avg").Number(us(round_trip.average() * 1e6));
    json.Key("p50").Number(us(round_trip_histogram.PercentileNs(50) / 1e3));
    json.Key("p99").Number(us(round_trip_histogram.PercentileNs(99) / 1e3));
    json.Key("max").Number(us(round_trip.max() * 1e6));
    json.EndObject();
    json.EndObject();
    if (!summary_json.WriteAndClose(json.Text())) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace aos::examples

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: ping [--config=FILE] [--sleep_ms=N] [--priority=N]\n"
      "            [--summary_json=FILE]\n"
      "Sends /test aos.examples.Ping every --sleep_ms and measures\n"
      "pong's answers; stop with Ctrl-C or SIGTERM. --config defaults to\n"
      "pingpong_config.json (examples/pingpong.json). docs/pingpong.md.");
  return aos::examples::Main();
}
