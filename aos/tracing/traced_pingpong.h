#ifndef AOS_TRACING_TRACED_PINGPONG_H_
#define AOS_TRACING_TRACED_PINGPONG_H_

// For the flight recorder's tests: a simulated ping/pong (TestMessage and
// TestReply on /test, aos/testing/test_config.json) whose loops keep rings
// and publish timing reports, with each report's window and counts kept.
//
//   TracedPingPong pingpong(&config.message());
//   pingpong.factory()->RunFor(std::chrono::milliseconds(2500));
//   RingCopy ping = CopyRingOf(*pingpong.ping());
//   for (const ReportCounts& report : pingpong.reports("ping")) { ... }
//
// ping's timer "ping" sends every 5 ms from 3 ms on (never on a report's
// edge); pong's watcher takes 5 us and replies; ping's watcher takes 3 us.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "aos/events/simulated_event_loop.h"
#include "aos/testing/test_message_generated.h"
#include "aos/testing/test_reply_generated.h"
#include "aos/tracing/ring_reader.h"

namespace aos::tracing {

// The ring of `loop` as a reader would copy it; aborts if it has none.
RingCopy CopyRingOf(const EventLoop& loop);

// One timing report's window and the counts the tests compare.
struct ReportCounts {
  int64_t start = 0;
  int64_t end = 0;
  // The "ping" timer's (ping) and the first watcher's.
  uint32_t timer_count = 0;
  uint32_t watcher_count = 0;
};

class TracedPingPong {
 public:
  explicit TracedPingPong(const Configuration* configuration);

  SimulatedEventLoopFactory* factory() { return &factory_; }
  EventLoop* ping() { return ping_.get(); }
  EventLoop* pong() { return pong_.get(); }
  // The reports of loop `name` ("ping" or "pong") so far, in order.
  const std::vector<ReportCounts>& reports(const std::string& name) {
    return reports_[name];
  }

 private:
  SimulatedEventLoopFactory factory_;
  std::unique_ptr<EventLoop> ping_;
  std::unique_ptr<EventLoop> pong_;
  std::unique_ptr<EventLoop> reader_;
  Sender<aos::testing::TestMessage> ping_sender_;
  Sender<aos::testing::TestReply> pong_sender_;
  std::map<std::string, std::vector<ReportCounts>> reports_;
};

}  // namespace aos::tracing

#endif  // AOS_TRACING_TRACED_PINGPONG_H_
