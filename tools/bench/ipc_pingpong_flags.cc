#include "tools/bench/ipc_pingpong_flags.h"

#include "aos/util/flag_checks.h"
#include "gflags/gflags.h"

DEFINE_string(role, "", "ping (sends) or pong (receives and answers).");
DEFINE_string(mode, "latency",
              "latency (ping sends at --rate_hz, pong measures each wakeup) "
              "or throughput (ping floods for --seconds, pong counts).");
DEFINE_int32(payload_bytes, 32,
             "Bytes per message, the 16-byte stamp and sequence included.");
DEFINE_int32(rate_hz, 1000, "Latency mode: messages per second.");
DEFINE_int32(count, 1000, "Latency mode: messages to send and measure.");
DEFINE_double(seconds, 2.0, "Throughput mode: how long ping floods.");
DEFINE_int32(priority, 0,
             "SCHED_FIFO priority of the measuring thread (0 = normal).");
DEFINE_string(json, "",
              "Write the result as JSON to this file (default: stdout).");
DEFINE_string(ready_file, "",
              "Pong creates this file once it is subscribed and waiting.");

namespace aos::bench {

absl::StatusOr<PingPongOptions> PingPongOptionsFromFlags() {
  PingPongOptions options;
  if (absl::Status s = CheckOneOf("--role", FLAGS_role, {"ping", "pong"});
      !s.ok()) {
    return s;
  }
  options.role =
      FLAGS_role == "ping" ? PingPongRole::kPing : PingPongRole::kPong;
  if (absl::Status s =
          CheckOneOf("--mode", FLAGS_mode, {"latency", "throughput"});
      !s.ok()) {
    return s;
  }
  options.mode = FLAGS_mode == "latency" ? PingPongMode::kLatency
                                         : PingPongMode::kThroughput;
  for (absl::Status s :
       {CheckInRange("--payload_bytes", FLAGS_payload_bytes, kMinPayloadBytes,
                     kMaxPayloadBytes),
        CheckInRange("--rate_hz", FLAGS_rate_hz, 1, 100000),
        CheckAtLeast("--count", FLAGS_count, 1),
        CheckInRange("--seconds", FLAGS_seconds, 0.01, 3600.0),
        CheckInRange("--priority", FLAGS_priority, 0, 99,
                     " is not a SCHED_FIFO priority: give 1-99, or 0 for "
                     "normal scheduling")}) {
    if (!s.ok()) return s;
  }
  options.payload_bytes = FLAGS_payload_bytes;
  options.rate_hz = FLAGS_rate_hz;
  options.count = FLAGS_count;
  options.seconds = FLAGS_seconds;
  options.priority = FLAGS_priority;
  options.json = FLAGS_json;
  options.ready_file = FLAGS_ready_file;
  return options;
}

}  // namespace aos::bench
