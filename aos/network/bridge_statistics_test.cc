// BridgeStatistics on simulated event loops (no DDS anywhere): what it
// publishes is exactly what it was told, peers go to the table their role
// says, a latency histogram is left out only where it would not fit,
// publishing allocates nothing, and a configuration without the channels
// is one line.
#include "aos/network/bridge_statistics.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/server_statistics_generated.h"
#include "aos/testing/allocation_counter.h"
#include "aos/testing/path.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kBoot[] = "0badb007-0000-4000-8000-000000000001";

// The example's two nodes, simulated: the statistics of a "message_bridge"
// loop on pi1, and a "listener" loop there that fetches what it publishes.
class BridgeStatisticsTest : public ::testing::Test {
 protected:
  BridgeStatisticsTest()
      : config_(configuration::ReadConfig(
                    aos::testing::ArtifactPath(
                        "examples/multinode_pingpong_config.json"))
                    .value()),
        pi1_(configuration::GetNode(config_.message(), "pi1")),
        factory_(&config_.message()),
        bridge_loop_(factory_.MakeEventLoop("message_bridge", pi1_)),
        listener_loop_(factory_.MakeEventLoop("listener", pi1_)),
        server_(listener_loop_->MakeFetcher<ServerStatistics>("/aos")),
        client_(listener_loop_->MakeFetcher<ClientStatistics>("/aos")) {}

  ~BridgeStatisticsTest() override {
    server_ = {};
    client_ = {};
    statistics_.reset();
    bridge_loop_.reset();
    listener_loop_.reset();
  }

  void MakeStatistics(const std::vector<BridgeStatistics::PeerSpec>& peers) {
    auto statistics = BridgeStatistics::Make(bridge_loop_.get(), peers);
    ASSERT_TRUE(statistics.ok()) << statistics.status();
    statistics_ = std::move(statistics).value();
  }

  // Publishes once, from a timer of the bridge's loop (as the bridge does),
  // and fetches both tables.
  void PublishAndFetch() {
    TimerHandler* timer =
        bridge_loop_->AddTimer([this]() { statistics_->Publish(); });
    timer->Schedule(bridge_loop_->monotonic_now() + milliseconds(10));
    factory_.RunFor(milliseconds(20));
    ASSERT_TRUE(server_.Fetch());
    ASSERT_TRUE(client_.Fetch());
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* const pi1_;
  SimulatedEventLoopFactory factory_;
  std::unique_ptr<EventLoop> bridge_loop_;
  std::unique_ptr<EventLoop> listener_loop_;
  Fetcher<ServerStatistics> server_;
  Fetcher<ClientStatistics> client_;
  std::unique_ptr<BridgeStatistics> statistics_;
};

// Every count, the link's state and the latency summary reach the fields
// docs/network.md names, for a peer that is both destination and source.
TEST_F(BridgeStatisticsTest, PublishesWhatItWasTold) {
  ASSERT_NO_FATAL_FAILURE(MakeStatistics(
      {{.name = "pi2", .is_destination = true, .is_source = true}}));
  ASSERT_EQ(statistics_->peer_count(), 1u);
  BridgeStatistics::Peer& pi2 = statistics_->peer(0);
  EXPECT_EQ(pi2.name, "pi2");
  pi2.sent = {.sent_packets = 11,
              .dropped_packets = 2,
              .delivered_packets = 9,
              .sent_bytes = 352};
  pi2.received.received_packets = 21;
  pi2.received.received_bytes = 672;
  pi2.received.duplicate_packets = 3;
  pi2.received.lost_packets = 4;
  pi2.received.dropped_unknown_channel = 5;
  pi2.received.dropped_oversize = 6;
  pi2.received.dropped_invalid = 7;
  pi2.received.dropped_send_failed = 8;
  pi2.received.invalid_origins = 12;
  pi2.received.origins_without_offset = 13;
  pi2.received.AddOneWayLatency(100'000);
  pi2.received.AddOneWayLatency(300'000);
  const std::string boot = kBoot;
  pi2.link = {.connected = true,
              .connection_count = 2,
              .disconnects = 1,
              .reboots = 1,
              .refused_reboots = 14,
              .connected_since = monotonic_clock::time_point(seconds(5)),
              .boot_uuid = boot,
              .monotonic_offset_ns = -1234,
              .monotonic_offset_uncertainty_ns = 56};
  statistics_->write_failures() = 15;
  statistics_->dropped_unknown_node() = 16;
  ASSERT_NO_FATAL_FAILURE(PublishAndFetch());

  ASSERT_EQ(server_->connections()->size(), 1u);
  const ServerConnection* sent = server_->connections()->Get(0);
  EXPECT_EQ(sent->node()->string_view(), "pi2");
  EXPECT_EQ(sent->state(), State::CONNECTED);
  EXPECT_EQ(sent->sent_packets(), 11u);
  EXPECT_EQ(sent->dropped_packets(), 2u);
  EXPECT_EQ(sent->delivered_packets(), 9u);
  EXPECT_EQ(sent->sent_bytes(), 352u);
  EXPECT_EQ(sent->connection_count(), 2u);
  EXPECT_EQ(sent->disconnects(), 1u);
  EXPECT_EQ(sent->boot_uuid()->string_view(), kBoot);
  EXPECT_EQ(sent->connected_since_time(), 5'000'000'000);
  EXPECT_EQ(sent->monotonic_offset(), -1234);
  EXPECT_EQ(sent->monotonic_offset_uncertainty(), 56);
  EXPECT_EQ(server_->write_failures(), 15u);

  ASSERT_EQ(client_->connections()->size(), 1u);
  const ClientConnection* received = client_->connections()->Get(0);
  EXPECT_EQ(received->node()->string_view(), "pi2");
  EXPECT_EQ(received->state(), State::CONNECTED);
  EXPECT_EQ(received->received_packets(), 21u);
  EXPECT_EQ(received->received_bytes(), 672u);
  EXPECT_EQ(received->duplicate_packets(), 3u);
  EXPECT_EQ(received->lost_packets(), 4u);
  EXPECT_EQ(received->dropped_unknown_channel(), 5u);
  EXPECT_EQ(received->dropped_oversize(), 6u);
  EXPECT_EQ(received->dropped_invalid(), 7u);
  EXPECT_EQ(received->dropped_send_failed(), 8u);
  EXPECT_EQ(received->connection_count(), 2u);
  EXPECT_EQ(received->disconnects(), 1u);
  EXPECT_EQ(received->reboots(), 1u);
  EXPECT_EQ(received->refused_reboots(), 14u);
  EXPECT_EQ(received->invalid_origins(), 12u);
  EXPECT_EQ(received->origins_without_offset(), 13u);
  EXPECT_EQ(received->boot_uuid()->string_view(), kBoot);
  EXPECT_EQ(received->connected_since_time(), 5'000'000'000);
  EXPECT_EQ(received->monotonic_offset(), -1234);
  EXPECT_EQ(received->monotonic_offset_uncertainty(), 56);
  ASSERT_NE(received->one_way_latency(), nullptr);
  EXPECT_FLOAT_EQ(received->one_way_latency()->average(), 200e-6f);
  EXPECT_FLOAT_EQ(received->one_way_latency()->min(), 100e-6f);
  EXPECT_FLOAT_EQ(received->one_way_latency()->max(), 300e-6f);
  ASSERT_NE(received->one_way_latency_histogram(), nullptr);
  EXPECT_EQ(received->one_way_latency_histogram()->min_ns(), 100'000);
  EXPECT_EQ(received->one_way_latency_histogram()->max_ns(), 300'000);
  EXPECT_EQ(received->one_way_latency_histogram()->buckets()->size(), 2u);
  EXPECT_EQ(client_->dropped_unknown_node(), 16u);
}

// A peer never heard from: disconnected, no boot, no connection time, no
// clock estimate (-1).
TEST_F(BridgeStatisticsTest, APeerNeverHeardFromSaysSo) {
  ASSERT_NO_FATAL_FAILURE(MakeStatistics(
      {{.name = "pi2", .is_destination = true, .is_source = true}}));
  ASSERT_NO_FATAL_FAILURE(PublishAndFetch());
  const ServerConnection* sent = server_->connections()->Get(0);
  EXPECT_EQ(sent->state(), State::DISCONNECTED);
  EXPECT_EQ(sent->boot_uuid()->string_view(), "");
  EXPECT_EQ(sent->connected_since_time(),
            monotonic_clock::min_time.time_since_epoch().count());
  EXPECT_EQ(sent->monotonic_offset_uncertainty(), -1);
  const ClientConnection* received = client_->connections()->Get(0);
  EXPECT_EQ(received->state(), State::DISCONNECTED);
  EXPECT_EQ(received->boot_uuid()->string_view(), "");
  EXPECT_EQ(received->monotonic_offset_uncertainty(), -1);
  EXPECT_EQ(received->received_packets(), 0u);
  EXPECT_EQ(received->one_way_latency_histogram()->buckets()->size(), 0u);
}

// A peer is in ServerStatistics if we forward to it, in ClientStatistics
// if it forwards to us, in the order the statistics were given them.
TEST_F(BridgeStatisticsTest, EachPeerIsInTheTablesOfItsRoles) {
  ASSERT_NO_FATAL_FAILURE(MakeStatistics({
      {.name = "to_only", .is_destination = true},
      {.name = "from_only", .is_source = true},
      {.name = "both", .is_destination = true, .is_source = true},
  }));
  ASSERT_NO_FATAL_FAILURE(PublishAndFetch());
  ASSERT_EQ(server_->connections()->size(), 2u);
  EXPECT_EQ(server_->connections()->Get(0)->node()->string_view(), "to_only");
  EXPECT_EQ(server_->connections()->Get(1)->node()->string_view(), "both");
  ASSERT_EQ(client_->connections()->size(), 2u);
  EXPECT_EQ(client_->connections()->Get(0)->node()->string_view(), "from_only");
  EXPECT_EQ(client_->connections()->Get(1)->node()->string_view(), "both");
}

// ClientStatistics has a max_size (16384 in the example): a latency
// histogram goes in only while it fits beside the connections before it;
// the rest of a connection, its latency summary included, always does.
TEST_F(BridgeStatisticsTest, AHistogramThatWouldNotFitIsLeftOut) {
  ASSERT_NO_FATAL_FAILURE(MakeStatistics({
      {.name = "first", .is_source = true},
      {.name = "second", .is_source = true},
  }));
  // 1000 non-empty buckets each: about 8 kB a histogram.
  for (size_t peer = 0; peer < 2; ++peer) {
    for (size_t bucket = 0; bucket < 1000; ++bucket) {
      statistics_->peer(peer).received.AddOneWayLatency(
          timing::LatencyHistogram::BucketLowerNs(bucket));
    }
  }
  ASSERT_NO_FATAL_FAILURE(PublishAndFetch());
  ASSERT_EQ(client_->connections()->size(), 2u);
  const ClientConnection* first = client_->connections()->Get(0);
  const ClientConnection* second = client_->connections()->Get(1);
  ASSERT_NE(first->one_way_latency_histogram(), nullptr);
  EXPECT_EQ(first->one_way_latency_histogram()->buckets()->size(), 1000u);
  EXPECT_EQ(second->one_way_latency_histogram(), nullptr);
  ASSERT_NE(second->one_way_latency(), nullptr);
  EXPECT_FLOAT_EQ(second->one_way_latency()->min(), 0.0f);
}

// Publishing builds in the senders' own buffers: once the loops run, a
// second's publications (with full latency summaries) allocate nothing.
TEST_F(BridgeStatisticsTest, PublishingNeverAllocates) {
  ASSERT_NO_FATAL_FAILURE(MakeStatistics(
      {{.name = "pi2", .is_destination = true, .is_source = true}}));
  for (int64_t latency_ns = 1000; latency_ns < 100'000'000; latency_ns *= 3) {
    statistics_->peer(0).received.AddOneWayLatency(latency_ns);
  }
  const std::string boot = kBoot;
  statistics_->peer(0).link.boot_uuid = boot;
  int published = 0;
  TimerHandler* timer = bridge_loop_->AddTimer([&]() {
    ++statistics_->peer(0).sent.sent_packets;
    statistics_->Publish();
    ++published;
  });
  bridge_loop_->OnRun([&]() {
    timer->Schedule(bridge_loop_->monotonic_now(), milliseconds(250));
  });
  factory_.RunFor(milliseconds(10));  // Everything set up and running.
  const uint64_t before = aos::testing::HeapAllocations();
  factory_.RunFor(seconds(1));
  EXPECT_EQ(aos::testing::HeapAllocations() - before, 0u);
  EXPECT_EQ(published, 5);
  ASSERT_TRUE(server_.Fetch());
  EXPECT_EQ(server_->connections()->Get(0)->sent_packets(), 5u);
}

// A configuration without the /aos statistics channels: one line naming
// the node, the channel and its type.
TEST(BridgeStatisticsMakeTest, AMissingChannelIsOneLine) {
  auto config = configuration::ReadConfigFromJson(R"({
      "nodes": [ { "name": "pi1", "hostname": "pi1" },
                 { "name": "pi2", "hostname": "pi2" } ],
      "channels": [] })");
  ASSERT_TRUE(config.ok()) << config.status();
  SimulatedEventLoopFactory factory(&config->message());
  std::unique_ptr<EventLoop> loop = factory.MakeEventLoop(
      "message_bridge", configuration::GetNode(config->message(), "pi1"));
  auto statistics = BridgeStatistics::Make(loop.get(), {{.name = "pi2"}});
  ASSERT_FALSE(statistics.ok());
  EXPECT_EQ(statistics.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(statistics.status().message());
  EXPECT_EQ(message.rfind("the message bridge on node pi1 needs channel /aos "
                          "of type aos.message_bridge.ServerStatistics in the "
                          "configuration: ",
                          0),
            0u)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

}  // namespace
}  // namespace aos::message_bridge
