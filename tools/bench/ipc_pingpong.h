#ifndef TOOLS_BENCH_IPC_PINGPONG_H_
#define TOOLS_BENCH_IPC_PINGPONG_H_

// What the two ping/pong programs of the IPC bench share, ours
// (aos_pingpong, ShmEventLoop) and iceoryx's (iceoryx_pingpong): their
// flags, the header every payload starts with, how they measure, and the
// JSON result they hand to tools/bench/ipc_bench. Their flags are in
// ipc_pingpong_flags.h (apart, so that ipc_bench can read results without
// taking the programs' flags).
//
//   absl::StatusOr<PingPongOptions> options =
//       PingPongOptionsFromFlags();  // ipc_pingpong_flags.h
//   ExitOnFlagError(options.status());
//   ...
//   LatencySamples wakeups;
//   wakeups.Add(now_ns - ReadPayloadHeader(payload).sent_ns);
//   ...
//   WriteResultFile(options->json, result);
//
// Two modes, both with one process per role:
// - latency: ping sends a message every 1/--rate_hz s, stamped with its
//   CLOCK_MONOTONIC send time; pong, woken by it, reads the clock as its
//   first instruction and records the wakeup latency (now - stamp), then
//   answers with the same bytes; ping records the round trip. --count
//   messages, then both exit.
// - throughput: ping sends as fast as it can for --seconds, never blocking
//   (a queue of kThroughputQueueDepth that overwrites its oldest message),
//   then a stop message; pong counts what it received and, from the
//   sequence numbers, what it lost.
// None of this allocates on the measuring path except where said.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/util/json_document.h"
#include "tools/bench/bench_figures.h"

namespace aos::bench {

enum class PingPongRole { kPing, kPong };
enum class PingPongMode { kLatency, kThroughput };

// The depth of the receiving queue in throughput mode, on both sides
// (iceoryx's subscriber queueCapacity, our channel's queue length).
inline constexpr int kThroughputQueueDepth = 256;

struct PingPongOptions {
  PingPongRole role = PingPongRole::kPing;
  PingPongMode mode = PingPongMode::kLatency;
  // Bytes per message, header included.
  int payload_bytes = 32;
  // Latency mode: messages per second, and how many.
  int rate_hz = 1000;
  int count = 1000;
  // Throughput mode: how long ping floods.
  double seconds = 2.0;
  // SCHED_FIFO priority of the measuring thread; 0 = normal scheduling.
  int priority = 0;
  // Where to write the result (pong: wakeups or throughput; ping: round
  // trips); empty = stdout.
  std::string json;
  // Pong creates this file once it is subscribed and waiting (empty: none).
  std::string ready_file;
};

// The first bytes of every message: the sender's CLOCK_MONOTONIC just
// before the send, and a sequence number (0, 1, ...; kStopSequence ends a
// throughput run).
struct PayloadHeader {
  int64_t sent_ns = 0;
  int64_t sequence = 0;
};
inline constexpr int64_t kStopSequence = -1;
inline constexpr int kMinPayloadBytes = sizeof(PayloadHeader);
inline constexpr int kMaxPayloadBytes = 65536;

// memcpy in and out: payloads need not be aligned.
void WritePayloadHeader(const PayloadHeader& header, void* payload);
PayloadHeader ReadPayloadHeader(const void* payload);

// CLOCK_MONOTONIC in nanoseconds (the clock aos::monotonic_clock reads).
int64_t MonotonicNowNs();

// Latencies in nanoseconds, into our histogram and statistic. Add never
// allocates.
class LatencySamples {
 public:
  void Add(int64_t latency_ns);
  Figures Finish(std::string name) const;

 private:
  timing::LatencyHistogram histogram_;
  timing::RunningStatistic statistic_;
};

// What pong counts in throughput mode. Received never allocates.
class ThroughputCounter {
 public:
  // A message with `sequence` (not kStopSequence) arrived at `now_ns`.
  void Received(int64_t sequence, int64_t now_ns);
  int64_t received() const { return received_; }
  // Sequence numbers never seen below the highest one seen.
  int64_t lost() const;
  // From the first message to the last one received.
  double seconds() const;
  // received / seconds, NaN before two messages.
  double messages_per_second() const;

 private:
  int64_t received_ = 0;
  int64_t highest_ = -1;
  int64_t first_ns_ = 0;
  int64_t last_ns_ = 0;
};

// One program's result.
struct PingPongResult {
  // "aos" or "iceoryx".
  std::string implementation;
  PingPongRole role = PingPongRole::kPong;
  PingPongMode mode = PingPongMode::kLatency;
  int payload_bytes = 0;
  int priority = 0;
  // Latency mode: pong's wakeups, ping's round trips.
  Figures latency;
  // Throughput mode (pong).
  int64_t received = 0;
  int64_t lost = 0;
  double seconds = 0;
  double messages_per_second = NAN;
};

// A result of `implementation` with the role, mode, payload and priority
// of `options`, and nothing measured yet.
PingPongResult NewResult(std::string_view implementation,
                         const PingPongOptions& options);

// What pong measures, in either mode. Record never allocates.
class PongRecorder {
 public:
  explicit PongRecorder(const PingPongOptions& options) : options_(options) {}

  // A message with `header`, sent at `sent_ns` (the sending side's clock:
  // the stamp, or the queue's sent time), whose handling began at `now_ns`.
  // Returns whether it is pong's last: the --count'th in latency mode, the
  // stop message in throughput mode.
  bool Record(const PayloadHeader& header, int64_t sent_ns, int64_t now_ns);

  // The result: the wakeups, named `latency_name`, in latency mode; the
  // counts in throughput mode.
  PingPongResult Result(std::string_view implementation,
                        std::string latency_name) const;

 private:
  const PingPongOptions& options_;
  LatencySamples wakeups_;
  ThroughputCounter counter_;
};

std::string_view RoleName(PingPongRole role);
std::string_view ModeName(PingPongMode mode);

// As one strict JSON object: implementation, role, mode, payload_bytes,
// priority, then "latency" (WriteFigures) in latency mode, or received,
// lost, seconds, messages_per_second in throughput mode.
std::string ResultJson(const PingPongResult& result);

// Writes ResultJson to `path` (stdout if empty); a path it cannot write
// ends the program naming --json.
void WriteResult(const std::string& path, const PingPongResult& result);

// Reads what ResultJson wrote; an error names the source and the field.
absl::StatusOr<PingPongResult> ReadResult(const JsonValue& value);

// Creates `path` (nothing if empty): tells the driver pong is waiting.
void MarkReady(const std::string& path);

// SCHED_FIFO at `priority` and mlockall, for the calling thread (nothing
// for 0). An error says what the kernel refused, naming --priority.
absl::Status EnterRealtime(int priority);

}  // namespace aos::bench

#endif  // TOOLS_BENCH_IPC_PINGPONG_H_
