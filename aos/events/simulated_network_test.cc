// The simulated network between nodes: forwarded messages arrive after the
// link's delay with the remote fields the message bridge fills, and loss,
// expiry, disconnects and reboots behave as documented, with exact counts
// and times.
#include "aos/events/simulated_network.h"

#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/remote_message_generated.h"
#include "aos/network/server_statistics_generated.h"
#include "aos/testing/allocation_counter.h"
#include "aos/testing/test_message_generated.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::testing {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using ::testing::ElementsAre;

// /reliable (time_to_live 0) and /lossy (best effort, 50 ms to live) from
// pi1 to pi2; pi2's clock runs 100 s ahead.
class SimulatedNetworkTest : public ::testing::Test {
 protected:
  SimulatedNetworkTest()
      : config_(Read(R"({
          "nodes": [ { "name": "pi1", "hostname": "pi1" },
                     { "name": "pi2", "hostname": "pi2" } ],
          "channels": [
            { "name": "/reliable", "type": "aos.testing.TestMessage",
              "source_node": "pi1", "frequency": 1000,
              "destination_nodes": [ { "name": "pi2" } ] },
            { "name": "/lossy", "type": "aos.testing.TestMessage",
              "source_node": "pi1", "frequency": 1000,
              "destination_nodes": [ { "name": "pi2",
                                       "time_to_live": 50000000 } ] } ] })")),
        pi1_(configuration::GetNode(config_.message(), "pi1")),
        pi2_(configuration::GetNode(config_.message(), "pi2")),
        factory_(&config_.message()) {
    factory_.SetMonotonicOffset(pi2_, std::chrono::seconds(100));
    sender_loop_ = factory_.MakeEventLoop("sender", pi1_);
    receiver_loop_ = factory_.MakeEventLoop("receiver", pi2_);
  }
  ~SimulatedNetworkTest() override {
    reliable_ = {};
    lossy_ = {};
    sender_loop_.reset();
    receiver_loop_.reset();
  }

  static FlatbufferDetachedBuffer<Configuration> Read(std::string_view json) {
    auto config = configuration::ReadConfigFromJson(json);
    CHECK(config.ok()) << config.status().message();
    return std::move(config).value();
  }

  // Sends `count` messages on `sender`, one a millisecond, values 1..count.
  void SendEveryMillisecond(Sender<TestMessage>* sender, int count) {
    int value = 0;
    TimerHandler* timer = sender_loop_->AddTimer(
        [this, sender, &value, count, timer_ptr = &timer_]() {
          auto builder = sender->MakeBuilder();
          TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
          message.add_value(++value);
          builder.CheckOk(builder.Send(message.Finish()));
          if (value == count) (*timer_ptr)->Disable();
        });
    timer_ = timer;
    sender_loop_->OnRun([this]() {
      timer_->Schedule(sender_loop_->monotonic_now(), milliseconds(1));
    });
    factory_.RunFor(milliseconds(count + 100));
  }

  // The values and contexts a pi2 watcher of `channel` got.
  void Watch(std::string_view channel) {
    receiver_loop_->MakeWatcher(channel, [this](const TestMessage& message) {
      values_.push_back(message.value());
      contexts_.push_back(receiver_loop_->context());
    });
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* const pi1_;
  const Node* const pi2_;
  SimulatedEventLoopFactory factory_;
  std::unique_ptr<EventLoop> sender_loop_;
  std::unique_ptr<EventLoop> receiver_loop_;
  Sender<TestMessage> reliable_;
  Sender<TestMessage> lossy_;
  TimerHandler* timer_ = nullptr;
  std::vector<int> values_;
  std::vector<Context> contexts_;
};

TEST_F(SimulatedNetworkTest, ArrivesAfterTheDelayWithTheRemoteFields) {
  factory_.SetLinkDelay(pi1_, pi2_, microseconds(250));
  reliable_ = sender_loop_->MakeSender<TestMessage>("/reliable");
  Watch("/reliable");
  SendEveryMillisecond(&reliable_, 3);
  ASSERT_THAT(values_, ElementsAre(1, 2, 3));
  for (size_t i = 0; i < contexts_.size(); ++i) {
    const Context& context = contexts_[i];
    // Sent on pi1 at i ms; re-sent on pi2 250 us later, on pi2's clock.
    const monotonic_clock::time_point sent{milliseconds(i)};
    EXPECT_EQ(context.monotonic_remote_time, sent);
    EXPECT_EQ(context.monotonic_event_time,
              sent + std::chrono::seconds(100) + microseconds(250));
    EXPECT_EQ(context.remote_queue_index, i);
    EXPECT_EQ(context.queue_index, i);
    EXPECT_EQ(context.source_boot_uuid, factory_.boot_uuid(pi1_));
    EXPECT_NE(context.source_boot_uuid, factory_.boot_uuid(pi2_));
    EXPECT_EQ(context.realtime_remote_time.time_since_epoch(),
              sent.time_since_epoch() + std::chrono::seconds(1767225600));
  }
  // The watcher's wakeup latency is its own delivery on pi2: 0 here.
  EXPECT_EQ(
      receiver_loop_->watchers()[0]->timing().wakeup_latency.statistic().max(),
      0);
  const SimulatedNetwork::LinkStatistics stats =
      factory_.link_statistics(pi1_, pi2_);
  EXPECT_EQ(stats.forwarded, 3u);
  EXPECT_EQ(stats.delivered, 3u);
}

TEST_F(SimulatedNetworkTest, BestEffortLossIsExact) {
  factory_.SetLinkLoss(pi1_, pi2_, 0.25);
  lossy_ = sender_loop_->MakeSender<TestMessage>("/lossy");
  Watch("/lossy");
  SendEveryMillisecond(&lossy_, 100);
  ASSERT_EQ(values_.size(), 75u);
  // Every fourth is lost.
  EXPECT_THAT(std::vector<int>(values_.begin(), values_.begin() + 4),
              ElementsAre(1, 2, 3, 5));
  // What arrives arrives on time (the default 100 us delay), with its queue
  // index on pi1; pi2's queue has no gaps.
  for (size_t i = 0; i < values_.size(); ++i) {
    const int sent_ms = values_[i] - 1;
    EXPECT_EQ(
        contexts_[i].monotonic_event_time.time_since_epoch(),
        std::chrono::seconds(100) + milliseconds(sent_ms) + microseconds(100));
    EXPECT_EQ(contexts_[i].remote_queue_index, static_cast<uint32_t>(sent_ms));
    EXPECT_EQ(contexts_[i].queue_index, i);
  }
  const SimulatedNetwork::LinkStatistics stats =
      factory_.link_statistics(pi1_, pi2_);
  EXPECT_EQ(stats.forwarded, 100u);
  EXPECT_EQ(stats.lost, 25u);
  EXPECT_EQ(stats.delivered, 75u);
}

TEST_F(SimulatedNetworkTest, ReliableLossArrivesLateButInOrder) {
  factory_.SetLinkDelay(pi1_, pi2_, microseconds(100));
  factory_.SetLinkLoss(pi1_, pi2_, 0.5);
  reliable_ = sender_loop_->MakeSender<TestMessage>("/reliable");
  Watch("/reliable");
  SendEveryMillisecond(&reliable_, 4);
  ASSERT_THAT(values_, ElementsAre(1, 2, 3, 4));
  const auto offset = std::chrono::seconds(100);
  // Messages 2 and 4 were lost once: retransmitted, two delays later.
  EXPECT_EQ(contexts_[0].monotonic_event_time.time_since_epoch(),
            offset + microseconds(100));
  EXPECT_EQ(contexts_[1].monotonic_event_time.time_since_epoch(),
            offset + milliseconds(1) + microseconds(300));
  const SimulatedNetwork::LinkStatistics stats =
      factory_.link_statistics(pi1_, pi2_);
  EXPECT_EQ(stats.retransmitted, 2u);
  EXPECT_EQ(stats.delivered, 4u);
  EXPECT_EQ(stats.lost, 0u);
}

TEST_F(SimulatedNetworkTest, MessagesOlderThanTheirTimeToLiveAreDropped) {
  factory_.SetLinkDelay(pi1_, pi2_, milliseconds(60));  // > 50 ms to live.
  lossy_ = sender_loop_->MakeSender<TestMessage>("/lossy");
  Watch("/lossy");
  SendEveryMillisecond(&lossy_, 5);
  EXPECT_TRUE(values_.empty());
  EXPECT_EQ(factory_.link_statistics(pi1_, pi2_).dropped_expired, 5u);
}

TEST_F(SimulatedNetworkTest, DisconnectDropsAndReconnectResendsTheLatest) {
  reliable_ = sender_loop_->MakeSender<TestMessage>("/reliable");
  lossy_ = sender_loop_->MakeSender<TestMessage>("/lossy");
  Watch("/reliable");
  factory_.DisconnectLink(pi1_, pi2_);
  SendEveryMillisecond(&reliable_, 3);
  EXPECT_TRUE(values_.empty());
  const monotonic_clock::time_point reconnected = factory_.monotonic_now(pi2_);
  factory_.ConnectLink(pi1_, pi2_);
  factory_.RunFor(milliseconds(1));
  // The latest reliable message, as AOS's bridge sends a reconnecting
  // client: sent at 2 ms, re-sent one link delay after the reconnection.
  ASSERT_THAT(values_, ElementsAre(3));
  EXPECT_EQ(contexts_[0].monotonic_remote_time,
            monotonic_clock::time_point(milliseconds(2)));
  EXPECT_EQ(contexts_[0].remote_queue_index, 2u);
  EXPECT_EQ(contexts_[0].monotonic_event_time, reconnected + microseconds(100));
  const SimulatedNetwork::LinkStatistics stats =
      factory_.link_statistics(pi1_, pi2_);
  EXPECT_EQ(stats.dropped_disconnected, 3u);
  EXPECT_EQ(stats.delivered, 1u);
}

TEST_F(SimulatedNetworkTest, ARebootedNodeSendsWithANewBoot) {
  reliable_ = sender_loop_->MakeSender<TestMessage>("/reliable");
  Watch("/reliable");
  const UUID before = factory_.boot_uuid(pi1_);
  SendEveryMillisecond(&reliable_, 1);
  // A reboot ends pi1's processes: its loop goes, and a new one comes.
  reliable_ = {};
  sender_loop_.reset();
  factory_.RebootNode(pi1_);
  const UUID after = factory_.boot_uuid(pi1_);
  EXPECT_NE(before, after);
  sender_loop_ = factory_.MakeEventLoop("sender", pi1_);
  reliable_ = sender_loop_->MakeSender<TestMessage>("/reliable");
  auto builder = reliable_.MakeBuilder();
  builder.CheckOk(builder.Send(builder.MakeBuilder<TestMessage>().Finish()));
  factory_.RunFor(milliseconds(1));
  ASSERT_EQ(contexts_.size(), 2u);
  EXPECT_EQ(contexts_[0].source_boot_uuid, before);
  EXPECT_EQ(contexts_[1].source_boot_uuid, after);
  // pi1's queue started over: both were its first message, told apart by
  // the boot only. pi2's queue, not rebooted, goes on.
  EXPECT_EQ(contexts_[0].remote_queue_index, 0u);
  EXPECT_EQ(contexts_[1].remote_queue_index, 0u);
  EXPECT_EQ(contexts_[0].queue_index, 0u);
  EXPECT_EQ(contexts_[1].queue_index, 1u);
  // Sent at 0 and at 101 ms (after SendEveryMillisecond's 100 ms more),
  // each re-sent on pi2 one link delay later.
  EXPECT_EQ(contexts_[0].monotonic_remote_time,
            monotonic_clock::time_point(milliseconds(0)));
  EXPECT_EQ(contexts_[1].monotonic_remote_time,
            monotonic_clock::time_point(milliseconds(101)));
  EXPECT_EQ(contexts_[1].monotonic_event_time.time_since_epoch(),
            std::chrono::seconds(100) + milliseconds(101) + microseconds(100));
  EXPECT_EQ(factory_.link_statistics(pi1_, pi2_).delivered, 2u);
}

TEST_F(SimulatedNetworkTest, RebootingANodeWithALoopIsRefused) {
  EXPECT_DEATH(factory_.RebootNode(pi1_),
               "RebootNode \\(destroy the node's loops first\\): node "
               "already has event loop sender");
}

TEST_F(SimulatedNetworkTest, ForwardingNeverAllocates) {
  factory_.SetLinkLoss(pi1_, pi2_, 0.1);
  reliable_ = sender_loop_->MakeSender<TestMessage>("/reliable");
  lossy_ = sender_loop_->MakeSender<TestMessage>("/lossy");
  Watch("/lossy");
  values_.reserve(1000);
  contexts_.reserve(1000);
  int value = 0;
  TimerHandler* timer = sender_loop_->AddTimer([&]() {
    for (Sender<TestMessage>* sender : {&reliable_, &lossy_}) {
      auto builder = sender->MakeBuilder();
      TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
      message.add_value(++value);
      builder.CheckOk(builder.Send(message.Finish()));
    }
  });
  sender_loop_->OnRun([&]() {
    timer->Schedule(sender_loop_->monotonic_now(), milliseconds(1));
  });
  factory_.RunFor(milliseconds(10));  // Everything set up and running.
  const uint64_t before = HeapAllocations();
  factory_.RunFor(milliseconds(300));
  EXPECT_EQ(HeapAllocations() - before, 0u);
  EXPECT_GT(values_.size(), 200u);
}

FlatbufferDetachedBuffer<Configuration> ReadConfig(std::string_view json) {
  auto config = configuration::ReadConfigFromJson(json);
  CHECK(config.ok()) << config.status().message();
  return std::move(config).value();
}

// The same config with the message bridge's channels: each node's
// ServerStatistics and ClientStatistics on its /aos, and pi1's remote
// timestamps from pi2 (/reliable's come back).
class SimulatedBridgeStatisticsTest : public ::testing::Test {
 protected:
  SimulatedBridgeStatisticsTest()
      : config_(ReadConfig(R"({
          "nodes": [ { "name": "pi1", "hostname": "pi1" },
                     { "name": "pi2", "hostname": "pi2" } ],
          "channels": [
            { "name": "/pi1/aos", "source_node": "pi1", "frequency": 10,
              "type": "aos.message_bridge.ServerStatistics",
              "max_size": 2048 },
            { "name": "/pi2/aos", "source_node": "pi2", "frequency": 10,
              "type": "aos.message_bridge.ServerStatistics",
              "max_size": 2048 },
            { "name": "/pi1/aos", "source_node": "pi1", "frequency": 10,
              "type": "aos.message_bridge.ClientStatistics",
              "max_size": 16384 },
            { "name": "/pi2/aos", "source_node": "pi2", "frequency": 10,
              "type": "aos.message_bridge.ClientStatistics",
              "max_size": 16384 },
            { "name": "/pi1/aos/remote_timestamps/pi2", "source_node": "pi1",
              "type": "aos.message_bridge.RemoteMessage", "frequency": 2000,
              "max_size": 200 },
            { "name": "/reliable", "type": "aos.testing.TestMessage",
              "source_node": "pi1", "frequency": 1000,
              "destination_nodes": [ { "name": "pi2",
                                       "timestamp_logger": "REMOTE_LOGGER",
                                       "timestamp_logger_nodes": ["pi1"] } ] },
            { "name": "/lossy", "type": "aos.testing.TestMessage",
              "source_node": "pi1", "frequency": 1000,
              "destination_nodes": [ { "name": "pi2",
                                       "time_to_live": 50000000 } ] },
            { "name": "/paced", "type": "aos.testing.TestMessage",
              "source_node": "pi1", "frequency": 10,
              "channel_storage_duration": 1000000000,
              "destination_nodes": [ { "name": "pi2" } ] } ],
          "maps": [
            { "match": { "name": "/aos*", "source_node": "pi1" },
              "rename": { "name": "/pi1/aos" } },
            { "match": { "name": "/aos*", "source_node": "pi2" },
              "rename": { "name": "/pi2/aos" } } ] })")),
        pi1_(configuration::GetNode(config_.message(), "pi1")),
        pi2_(configuration::GetNode(config_.message(), "pi2")),
        factory_(&config_.message()) {
    factory_.SetMonotonicOffset(pi2_, std::chrono::seconds(100));
    MakePi1Loops();
    observer2_ = factory_.MakeEventLoop("observer", pi2_);
    client2_ =
        observer2_->MakeFetcher<message_bridge::ClientStatistics>("/aos");
    server2_ =
        observer2_->MakeFetcher<message_bridge::ServerStatistics>("/aos");
  }
  ~SimulatedBridgeStatisticsTest() override {
    DestroyPi1Loops();
    client2_ = {};
    server2_ = {};
    observer2_.reset();
  }

  void MakePi1Loops() {
    pi1_loop_ = factory_.MakeEventLoop("sender", pi1_);
    reliable_ = pi1_loop_->MakeSender<TestMessage>("/reliable");
    lossy_ = pi1_loop_->MakeSender<TestMessage>("/lossy");
    server1_ = pi1_loop_->MakeFetcher<message_bridge::ServerStatistics>("/aos");
    pi1_loop_->MakeWatcher(
        "/aos/remote_timestamps/pi2",
        [this](const message_bridge::RemoteMessage& message) {
          timestamps_.push_back(
              {message.channel_index(), message.queue_index(),
               message.remote_queue_index(), message.monotonic_remote_time(),
               message.monotonic_sent_time(),
               keep_boots_ ? message.boot_uuid()->str() : std::string()});
        });
  }
  void DestroyPi1Loops() {
    reliable_ = {};
    lossy_ = {};
    server1_ = {};
    pi1_loop_.reset();
  }

  // Sends `count` messages on `sender` from pi1, one a millisecond, and
  // runs until they arrived.
  void Send(Sender<TestMessage>* sender, int count) {
    factory_.RunFor(milliseconds(1));  // The loops run.
    int sent = 0;
    TimerHandler* timer = nullptr;
    timer = pi1_loop_->AddTimer([&]() {
      auto builder = sender->MakeBuilder();
      TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
      message.add_value(++sent);
      builder.CheckOk(builder.Send(message.Finish()));
      if (sent == count) timer->Disable();
    });
    timer->Schedule(pi1_loop_->monotonic_now(), milliseconds(1));
    factory_.RunFor(milliseconds(count + 10));
  }

  struct Timestamp {
    int32_t channel_index;
    uint32_t queue_index;
    uint32_t remote_queue_index;
    int64_t monotonic_remote_time;
    int64_t monotonic_sent_time;
    std::string boot;
  };

  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* const pi1_;
  const Node* const pi2_;
  SimulatedEventLoopFactory factory_;
  std::unique_ptr<EventLoop> pi1_loop_;
  std::unique_ptr<EventLoop> observer2_;
  Sender<TestMessage> reliable_;
  Sender<TestMessage> lossy_;
  Fetcher<message_bridge::ServerStatistics> server1_;
  Fetcher<message_bridge::ClientStatistics> client2_;
  Fetcher<message_bridge::ServerStatistics> server2_;
  std::vector<Timestamp> timestamps_;
  // Whether timestamps_ keeps each boot's text (which allocates).
  bool keep_boots_ = true;
};

// Every count says what the simulated network did, in the bridge's words:
// loss as gaps, disconnects after the bridge's second without probes,
// reconnects, a reboot, the exact clock offset, remote timestamps of each
// re-send; and publishing them allocates nothing.
TEST_F(SimulatedBridgeStatisticsTest, CountsWhatTheNetworkDid) {
  factory_.SetLinkLoss(pi1_, pi2_, 0.25);
  Send(&lossy_, 101);  // Every fourth lost: 25 gaps, 76 re-sent.
  factory_.SetLinkLoss(pi1_, pi2_, 0);
  Send(&reliable_, 10);
  const uint64_t before = HeapAllocations();
  factory_.RunFor(milliseconds(1000));  // Probes and a publication.
  EXPECT_EQ(HeapAllocations() - before, 0u);

  ASSERT_TRUE(server1_.Fetch());
  ASSERT_EQ(server1_->connections()->size(), 1u);
  const message_bridge::ServerConnection* to_pi2 =
      server1_->connections()->Get(0);
  EXPECT_EQ(to_pi2->node()->string_view(), "pi2");
  EXPECT_EQ(to_pi2->state(), message_bridge::State::CONNECTED);
  EXPECT_EQ(to_pi2->sent_packets(), 111u);
  EXPECT_EQ(to_pi2->dropped_packets(), 0u);
  EXPECT_EQ(to_pi2->delivered_packets(), 10u);
  EXPECT_EQ(to_pi2->connection_count(), 1u);
  EXPECT_EQ(to_pi2->disconnects(), 0u);
  EXPECT_EQ(to_pi2->boot_uuid()->string_view(),
            factory_.boot_uuid(pi2_).ToString());
  EXPECT_EQ(to_pi2->monotonic_offset(), 100'000'000'000);
  EXPECT_EQ(to_pi2->monotonic_offset_uncertainty(), 0);

  ASSERT_TRUE(client2_.Fetch());
  ASSERT_EQ(client2_->connections()->size(), 1u);
  const message_bridge::ClientConnection* from_pi1 =
      client2_->connections()->Get(0);
  EXPECT_EQ(from_pi1->node()->string_view(), "pi1");
  EXPECT_EQ(from_pi1->state(), message_bridge::State::CONNECTED);
  EXPECT_EQ(from_pi1->received_packets(), 86u);
  EXPECT_EQ(from_pi1->lost_packets(), 25u);
  EXPECT_EQ(from_pi1->duplicate_packets(), 0u);
  EXPECT_EQ(from_pi1->reboots(), 0u);
  EXPECT_EQ(from_pi1->monotonic_offset(), -100'000'000'000);
  EXPECT_EQ(from_pi1->monotonic_offset_uncertainty(), 0);
  // Every message took exactly the link's 100 us.
  ASSERT_NE(from_pi1->one_way_latency(), nullptr);
  EXPECT_FLOAT_EQ(from_pi1->one_way_latency()->min(), 100e-6f);
  EXPECT_FLOAT_EQ(from_pi1->one_way_latency()->max(), 100e-6f);

  // Remote timestamps: each reliable message, as re-sent on pi2.
  ASSERT_EQ(timestamps_.size(), 10u);
  for (size_t i = 0; i < timestamps_.size(); ++i) {
    EXPECT_EQ(timestamps_[i].remote_queue_index, i);
    EXPECT_EQ(timestamps_[i].queue_index, i);
    EXPECT_EQ(timestamps_[i].monotonic_sent_time -
                  timestamps_[i].monotonic_remote_time,
              100'000'000'000 + 100'000);
    EXPECT_EQ(timestamps_[i].boot, factory_.boot_uuid(pi2_).ToString());
  }

  // Both ways down: best-effort messages sent meanwhile are dropped, and a
  // second later each side says the other is gone.
  factory_.DisconnectLink(pi1_, pi2_);
  factory_.DisconnectLink(pi2_, pi1_);
  Send(&lossy_, 5);
  factory_.RunFor(milliseconds(2000));
  ASSERT_TRUE(server1_.Fetch());
  EXPECT_EQ(server1_->connections()->Get(0)->state(),
            message_bridge::State::DISCONNECTED);
  EXPECT_EQ(server1_->connections()->Get(0)->dropped_packets(), 5u);
  EXPECT_EQ(server1_->connections()->Get(0)->sent_packets(), 116u);
  ASSERT_TRUE(client2_.Fetch());
  EXPECT_EQ(client2_->connections()->Get(0)->state(),
            message_bridge::State::DISCONNECTED);
  EXPECT_EQ(client2_->connections()->Get(0)->disconnects(), 1u);

  // Back: a new connection, and the five dropped are a gap.
  factory_.ConnectLink(pi1_, pi2_);
  factory_.ConnectLink(pi2_, pi1_);
  Send(&lossy_, 1);
  factory_.RunFor(milliseconds(1000));
  ASSERT_TRUE(client2_.Fetch());
  from_pi1 = client2_->connections()->Get(0);
  EXPECT_EQ(from_pi1->state(), message_bridge::State::CONNECTED);
  EXPECT_EQ(from_pi1->connection_count(), 2u);
  EXPECT_EQ(from_pi1->lost_packets(), 30u);
  EXPECT_EQ(from_pi1->received_packets(), 87u);

  // pi1 reboots: pi2 counts a reboot, a new connection and the new boot;
  // pi1's bridge starts over.
  DestroyPi1Loops();
  factory_.RebootNode(pi1_);
  MakePi1Loops();
  Send(&reliable_, 1);
  factory_.RunFor(milliseconds(1000));
  ASSERT_TRUE(client2_.Fetch());
  from_pi1 = client2_->connections()->Get(0);
  EXPECT_EQ(from_pi1->reboots(), 1u);
  EXPECT_EQ(from_pi1->connection_count(), 3u);
  EXPECT_EQ(from_pi1->boot_uuid()->string_view(),
            factory_.boot_uuid(pi1_).ToString());
  EXPECT_EQ(from_pi1->received_packets(), 88u);
  EXPECT_EQ(from_pi1->lost_packets(), 30u);
  ASSERT_TRUE(server1_.Fetch());
  EXPECT_EQ(server1_->connections()->Get(0)->sent_packets(), 1u);
  EXPECT_EQ(server1_->connections()->Get(0)->delivered_packets(), 1u);
}

// Counting what crosses, remote timestamps and the statistics' probes and
// publications allocate nothing once the loops run, loss included.
TEST_F(SimulatedBridgeStatisticsTest, ForwardingWithStatisticsNeverAllocates) {
  // Every fourth message on the link: every second of /lossy.
  factory_.SetLinkLoss(pi1_, pi2_, 0.25);
  timestamps_.reserve(5000);
  keep_boots_ = false;
  int value = 0;
  TimerHandler* timer = pi1_loop_->AddTimer([&]() {
    for (Sender<TestMessage>* sender : {&reliable_, &lossy_}) {
      auto builder = sender->MakeBuilder();
      TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
      message.add_value(++value);
      builder.CheckOk(builder.Send(message.Finish()));
    }
  });
  pi1_loop_->OnRun(
      [&]() { timer->Schedule(pi1_loop_->monotonic_now(), milliseconds(1)); });
  factory_.RunFor(milliseconds(10));  // Everything set up and running.
  const uint64_t before = HeapAllocations();
  factory_.RunFor(milliseconds(2500));
  EXPECT_EQ(HeapAllocations() - before, 0u);
  EXPECT_GT(timestamps_.size(), 2000u);
  ASSERT_TRUE(client2_.Fetch());
  EXPECT_GT(client2_->connections()->Get(0)->lost_packets(), 900u);
}

// /paced holds 10 messages a second. pi1 sends 20 at exactly that rate,
// but the link's delay falls from `first_delay` to 100 us after the tenth:
// the ten after it arrive at once, behind the tenth, faster than pi2's
// channel takes them. What pi2 re-sent, when; nothing allocates.
struct PacedBurst {
  std::vector<int> values;
  std::vector<monotonic_clock::time_point> resent;
};

class SimulatedPacingTest : public SimulatedBridgeStatisticsTest {
 protected:
  PacedBurst SendBurst(monotonic_clock::duration first_delay) {
    Sender<TestMessage> paced = pi1_loop_->MakeSender<TestMessage>("/paced");
    PacedBurst burst;
    burst.values.reserve(20);
    burst.resent.reserve(20);
    observer2_->MakeWatcher("/paced", [&](const TestMessage& message) {
      burst.values.push_back(message.value());
      burst.resent.push_back(observer2_->context().monotonic_event_time);
    });
    factory_.SetLinkDelay(pi1_, pi2_, first_delay);
    int sent = 0;
    TimerHandler* timer = pi1_loop_->AddTimer([&]() {
      auto builder = paced.MakeBuilder();
      TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
      message.add_value(++sent);
      builder.CheckOk(builder.Send(message.Finish()));
      if (sent == 10) factory_.SetLinkDelay(pi1_, pi2_, microseconds(100));
      if (sent == 20) timer->Disable();
    });
    pi1_loop_->OnRun([&]() {
      timer->Schedule(pi1_loop_->monotonic_now(), milliseconds(100));
    });
    factory_.RunFor(milliseconds(1));  // Everything set up and running.
    const uint64_t before = HeapAllocations();
    factory_.RunFor(std::chrono::seconds(5));
    EXPECT_EQ(HeapAllocations() - before, 0u);
    return burst;
  }

  const message_bridge::ClientConnection* FromPi1() {
    if (!client2_.Fetch()) return nullptr;
    return client2_->connections()->Get(0);
  }
};

// From 1 s: the reliable channel loses none; each of the ten waits until
// the message ten before it on pi2 is a second old, and is counted once as
// paced.
TEST_F(SimulatedPacingTest, ABurstFasterThanTheChannelIsPaced) {
  const PacedBurst burst = SendBurst(std::chrono::seconds(1));
  ASSERT_EQ(burst.values.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(burst.values[i], i + 1);
  const monotonic_clock::time_point first = burst.resent[0];
  for (int i = 0; i < 10; ++i) {
    // The first ten as they arrived, 100 ms apart; each of the next ten
    // the moment the channel takes it.
    EXPECT_EQ(burst.resent[i], first + i * milliseconds(100));
    EXPECT_EQ(burst.resent[i + 10], burst.resent[i] + std::chrono::seconds(1));
  }
  const message_bridge::ClientConnection* from_pi1 = FromPi1();
  ASSERT_NE(from_pi1, nullptr);
  EXPECT_EQ(from_pi1->paced_packets(), 10u);
  EXPECT_EQ(from_pi1->dropped_send_failed(), 0u);
  EXPECT_EQ(from_pi1->lost_packets(), 0u);
  EXPECT_EQ(factory_.link_statistics(pi1_, pi2_).queue_full, 0u);
}

}  // namespace
}  // namespace aos::testing
