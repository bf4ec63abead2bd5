// AOS's simulation API over our simulated event loop: NodeEventLoopFactory
// (per-node loops, clocks, OnStartup/OnShutdown, applications, links),
// SimulatedEventLoopFactory::RunUntil and set_send_delay. Simulated time is
// exact, so every time here is asserted exactly.
#include <ostream>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/test_message_generated.h"
#include "aos/util/str_cat.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

DECLARE_bool(timing_reports);

namespace aos::testing {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using RunEndState = SimulatedEventLoopFactory::RunEndState;

FlatbufferDetachedBuffer<Configuration> Read(std::string_view json) {
  auto config = configuration::ReadConfigFromJson(json);
  CHECK(config.ok()) << config.status().message();
  return std::move(config).value();
}

// Microseconds since the clock's epoch, for readable logs.
int64_t Us(monotonic_clock::time_point time) {
  return std::chrono::duration_cast<microseconds>(time.time_since_epoch())
      .count();
}

void Send(Sender<TestMessage>* sender, int value) {
  auto builder = sender->MakeBuilder();
  TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
  message.add_value(value);
  builder.CheckOk(builder.Send(message.Finish()));
}

// An application as AOS users write them: made on its event loop, with
// arguments of its own. It notes its life in `log` and counts the calls
// of a 1 ms timer.
class Recorder {
 public:
  Recorder(EventLoop* loop, std::vector<std::string>* log, std::string tag)
      : loop_(loop), log_(log), tag_(std::move(tag)) {
    Note("made");
    timer_ = loop_->AddTimer([this]() { ++calls_; });
    loop_->OnRun([this]() {
      Note("running");
      timer_->Schedule(loop_->monotonic_now(), milliseconds(1));
    });
  }
  ~Recorder() { Note("destroyed"); }

  EventLoop* loop() const { return loop_; }
  int calls() const { return calls_; }

 private:
  void Note(std::string_view what) {
    log_->push_back(
        StrCat(tag_, " ", what, " at ", Us(loop_->monotonic_now())));
  }

  EventLoop* const loop_;
  std::vector<std::string>* const log_;
  const std::string tag_;
  TimerHandler* timer_ = nullptr;
  int calls_ = 0;
};

// Two nodes, a reliable channel each way, and two applications in the
// config: "ping" on pi1 only, "everywhere" with no nodes.
class NodeEventLoopFactoryTest : public ::testing::Test {
 protected:
  NodeEventLoopFactoryTest()
      : config_(Read(R"({
          "nodes": [ { "name": "pi1", "hostname": "pi1" },
                     { "name": "pi2", "hostname": "pi2" } ],
          "channels": [
            { "name": "/pi1/test", "type": "aos.testing.TestMessage",
              "source_node": "pi1", "frequency": 1000,
              "destination_nodes": [ { "name": "pi2" } ] },
            { "name": "/pi2/test", "type": "aos.testing.TestMessage",
              "source_node": "pi2", "frequency": 1000,
              "destination_nodes": [ { "name": "pi1" } ] } ],
          "applications": [ { "name": "ping", "nodes": [ "pi1" ] },
                            { "name": "everywhere" } ] })")),
        pi1_node_(configuration::GetNode(config_.message(), "pi1")),
        pi2_node_(configuration::GetNode(config_.message(), "pi2")),
        factory_(&config_.message()),
        pi1_(factory_.GetNodeEventLoopFactory("pi1")),
        pi2_(factory_.GetNodeEventLoopFactory("pi2")) {
    // No /aos channels here; reports are not what these tests are about.
    FLAGS_timing_reports = false;
  }

  gflags::FlagSaver flag_saver_;
  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* const pi1_node_;
  const Node* const pi2_node_;
  std::vector<std::string> log_;
  SimulatedEventLoopFactory factory_;
  NodeEventLoopFactory* const pi1_;
  NodeEventLoopFactory* const pi2_;
};

// --- Finding a node's factory, and its loops.

TEST_F(NodeEventLoopFactoryTest, FoundByNodeOrByNameAndMakesLoopsOnItsNode) {
  EXPECT_EQ(factory_.GetNodeEventLoopFactory(pi1_node_), pi1_);
  EXPECT_EQ(pi1_->node(), pi1_node_);
  EXPECT_EQ(pi2_->node(), pi2_node_);
  EXPECT_THAT(factory_.nodes(), ElementsAre(pi1_node_, pi2_node_));
  EXPECT_EQ(pi1_->configuration(), &config_.message());
  std::unique_ptr<EventLoop> loop = pi2_->MakeEventLoop("loop");
  EXPECT_EQ(loop->name(), "loop");
  EXPECT_EQ(loop->node(), pi2_node_);
  // The same factory's loop: its clock is the node's.
  EXPECT_EQ(loop->monotonic_now(), pi2_->monotonic_now());
}

TEST_F(NodeEventLoopFactoryTest, AnUnknownNodeNameAbortsNamingTheNodes) {
  EXPECT_DEATH(factory_.GetNodeEventLoopFactory("pi3"),
               "GetNodeEventLoopFactory\\(\"pi3\"\\): the config has no such "
               "node \\(its nodes: pi1, pi2\\)");
  EXPECT_DEATH(factory_.GetNodeEventLoopFactory(nullptr),
               "GetNodeEventLoopFactory: this is a multi-node config; give a "
               "node");
}

TEST(NodeEventLoopFactorySingleNodeTest, TheOnlyNodeIsNull) {
  FlatbufferDetachedBuffer<Configuration> config = Read(R"({ "channels": [
      { "name": "/test", "type": "aos.testing.TestMessage" } ] })");
  SimulatedEventLoopFactory factory(&config.message());
  EXPECT_THAT(factory.nodes(), ElementsAre(nullptr));
  NodeEventLoopFactory* node = factory.GetNodeEventLoopFactory(nullptr);
  EXPECT_EQ(node->node(), nullptr);
  std::unique_ptr<EventLoop> loop = node->MakeEventLoop("loop");
  EXPECT_EQ(loop->node(), nullptr);
  EXPECT_DEATH(factory.GetNodeEventLoopFactory("pi1"),
               "GetNodeEventLoopFactory\\(\"pi1\"\\): the config has no such "
               "node \\(it has no nodes: pass no node\\)");
}

// --- Clocks and boots: the factory's, for this node.

TEST_F(NodeEventLoopFactoryTest, ClocksAreTheFactorysClocksOfTheNode) {
  factory_.SetMonotonicOffset(pi2_node_, seconds(100));
  // AOS's form: realtime 1600000000 s when pi2's monotonic clock reads 100 s.
  pi2_->SetRealtimeOffset(monotonic_clock::time_point(seconds(100)),
                          realtime_clock::time_point(seconds(1600000000)));
  EXPECT_EQ(pi2_->realtime_offset(), seconds(1600000000) - seconds(100));
  factory_.RunFor(milliseconds(3));

  EXPECT_EQ(pi1_->monotonic_now(),
            monotonic_clock::time_point(milliseconds(3)));
  EXPECT_EQ(pi1_->realtime_now(),
            realtime_clock::time_point(seconds(1767225600) + milliseconds(3)));
  EXPECT_EQ(pi2_->monotonic_now(),
            monotonic_clock::time_point(seconds(100) + milliseconds(3)));
  EXPECT_EQ(pi2_->realtime_now(),
            realtime_clock::time_point(seconds(1600000000) + milliseconds(3)));
  EXPECT_EQ(pi2_->monotonic_now(), factory_.monotonic_now(pi2_node_));
  EXPECT_EQ(pi2_->realtime_now(), factory_.realtime_now(pi2_node_));

  std::unique_ptr<EventLoop> loop = pi2_->MakeEventLoop("loop");
  EXPECT_DEATH(pi2_->SetRealtimeOffset(monotonic_clock::epoch(),
                                       realtime_clock::epoch()),
               "SetRealtimeOffset: node already has event loop loop");
}

TEST_F(NodeEventLoopFactoryTest, ARebootGivesTheNodeANewBootAndCountsIt) {
  const UUID pi1_first = pi1_->boot_uuid();
  const UUID pi2_first = pi2_->boot_uuid();
  EXPECT_EQ(pi1_first, factory_.boot_uuid(pi1_node_));
  EXPECT_NE(pi1_first, pi2_first);
  EXPECT_EQ(pi1_->boot_count(), 0u);
  factory_.RebootNode(pi1_node_);
  EXPECT_NE(pi1_->boot_uuid(), pi1_first);
  EXPECT_EQ(pi1_->boot_uuid(), factory_.boot_uuid(pi1_node_));
  EXPECT_EQ(pi1_->boot_count(), 1u);
  EXPECT_EQ(pi2_->boot_uuid(), pi2_first);
  EXPECT_EQ(pi2_->boot_count(), 0u);
}

// --- Starting and shutting down.

TEST_F(NodeEventLoopFactoryTest, StartupCallbacksRunAtTheFirstRunInOrder) {
  std::unique_ptr<EventLoop> early = pi1_->MakeEventLoop("early");
  early->OnRun([&]() { log_.push_back("early running"); });
  pi1_->OnStartup([&]() { log_.push_back("startup 1"); });
  pi1_->OnStartup([&]() {
    log_.push_back("startup 2");
    pi1_->AlwaysStart<Recorder>("recorder", &log_, "recorder");
  });
  EXPECT_TRUE(log_.empty()) << "nothing before the first run";
  factory_.RunFor(milliseconds(2));
  // The callbacks first, then every loop made so far starts, in the order
  // made.
  EXPECT_THAT(log_, ElementsAre("startup 1", "startup 2", "recorder made at 0",
                                "early running", "recorder running at 0"));
  log_.clear();
  factory_.RunFor(milliseconds(1));
  EXPECT_TRUE(log_.empty()) << "a node starts once per boot";
}

TEST_F(NodeEventLoopFactoryTest,
       OnStartupAddedLaterRunsAtTheNextRunThenEveryBoot) {
  int first = 0;
  int second = 0;
  pi1_->OnStartup([&]() { ++first; });
  factory_.RunFor(nanoseconds(1));
  EXPECT_EQ(first, 1);
  pi1_->OnStartup([&]() { ++second; });
  EXPECT_EQ(second, 0) << "not until the next run";
  factory_.RunFor(nanoseconds(1));
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);
  factory_.RunFor(nanoseconds(1));
  EXPECT_EQ(second, 1);
  factory_.RebootNode(pi1_node_);
  EXPECT_EQ(first, 2);
  EXPECT_EQ(second, 2);
}

TEST_F(NodeEventLoopFactoryTest, OnStartupFromACallbackWhileRunningAborts) {
  std::unique_ptr<EventLoop> loop = pi1_->MakeEventLoop("loop");
  loop->OnRun([&]() { pi1_->OnStartup([]() {}); });
  EXPECT_DEATH(factory_.RunFor(nanoseconds(1)),
               "OnStartup on node pi1: add startup callbacks before a run, "
               "between runs or in OnShutdown, not from a callback while the "
               "node runs");
}

TEST_F(NodeEventLoopFactoryTest, ARebootShutsDownThenStartsAgain) {
  pi1_->OnStartup([&]() {
    pi1_->AlwaysStart<Recorder>("recorder", &log_,
                                StrCat("boot ", pi1_->boot_count()));
  });
  // Shutdown callbacks run while the applications still exist; one added
  // from there runs on the next boot only, once.
  pi1_->OnShutdown([&]() {
    log_.push_back(StrCat("shutdown at ", Us(pi1_->monotonic_now())));
    pi1_->OnStartup([&]() { log_.push_back("added in shutdown"); });
  });
  factory_.RunFor(milliseconds(3));
  factory_.RebootNode(pi1_node_);
  factory_.RunFor(milliseconds(2));
  // Between runs, the new boot's loops start with the next run, at 3 ms.
  EXPECT_THAT(log_, ElementsAre("boot 0 made at 0", "boot 0 running at 0",
                                "shutdown at 3000", "boot 0 destroyed at 3000",
                                "boot 1 made at 3000", "added in shutdown",
                                "boot 1 running at 3000"));
}

TEST_F(NodeEventLoopFactoryTest, ARebootDuringARunStartsTheNewBootAtOnce) {
  Recorder* recorder = nullptr;
  pi1_->OnStartup([&]() {
    recorder = pi1_->AlwaysStart<Recorder>("recorder", &log_,
                                           StrCat("boot ", pi1_->boot_count()));
  });
  pi1_->OnShutdown([&]() { recorder = nullptr; });
  std::unique_ptr<EventLoop> pi2_loop = pi2_->MakeEventLoop("rebooter");
  TimerHandler* reboot =
      pi2_loop->AddTimer([&]() { factory_.RebootNode(pi1_node_); });
  pi2_loop->OnRun(
      [&]() { reboot->Schedule(pi2_loop->monotonic_now() + milliseconds(5)); });
  factory_.RunFor(milliseconds(10));
  EXPECT_THAT(log_,
              ElementsAre("boot 0 made at 0", "boot 0 running at 0",
                          "boot 0 destroyed at 5000", "boot 1 made at 5000",
                          "boot 1 running at 5000"));
  // Its timer, from 5 ms every ms through 10 ms inclusive.
  ASSERT_NE(recorder, nullptr);
  EXPECT_EQ(recorder->calls(), 6);
  EXPECT_EQ(recorder->loop()->boot_uuid(), pi1_->boot_uuid());
}

TEST(NodeEventLoopFactoryLifeTest, TheFactorysEndShutsDownStartedNodes) {
  gflags::FlagSaver flag_saver;
  FLAGS_timing_reports = false;
  FlatbufferDetachedBuffer<Configuration> config = Read(R"({
    "nodes": [ { "name": "pi1" }, { "name": "pi2" } ],
    "channels": [ { "name": "/test", "type": "aos.testing.TestMessage",
                    "source_node": "pi1" } ] })");
  std::vector<std::string> log;
  for (const bool run : {true, false}) {
    {
      SimulatedEventLoopFactory factory(&config.message());
      NodeEventLoopFactory* pi1 = factory.GetNodeEventLoopFactory("pi1");
      pi1->OnShutdown([&]() { log.push_back("pi1 shutdown"); });
      pi1->AlwaysStart<Recorder>("recorder", &log, "recorder");
      if (run) factory.RunFor(milliseconds(1));
    }
    log.push_back("factory gone");
  }
  // A node that never started does not shut down, but its applications go
  // with the factory either way.
  EXPECT_THAT(log, ElementsAre("recorder made at 0", "recorder running at 0",
                               "pi1 shutdown", "recorder destroyed at 1000",
                               "factory gone", "recorder made at 0",
                               "recorder destroyed at 0", "factory gone"));
}

// --- Applications.

TEST_F(NodeEventLoopFactoryTest, AlwaysStartMakesTheApplicationNowUntilStop) {
  Recorder* recorder = pi2_->AlwaysStart<Recorder>("recorder", &log_, "r");
  ASSERT_NE(recorder, nullptr);
  EXPECT_EQ(recorder->loop()->name(), "recorder");
  EXPECT_EQ(recorder->loop()->node(), pi2_node_);
  EXPECT_THAT(log_, ElementsAre("r made at 0"));
  factory_.RunFor(milliseconds(10));
  EXPECT_EQ(recorder->calls(), 11);  // 0 through 10 ms, inclusive.
  pi2_->Stop(recorder);
  EXPECT_THAT(log_, ElementsAre("r made at 0", "r running at 0",
                                "r destroyed at 10000"));
  pi2_->Stop(recorder);  // Already stopped: nothing, as in AOS.
  EXPECT_EQ(log_.size(), 3u);
  // An application made without OnStartup does not come back after a
  // reboot.
  factory_.RebootNode(pi2_node_);
  EXPECT_EQ(log_.size(), 3u);
}

TEST_F(NodeEventLoopFactoryTest, MaybeStartStartsWhereTheConfigSays) {
  EXPECT_NE(pi1_->MaybeStart<Recorder>("ping", &log_, "ping on pi1"), nullptr);
  EXPECT_EQ(pi2_->MaybeStart<Recorder>("ping", &log_, "ping on pi2"), nullptr);
  // An application listed without nodes runs on every node.
  EXPECT_NE(pi2_->MaybeStart<Recorder>("everywhere", &log_, "everywhere"),
            nullptr);
  EXPECT_EQ(pi1_->MaybeStart<Recorder>("unlisted", &log_, "unlisted"), nullptr);
  EXPECT_THAT(log_,
              ElementsAre("ping on pi1 made at 0", "everywhere made at 0"));
}

// --- Links.

TEST_F(NodeEventLoopFactoryTest, DisconnectAndConnectAreTheLinkFromThisNode) {
  std::unique_ptr<EventLoop> on_pi1 = pi1_->MakeEventLoop("pi1_app");
  std::unique_ptr<EventLoop> on_pi2 = pi2_->MakeEventLoop("pi2_app");
  Sender<TestMessage> from_pi1 = on_pi1->MakeSender<TestMessage>("/pi1/test");
  Sender<TestMessage> from_pi2 = on_pi2->MakeSender<TestMessage>("/pi2/test");
  std::vector<int64_t> pi2_got;
  std::vector<int64_t> pi1_got;
  on_pi2->MakeWatcher("/pi1/test", [&](const TestMessage&) {
    pi2_got.push_back(Us(on_pi2->monotonic_now()));
  });
  on_pi1->MakeWatcher("/pi2/test", [&](const TestMessage&) {
    pi1_got.push_back(Us(on_pi1->monotonic_now()));
  });
  factory_.RunFor(milliseconds(1));

  pi1_->Disconnect(pi2_node_);
  Send(&from_pi1, 1);
  Send(&from_pi2, 2);
  factory_.RunFor(milliseconds(1));
  // Only pi1 -> pi2 is down; the factory's statistics say so.
  EXPECT_TRUE(pi2_got.empty());
  EXPECT_THAT(pi1_got, ElementsAre(1100));
  EXPECT_EQ(factory_.link_statistics(pi1_node_, pi2_node_).dropped_disconnected,
            1u);

  // Back at 2 ms: the dropped reliable message goes again, as with
  // ConnectLink, one link delay later.
  pi1_->Connect(pi2_node_);
  factory_.RunFor(milliseconds(1));
  EXPECT_THAT(pi2_got, ElementsAre(2100));
}

// --- RunUntil.

TEST_F(NodeEventLoopFactoryTest, RunUntilEndsAtATimeOnTheNodesRealtimeClock) {
  factory_.SetMonotonicOffset(pi2_node_, seconds(100));
  factory_.SetRealtimeOffset(pi2_node_, seconds(1600000000));
  std::vector<int64_t> calls;
  std::unique_ptr<EventLoop> loop = pi1_->MakeEventLoop("loop");
  TimerHandler* timer =
      loop->AddTimer([&]() { calls.push_back(Us(loop->monotonic_now())); });
  loop->OnRun(
      [&]() { timer->Schedule(loop->monotonic_now(), milliseconds(1)); });

  // pi2's realtime clock reads this when its monotonic clock reads 100 s +
  // 3 ms, which is 3 ms of simulated time.
  const realtime_clock::time_point end(seconds(1600000000) + seconds(100) +
                                       milliseconds(3));
  EXPECT_EQ(factory_.RunUntil(end, pi2_node_), RunEndState::kEventsRemaining);
  // The end is inclusive: the call due at 3 ms ran.
  EXPECT_THAT(calls, ElementsAre(0, 1000, 2000, 3000));
  EXPECT_EQ(pi2_->realtime_now(), end);
  EXPECT_EQ(pi1_->monotonic_now(),
            monotonic_clock::time_point(milliseconds(3)));

  // Up to just before the next call: the time is exactly the end.
  EXPECT_EQ(factory_.RunUntil(end + microseconds(999), pi2_node_),
            RunEndState::kEventsRemaining);
  EXPECT_EQ(calls.size(), 4u);
  EXPECT_EQ(pi2_->realtime_now(), end + microseconds(999));

  // An end already past runs nothing and leaves the time alone.
  EXPECT_EQ(factory_.RunUntil(end, pi2_node_), RunEndState::kEventsRemaining);
  EXPECT_EQ(calls.size(), 4u);
  EXPECT_EQ(pi2_->realtime_now(), end + microseconds(999));
}

TEST_F(NodeEventLoopFactoryTest, RunUntilSaysWhetherExitEndedItFirst) {
  std::unique_ptr<EventLoop> loop = pi1_->MakeEventLoop("loop");
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  loop->OnRun(
      [&]() { stop->Schedule(loop->monotonic_now() + milliseconds(2)); });
  const realtime_clock::time_point start = pi1_->realtime_now();
  EXPECT_EQ(factory_.RunUntil(start + milliseconds(5), pi1_node_),
            RunEndState::kFinishedEventProcessing);
  EXPECT_EQ(pi1_->realtime_now(), start + milliseconds(2));
  // Nothing is left to do, but AOS says kEventsRemaining all the same
  // when the end is reached.
  EXPECT_EQ(factory_.RunUntil(start + milliseconds(5), pi1_node_),
            RunEndState::kEventsRemaining);
  EXPECT_EQ(pi1_->realtime_now(), start + milliseconds(5));
  // An Exit() between runs ends the next one at once, even one with
  // nothing to run.
  factory_.Exit();
  EXPECT_EQ(factory_.RunUntil(start, pi1_node_),
            RunEndState::kFinishedEventProcessing);
  EXPECT_EQ(factory_.RunUntil(start + milliseconds(6), pi1_node_),
            RunEndState::kEventsRemaining);
  EXPECT_EQ(pi1_->realtime_now(), start + milliseconds(6));
}

TEST_F(NodeEventLoopFactoryTest, RunUntilInAMultiNodeConfigNeedsANode) {
  EXPECT_DEATH(factory_.RunUntil(realtime_clock::epoch()),
               "RunUntil: this is a multi-node config; give a node");
}

TEST(NodeEventLoopFactorySingleNodeTest, RunUntilUsesTheOnlyRealtimeClock) {
  FlatbufferDetachedBuffer<Configuration> config = Read(R"({ "channels": [
      { "name": "/test", "type": "aos.testing.TestMessage" } ] })");
  SimulatedEventLoopFactory factory(&config.message());
  const realtime_clock::time_point end =
      realtime_clock::time_point(seconds(1767225600) + milliseconds(7));
  EXPECT_EQ(factory.RunUntil(end), RunEndState::kEventsRemaining);
  EXPECT_EQ(factory.realtime_now(), end);
  EXPECT_EQ(factory.monotonic_now(),
            monotonic_clock::time_point(milliseconds(7)));
}

// --- Between runs: loops stop running, and may be set up further, as in
// AOS.

TEST_F(NodeEventLoopFactoryTest, LoopsRunOnlyDuringARunAndOnRunRunsOnce) {
  std::unique_ptr<EventLoop> loop = pi1_->MakeEventLoop("loop");
  int on_runs = 0;
  std::vector<bool> running_in_timer;
  TimerHandler* timer =
      loop->AddTimer([&]() { running_in_timer.push_back(loop->is_running()); });
  loop->OnRun([&]() {
    ++on_runs;
    EXPECT_TRUE(loop->is_running());
    timer->Schedule(loop->monotonic_now(), milliseconds(1));
  });
  EXPECT_FALSE(loop->is_running());
  factory_.RunFor(milliseconds(1));  // Calls at 0 and 1 ms.
  EXPECT_FALSE(loop->is_running());
  factory_.RunFor(milliseconds(1));  // At 2 ms.
  EXPECT_FALSE(loop->is_running());
  EXPECT_EQ(
      factory_.RunUntil(pi1_->realtime_now() + milliseconds(1), pi1_node_),
      RunEndState::kEventsRemaining);  // At 3 ms.
  EXPECT_FALSE(loop->is_running());
  EXPECT_EQ(on_runs, 1);
  EXPECT_THAT(running_in_timer, ElementsAre(true, true, true, true));
}

// AOS tests' habit: run, then make a fetcher and look at what was sent.
// Everything made between runs works from the next run on.
TEST_F(NodeEventLoopFactoryTest, SetupBetweenRunsWorksFromTheNextRun) {
  std::unique_ptr<EventLoop> sender_loop = pi1_->MakeEventLoop("sender");
  Sender<TestMessage> first_sender =
      sender_loop->MakeSender<TestMessage>("/pi1/test");
  sender_loop->OnRun([&]() { Send(&first_sender, 1); });
  std::unique_ptr<EventLoop> loop = pi1_->MakeEventLoop("loop");
  factory_.RunFor(milliseconds(1));

  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/pi1/test");
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 1);
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/pi1/test");
  std::vector<int> watched;
  loop->MakeWatcher("/pi1/test", [&](const TestMessage& message) {
    watched.push_back(message.value());
  });
  std::vector<int64_t> timer_calls;
  TimerHandler* timer = loop->AddTimer([&]() {
    timer_calls.push_back(Us(loop->monotonic_now()));
    Send(&sender, 3);
  });
  timer->Schedule(loop->monotonic_now() + milliseconds(2));
  std::vector<int64_t> phased_calls;
  loop->AddPhasedLoop(
      [&](int cycles) {
        EXPECT_EQ(cycles, 1);
        phased_calls.push_back(Us(loop->monotonic_now()));
      },
      milliseconds(5), milliseconds(2));
  Send(&sender, 2);  // Now, at 1 ms: the watcher sees it in the next run.
  factory_.RunFor(milliseconds(10));

  EXPECT_THAT(watched, ElementsAre(2, 3));
  EXPECT_THAT(timer_calls, ElementsAre(3000));
  // The first boundary after it was made (1 ms), then every 5 ms.
  EXPECT_THAT(phased_calls, ElementsAre(2000, 7000));
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 2);
}

// What is read once, when the loop starts, cannot change after: AOS aborts
// on a late OnRun too.
TEST_F(NodeEventLoopFactoryTest, OnRunAndSettingsAbortOnceTheLoopStarted) {
  std::unique_ptr<EventLoop> loop = pi1_->MakeEventLoop("loop");
  factory_.RunFor(milliseconds(1));
  EXPECT_DEATH(loop->OnRun([]() {}),
               "event loop loop: OnRun must be called before the loop first "
               "runs");
  EXPECT_DEATH(loop->SetVersionString("v2"),
               "SetVersionString must be called before the loop first runs");
}

// --- The send delay.

// A sender on pi1 sends at 1 ms and, 10 us later, again; a watcher and a
// fetcher on pi1 and a watcher on pi2 note when they see each message.
class SendDelayTest : public NodeEventLoopFactoryTest {
 protected:
  struct Seen {
    int64_t at_us;
    int64_t sent_us;
    bool operator==(const Seen&) const = default;
    friend void PrintTo(const Seen& seen, std::ostream* out) {
      *out << "{at " << seen.at_us << " us, sent " << seen.sent_us << " us}";
    }
  };

  void SendTwiceAndWatch() {
    sender_loop_ = pi1_->MakeEventLoop("sender");
    watcher_loop_ = pi1_->MakeEventLoop("watcher");
    remote_loop_ = pi2_->MakeEventLoop("remote");
    sender_ = sender_loop_->MakeSender<TestMessage>("/pi1/test");
    fetcher_ = sender_loop_->MakeFetcher<TestMessage>("/pi1/test");
    TimerHandler* send = sender_loop_->AddTimer([this]() {
      Send(&sender_, 1);
      fetched_at_once_.push_back(fetcher_.Fetch());
      factory_.AdvanceTime(microseconds(10));
      Send(&sender_, 2);
      fetched_at_once_.push_back(fetcher_.Fetch());
    });
    sender_loop_->OnRun([this, send]() {
      send->Schedule(sender_loop_->monotonic_now() + milliseconds(1));
    });
    watcher_loop_->MakeWatcher("/pi1/test", [this](const TestMessage&) {
      local_.push_back({Us(watcher_loop_->monotonic_now()),
                        Us(watcher_loop_->context().monotonic_event_time)});
    });
    remote_loop_->MakeWatcher("/pi1/test", [this](const TestMessage&) {
      remote_.push_back({Us(remote_loop_->monotonic_now()),
                         Us(remote_loop_->context().monotonic_event_time)});
    });
    factory_.RunFor(milliseconds(2));
  }

  double LocalWakeupLatencyMax() const {
    return watcher_loop_->watchers()[0]
        ->timing()
        .wakeup_latency.statistic()
        .max();
  }

  std::unique_ptr<EventLoop> sender_loop_;
  std::unique_ptr<EventLoop> watcher_loop_;
  std::unique_ptr<EventLoop> remote_loop_;
  Sender<TestMessage> sender_;
  Fetcher<TestMessage> fetcher_;
  std::vector<bool> fetched_at_once_;
  std::vector<Seen> local_;
  std::vector<Seen> remote_;
};

TEST_F(SendDelayTest, DefaultIsZeroAndAossIsAConstant) {
  EXPECT_EQ(factory_.send_delay(), nanoseconds(0));
  EXPECT_EQ(pi1_->send_delay(), nanoseconds(0));
  EXPECT_EQ(SimulatedEventLoopFactory::kAosSendDelay, microseconds(50));
  SendTwiceAndWatch();
  // Due at its send time, the watcher runs once the sending handler
  // returns, at 1010 us: the first message waited 10 us for it.
  EXPECT_THAT(local_, ElementsAre(Seen{1010, 1000}, Seen{1010, 1010}));
  EXPECT_DOUBLE_EQ(LocalWakeupLatencyMax(), 10e-6);
  // Forwarded: re-sent on pi2 one link delay (100 us) after the send.
  EXPECT_THAT(remote_, ElementsAre(Seen{1100, 1100}, Seen{1110, 1110}));
}

TEST_F(SendDelayTest, WatchersSeeAMessageTheSendDelayAfterItsSend) {
  factory_.set_send_delay(SimulatedEventLoopFactory::kAosSendDelay);
  EXPECT_EQ(pi2_->send_delay(), microseconds(50));
  SendTwiceAndWatch();
  // The message keeps its send time; the watcher runs 50 us later, and its
  // wakeup latency says so.
  EXPECT_THAT(local_, ElementsAre(Seen{1050, 1000}, Seen{1060, 1010}));
  EXPECT_DOUBLE_EQ(LocalWakeupLatencyMax(), 50e-6);
  // Fetchers see it at once, as in AOS.
  EXPECT_THAT(fetched_at_once_, ElementsAre(true, true));
  // Forwarded: leaves pi1 when a watcher there sees it (50 us), crosses the
  // link (100 us), is re-sent on pi2 at 1150 us, and pi2's watcher sees it
  // 50 us after that, as in AOS.
  EXPECT_THAT(remote_, ElementsAre(Seen{1200, 1150}, Seen{1210, 1160}));
}

TEST_F(SendDelayTest, AWakeupDelayComesOnTopOfTheSendDelay) {
  factory_.set_send_delay(microseconds(20));
  factory_.SetWakeupDelay(microseconds(7));
  SendTwiceAndWatch();
  // The send timer itself wakes 7 us late: sends at 1007 and 1017 us.
  EXPECT_THAT(local_, ElementsAre(Seen{1034, 1007}, Seen{1044, 1017}));
  EXPECT_DOUBLE_EQ(LocalWakeupLatencyMax(), 27e-6);
}

TEST_F(SendDelayTest, ANegativeSendDelayAborts) {
  EXPECT_DEATH(factory_.set_send_delay(nanoseconds(-1)),
               "set_send_delay: a send delay cannot be negative");
}

}  // namespace
}  // namespace aos::testing
