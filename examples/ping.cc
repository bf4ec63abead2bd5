// ping: the first half of the reference benchmark. A timer named "ping"
// sends aos.examples.Ping on /test every --sleep_ms; a watcher on Pong checks
// each reply and measures the round trip. Its timing reports (on /aos) show
// how late its timer and watcher run; aos_timing_report_streamer prints them.
#include <cmath>
#include <iostream>
#include <sstream>

#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/json_writer.h"
#include "aos/util/stderr_line.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "examples/ping_answers.h"
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

// How long ping waits for its first pong before saying where it looks.
constexpr std::chrono::seconds kNoPongWarning(2);

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

  ShmEventLoop loop(&config.message(), "ping",
                    ReadPingPongNode(config.message()));
  ApplyRealtimeFlags(&loop);
  CheckRate(*loop.FindChannel("/test", Ping::GetFullyQualifiedName(),
                              configuration::ChannelAccess::kSend),
            period, period_flag);
  CheckRate(*loop.FindChannel("/test", Pong::GetFullyQualifiedName()), period,
            period_flag);
  const bool multinode = loop.node() != nullptr;

  Sender<Ping> sender = loop.MakeSender<Ping>("/test");
  int64_t send_errors = 0;
  PingAnswers answers;
  // The wakeup latency of the timer (or phased loop) sending the pings, as
  // its timing reports measure it, over the whole run.
  timing::LatencyHistogram wakeup_latency;
  monotonic_clock::time_point started = monotonic_clock::min_time;
  bool said_no_pong = false;
  // Path latency's truth check (docs/timing_reports.md): each Pong's origin
  // must be exactly the timer call that sent the Ping it answers.
  const uint32_t* ping_origin_id = nullptr;
  int64_t origins_checked = 0;
  int64_t origins_wrong = 0;
  // Only when asked to stop by itself: a timer that never runs would be a
  // row of dashes in every timing report.
  TimerHandler* stop = nullptr;
  if (FLAGS_count > 0 || FLAGS_duration > 0) {
    stop = loop.AddTimer([&]() { loop.Exit(); });
    stop->set_name("stop: --count/--duration");
  }
  auto send = [&]() {
    const monotonic_clock::time_point now = loop.monotonic_now();
    wakeup_latency.Record((now - loop.context().monotonic_event_time).count());
    if (!said_no_pong && answers.answers() == 0 &&
        started != monotonic_clock::min_time &&
        now - started >= kNoPongWarning) {
      said_no_pong = true;
      WriteStderrLine(
          "ping: no pong in %d s: is pong running on --shm_base=%s%s?",
          static_cast<int>(kNoPongWarning.count()), FLAGS_shm_base.c_str(),
          multinode ? " (and both message bridges)" : "");
    }
    if (FLAGS_count > 0 && answers.sent() >= FLAGS_count) return;
    auto builder = sender.MakeBuilder();
    Ping::Builder ping = builder.MakeBuilder<Ping>();
    const int value = answers.sent() + 1;
    ping.add_value(value);
    ping.add_send_time(now.time_since_epoch().count());
    answers.Sent(
        value, now.time_since_epoch().count(),
        loop.context().monotonic_event_time.time_since_epoch().count());
    // Counted, not logged: logging allocates, and a realtime handler must
    // not (--die_on_malloc). The timing reports count them too.
    if (builder.Send(ping.Finish()) != RawSender::Error::kOk) ++send_errors;
    // The last one: wait a second at most for its answer.
    if (value == FLAGS_count) {
      stop->Schedule(loop.monotonic_now() + std::chrono::seconds(1));
    }
  };

  // Round trip: from the ping's send_time to the pong's arrival.
  timing::RunningStatistic round_trip;
  timing::LatencyHistogram round_trip_histogram;
  loop.MakeWatcher("/test", [&](const Pong& pong) {
    switch (answers.Take(pong.value(), pong.initial_send_time())) {
      case PingAnswers::Verdict::kAnswer:
      case PingAnswers::Verdict::kLateAnswer:
        break;
      case PingAnswers::Verdict::kForeign:
        if (answers.foreign() == 1) {
          WriteStderrLine(
              "ping: a pong answered a ping this ping did not send: another "
              "ping runs on --shm_base=%s; its pongs are not counted",
              FLAGS_shm_base.c_str());
        }
        return;
      case PingAnswers::Verdict::kRepeat:
        if (answers.repeats() == 1) {
          WriteStderrLine(
              "ping: ping %d was answered twice: more than one pong runs on "
              "--shm_base=%s; repeated answers are not counted",
              pong.value(), FLAGS_shm_base.c_str());
        }
        return;
    }
    const int64_t scheduled = answers.ScheduledNs(pong.value());
    if (ping_origin_id != nullptr && scheduled >= 0) {
      ++origins_checked;
      bool right = false;
      // Exact on one node; after crossing to another node and back, within
      // the uncertainty of the two translations.
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
  loop.OnRun([&]() {
    started = loop.monotonic_now();
    if (FLAGS_duration > 0) {
      stop->Schedule(
          loop.monotonic_now() +
          std::chrono::nanoseconds(static_cast<int64_t>(FLAGS_duration * 1e9)));
    }
  });
  loop.Run();

  const bool answered = round_trip.count() > 0;
  const std::string_view timer_kind =
      FLAGS_phased_loop ? "phased loop" : "timer";
  std::ostringstream line;
  line << "ping: " << answers.sent() << " pings, " << send_errors
       << " not sent, " << round_trip.count() << " pongs";
  if (answered) {
    line << ", " << answers.late()
         << " answered late (after the next ping); round trip avg "
         << round_trip.average() * 1e6 << " us, p50 "
         << round_trip_histogram.PercentileNs(50) / 1e3 << " us, p99 "
         << round_trip_histogram.PercentileNs(99) / 1e3 << " us, max "
         << round_trip.max() * 1e6 << " us";
  } else {
    line << ": is pong running on --shm_base=" << FLAGS_shm_base
         << (multinode ? " (and both message bridges)" : "") << "?";
  }
  if (wakeup_latency.count() > 0) {
    line << "; " << timer_kind << " wakeup p50 "
         << wakeup_latency.PercentileNs(50) / 1e3 << " us, p99 "
         << wakeup_latency.PercentileNs(99) / 1e3 << " us";
  }
  if (answers.foreign() > 0) {
    line << "; " << answers.foreign()
         << " pongs of another ping on this --shm_base, not counted";
  }
  if (answers.repeats() > 0) {
    line << "; " << answers.repeats()
         << " repeated answers (more than one pong), not counted";
  }
  line << "; origins " << origins_checked << " checked, " << origins_wrong
       << " wrong\n";
  std::cout << line.str();
  if (summary_json.enabled()) {
    // Without a figure there is none: null, not a made-up number.
    auto us = [](bool known, double value) { return known ? value : NAN; };
    const bool woke = wakeup_latency.count() > 0;
    JsonWriter json(2);
    json.BeginObject();
    json.Key("pings").Number(answers.sent());
    json.Key("not_sent").Number(send_errors);
    json.Key("pongs").Number(round_trip.count());
    json.Key("answered_late").Number(answers.late());
    json.Key("foreign_pongs").Number(answers.foreign());
    json.Key("repeated_pongs").Number(answers.repeats());
    json.Key("origins_checked").Number(origins_checked);
    json.Key("origins_wrong").Number(origins_wrong);
    json.Key("round_trip_us").BeginObject();
    json.Key("avg").Number(us(answered, round_trip.average() * 1e6));
    json.Key("p50").Number(
        us(answered, round_trip_histogram.PercentileNs(50) / 1e3));
    json.Key("p99").Number(
        us(answered, round_trip_histogram.PercentileNs(99) / 1e3));
    json.Key("max").Number(us(answered, round_trip.max() * 1e6));
    json.EndObject();
    json.Key("timer_wakeup_us").BeginObject();
    json.Key("p50").Number(us(woke, wakeup_latency.PercentileNs(50) / 1e3));
    json.Key("p99").Number(us(woke, wakeup_latency.PercentileNs(99) / 1e3));
    json.Key("max").Number(us(woke, wakeup_latency.max_ns() / 1e3));
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
