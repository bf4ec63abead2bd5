// bridge_flood: the sending half of the message bridge's throughput bench
// (tools/bench/bridge.sh). Sends 32 B aos.examples.Ping on --channel as fast
// as the channel allows (its "frequency", or --rate), for --duration seconds,
// and writes what it sent as JSON. What arrived on the other node is the
// receiving bridge's business (its ClientStatistics count it).
//
// Every millisecond a timer sends the messages the rate owes since the
// start; a message the channel refuses (kMessagesSentTooFast: its queue holds
// frequency * channel_storage_duration messages) is counted and retried at
// the next tick, so the offered rate never exceeds what the channel allows
// and the sender does not spin.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>

#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/node_flag.h"
#include "aos/util/flag_checks.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/json_writer.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "examples/ping_generated.h"

DEFINE_string(channel, "/bench", "The aos.examples.Ping channel to send on.");
DEFINE_double(rate, 0,
              "Messages a second to offer; 0: the channel's \"frequency\" in "
              "the config.");
DEFINE_double(duration, 5, "Seconds to send for (more than 0).");
DEFINE_string(summary_json, "",
              "On exit, also write what was sent to this file as JSON.");

namespace aos::bench {
namespace {

int Main() {
  if (!(FLAGS_duration > 0) || std::isinf(FLAGS_duration)) {
    ExitOnFlagError(FlagError("--duration", FLAGS_duration,
                              " is not a number of seconds above 0"));
  }
  ExitOnFlagError(CheckInRange(
      "--rate", FLAGS_rate, 0.0, std::numeric_limits<double>::max(),
      " is not a rate: give 0 (the channel's frequency) or more"));
  auto config = ReadConfigFlag("tools/bench/bridge_bench_config.json");
  if (!config.ok()) ExitForUserError(std::string(config.status().message()));
  auto node = ReadNodeFlag(config.value().message());
  if (!node.ok()) ExitForUserError(std::string(node.status().message()));
  FlagOutputFile summary_json("--summary_json", FLAGS_summary_json);

  ShmEventLoop loop(&config.value().message(), "bridge_flood", *node);
  const Channel* channel = loop.GetChannel<examples::Ping>(FLAGS_channel);
  if (channel == nullptr) {
    ExitOnFlagError(FlagError("--channel", FLAGS_channel,
                              ": the config has no aos.examples.Ping channel "
                              "of that name for this node"));
  }
  const double rate = FLAGS_rate > 0 ? FLAGS_rate : channel->frequency();
  Sender<examples::Ping> sender =
      loop.MakeSender<examples::Ping>(FLAGS_channel);

  int64_t sent = 0;
  int64_t refused = 0;
  // The most messages one tick sent: the rate's share of a millisecond
  // where the loop kept up, more after a tick came late (a burst).
  int64_t largest_burst = 0;
  double largest_burst_at_s = 0;  // After the start.
  size_t message_bytes = 0;
  monotonic_clock::time_point start, end;
  TimerHandler* tick = loop.AddTimer([&]() {
    const monotonic_clock::time_point now = loop.monotonic_now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    const int64_t owed = static_cast<int64_t>(rate * elapsed) - sent;
    const int64_t sent_before = sent;
    for (int64_t i = 0; i < owed; ++i) {
      auto builder = sender.MakeBuilder();
      examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
      ping.add_value(static_cast<int32_t>(sent + 1));
      ping.add_send_time(now.time_since_epoch().count());
      const RawSender::Error error = builder.Send(ping.Finish());
      // Send() finished the buffer: its size is the message's.
      message_bytes = builder.fbb()->GetSize();
      if (error != RawSender::Error::kOk) {
        ++refused;
        break;  // The queue is full for now: the next tick tries again.
      }
      ++sent;
    }
    if (sent - sent_before > largest_burst) {
      largest_burst = sent - sent_before;
      largest_burst_at_s = elapsed;
    }
  });
  tick->set_name("flood");
  TimerHandler* stop = loop.AddTimer([&]() {
    end = loop.monotonic_now();
    loop.Exit();
  });
  stop->set_name("stop");
  loop.OnRun([&]() {
    start = loop.monotonic_now();
    tick->Schedule(start, std::chrono::milliseconds(1));
    stop->Schedule(start + std::chrono::nanoseconds(
                               static_cast<int64_t>(FLAGS_duration * 1e9)));
  });
  loop.Run();
  if (end == monotonic_clock::time_point()) end = loop.monotonic_now();
  const double seconds = std::chrono::duration<double>(end - start).count();

  std::cout << "bridge_flood: " << sent << " messages of " << message_bytes
            << " B sent on " << FLAGS_channel << " in " << seconds << " s ("
            << sent / seconds << "/s, offered " << rate << "/s), " << refused
            << " refused by the channel\n";
  if (summary_json.enabled()) {
    JsonWriter json(2);
    json.BeginObject();
    json.Key("sent").Number(sent);
    json.Key("refused").Number(refused);
    json.Key("largest_burst").Number(largest_burst);
    json.Key("largest_burst_at_s").Number(largest_burst_at_s);
    json.Key("message_bytes").Number(message_bytes);
    json.Key("offered_per_s").Number(rate);
    json.Key("seconds").Number(seconds);
    json.Key("start_ns").Number(start.time_since_epoch().count());
    json.Key("end_ns").Number(end.time_since_epoch().count());
    json.EndObject();
    summary_json.WriteAndClose(json.Text());
  }
  return 0;
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: bridge_flood --node=NAME [--config=FILE] [--channel=/bench]\n"
      "    [--rate=N] [--duration=S] [--summary_json=FILE] [--shm_base=DIR]\n"
      "Sends 32 B aos.examples.Ping on --channel as fast as the channel\n"
      "allows (its frequency, or --rate a second) for --duration seconds,\n"
      "and prints (and with --summary_json writes) what it sent. The sender\n"
      "of tools/bench/bridge.sh's throughput row; docs/benchmarks.md.");
  aos::RefuseArguments(argc, argv);
  return aos::bench::Main();
}
