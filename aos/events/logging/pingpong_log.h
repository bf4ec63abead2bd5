#ifndef AOS_EVENTS_LOGGING_PINGPONG_LOG_H_
#define AOS_EVENTS_LOGGING_PINGPONG_LOG_H_

// For tests: records a ping/pong run in simulation (aos/testing's
// TestMessage on /test every 10 ms, answered at once by a TestReply) with
// the logger, and remembers what was sent, to compare logs against.

#include <string>
#include <string_view>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/event_loop.h"
#include "aos/events/logging/chunk_compression.h"
#include "aos/events/path_origins.h"
#include "aos/events/timing_path.h"
#include "aos/time/time.h"
#include "aos/util/uuid.h"

namespace aos::logging::testing {

struct SentMessage {
  std::string channel;  // "/test aos.testing.TestMessage"
  monotonic_clock::time_point monotonic_sent_time;
  realtime_clock::time_point realtime_sent_time;
  int value;
  // The path origins it carried: a ping, ping's timer "ping" (1 hop); a
  // pong, the same with 2 hops.
  PathOrigins origins;
};

struct PingPongLog {
  // Every ping and pong, in send order.
  std::vector<SentMessage> sent;
  // Timing reports sent on /aos, and the origins each carried (its loop's
  // "timing_reports" timer), in send order.
  int reports = 0;
  std::vector<PathOrigins> report_origins;
  // The path ages a watcher of the pongs measured (loop "path_observer",
  // which sends no reports, so they add up over the whole run).
  timing::PathTimings pong_paths;
};

// The flattened test config (aos/testing:test_config), read once.
const Configuration& TestConfig();
const FlatbufferDetachedBuffer<Configuration>& TestConfigBuffer();

// Runs ping (its timer "ping" every 10 ms), pong and the logger for
// `duration` of simulated
// time, logging into `path` with `compression` and small chunks (so there
// are many), with the logger's `poll_period` (zero: watchers). Aborts if the
// log cannot be written (a test bug).
PingPongLog RecordPingPong(
    const std::string& path, Compression compression,
    monotonic_clock::duration duration,
    monotonic_clock::duration poll_period = monotonic_clock::duration::zero());

// The flattened two-node test config (aos/testing:test_multinode_config):
// TestMessage on pi1, TestReply on pi2, /test forwarded both ways, each
// node's timing reports forwarded to the other. Read once.
const FlatbufferDetachedBuffer<Configuration>& MultiNodeTestConfig();

// A ping as pi2 received it, forwarded from pi1.
struct ReceivedPing {
  int value;
  // What a watcher on pi2 saw (data null): local send times and queue index
  // on pi2, and the remote fields.
  Context context;
};

struct MultiNodePingPongLog {
  std::vector<ReceivedPing> pings;
  // Pongs sent on pi2.
  int pongs = 0;
  UUID pi1_boot;
  UUID pi2_boot;
};

// pi2's side of a two-node ping/pong (MultiNodeTestConfig()): ping on pi1
// every 10 ms, pong on pi2, the logger on pi2 writing `path`, for
// `duration`. pi2's clocks differ from pi1's and from the simulation's
// defaults (kPi2MonotonicOffset, kPi2RealtimeOffset), so replay has to set
// them. Aborts if the log cannot be written.
inline constexpr monotonic_clock::duration kPi2MonotonicOffset =
    std::chrono::seconds(40);
inline constexpr realtime_clock::duration kPi2RealtimeOffset =
    std::chrono::seconds(1600000000);
MultiNodePingPongLog RecordMultiNodePingPong(
    const std::string& path, monotonic_clock::duration duration);

// What a new watcher on the logged node saw of the messages of channel
// `name` of `type` while the log at `path` was replayed (every channel,
// LogReader): each message's path origins, in order, and the path ages it
// measured (its loop sends no reports, so they add up over the replay).
// Aborts if the log cannot be read or has no such channel (a test bug).
struct ReplayedOrigins {
  std::vector<PathOrigins> origins;
  timing::PathTimings paths;
};
ReplayedOrigins ReplayWatchingOrigins(const std::string& path,
                                      std::string_view name,
                                      std::string_view type);

}  // namespace aos::logging::testing

#endif  // AOS_EVENTS_LOGGING_PINGPONG_LOG_H_
