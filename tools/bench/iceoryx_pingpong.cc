// iceoryx 2.0's side of the IPC bench (tools/bench/ipc.sh): one ping/pong
// pair over iceoryx's zero-copy shared memory, measured as aos_pingpong
// measures ours (tools/bench/ipc_pingpong.h has the modes and the result).
//
//   iox-roudi -c config.toml &
//   iceoryx_pingpong --role=pong --payload_bytes=1024 --json=pong.json &
//   iceoryx_pingpong --role=ping --payload_bytes=1024 --priority=80
//
// Both register with the running iox-roudi (runtime names aosbench_ping and
// aosbench_pong). Services "aosbench/ping/<mode>" (ping -> pong) and
// "aosbench/pong/<mode>" (pong's answers), untyped, the payload written in
// place in the loaned chunk. Pong waits in a WaitSet (not a Listener: a
// Listener calls back on a thread of its own, one more hop) attached to
// its subscriber's DATA_RECEIVED event; the wakeup latency is the clock
// read as the first instruction after WaitSet::wait() returns minus the
// stamp ping wrote just before publish(), which is how our loop's watcher
// latency is defined (send time to handler start).
//
// Queues: every subscriber holds kThroughputQueueDepth (256) samples and
// every publisher discards the oldest when one is full
// (ConsumerTooSlowPolicy::DISCARD_OLDEST_DATA, QueueFullPolicy::
// DISCARD_OLDEST_DATA, iceoryx's defaults): the publisher never blocks, as
// our senders never do, and what pong misses is counted as lost.
#include <time.h>

#include <cstring>
#include <string>

#include "aos/init.h"
#include "aos/util/flag_checks.h"
#include "aos/util/user_error.h"
#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "tools/bench/ipc_pingpong.h"
#include "tools/bench/ipc_pingpong_flags.h"

namespace aos::bench {
namespace {

iox::capro::ServiceDescription Service(std::string_view instance,
                                       const PingPongOptions& options) {
  const std::string mode(ModeName(options.mode));
  return iox::capro::ServiceDescription(
      "aosbench",
      iox::capro::IdString_t(iox::cxx::TruncateToCapacity,
                             std::string(instance)),
      iox::capro::IdString_t(iox::cxx::TruncateToCapacity, mode));
}

iox::popo::SubscriberOptions SubscriberQueue() {
  iox::popo::SubscriberOptions options;
  options.queueCapacity = kThroughputQueueDepth;
  options.queueFullPolicy = iox::popo::QueueFullPolicy::DISCARD_OLDEST_DATA;
  return options;
}

iox::popo::PublisherOptions NeverBlocking() {
  iox::popo::PublisherOptions options;
  options.subscriberTooSlowPolicy =
      iox::popo::ConsumerTooSlowPolicy::DISCARD_OLDEST_DATA;
  return options;
}

// The two ends one process holds, and a WaitSet on the receiving one.
class Ends {
 public:
  Ends(const PingPongOptions& options, std::string_view send_to,
       std::string_view receive_from)
      : options_(options),
        publisher_(Service(send_to, options), NeverBlocking()),
        subscriber_(Service(receive_from, options), SubscriberQueue()) {
    waitset_.attachEvent(subscriber_, iox::popo::SubscriberEvent::DATA_RECEIVED)
        .or_else([](auto) {
          ExitForUserError("could not attach the subscriber to a WaitSet");
        });
  }

  // Until roudi has connected both ends to the other process's.
  void WaitForPeer() {
    while (!publisher_.hasSubscribers() ||
           subscriber_.getSubscriptionState() !=
               iox::SubscribeState::SUBSCRIBED) {
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, nullptr);
    }
  }

  // Sends `header`, stamped now, in a payload of --payload_bytes (the rest
  // of the bytes as the loan left them: neither side reads them).
  void Send(int64_t sequence) {
    publisher_.loan(static_cast<uint32_t>(options_.payload_bytes))
        .and_then([&](void* payload) {
          PayloadHeader header;
          header.sequence = sequence;
          header.sent_ns = MonotonicNowNs();
          WritePayloadHeader(header, payload);
          publisher_.publish(payload);
        })
        .or_else([](auto) {
          ExitForUserError(
              "iox-roudi's memory pools have no chunk for --payload_bytes: "
              "start it with tools/bench/iox_roudi.toml");
        });
  }

  // Answers with a copy of `payload`.
  void Answer(const void* payload) {
    publisher_.loan(static_cast<uint32_t>(options_.payload_bytes))
        .and_then([&](void* answer) {
          memcpy(answer, payload, static_cast<size_t>(options_.payload_bytes));
          publisher_.publish(answer);
        })
        .or_else([](auto) {
          ExitForUserError("iox-roudi's memory pools ran out of chunks");
        });
  }

  // Blocks until something arrived; returns the clock read as the first
  // thing after the wakeup.
  int64_t Wait() {
    waitset_.wait();
    return MonotonicNowNs();
  }

  // Calls fn(payload, header) for each sample queued, then releases it.
  template <typename Fn>
  void TakeAll(Fn fn) {
    while (true) {
      auto sample = subscriber_.take();
      if (sample.has_error()) return;
      const void* payload = sample.value();
      fn(payload, ReadPayloadHeader(payload));
      subscriber_.release(payload);
    }
  }

 private:
  const PingPongOptions& options_;
  iox::popo::UntypedPublisher publisher_;
  iox::popo::UntypedSubscriber subscriber_;
  iox::popo::WaitSet<> waitset_;
};

void RunPing(const PingPongOptions& options) {
  Ends ends(options, "ping", "pong");
  ends.WaitForPeer();
  ExitOnFlagError(EnterRealtime(options.priority));
  if (options.mode == PingPongMode::kThroughput) {
    const int64_t end_ns =
        MonotonicNowNs() + static_cast<int64_t>(options.seconds * 1e9);
    int64_t sequence = 0;
    while (MonotonicNowNs() < end_ns) ends.Send(sequence++);
    ends.Send(kStopSequence);
    return;
  }
  LatencySamples round_trips;
  const int64_t period_ns = 1000000000 / options.rate_hz;
  int64_t next_ns = MonotonicNowNs() + period_ns;
  for (int i = 0; i < options.count; ++i) {
    struct timespec at;
    at.tv_sec = next_ns / 1000000000;
    at.tv_nsec = next_ns % 1000000000;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) != 0) {
    }
    next_ns += period_ns;
    ends.Send(i);
    bool answered = false;
    while (!answered) {
      const int64_t now_ns = ends.Wait();
      ends.TakeAll([&](const void*, const PayloadHeader& header) {
        if (header.sequence != i) return;
        round_trips.Add(now_ns - header.sent_ns);
        answered = true;
      });
    }
  }
  PingPongResult result = NewResult("iceoryx", options);
  result.latency = round_trips.Finish("iceoryx round trip (ping)");
  WriteResult(options.json, result);
}

void RunPong(const PingPongOptions& options) {
  Ends ends(options, "pong", "ping");
  ExitOnFlagError(EnterRealtime(options.priority));
  MarkReady(options.ready_file);
  PongRecorder recorder(options);
  bool done = false;
  while (!done) {
    const int64_t woken_ns = ends.Wait();
    bool first = true;
    ends.TakeAll([&](const void* payload, const PayloadHeader& header) {
      // Each sample as if its handler started now: the first at the wakeup.
      const int64_t now_ns = first ? woken_ns : MonotonicNowNs();
      first = false;
      if (recorder.Record(header, header.sent_ns, now_ns)) done = true;
      if (options.mode == PingPongMode::kLatency) ends.Answer(payload);
    });
  }
  WriteResult(options.json,
              recorder.Result("iceoryx", "iceoryx wakeup (pong WaitSet)"));
}

int Main() {
  absl::StatusOr<PingPongOptions> options = PingPongOptionsFromFlags();
  ExitOnFlagError(options.status());
  const bool ping = options->role == PingPongRole::kPing;
  // Only what went wrong: iceoryx's debug lines would fill the bench's logs.
  iox::log::LogManager::GetLogManager().SetDefaultLogLevel(
      iox::log::LogLevel::kWarn);
  iox::runtime::PoshRuntime::initRuntime(iox::RuntimeName_t(
      iox::cxx::TruncateToCapacity, ping ? "aosbench_ping" : "aosbench_pong"));
  if (ping) {
    RunPing(*options);
  } else {
    RunPong(*options);
  }
  return 0;
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: iceoryx_pingpong --role=ping|pong [--mode=latency|throughput] "
      "[--payload_bytes=N] [--rate_hz=N] [--count=N] [--seconds=S] "
      "[--priority=N] [--json=FILE] [--ready_file=FILE]\n"
      "iceoryx's side of tools/bench/ipc.sh: a ping/pong pair over iceoryx "
      "2.0 (needs a running iox-roudi).");
  aos::RefuseArguments(argc, argv);
  return aos::bench::Main();
}
