// What event loops record in their flight recorder rings, exactly, in
// simulation; and that a snapshot of a window counts what the timing report
// of the same window counts.

#include <map>

#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_generated.h"
#include "aos/testing/test_reply_generated.h"
#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/ring_reader.h"
#include "aos/tracing/traced_pingpong.h"
#include "gflags/gflags.h"
#include "gtest/gtest.h"

DECLARE_int64(trace_handler_threshold_us);
DECLARE_bool(trace_on_missed_cycles);
DECLARE_bool(trace_on_path_deadline);

namespace aos::tracing {
namespace {

using aos::testing::TestMessage;
using aos::testing::TestReply;
using std::chrono::microseconds;
using std::chrono::milliseconds;

int64_t Ns(monotonic_clock::time_point time) {
  return time.time_since_epoch().count();
}

// (kind, index, queue_index, monotonic, aux): what a test compares.
using Row = std::tuple<EventKind, uint16_t, uint32_t, int64_t, int64_t>;

std::vector<Row> Rows(const RingCopy& copy) {
  std::vector<Row> rows;
  for (const Event& event : copy.events) {
    rows.emplace_back(event.kind, event.index, event.queue_index,
                      event.monotonic_ns, event.aux_ns);
  }
  return rows;
}

class LoopTraceTest : public ::testing::Test {
 protected:
  LoopTraceTest()
      : config_(configuration::ReadConfig(
                    aos::testing::ArtifactPath("aos/testing/test_config.json"))
                    .value()),
        factory_(&config_.message()) {}

  uint16_t ChannelIndex(const Channel* channel) const {
    const auto* channels = config_.message().channels();
    for (uint16_t i = 0; i < channels->size(); ++i) {
      if (channels->Get(i) == channel) return i;
    }
    LOG(FATAL) << "no such channel";
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  SimulatedEventLoopFactory factory_;
};

// Ping sends from its timer (taking 2 us), pong replies from its watcher
// (taking 5 us), ping's watcher gets the reply; every wakeup is 37 us late.
// Each ring holds exactly those starts, ends and sends, in order, with the
// times and queue indices the handlers saw.
TEST_F(LoopTraceTest, PingPongRecordsExactlyWhatHappened) {
  auto ping = factory_.MakeEventLoop("ping");
  auto pong = factory_.MakeEventLoop("pong");
  ping->SkipTimingReport();
  pong->SkipTimingReport();
  Sender<TestMessage> ping_sender = ping->MakeSender<TestMessage>("/test");
  Sender<TestReply> pong_sender = pong->MakeSender<TestReply>("/test");
  const uint16_t message_channel =
      ChannelIndex(ping->GetChannel<TestMessage>("/test"));
  const uint16_t reply_channel =
      ChannelIndex(ping->GetChannel<TestReply>("/test"));
  std::vector<Row> ping_rows;
  std::vector<Row> pong_rows;
  TimerHandler* timer = ping->AddTimer([&]() {
    const int64_t start = Ns(ping->monotonic_now());
    ping_rows.emplace_back(EventKind::kTimerStart, 0, 0, start,
                           Ns(ping->context().monotonic_event_time));
    auto builder = ping_sender.MakeBuilder();
    builder.CheckOk(builder.Send(builder.MakeBuilder<TestMessage>().Finish()));
    ping_rows.emplace_back(EventKind::kSend, message_channel,
                           ping_sender.sent_queue_index(),
                           Ns(ping_sender.monotonic_sent_time()), 0);
    factory_.AdvanceTime(microseconds(2));
    ping_rows.emplace_back(EventKind::kTimerEnd, 0, 0,
                           Ns(ping->monotonic_now()), start);
  });
  timer->set_name("ping");
  ping->MakeWatcher("/test", [&](const TestReply&) {
    const int64_t start = Ns(ping->monotonic_now());
    ping_rows.emplace_back(EventKind::kWatcherStart, 1,
                           ping->context().queue_index, start,
                           Ns(ping->context().monotonic_event_time));
    ping_rows.emplace_back(EventKind::kWatcherEnd, 1, 0, start, start);
  });
  pong->MakeWatcher("/test", [&](const TestMessage&) {
    const int64_t start = Ns(pong->monotonic_now());
    pong_rows.emplace_back(EventKind::kWatcherStart, 0,
                           pong->context().queue_index, start,
                           Ns(pong->context().monotonic_event_time));
    auto builder = pong_sender.MakeBuilder();
    builder.CheckOk(builder.Send(builder.MakeBuilder<TestReply>().Finish()));
    pong_rows.emplace_back(EventKind::kSend, reply_channel,
                           pong_sender.sent_queue_index(),
                           Ns(pong_sender.monotonic_sent_time()), 0);
    factory_.AdvanceTime(microseconds(5));
    pong_rows.emplace_back(EventKind::kWatcherEnd, 0, 0,
                           Ns(pong->monotonic_now()), start);
  });
  ping->OnRun(
      [&]() { timer->Schedule(ping->monotonic_now(), milliseconds(10)); });
  factory_.SetWakeupDelay(microseconds(37));
  factory_.RunFor(milliseconds(35));

  const RingCopy ping_copy = CopyRingOf(*ping);
  const RingCopy pong_copy = CopyRingOf(*pong);
  EXPECT_EQ(ping_copy.application, "ping");
  EXPECT_EQ(ping_copy.torn, 0u);
  ASSERT_EQ(ping_rows.size(), 4u * 5u);
  EXPECT_EQ(Rows(ping_copy), ping_rows);
  EXPECT_EQ(Rows(pong_copy), pong_rows);
  // The wakeups were late by exactly the injected delay.
  EXPECT_EQ(std::get<3>(ping_rows[0]) - std::get<4>(ping_rows[0]), 37'000);

  // The names table says what the indices are.
  std::map<std::pair<TrackKind, uint16_t>, std::string> names;
  for (const TrackName& name : ping_copy.names) {
    names[{name.kind, name.index}] = name.name;
  }
  EXPECT_EQ((names[{TrackKind::kTimer, 0}]), "ping");
  EXPECT_EQ((names[{TrackKind::kWatcher, 1}]), "/test");
  EXPECT_EQ((names[{TrackKind::kChannel, message_channel}]), "/test");

  // In the snapshot, each ping's send flows to pong's watcher and each
  // reply to ping's watcher: 8 flows, each an "s" and an "f".
  TraceWindow window;
  window.begin_ns = 0;
  window.end_ns = Ns(ping->monotonic_now());
  const Trace trace = BuildTrace({ping_copy, pong_copy}, window, {});
  int flow_starts = 0;
  int flow_ends = 0;
  int runs = 0;
  for (const TraceEvent& event : trace.events) {
    flow_starts += event.phase == 's';
    flow_ends += event.phase == 'f';
    runs += event.phase == 'X';
  }
  EXPECT_EQ(flow_starts, 8);
  EXPECT_EQ(flow_ends, 8);
  EXPECT_EQ(runs, 12);
}

// Over a threshold, the loop marks a trigger: a record and the header's
// count and time. The simulation's rings take the same flags.
TEST_F(LoopTraceTest, HandlerOverThresholdTriggers) {
  FLAGS_trace_handler_threshold_us = 100;
  FLAGS_trace_on_missed_cycles = true;
  auto loop = factory_.MakeEventLoop("loop");
  loop->SkipTimingReport();
  int calls = 0;
  TimerHandler* timer = loop->AddTimer([&]() {
    // The third call takes 150 us; the fifth 25 ms (2 cycles missed).
    if (++calls == 3) factory_.AdvanceTime(microseconds(150));
    if (calls == 5) factory_.AdvanceTime(milliseconds(25));
  });
  loop->OnRun(
      [&]() { timer->Schedule(loop->monotonic_now(), milliseconds(10)); });
  const monotonic_clock::time_point start = factory_.monotonic_now(nullptr);
  factory_.RunFor(milliseconds(75));
  FLAGS_trace_handler_threshold_us = 0;
  FLAGS_trace_on_missed_cycles = false;
  const RingCopy copy = CopyRingOf(*loop);
  std::vector<std::tuple<TriggerReason, int64_t, int64_t>> triggers;
  for (const Event& event : copy.events) {
    if (event.kind == EventKind::kTrigger) {
      triggers.emplace_back(static_cast<TriggerReason>(event.queue_index),
                            event.monotonic_ns - Ns(start), event.aux_ns);
    }
  }
  EXPECT_EQ(triggers, (std::vector<std::tuple<TriggerReason, int64_t, int64_t>>{
                          {TriggerReason::kHandlerTime, 20'150'000, 150'000},
                          {TriggerReason::kHandlerTime, 65'000'000, 25'000'000},
                          {TriggerReason::kMissedCycles, 65'000'000, 2}}));
  EXPECT_EQ(copy.trigger_count, 3u);
  EXPECT_EQ(copy.last_trigger_ns - Ns(start), 65'000'000);
}

// The configuration's application entry can declare the triggers its loop
// marks, as the flags do; out of range is one line naming it, exit 1.
TEST(ConfiguredTriggersTest, TheApplicationsEntryDeclaresTriggers) {
  auto config = configuration::ReadConfigFromJson(R"({
    "applications": [{"name": "loop", "trace_triggers": {
      "handler_threshold_us": 100, "on_missed_cycles": true}}]})");
  ASSERT_TRUE(config.ok()) << config.status();
  SimulatedEventLoopFactory factory(&config->message());
  auto loop = factory.MakeEventLoop("loop");
  auto other = factory.MakeEventLoop("other");
  loop->SkipTimingReport();
  other->SkipTimingReport();
  int calls = 0;
  TimerHandler* timer = loop->AddTimer([&]() {
    if (++calls == 2) factory.AdvanceTime(microseconds(150));
  });
  TimerHandler* other_timer =
      other->AddTimer([&]() { factory.AdvanceTime(microseconds(150)); });
  loop->OnRun(
      [&]() { timer->Schedule(loop->monotonic_now(), milliseconds(10)); });
  other->OnRun([&]() {
    other_timer->Schedule(other->monotonic_now(), milliseconds(10));
  });
  factory.RunFor(milliseconds(25));
  std::vector<TriggerReason> reasons;
  for (const Event& event : CopyRingOf(*loop).events) {
    if (event.kind == EventKind::kTrigger) {
      reasons.push_back(static_cast<TriggerReason>(event.queue_index));
    }
  }
  EXPECT_EQ(reasons, std::vector<TriggerReason>{TriggerReason::kHandlerTime});
  // Not declared for "other": its long handlers mark nothing.
  EXPECT_EQ(CopyRingOf(*other).trigger_count, 0u);

  auto bad = configuration::ReadConfigFromJson(R"({
    "applications": [{"name": "loop", "trace_triggers": {
      "wakeup_threshold_us": -5}}]})");
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EXIT(
      {
        SimulatedEventLoopFactory bad_factory(&bad->message());
        auto bad_loop = bad_factory.MakeEventLoop("loop");
        bad_loop->SkipTimingReport();
        bad_factory.RunFor(milliseconds(1));
      },
      ::testing::ExitedWithCode(1),
      R"(application loop has trace_triggers \{wakeup_threshold_us: -5\}: )"
      R"(give 0 \(off\) to 1000000000 us)");
}

// A watcher that gets a message older than its path deadline marks a
// trigger with the message's age, with --trace_on_path_deadline only.
TEST_F(LoopTraceTest, PathDeadlineOverrunTriggers) {
  FLAGS_trace_on_path_deadline = true;
  auto sender_loop = factory_.MakeEventLoop("sender");
  auto watcher_loop = factory_.MakeEventLoop("watcher");
  for (auto* loop : {sender_loop.get(), watcher_loop.get()}) {
    loop->SkipTimingReport();
  }
  Sender<TestMessage> sender = sender_loop->MakeSender<TestMessage>("/test");
  int calls = 0;
  TimerHandler* timer = sender_loop->AddTimer([&]() {
    // The second message leaves 300 us after its timer was due: its path
    // starts at the timer's time.
    if (++calls == 2) factory_.AdvanceTime(microseconds(300));
    auto builder = sender.MakeBuilder();
    TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
    message.add_value(calls);
    builder.CheckOk(builder.Send(message.Finish()));
  });
  sender_loop->OnRun([&]() {
    timer->Schedule(sender_loop->monotonic_now(), milliseconds(10));
  });
  watcher_loop->SetPathDeadline("/test", microseconds(100));
  watcher_loop->MakeWatcher("/test", [](const TestMessage&) {});
  const monotonic_clock::time_point start = factory_.monotonic_now(nullptr);
  factory_.RunFor(milliseconds(25));
  FLAGS_trace_on_path_deadline = false;
  std::vector<std::tuple<TriggerReason, uint16_t, int64_t, int64_t>> triggers;
  for (const Event& event : CopyRingOf(*watcher_loop).events) {
    if (event.kind == EventKind::kTrigger) {
      triggers.emplace_back(static_cast<TriggerReason>(event.queue_index),
                            event.index, event.monotonic_ns - Ns(start),
                            event.aux_ns);
    }
  }
  // The watcher is the loop's first callback (index 0).
  EXPECT_EQ(triggers,
            (std::vector<std::tuple<TriggerReason, uint16_t, int64_t, int64_t>>{
                {TriggerReason::kPathDeadline, 0, 10'300'000, 300'000}}));
  EXPECT_EQ(TriggerReasonName(TriggerReason::kPathDeadline), "path deadline");
}

// A snapshot of one timing report's window counts the handler runs that
// report counts, for the timer and for the watcher.
TEST_F(LoopTraceTest, SnapshotCountsMatchTheTimingReportOfTheWindow) {
  TracedPingPong pingpong(&config_.message());
  pingpong.factory()->RunFor(milliseconds(2500));
  const std::vector<ReportCounts>& reports = pingpong.reports("ping");
  ASSERT_EQ(reports.size(), 2u);
  const RingCopy copy = CopyRingOf(*pingpong.ping());
  for (const ReportCounts& report : reports) {
    TraceWindow window;
    window.begin_ns = report.start;
    window.end_ns = report.end - 1;
    const Trace trace = BuildTrace({copy}, window, {});
    uint32_t timer_runs = 0;
    uint32_t watcher_runs = 0;
    for (const TraceEvent& event : trace.events) {
      if (event.phase != 'X') continue;
      timer_runs += event.name == "timer ping";
      watcher_runs += event.name == "watcher /test";
    }
    EXPECT_GT(report.timer_count, 100u);
    EXPECT_EQ(timer_runs, report.timer_count);
    EXPECT_EQ(watcher_runs, report.watcher_count);
  }
}

}  // namespace
}  // namespace aos::tracing
