#ifndef AOS_EVENTS_LOGGING_PINGPONG_LOG_H_
#define AOS_EVENTS_LOGGING_PINGPONG_LOG_H_

// For tests: records a ping/pong run in simulation (aos/testing's
// TestMessage on /test every 10 ms, answered at once by a TestReply) with
// the logger, and remembers what was sent, to compare logs against.

#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/logging/chunk_compression.h"
#include "aos/time/time.h"

namespace aos::logging::testing {

struct SentMessage {
  std::string channel;  // "/test aos.testing.TestMessage"
  monotonic_clock::time_point monotonic_sent_time;
  realtime_clock::time_point realtime_sent_time;
  int value;
};

struct PingPongLog {
  // Every ping and pong, in send order.
  std::vector<SentMessage> sent;
  // Timing reports sent on /aos.
  int reports = 0;
};

// The flattened test config (aos/testing:test_config), read once.
const Configuration& TestConfig();

// Runs ping (every 10 ms), pong and the logger for `duration` of simulated
// time, logging into `path` with `compression` and small chunks (so there
// are many), with the logger's `poll_period` (zero: watchers). Aborts if the
// log cannot be written (a test bug).
PingPongLog RecordPingPong(
    const std::string& path, Compression compression,
    monotonic_clock::duration duration,
    monotonic_clock::duration poll_period = monotonic_clock::duration::zero());

}  // namespace aos::logging::testing

#endif  // AOS_EVENTS_LOGGING_PINGPONG_LOG_H_
