// Path latency on simulated time, where every age is exact: a chain of
// three applications on two nodes with exact handler times and link delays,
// and a fusion of more origins than a message carries
// (docs/timing_reports.md, "Path latency").

#include <vector>

#include "aos/configuration.h"
#include "aos/events/event_loop.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/events/timing_report_codec.h"
#include "aos/testing/test_message_generated.h"
#include "aos/testing/test_reply_generated.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

DECLARE_bool(path_origins);

namespace aos::testing {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using ::testing::ElementsAre;

FlatbufferDetachedBuffer<Configuration> Read(std::string_view json) {
  auto config = configuration::ReadConfigFromJson(json);
  CHECK(config.ok()) << config.status().message();
  return std::move(config).value();
}

void SendValue(Sender<TestMessage>* sender, int value) {
  auto builder = sender->MakeBuilder();
  TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
  message.add_value(value);
  builder.CheckOk(builder.Send(message.Finish()));
}

void SendReply(Sender<TestReply>* sender, int value) {
  auto builder = sender->MakeBuilder();
  TestReply::Builder reply = builder.MakeBuilder<TestReply>();
  reply.add_value(value);
  builder.CheckOk(builder.Send(reply.Finish()));
}

// pi1's sensor reads every 10 ms and takes 1 ms to send; /sensor crosses to
// pi2 in 250 us; pi2's controller takes 2 ms and sends /command, which
// crosses back in 400 us to pi1's actor. pi2's clock is 100 s ahead.
//
//   sensor timer "read" (pi1) -> /sensor -> controller (pi2) -> /command
//     -> actor (pi1): 2 hops, 1 + 0.25 + 2 + 0.4 = 3.65 ms old.
TEST(PathLatencyTest, ChainAcrossTwoNodesHasExactAgesAndHops) {
  const FlatbufferDetachedBuffer<Configuration> config = Read(R"({
    "nodes": [ { "name": "pi1", "hostname": "pi1" },
               { "name": "pi2", "hostname": "pi2" } ],
    "channels": [
      { "name": "/aos", "type": "aos.timing.Report", "source_node": "pi1",
        "frequency": 50, "max_size": 16384 },
      { "name": "/aos", "type": "aos.timing.Report", "source_node": "pi2",
        "frequency": 50, "max_size": 16384 },
      { "name": "/sensor", "type": "aos.testing.TestMessage",
        "source_node": "pi1", "frequency": 200,
        "destination_nodes": [ { "name": "pi2" } ] },
      { "name": "/command", "type": "aos.testing.TestReply",
        "source_node": "pi2", "frequency": 200,
        "destination_nodes": [ { "name": "pi1" } ] } ],
    "maps": [
      { "match": { "name": "/aos", "source_node": "pi1" },
        "rename": { "name": "/aos" } } ] })");
  const Node* pi1 = configuration::GetNode(config.message(), "pi1");
  const Node* pi2 = configuration::GetNode(config.message(), "pi2");
  SimulatedEventLoopFactory factory(&config.message());
  factory.SetMonotonicOffset(pi2, std::chrono::seconds(100));
  factory.SetLinkDelay(pi1, pi2, microseconds(250));
  factory.SetLinkDelay(pi2, pi1, microseconds(400));

  auto sensor = factory.MakeEventLoop("sensor", pi1);
  auto controller = factory.MakeEventLoop("controller", pi2);
  auto actor = factory.MakeEventLoop("actor", pi1);
  for (EventLoop* loop : {sensor.get(), controller.get(), actor.get()}) {
    loop->SkipTimingReport();
  }
  Sender<TestMessage> readings = sensor->MakeSender<TestMessage>("/sensor");
  Sender<TestReply> commands = controller->MakeSender<TestReply>("/command");
  std::vector<monotonic_clock::time_point> reads;
  TimerHandler* read = sensor->AddTimer([&]() {
    reads.push_back(sensor->context().monotonic_event_time);
    factory.AdvanceTime(milliseconds(1));
    SendValue(&readings, static_cast<int>(reads.size()));
  });
  read->set_name("read");
  sensor->OnRun([&]() {
    read->Schedule(sensor->monotonic_now() + milliseconds(10),
                   milliseconds(10));
  });
  std::vector<PathOrigins> at_controller;
  controller->MakeWatcher("/sensor", [&](const TestMessage& message) {
    at_controller.push_back(controller->context().origins);
    factory.AdvanceTime(milliseconds(2));
    SendReply(&commands, message.value());
  });
  std::vector<PathOrigins> at_actor;
  std::vector<monotonic_clock::time_point> actor_starts;
  actor->MakeWatcher("/command", [&](const TestReply&) {
    at_actor.push_back(actor->context().origins);
    actor_starts.push_back(actor->monotonic_now());
  });
  factory.RunFor(milliseconds(55));

  const uint32_t id = PathOriginId("pi1", "sensor", "timer", "read");
  ASSERT_EQ(reads.size(), 5u);
  ASSERT_EQ(at_actor.size(), 5u);
  for (size_t i = 0; i < reads.size(); ++i) {
    const int64_t read_ns = reads[i].time_since_epoch().count();
    // On pi2, the origin is in pi2's clock: exactly 100 s later.
    ASSERT_EQ(at_controller[i].size(), 1u);
    EXPECT_EQ(at_controller[i].begin()->id, id);
    EXPECT_EQ(at_controller[i].begin()->hops, 1);
    EXPECT_EQ(at_controller[i].begin()->monotonic_time_ns,
              read_ns + 100'000'000'000);
    EXPECT_EQ(at_controller[i].begin()->uncertainty_us, 0);
    // Back on pi1, in pi1's clock, two hops on.
    ASSERT_EQ(at_actor[i].size(), 1u);
    EXPECT_EQ(at_actor[i].begin()->hops, 2);
    EXPECT_EQ(at_actor[i].begin()->monotonic_time_ns, read_ns);
    EXPECT_EQ(actor_starts[i] - reads[i], microseconds(3650));
  }
  const timing::PathTimings& controller_paths =
      controller->watchers()[0]->timing().paths;
  ASSERT_EQ(controller_paths.size(), 1u);
  EXPECT_EQ(controller_paths.begin()->age.histogram().min_ns(), 1'250'000);
  EXPECT_EQ(controller_paths.begin()->age.histogram().max_ns(), 1'250'000);
  const timing::PathTimings& actor_paths = actor->watchers()[0]->timing().paths;
  ASSERT_EQ(actor_paths.size(), 1u);
  const timing::PathTiming& path = *actor_paths.begin();
  EXPECT_EQ(path.origin_id, id);
  EXPECT_EQ(path.hops, 2u);
  EXPECT_EQ(path.count(), 5u);
  EXPECT_EQ(path.age.histogram().min_ns(), 3'650'000);
  EXPECT_EQ(path.age.histogram().max_ns(), 3'650'000);
  EXPECT_EQ(path.max_uncertainty_ns, 0);
  EXPECT_EQ(sensor->timers()[0]->timing().origin_id, id);
}

// A deadline counts the ages over it.
TEST(PathLatencyTest, DeadlineOverrunsAreCounted) {
  const FlatbufferDetachedBuffer<Configuration> config = Read(R"({
    "channels": [
      { "name": "/aos", "type": "aos.timing.Report", "frequency": 50,
        "max_size": 16384 },
      { "name": "/test", "type": "aos.testing.TestMessage",
        "frequency": 1000 } ] })");
  SimulatedEventLoopFactory factory(&config.message());
  auto source = factory.MakeEventLoop("source");
  auto sink = factory.MakeEventLoop("sink");
  source->SkipTimingReport();
  sink->SkipTimingReport();
  Sender<TestMessage> sender = source->MakeSender<TestMessage>("/test");
  int sent = 0;
  TimerHandler* timer = source->AddTimer([&]() {
    // 1, 2, 3, 4 ms late to send.
    factory.AdvanceTime(milliseconds(++sent));
    SendValue(&sender, sent);
  });
  source->OnRun(
      [&]() { timer->Schedule(source->monotonic_now(), milliseconds(10)); });
  sink->MakeWatcher("/test", [](const TestMessage&) {});
  sink->SetPathDeadline("/test", milliseconds(2));
  factory.RunFor(milliseconds(35));
  const timing::PathTimings& paths = sink->watchers()[0]->timing().paths;
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths.deadline_ns(), 2'000'000);
  EXPECT_EQ(paths.begin()->count(), 4u);
  // 3 and 4 ms are over 2 ms; 2 ms is not.
  EXPECT_EQ(paths.begin()->deadline_overruns, 2u);
}

// The config can declare the deadline for an application; one that names
// no channel of the config is one line naming it, and exit 1.
TEST(PathLatencyTest, DeadlinesDeclaredInTheConfig) {
  const FlatbufferDetachedBuffer<Configuration> config = Read(R"({
    "channels": [
      { "name": "/test", "type": "aos.testing.TestMessage",
        "frequency": 1000 } ],
    "applications": [
      { "name": "sink",
        "path_deadlines": [ { "channel": "/test", "deadline_ns": 3000000 } ] },
      { "name": "typo",
        "path_deadlines": [ { "channel": "/tset", "deadline_ns": 3000000 } ] }
    ] })");
  SimulatedEventLoopFactory factory(&config.message());
  auto sink = factory.MakeEventLoop("sink");
  sink->SkipTimingReport();
  Fetcher<TestMessage> fetcher = sink->MakeFetcher<TestMessage>("/test");
  factory.RunFor(milliseconds(1));
  EXPECT_EQ(sink->fetchers()[0]->timing().paths.deadline_ns(), 3000000);

  EXPECT_EXIT(
      {
        SimulatedEventLoopFactory other(&config.message());
        auto typo = other.MakeEventLoop("typo");
        typo->SkipTimingReport();
        other.RunFor(milliseconds(1));
      },
      ::testing::ExitedWithCode(1),
      "event loop typo: the configuration's application typo has "
      "path_deadlines \\{channel /tset, deadline_ns 3000000\\}: no channel "
      "of the configuration has that name");
}

// --path_origins=false: messages carry none (what path latency costs is
// measured against it).
TEST(PathLatencyTest, PathOriginsFlagTurnsThemOff) {
  gflags::FlagSaver saver;
  FLAGS_path_origins = false;
  const FlatbufferDetachedBuffer<Configuration> config = Read(R"({
    "channels": [
      { "name": "/test", "type": "aos.testing.TestMessage",
        "frequency": 1000 } ] })");
  SimulatedEventLoopFactory factory(&config.message());
  auto source = factory.MakeEventLoop("source");
  auto sink = factory.MakeEventLoop("sink");
  Sender<TestMessage> sender = source->MakeSender<TestMessage>("/test");
  TimerHandler* timer = source->AddTimer([&]() { SendValue(&sender, 1); });
  source->OnRun([&]() { timer->Schedule(source->monotonic_now()); });
  int got = 0;
  sink->MakeWatcher("/test", [&](const TestMessage&) {
    ++got;
    EXPECT_TRUE(sink->context().origins.empty());
  });
  factory.RunFor(milliseconds(1));
  EXPECT_EQ(got, 1);
  EXPECT_EQ(sink->watchers()[0]->timing().paths.size(), 0u);
}

// A controller fuses five sensors into one command: the command carries the
// newest four origins, and the one left out is counted by its sender.
TEST(PathLatencyTest, MoreOriginsThanAMessageCarriesAreCounted) {
  const FlatbufferDetachedBuffer<Configuration> config = Read(R"({
    "channels": [
      { "name": "/aos", "type": "aos.timing.Report", "frequency": 50,
        "max_size": 16384 },
      { "name": "/s0", "type": "aos.testing.TestMessage", "frequency": 100 },
      { "name": "/s1", "type": "aos.testing.TestMessage", "frequency": 100 },
      { "name": "/s2", "type": "aos.testing.TestMessage", "frequency": 100 },
      { "name": "/s3", "type": "aos.testing.TestMessage", "frequency": 100 },
      { "name": "/s4", "type": "aos.testing.TestMessage", "frequency": 100 },
      { "name": "/command", "type": "aos.testing.TestReply",
        "frequency": 100 } ] })");
  SimulatedEventLoopFactory factory(&config.message());
  auto sensors = factory.MakeEventLoop("sensors");
  auto fusion = factory.MakeEventLoop("fusion");
  auto actor = factory.MakeEventLoop("actor");
  for (EventLoop* loop : {sensors.get(), fusion.get(), actor.get()}) {
    loop->SkipTimingReport();
  }
  std::vector<Sender<TestMessage>> senders;
  std::vector<Fetcher<TestMessage>> fetchers;
  for (int i = 0; i < 5; ++i) {
    const std::string channel = "/s" + std::to_string(i);
    senders.push_back(sensors->MakeSender<TestMessage>(channel));
    fetchers.push_back(fusion->MakeFetcher<TestMessage>(channel));
  }
  for (int i = 0; i < 5; ++i) {
    TimerHandler* timer =
        sensors->AddTimer([&, i]() { SendValue(&senders[i], i); });
    timer->set_name("s" + std::to_string(i));
    // s0 reads first (the oldest), s4 last.
    sensors->OnRun([&, timer, i]() {
      timer->Schedule(sensors->monotonic_now() + milliseconds(1 + i));
    });
  }
  Sender<TestReply> commands = fusion->MakeSender<TestReply>("/command");
  TimerHandler* fuse = fusion->AddTimer([&]() {
    for (Fetcher<TestMessage>& fetcher : fetchers) fetcher.Fetch();
    SendReply(&commands, 1);
  });
  fusion->OnRun(
      [&]() { fuse->Schedule(fusion->monotonic_now() + milliseconds(10)); });
  PathOrigins at_actor;
  actor->MakeWatcher("/command", [&](const TestReply&) {
    at_actor = actor->context().origins;
  });
  factory.RunFor(milliseconds(20));

  ASSERT_EQ(at_actor.size(), kMaxPathOrigins);
  std::vector<uint32_t> ids;
  for (const PathOrigin& origin : at_actor) ids.push_back(origin.id);
  auto id = [](int i) {
    return PathOriginId("", "sensors", "timer", "s" + std::to_string(i));
  };
  EXPECT_THAT(ids, ::testing::UnorderedElementsAre(id(1), id(2), id(3), id(4)));
  EXPECT_EQ(at_actor.dropped(), 1u);
  EXPECT_EQ(fusion->senders()[0]->timing().sent_origins.dropped(), 1u);
  // Each fetch measured its own path.
  ASSERT_EQ(fusion->fetchers().size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const timing::PathTimings& paths = fusion->fetchers()[i]->timing().paths;
    ASSERT_EQ(paths.size(), 1u);
    EXPECT_EQ(paths.begin()->age.histogram().max_ns(),
              std::chrono::nanoseconds(milliseconds(10 - 1 - i)).count());
  }
}

}  // namespace
}  // namespace aos::testing
