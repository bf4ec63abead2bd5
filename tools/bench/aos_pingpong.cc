// Our side of the IPC bench (tools/bench/ipc.sh): one ping/pong pair of
// ShmEventLoops over a shared-memory channel, measured as iceoryx_pingpong
// measures iceoryx (tools/bench/ipc_pingpong.h has the modes and the
// result).
//
//   aos_pingpong --role=pong --shm_base=/dev/shm/x --json=pong.json &
//   aos_pingpong --role=ping --shm_base=/dev/shm/x --priority=80
//
// Channels /aosbench/ping (ping -> pong) and /aosbench/pong (the answers)
// carry --payload_bytes raw bytes, written in place in the sender's buffer
// (RawSender::data(), as iceoryx writes in its loaned chunk). Ping sends
// from a timer; pong's watcher reads the clock as its first instruction and
// records the wakeup latency as the loop defines it: that time minus
// context().monotonic_event_time, the sent time the queue stamped. Each
// channel keeps kThroughputQueueDepth (256) messages: a sender never
// blocks and a watcher that falls behind skips what was overwritten,
// counted as lost. The channel declares 25.6 M messages/s and 10 us of
// storage (256 messages): our senders refuse a send ("sent too fast") that
// would overwrite a message younger than the storage duration, so with
// AOS-like settings (say 256 k/s and 1 ms) the flood would measure that
// limit (exactly 256 k/s), not the transport. A refused send is retried at
// once and counted on ping's log.
#include <cstring>
#include <string>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "examples/ping_generated.h"
#include "tools/bench/ipc_pingpong.h"
#include "tools/bench/ipc_pingpong_flags.h"

namespace aos::bench {
namespace {

// 1 / the channels' storage duration (10 us).
constexpr int kStorageHz = 100000;

FlatbufferDetachedBuffer<Configuration> BenchConfig(int payload_bytes) {
  std::string json = R"({ "channels": [)";
  bool first = true;
  for (const char* name : {"/aosbench/ping", "/aosbench/pong"}) {
    StrAppend(&json, first ? "" : ",", R"({ "name": ")", name,
              R"(", "type": "aos.examples.Ping", "frequency": )",
              kThroughputQueueDepth * kStorageHz, R"(, "max_size": )",
              payload_bytes, R"(, "channel_storage_duration": )",
              1000000000 / kStorageHz, " }");
    first = false;
  }
  json += "] }";
  auto config = configuration::ReadConfigFromJson(json);
  CHECK(config.ok()) << config.status().message();
  return std::move(config).value();
}

// One loop with a sender on `send_to` and, later, a watcher elsewhere.
class Side {
 public:
  Side(const Configuration* config, const PingPongOptions& options,
       std::string_view name, std::string_view send_to)
      : options_(options), loop_(config, name) {
    loop_.SkipTimingReport();
    if (options.priority > 0) {
      loop_.SetRuntimeRealtimePriority(options.priority);
    }
    sender_ = loop_.MakeRawSender(Channel(send_to));
  }

  const aos::Channel* Channel(std::string_view name) {
    return loop_.GetChannel<examples::Ping>(name);
  }

  ShmEventLoop* loop() { return &loop_; }

  // Where the next message's bytes go.
  void* Buffer() {
    return static_cast<char*>(sender_->data()) + sender_->size() -
           static_cast<size_t>(options_.payload_bytes);
  }

  // Sends the message with `sequence`, stamped now; refused sends (too
  // fast) are retried when `retry`, counted in refused().
  void Send(int64_t sequence, bool retry) {
    while (true) {
      PayloadHeader header;
      header.sequence = sequence;
      header.sent_ns = MonotonicNowNs();
      WritePayloadHeader(header, Buffer());
      const RawSender::Error error =
          sender_->Send(static_cast<size_t>(options_.payload_bytes));
      if (error == RawSender::Error::kOk) return;
      CHECK(retry && error == RawSender::Error::kMessagesSentTooFast)
          << RawSender::ErrorToString(error);
      ++refused_;
    }
  }

  // Answers with a copy of `payload`.
  void Answer(const void* payload) {
    memcpy(Buffer(), payload, static_cast<size_t>(options_.payload_bytes));
    sender_->CheckOk(
        sender_->Send(static_cast<size_t>(options_.payload_bytes)));
  }

  int64_t refused() const { return refused_; }

 private:
  const PingPongOptions& options_;
  ShmEventLoop loop_;
  std::unique_ptr<RawSender> sender_;
  int64_t refused_ = 0;
};

void RunPing(const Configuration* config, const PingPongOptions& options) {
  Side side(config, options, "aosbench_ping", "/aosbench/ping");
  ShmEventLoop* loop = side.loop();
  if (options.mode == PingPongMode::kThroughput) {
    loop->OnRun([&]() {
      const int64_t end_ns =
          MonotonicNowNs() + static_cast<int64_t>(options.seconds * 1e9);
      int64_t sequence = 0;
      while (MonotonicNowNs() < end_ns) side.Send(sequence++, true);
      side.Send(kStopSequence, true);
      loop->Exit();
    });
    loop->Run();
    if (side.refused() > 0) {
      LOG(INFO) << side.refused() << " sends refused as too fast, retried";
    }
    return;
  }
  LatencySamples round_trips;
  int64_t sequence = 0;
  TimerHandler* timer = loop->AddTimer([&]() { side.Send(sequence++, false); });
  loop->MakeRawWatcher(
      side.Channel("/aosbench/pong"), [&](const Context&, const void* payload) {
        const int64_t now_ns = MonotonicNowNs();
        const PayloadHeader header = ReadPayloadHeader(payload);
        round_trips.Add(now_ns - header.sent_ns);
        if (header.sequence + 1 >= options.count) {
          loop->Exit();
        }
      });
  const auto period = std::chrono::nanoseconds(1000000000 / options.rate_hz);
  loop->OnRun(
      [&]() { timer->Schedule(loop->monotonic_now() + period, period); });
  loop->Run();
  PingPongResult result = NewResult("aos", options);
  result.latency = round_trips.Finish("aos round trip (ping)");
  WriteResult(options.json, result);
}

void RunPong(const Configuration* config, const PingPongOptions& options) {
  Side side(config, options, "aosbench_pong", "/aosbench/pong");
  ShmEventLoop* loop = side.loop();
  PongRecorder recorder(options);
  loop->MakeRawWatcher(
      side.Channel("/aosbench/ping"),
      [&](const Context& context, const void* payload) {
        const int64_t now_ns = MonotonicNowNs();
        const bool last = recorder.Record(
            ReadPayloadHeader(payload),
            context.monotonic_event_time.time_since_epoch().count(), now_ns);
        if (options.mode == PingPongMode::kLatency) side.Answer(payload);
        if (last) loop->Exit();
      });
  loop->OnRun([&]() { MarkReady(options.ready_file); });
  loop->Run();
  WriteResult(options.json,
              recorder.Result("aos", "aos wakeup (pong watcher)"));
}

int Main() {
  absl::StatusOr<PingPongOptions> options = PingPongOptionsFromFlags();
  ExitOnFlagError(options.status());
  const FlatbufferDetachedBuffer<Configuration> config =
      BenchConfig(options->payload_bytes);
  if (options->role == PingPongRole::kPing) {
    RunPing(&config.message(), *options);
  } else {
    RunPong(&config.message(), *options);
  }
  return 0;
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_pingpong --role=ping|pong [--mode=latency|throughput] "
      "[--payload_bytes=N] [--rate_hz=N] [--count=N] [--seconds=S] "
      "[--priority=N] [--json=FILE] [--ready_file=FILE] [--shm_base=DIR]\n"
      "Our side of tools/bench/ipc.sh: a ping/pong pair of ShmEventLoops "
      "over one shared-memory channel each way.");
  aos::RefuseArguments(argc, argv);
  return aos::bench::Main();
}
