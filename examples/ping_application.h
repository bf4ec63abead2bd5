#ifndef EXAMPLES_PING_APPLICATION_H_
#define EXAMPLES_PING_APPLICATION_H_

// ping as a class over any event loop: a timer (or phased loop) named
// "ping" sends /test aos.examples.Ping every `period`; a watcher on
// aos.examples.Pong checks each answer, measures the round trip, and checks
// that the Pong's path origin is exactly the timer call that sent the Ping
// it answers. examples/ping.cc runs it on shared memory; tests run it in
// simulation, where every figure is exact.
//
//   PingApplication ping(event_loop.get(), {.period = milliseconds(10)});
//   ...  // run the loop
//   std::cout << ping.SummaryLine();

#include <chrono>
#include <cstdint>
#include <string>

#include "aos/events/event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "examples/ping_answers.h"
#include "examples/ping_generated.h"
#include "examples/pong_generated.h"

namespace aos::examples {

struct PingOptions {
  // Between pings.
  std::chrono::nanoseconds period = std::chrono::milliseconds(10);
  // Send this many, then Exit() the loop once the last is answered (or a
  // second later); 0: no limit.
  int64_t count = 0;
  // Exit() the loop after this long from its start; zero: no limit.
  std::chrono::nanoseconds duration = std::chrono::nanoseconds::zero();
  // Send from a phased loop instead of a timer.
  bool phased_loop = false;
  // Where pong should run, for the lines that say it does not answer
  // ("--shm_base=/dev/shm/aos").
  std::string where;
};

class PingApplication {
 public:
  // Makes its timers, sender and watcher on `event_loop`, which must
  // outlive it and not be running yet.
  PingApplication(EventLoop* event_loop, PingOptions options);
  PingApplication(const PingApplication&) = delete;
  PingApplication& operator=(const PingApplication&) = delete;

  int64_t pings() const { return answers_.sent(); }
  int64_t not_sent() const { return send_errors_; }
  int64_t pongs() const { return round_trip_.count(); }
  const PingAnswers& answers() const { return answers_; }
  // Pongs whose origin was checked, and those of them whose origin was not
  // the timer call that sent their Ping.
  int64_t origins_checked() const { return origins_checked_; }
  int64_t origins_wrong() const { return origins_wrong_; }
  // From each Ping's send time to its Pong's arrival, in ns.
  const timing::LatencyHistogram& round_trip() const {
    return round_trip_histogram_;
  }
  // The sending timer's wakeup latency, in ns.
  const timing::LatencyHistogram& wakeup_latency() const {
    return wakeup_latency_;
  }

  // "ping: N pings, ...; origins N checked, M wrong\n": the line ping
  // prints when it ends (docs/pingpong.md).
  std::string SummaryLine() const;
  // The same figures as JSON (ping's --summary_json); null where there is
  // no figure.
  std::string SummaryJson() const;

 private:
  void Send();
  void Answered(const Pong& pong);

  EventLoop* const event_loop_;
  const PingOptions options_;
  Sender<Ping> sender_;
  PingAnswers answers_;
  int64_t send_errors_ = 0;
  timing::LatencyHistogram wakeup_latency_;
  monotonic_clock::time_point started_ = monotonic_clock::min_time;
  bool said_no_pong_ = false;
  const uint32_t* ping_origin_id_ = nullptr;
  int64_t origins_checked_ = 0;
  int64_t origins_wrong_ = 0;
  timing::RunningStatistic round_trip_;
  timing::LatencyHistogram round_trip_histogram_;
  // Only when asked to stop by itself: a timer that never runs would be a
  // row of dashes in every timing report.
  TimerHandler* stop_ = nullptr;
};

}  // namespace aos::examples

#endif  // EXAMPLES_PING_APPLICATION_H_
