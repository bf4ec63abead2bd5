#ifndef AOS_EVENTS_LOGGING_PINGPONG_LOG_H_
#define AOS_EVENTS_LOGGING_PINGPONG_LOG_H_

// For tests: records a ping/pong run in simulation with the logger, and
// remembers what was sent, to compare logs against. The run is the
// examples' own applications (examples/ping_application.h,
// examples/pong_application.h) on the examples' own configs: ping's timer
// "ping" sends /test aos.examples.Ping every 10 ms from the loop's start,
// pong answers each at once with an aos.examples.Pong. So the logs the
// tests read are the logs a user's ping/pong run writes.

#include <cstdint>
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

// The channels of the run, as "NAME TYPE".
inline constexpr std::string_view kPingChannel = "/test aos.examples.Ping";
inline constexpr std::string_view kPongChannel = "/test aos.examples.Pong";

struct SentMessage {
  std::string channel;  // kPingChannel or kPongChannel
  monotonic_clock::time_point monotonic_sent_time;
  realtime_clock::time_point realtime_sent_time;
  int value;
  // The path origins it carried: a ping, ping's timer "ping" (1 hop); a
  // pong, the same with 2 hops.
  PathOrigins origins;
};

// What ping and pong counted themselves (PingApplication's and
// PongApplication's figures) at the end of a run.
struct PingPongCounts {
  int64_t pings = 0;     // Pings sent.
  int64_t not_sent = 0;  // Pings whose send failed.
  int64_t pongs = 0;     // Pongs ping received that answered its pings.
  int64_t late = 0;      // Of those, answered after the next ping.
  // Pongs whose path origin ping checked, and those not its timer call.
  int64_t origins_checked = 0;
  int64_t origins_wrong = 0;
  int64_t answered = 0;  // Pings pong answered.
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
  PingPongCounts counts;
};

// The flattened single-node config ping and pong run with
// (//examples:pingpong_config: /test Ping and Pong, and aos/aos.json's
// /aos), read once.
const Configuration& PingPongConfig();
const FlatbufferDetachedBuffer<Configuration>& PingPongConfigBuffer();

// Runs ping (its timer "ping" every 10 ms, the first at the start), pong
// and the logger for `duration` of simulated time, logging into `path` with
// `compression` and small chunks (so there are many), with the logger's
// `poll_period` (zero: watchers). Aborts if the log cannot be written (a
// test bug).
PingPongLog RecordPingPong(
    const std::string& path, Compression compression,
    monotonic_clock::duration duration,
    monotonic_clock::duration poll_period = monotonic_clock::duration::zero());

// The flattened two-node config (//examples:multinode_pingpong_config):
// Ping sent on pi1, Pong on pi2, /test forwarded both ways (their remote
// timestamps logged on the sending node), each node's timing reports,
// client statistics and starter channels forwarded to the other, the
// message bridge's statistics and remote timestamps. Read once.
const FlatbufferDetachedBuffer<Configuration>& MultiNodePingPongConfig();

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
  // Ping's (on pi1) and pong's (on pi2) own figures.
  PingPongCounts counts;
};

// pi2's side of a two-node ping/pong (MultiNodePingPongConfig()): ping on
// pi1 every 10 ms, pong on pi2, the simulated message bridge on both, the
// logger on pi2 writing `path`, for `duration`. pi2's clocks differ from
// pi1's and from the simulation's defaults (kPi2MonotonicOffset,
// kPi2RealtimeOffset), so replay has to set them. Aborts if the log cannot
// be written.
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
