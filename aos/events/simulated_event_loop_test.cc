#include "aos/events/simulated_event_loop.h"

#include <sstream>

#include "aos/events/event_loop_param_test.h"
#include "aos/testing/allocation_counter.h"
#include "aos/testing/test_message_generated.h"
#include "aos/util/str_cat.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"

DECLARE_int32(timing_report_ms);
DECLARE_bool(timing_reports);

namespace aos::testing {
namespace {

using aos::testing::TestMessage;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using ::testing::ElementsAre;

class SimulatedTestFactory : public EventLoopTestFactory {
 public:
  SimulatedTestFactory()
      : factory_(std::make_unique<SimulatedEventLoopFactory>(configuration())) {
  }

  std::unique_ptr<EventLoop> MakeEventLoop(std::string_view name) override {
    return factory_->MakeEventLoop(name, my_node());
  }
  // Runs with the others: one thread, so nothing races.
  std::unique_ptr<EventLoop> MakeIdleEventLoop(std::string_view name) override {
    return MakeEventLoop(name);
  }
  RunStatus Run() override { return factory_->Run(); }
  std::unique_ptr<ExitHandle> MakeExitHandle() override {
    return factory_->MakeExitHandle();
  }
  void RunFor(monotonic_clock::duration duration) override {
    factory_->RunFor(duration);
  }
  void Stall(monotonic_clock::duration duration) override {
    factory_->AdvanceTime(duration);
  }
  bool time_is_simulated() const override { return true; }

  SimulatedEventLoopFactory* simulated() { return factory_.get(); }

 protected:
  void OnConfigurationChanged() override {
    factory_ = std::make_unique<SimulatedEventLoopFactory>(configuration());
  }

 private:
  std::unique_ptr<SimulatedEventLoopFactory> factory_;
};

std::unique_ptr<EventLoopTestFactory> MakeSimulatedTestFactory() {
  return std::make_unique<SimulatedTestFactory>();
}

INSTANTIATE_TEST_SUITE_P(Simulated, AbstractEventLoopTest,
                         ::testing::Values(MakeSimulatedTestFactory));
INSTANTIATE_TEST_SUITE_P(Simulated, AbstractEventLoopDeathTest,
                         ::testing::Values(MakeSimulatedTestFactory));

void SendPing(Sender<TestMessage>* sender, int value) {
  auto builder = sender->MakeBuilder();
  TestMessage::Builder ping = builder.MakeBuilder<TestMessage>();
  ping.add_value(value);
  builder.CheckOk(builder.Send(ping.Finish()));
}

class SimulatedTimingTest : public ::testing::Test {
 protected:
  std::unique_ptr<EventLoop> Make(std::string_view name) {
    return sim()->MakeEventLoop(name);
  }
  SimulatedEventLoopFactory* sim() { return suite_.simulated(); }

  SimulatedTestFactory suite_;
};

// Exact figures: injected wakeup delay d, handler time h.
TEST_F(SimulatedTimingTest, TimerLatencyAndHandlerTimeAreExactlyWhatHappened) {
  auto loop = Make("loop");
  loop->SkipTimingReport();
  TimerHandler* timer =
      loop->AddTimer([&]() { sim()->AdvanceTime(microseconds(5)); });
  loop->OnRun(
      [&]() { timer->Schedule(loop->monotonic_now(), milliseconds(10)); });
  sim()->SetWakeupDelay(microseconds(37));
  sim()->RunFor(milliseconds(95));

  const timing::TimerTiming& timing = timer->timing();
  EXPECT_EQ(timing.count, 10u);
  EXPECT_EQ(timing.missed_cycles, 0u);
  const timing::RunningStatistic& wakeup = timing.wakeup_latency.statistic();
  EXPECT_DOUBLE_EQ(wakeup.min(), 37e-6);
  EXPECT_DOUBLE_EQ(wakeup.max(), 37e-6);
  EXPECT_NEAR(wakeup.average(), 37e-6, 1e-15);
  EXPECT_NEAR(wakeup.standard_deviation(), 0.0, 1e-15);
  EXPECT_DOUBLE_EQ(timing.handler_time.statistic().max(), 5e-6);
  EXPECT_DOUBLE_EQ(timing.handler_time.statistic().min(), 5e-6);

  const timing::LatencyHistogram& histogram = timing.wakeup_latency.histogram();
  EXPECT_EQ(histogram.count(), 10u);
  EXPECT_EQ(histogram.min_ns(), 37000);
  EXPECT_EQ(histogram.max_ns(), 37000);
  EXPECT_EQ(histogram.PercentileNs(50), 37000);
  EXPECT_EQ(histogram.PercentileNs(99), 37000);
  EXPECT_EQ(timing.handler_time.histogram().PercentileNs(50), 5000);
}

// The handler itself stalls 3.5 periods.
TEST_F(SimulatedTimingTest, HandlerStallOfThreeAndAHalfPeriodsMissesThree) {
  auto loop = Make("loop");
  loop->SkipTimingReport();
  std::vector<monotonic_clock::time_point> times;
  monotonic_clock::time_point base;
  TimerHandler* timer = loop->AddTimer([&]() {
    times.push_back(loop->context().monotonic_event_time);
    if (times.size() == 2) sim()->AdvanceTime(milliseconds(35));
  });
  loop->OnRun([&]() {
    base = loop->monotonic_now();
    timer->Schedule(base, milliseconds(10));
  });
  sim()->RunFor(milliseconds(55));
  // Calls at 0 and 10 ms; 20, 30 and 40 ms pass during the stall; next 50.
  EXPECT_THAT(times, ElementsAre(base, base + milliseconds(10),
                                 base + milliseconds(50)));
  EXPECT_EQ(timer->timing().missed_cycles, 3u);
  EXPECT_EQ(timer->timing().wakeup_latency.statistic().max(), 0.0);
}

// The loop is busy elsewhere: the timer's call comes 3.5 periods late.
TEST_F(SimulatedTimingTest, LoopLateByThreeAndAHalfPeriodsMissesThree) {
  auto loop = Make("loop");
  loop->SkipTimingReport();
  std::vector<monotonic_clock::time_point> times;
  monotonic_clock::time_point base;
  TimerHandler* timer = loop->AddTimer(
      [&]() { times.push_back(loop->context().monotonic_event_time); });
  TimerHandler* hog =
      loop->AddTimer([&]() { sim()->AdvanceTime(milliseconds(40)); });
  loop->OnRun([&]() {
    base = loop->monotonic_now();
    timer->Schedule(base, milliseconds(10));
    hog->Schedule(base + milliseconds(5));
  });
  sim()->RunFor(milliseconds(55));
  // The 10 ms call runs at 45 ms (3.5 periods late); 20, 30, 40 are missed.
  EXPECT_THAT(times, ElementsAre(base, base + milliseconds(10),
                                 base + milliseconds(50)));
  EXPECT_EQ(timer->timing().missed_cycles, 3u);
  EXPECT_DOUBLE_EQ(timer->timing().wakeup_latency.statistic().max(), 35e-3);
}

TEST_F(SimulatedTimingTest, PhasedLoopLateByAStallReportsLatencyAndCycles) {
  auto loop = Make("loop");
  loop->SkipTimingReport();
  std::vector<int> cycles;
  PhasedLoopHandler* phased = loop->AddPhasedLoop(
      [&](int elapsed) { cycles.push_back(elapsed); }, milliseconds(10));
  TimerHandler* hog =
      loop->AddTimer([&]() { sim()->AdvanceTime(milliseconds(40)); });
  loop->OnRun(
      [&]() { hog->Schedule(loop->monotonic_now() + milliseconds(15)); });
  sim()->RunFor(milliseconds(75));
  // The first call at 10, the first boundary after the start (as in AOS).
  // The hog runs 15..55, so the call for 20 comes at 55, 3.5 intervals
  // late, covering 20, 30, 40 and 50: 4 cycles, 3 of them missed. Then 60
  // and 70.
  EXPECT_THAT(cycles, ElementsAre(1, 4, 1, 1));
  EXPECT_EQ(phased->timing().missed_cycles, 3u);
  EXPECT_DOUBLE_EQ(phased->timing().wakeup_latency.statistic().max(), 35e-3);
}

TEST_F(SimulatedTimingTest, WatcherAndFetcherLatencyAreSendToUse) {
  auto sender_loop = Make("sender");
  auto receiver = Make("receiver");
  sender_loop->SkipTimingReport();
  receiver->SkipTimingReport();
  Sender<TestMessage> sender = sender_loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = receiver->MakeFetcher<TestMessage>("/test");
  receiver->MakeWatcher("/test", [](const TestMessage&) {});
  TimerHandler* fetch_timer =
      receiver->AddTimer([&]() { EXPECT_TRUE(fetcher.Fetch()); });
  TimerHandler* send_timer = sender_loop->AddTimer([&]() {
    SendPing(&sender, 1);
    fetch_timer->Schedule(receiver->monotonic_now() + milliseconds(7));
  });
  sender_loop->OnRun(
      [&]() { send_timer->Schedule(sender_loop->monotonic_now()); });
  sim()->SetWakeupDelay(microseconds(12));
  sim()->RunFor(milliseconds(20));

  const timing::WatcherTiming& watcher = receiver->watchers()[0]->timing();
  EXPECT_EQ(watcher.count, 1u);
  EXPECT_DOUBLE_EQ(watcher.wakeup_latency.statistic().max(), 12e-6);
  const timing::FetcherTiming& fetch = receiver->fetchers()[0]->timing();
  EXPECT_EQ(fetch.count, 1u);
  // Scheduled 7 ms after the send, woken 12 us late.
  EXPECT_DOUBLE_EQ(fetch.latency.statistic().max(), 7.012e-3);
}

TEST_F(SimulatedTimingTest,
       ReportsComeEveryPeriodWithContiguousWindowsAndSumToTheTruth) {
  auto loop = Make("ping");
  auto reader = Make("reader");
  reader->SkipTimingReport();
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  int64_t calls_before_last_report = 0;
  std::vector<monotonic_clock::time_point> call_times;
  TimerHandler* timer = loop->AddTimer([&]() {
    call_times.push_back(loop->monotonic_now());
    SendPing(&sender, 1);
  });
  timer->set_name("ping");
  struct Window {
    int64_t start;
    int64_t end;
    uint32_t ping_count;
    uint64_t histogram_count;
  };
  std::vector<Window> windows;
  reader->MakeWatcher("/aos", [&](const timing::Report& report) {
    const timing::Timer* ping = report.timers()->Get(0);
    ASSERT_EQ(ping->name()->str(), "ping");
    timing::LatencyHistogram histogram;
    std::string error;
    ASSERT_TRUE(timing::LatencyHistogram::Decode(
        *ping->wakeup_latency_histogram(), &histogram, &error))
        << error;
    windows.push_back({report.monotonic_start_time(),
                       report.monotonic_end_time(), ping->count(),
                       histogram.count()});
  });
  monotonic_clock::time_point start;
  loop->OnRun([&]() {
    start = loop->monotonic_now();
    timer->Schedule(start, milliseconds(10));
  });
  sim()->RunFor(milliseconds(5500));

  ASSERT_EQ(windows.size(), 5u);
  int64_t total = 0;
  for (size_t i = 0; i < windows.size(); ++i) {
    const int64_t expected_start =
        (start + i * milliseconds(1000)).time_since_epoch().count();
    EXPECT_EQ(windows[i].start, expected_start) << "report " << i;
    EXPECT_EQ(windows[i].end - windows[i].start, 1000000000) << "report " << i;
    EXPECT_EQ(windows[i].ping_count, 100u) << "report " << i;
    EXPECT_EQ(windows[i].histogram_count, windows[i].ping_count);
    total += windows[i].ping_count;
  }
  for (const monotonic_clock::time_point time : call_times) {
    if (time.time_since_epoch().count() < windows.back().end)
      ++calls_before_last_report;
  }
  EXPECT_EQ(total, calls_before_last_report);
}

TEST_F(SimulatedTimingTest, TimingReportsFlagTurnsEveryLoopOff) {
  FLAGS_timing_reports = false;
  auto loop = Make("loop");
  int reports = 0;
  loop->MakeWatcher("/aos", [&](const timing::Report&) { ++reports; });
  sim()->RunFor(milliseconds(3500));
  FLAGS_timing_reports = true;
  EXPECT_EQ(reports, 0);
  EXPECT_TRUE(loop->timers().empty()) << "no timing_reports timer either";
}

TEST_F(SimulatedTimingTest, NothingAllocatesOnceRunning) {
  FLAGS_timing_report_ms = 100;
  auto ping = Make("ping");
  auto pong = Make("pong");
  Sender<TestMessage> ping_sender = ping->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> ping_fetcher = pong->MakeFetcher<TestMessage>("/test");
  Sender<TestMessage> slow_sender = pong->MakeSender<TestMessage>("/slow");
  int value = 0;
  TimerHandler* timer = ping->AddTimer([&]() {
    SendPing(&ping_sender, ++value);
    ping_fetcher.FetchNext();
    // Too fast on /slow most of the time: the error path must not allocate.
    auto builder = slow_sender.MakeBuilder();
    (void)builder.Send(builder.MakeBuilder<TestMessage>().Finish());
  });
  timer->set_name("ping");
  pong->MakeWatcher("/test", [&](const TestMessage&) {
    sim()->AdvanceTime(microseconds(3));
  });
  pong->AddPhasedLoop([](int) {}, milliseconds(7), milliseconds(2));
  ping->OnRun(
      [&]() { timer->Schedule(ping->monotonic_now(), milliseconds(1)); });
  sim()->SetWakeupDelay(microseconds(20));
  sim()->RunFor(milliseconds(1));  // Starts the loops (OnRun may allocate).

  const uint64_t before = HeapAllocations();
  sim()->RunFor(milliseconds(3000));
  const uint64_t allocations = HeapAllocations() - before;
  FLAGS_timing_report_ms = 1000;
  EXPECT_EQ(allocations, 0u);
  EXPECT_GT(value, 2900);
}

TEST(SimulatedReportSizeTest, DropsHistogramsThenEntriesToFitMaxSize) {
  for (const int max_size : {16384, 2048, 640}) {
    auto config = configuration::ReadConfigFromJson(
        StrCat(R"({ "channels": [ { "name": "/aos", "type": "aos.timing.Report",
                                     "max_size": )",
               max_size, R"( } ] })"));
    ASSERT_TRUE(config.ok()) << config.status().message();
    SimulatedEventLoopFactory factory(&config->message());
    auto loop = factory.MakeEventLoop("busy");
    auto reader = factory.MakeEventLoop("reader");
    reader->SkipTimingReport();
    std::vector<TimerHandler*> timers;
    for (int i = 0; i < 20; ++i) {
      timers.push_back(loop->AddTimer(
          [&factory, i]() { factory.AdvanceTime(microseconds(i * 37 + 1)); }));
      timers.back()->set_name(StrCat("timer_number_", i));
    }
    loop->OnRun([&]() {
      for (size_t i = 0; i < timers.size(); ++i) {
        timers[i]->Schedule(loop->monotonic_now() + microseconds(i * 13),
                            microseconds(997 + i));
      }
    });
    std::vector<std::tuple<size_t, uint32_t, uint32_t, uint32_t>> reports;
    reader->MakeRawWatcher(
        reader->GetChannel<timing::Report>("/aos"),
        [&](const Context& context, const void* data) {
          flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data),
                                         context.size);
          ASSERT_TRUE(verifier.VerifyBuffer<timing::Report>(nullptr));
          const auto* report = flatbuffers::GetRoot<timing::Report>(data);
          reports.emplace_back(context.size, report->dropped_histograms(),
                               report->dropped_entries(),
                               report->timers()->size());
        });
    factory.RunFor(milliseconds(2500));
    ASSERT_EQ(reports.size(), 2u) << "max_size " << max_size;
    for (const auto& [size, dropped_histograms, dropped_entries, timers_kept] :
         reports) {
      SCOPED_TRACE(StrCat("max_size ", max_size, ": size ", size,
                          ", dropped histograms ", dropped_histograms,
                          ", dropped entries ", dropped_entries,
                          ", timers kept ", timers_kept));
      EXPECT_LE(size, static_cast<size_t>(max_size));
      if (max_size == 16384) {
        EXPECT_EQ(dropped_histograms, 0u);
        EXPECT_EQ(dropped_entries, 0u);
        EXPECT_EQ(timers_kept, 21u);
      } else if (max_size == 2048) {
        EXPECT_GT(dropped_histograms, 0u);
        EXPECT_EQ(timers_kept + dropped_entries, 21u);
      } else {
        // Not even one entry fits beside the header: all 21 timers and the
        // one sender are dropped, and the report still says so.
        EXPECT_EQ(timers_kept, 0u);
        EXPECT_EQ(dropped_entries, 22u);
      }
    }
  }
}

std::vector<std::string> RunScenarioTrace() {
  auto config = configuration::ReadConfigFromJson(R"({ "channels": [
      { "name": "/test", "type": "aos.testing.TestMessage", "frequency": 1000, "max_size": 64 } ] })");
  CHECK(config.ok());
  SimulatedEventLoopFactory factory(&config->message());
  std::vector<std::string> trace;
  auto a = factory.MakeEventLoop("a");
  auto b = factory.MakeEventLoop("b");
  Sender<TestMessage> sender = a->MakeSender<TestMessage>("/test");
  auto note = [&](std::string_view what, EventLoop* loop) {
    std::stringstream line;
    line << what << "@" << loop->monotonic_now();
    trace.push_back(line.str());
  };
  TimerHandler* t1 = a->AddTimer([&]() {
    note("t1", a.get());
    SendPing(&sender, 1);
  });
  TimerHandler* t2 = b->AddTimer([&]() { note("t2", b.get()); });
  b->MakeWatcher("/test", [&](const TestMessage&) { note("w", b.get()); });
  b->AddPhasedLoop([&](int) { note("p", b.get()); }, milliseconds(3));
  a->OnRun([&]() { t1->Schedule(a->monotonic_now(), milliseconds(2)); });
  b->OnRun([&]() { t2->Schedule(b->monotonic_now(), milliseconds(2)); });
  factory.RunFor(milliseconds(20));
  return trace;
}

TEST_F(SimulatedTimingTest, SecondReportCountsTheFirstReportsSend) {
  auto loop = Make("loop");
  std::vector<uint32_t> report_sender_counts;
  loop->MakeWatcher("/aos", [&](const timing::Report& report) {
    report_sender_counts.push_back(report.senders()->Get(0)->count());
  });
  sim()->RunFor(milliseconds(2500));
  EXPECT_THAT(report_sender_counts, ElementsAre(0u, 1u));
}

TEST_F(SimulatedTimingTest, TimerAtMaxTimeNeverFiresEvenWithAWakeupDelay) {
  auto loop = Make("loop");
  loop->SkipTimingReport();
  int calls = 0;
  TimerHandler* timer = loop->AddTimer([&]() { ++calls; });
  loop->OnRun([&]() { timer->Schedule(monotonic_clock::max_time); });
  sim()->SetWakeupDelay(microseconds(50));
  sim()->RunFor(milliseconds(10));
  EXPECT_EQ(calls, 0);
}

TEST(SimulatedDeterminismTest, SameSetupSameTrace) {
  const std::vector<std::string> first = RunScenarioTrace();
  EXPECT_GT(first.size(), 20u);
  EXPECT_EQ(first, RunScenarioTrace());
  // Same time: in the order scheduled; a message after its sender's
  // handler. (The phased loop's first call is at its first boundary after
  // the start, 3 ms, as in AOS.)
  EXPECT_EQ(first[0], "t1@0.000000000sec");
  EXPECT_EQ(first[1], "t2@0.000000000sec");
  EXPECT_EQ(first[2], "w@0.000000000sec");
  EXPECT_THAT(first, ::testing::Contains("p@0.003000000sec"));
  EXPECT_THAT(first, ::testing::Not(::testing::Contains("p@0.000000000sec")));
}

TEST(SimulatedMultiNodeTest, EachNodeHasItsClockAndItsChannels) {
  auto config = configuration::ReadConfigFromJson(R"({
    "nodes": [ { "name": "pi1" }, { "name": "pi2" } ],
    "channels": [ { "name": "/test", "type": "aos.testing.TestMessage", "source_node": "pi1",
                    "destination_nodes": [ { "name": "pi2" } ] } ] })");
  ASSERT_TRUE(config.ok()) << config.status().message();
  const Node* pi1 = configuration::GetNode(config->message(), "pi1");
  const Node* pi2 = configuration::GetNode(config->message(), "pi2");
  SimulatedEventLoopFactory factory(&config->message());
  factory.SetMonotonicOffset(pi2, std::chrono::seconds(100));
  auto on_pi1 = factory.MakeEventLoop("sender", pi1);
  auto on_pi2 = factory.MakeEventLoop("receiver", pi2);
  EXPECT_EQ(on_pi2->monotonic_now() - on_pi1->monotonic_now(),
            std::chrono::seconds(100));
  Sender<TestMessage> sender = on_pi1->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> local = on_pi1->MakeFetcher<TestMessage>("/test");
  Fetcher<TestMessage> remote = on_pi2->MakeFetcher<TestMessage>("/test");
  monotonic_clock::time_point fired;
  TimerHandler* timer =
      on_pi2->AddTimer([&]() { fired = on_pi2->monotonic_now(); });
  on_pi2->OnRun(
      [&]() { timer->Schedule(on_pi2->monotonic_now() + milliseconds(5)); });
  factory.RunFor(milliseconds(10));
  EXPECT_EQ(fired, monotonic_clock::time_point(std::chrono::seconds(100) +
                                               milliseconds(5)));
  SendPing(&sender, 1);
  EXPECT_TRUE(local.Fetch());
  // Forwarded over the simulated network: there after the link's delay.
  EXPECT_FALSE(remote.Fetch());
  factory.RunFor(milliseconds(1));
  EXPECT_TRUE(remote.Fetch());
  EXPECT_DEATH(factory.MakeEventLoop("nowhere"),
               "multi-node config; give a node");
}

TEST(SimulatedMultiNodeTest, RealtimeFollowsTheNodesRealtimeOffset) {
  auto config = configuration::ReadConfigFromJson(R"({
    "nodes": [ { "name": "pi1" }, { "name": "pi2" } ],
    "channels": [ { "name": "/test", "type": "aos.testing.TestMessage",
                    "source_node": "pi2" } ] })");
  ASSERT_TRUE(config.ok()) << config.status().message();
  const Node* pi1 = configuration::GetNode(config->message(), "pi1");
  const Node* pi2 = configuration::GetNode(config->message(), "pi2");
  SimulatedEventLoopFactory factory(&config->message());
  factory.SetMonotonicOffset(pi2, std::chrono::seconds(7));
  factory.SetRealtimeOffset(pi2, std::chrono::seconds(1600000000));
  auto on_pi2 = factory.MakeEventLoop("sender", pi2);
  Sender<TestMessage> sender = on_pi2->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = on_pi2->MakeFetcher<TestMessage>("/test");
  factory.RunFor(milliseconds(3));
  SendPing(&sender, 1);
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher.context().realtime_event_time,
            realtime_clock::time_point(std::chrono::seconds(1600000007) +
                                       milliseconds(3)));
  // Other nodes keep the default: 2026-01-01 + their monotonic time.
  EXPECT_EQ(factory.realtime_now(pi1),
            realtime_clock::time_point(std::chrono::seconds(1767225600) +
                                       milliseconds(3)));
  EXPECT_DEATH(factory.SetRealtimeOffset(pi2, std::chrono::seconds(0)),
               "SetRealtimeOffset: node already has event loop sender");
}

// Senders, fetchers, watchers, timers and phased loops made between two
// runs are in the next reports, and running still allocates nothing.
TEST_F(SimulatedTimingTest, SetupBetweenRunsIsReportedWithoutAllocating) {
  FLAGS_timing_report_ms = 100;
  auto loop = Make("loop");
  sim()->RunFor(milliseconds(1));  // Starts the loop and its reporter.
  EXPECT_FALSE(loop->is_running());

  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  int watched = 0;
  loop->MakeWatcher("/test", [&](const TestMessage&) { ++watched; });
  int value = 0;
  TimerHandler* timer = loop->AddTimer([&]() {
    SendPing(&sender, ++value);
    fetcher.Fetch();
  });
  timer->set_name("late");
  timer->Schedule(loop->monotonic_now(), milliseconds(1));
  int phased = 0;
  loop->AddPhasedLoop([&](int) { ++phased; }, milliseconds(10))
      ->set_name("late_phased");

  const uint64_t before = HeapAllocations();
  sim()->RunFor(milliseconds(1000));
  const uint64_t allocations = HeapAllocations() - before;
  FLAGS_timing_report_ms = 1000;
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(value, 1001);  // At 1, 2, ..., 1001 ms.
  EXPECT_EQ(watched, 1001);
  EXPECT_EQ(phased, 100);  // At 10, 20, ..., 1000 ms.

  // The loop's own last report: it is the only loop.
  Fetcher<timing::Report> reports = loop->MakeFetcher<timing::Report>("/aos");
  ASSERT_TRUE(reports.Fetch());
  const timing::Report& report = *reports;
  EXPECT_EQ(report.dropped_entries(), 0u);
  ASSERT_NE(report.watchers(), nullptr);
  EXPECT_EQ(report.watchers()->size(), 1u);
  ASSERT_NE(report.fetchers(), nullptr);
  EXPECT_EQ(report.fetchers()->size(), 1u);
  ASSERT_NE(report.senders(), nullptr);
  EXPECT_EQ(report.senders()->size(), 2u) << "the reports' and /test's";
  std::vector<std::string> timers;
  for (const timing::Timer* each : *report.timers()) {
    timers.push_back(each->name()->str());
  }
  EXPECT_THAT(timers,
              ::testing::UnorderedElementsAre("timing_reports", "late"));
  ASSERT_NE(report.phased_loops(), nullptr);
  ASSERT_EQ(report.phased_loops()->size(), 1u);
  EXPECT_EQ(report.phased_loops()->Get(0)->name()->string_view(),
            "late_phased");
}

}  // namespace
}  // namespace aos::testing
