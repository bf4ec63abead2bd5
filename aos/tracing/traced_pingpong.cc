#include "aos/tracing/traced_pingpong.h"

#include "aos/events/event_loop_generated.h"

namespace aos::tracing {

using aos::testing::TestMessage;
using aos::testing::TestReply;
using std::chrono::microseconds;
using std::chrono::milliseconds;

RingCopy CopyRingOf(const EventLoop& loop) {
  const EventRing* ring = loop.trace_ring();
  CHECK(ring != nullptr) << "loop " << loop.name()
                         << " has no ring: --trace_ring_events=0?";
  absl::StatusOr<RingCopy> copy =
      CopyRing({static_cast<const std::byte*>(ring->memory()),
                RingBytes(ring->capacity())});
  CHECK(copy.ok()) << copy.status();
  return *copy;
}

TracedPingPong::TracedPingPong(const Configuration* configuration)
    : factory_(configuration),
      ping_(factory_.MakeEventLoop("ping")),
      pong_(factory_.MakeEventLoop("pong")),
      reader_(factory_.MakeEventLoop("reader")),
      ping_sender_(ping_->MakeSender<TestMessage>("/test")),
      pong_sender_(pong_->MakeSender<TestReply>("/test")) {
  reader_->SkipTimingReport();
  TimerHandler* timer = ping_->AddTimer([this]() {
    auto builder = ping_sender_.MakeBuilder();
    builder.CheckOk(builder.Send(builder.MakeBuilder<TestMessage>().Finish()));
  });
  timer->set_name("ping");
  ping_->MakeWatcher("/test", [this](const TestReply&) {
    factory_.AdvanceTime(microseconds(3));
  });
  pong_->MakeWatcher("/test", [this](const TestMessage&) {
    factory_.AdvanceTime(microseconds(5));
    auto builder = pong_sender_.MakeBuilder();
    builder.CheckOk(builder.Send(builder.MakeBuilder<TestReply>().Finish()));
  });
  ping_->OnRun([this, timer]() {
    timer->Schedule(ping_->monotonic_now() + milliseconds(3), milliseconds(5));
  });
  reader_->MakeWatcher("/aos", [this](const timing::Report& report) {
    ReportCounts counts;
    counts.start = report.monotonic_start_time();
    counts.end = report.monotonic_end_time();
    for (const timing::Timer* timer : *report.timers()) {
      if (timer->name()->string_view() == "ping") {
        counts.timer_count = timer->count();
      }
    }
    counts.watcher_count = report.watchers()->Get(0)->count();
    reports_[report.name()->str()].push_back(counts);
  });
}

}  // namespace aos::tracing
