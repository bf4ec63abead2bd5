#include "aos/network/network_conformance_test.h"

#include <string>
#include <vector>

#include "aos/configuration_lookup.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/remote_message_generated.h"
#include "aos/network/server_statistics_generated.h"
#include "examples/ping_generated.h"

namespace aos::message_bridge {

const Node* NetworkUnderTest::pi1() const {
  return configuration::GetNode(*configuration(), "pi1");
}
const Node* NetworkUnderTest::pi2() const {
  return configuration::GetNode(*configuration(), "pi2");
}

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Generous: a real network that works does everything a case waits for in
// a few seconds; a simulated one in simulated time.
constexpr std::chrono::nanoseconds kDeadline = seconds(30);
constexpr int kPings = 20;

// The connection to `peer` in the latest statistics `fetcher` holds, or
// null.
template <class Statistics>
auto ConnectionTo(const Fetcher<Statistics>& fetcher, std::string_view peer)
    -> decltype(fetcher->connections()->Get(0)) {
  if (fetcher.get() == nullptr || fetcher->connections() == nullptr) {
    return nullptr;
  }
  for (const auto* connection : *fetcher->connections()) {
    if (connection->node()->string_view() == peer) return connection;
  }
  return nullptr;
}

template <class Statistics>
bool SaysConnected(Fetcher<Statistics>* fetcher, std::string_view peer) {
  fetcher->Fetch();
  const auto* connection = ConnectionTo(*fetcher, peer);
  return connection != nullptr && connection->state() == State::CONNECTED;
}

struct Arrival {
  int value;
  Context context;
};

struct Sent {
  monotonic_clock::time_point monotonic;
  realtime_clock::time_point realtime;
  uint32_t queue_index;
};

// pi1's pinger (idle), pi2's listener (running), and the statistics both
// publish; helpers for what every case does first.
class Pi1ToPi2 {
 public:
  explicit Pi1ToPi2(NetworkUnderTest* network)
      : network_(network),
        pi2_(network->MakeRunningLoop("listener", network->pi2())),
        client2_(pi2_->MakeFetcher<ClientStatistics>("/aos")),
        pings2_(pi2_->MakeFetcher<examples::Ping>("/test")) {
    MakePi1();
    arrivals_.reserve(1000);
    send_timer_ = pi2_->AddTimer([this]() {
      if (to_send_ == 0) return;
      --to_send_;
      auto builder = ping_.MakeBuilder();
      examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
      ping.add_value(next_value_++);
      builder.CheckOk(builder.Send(ping.Finish()));
      sent_.push_back({ping_.raw()->monotonic_sent_time(),
                       ping_.raw()->realtime_sent_time(),
                       ping_.raw()->sent_queue_index()});
    });
  }
  ~Pi1ToPi2() { DestroyPi1(); }

  void MakePi1() {
    pi1_ = network_->MakeIdleLoop("pinger", network_->pi1());
    ping_ = pi1_->MakeSender<examples::Ping>("/test");
    server1_ = pi1_->MakeFetcher<ServerStatistics>("/aos");
    timestamps1_ =
        pi1_->MakeFetcher<RemoteMessage>("/aos/remote_timestamps/pi2");
  }
  void DestroyPi1() {
    ping_ = {};
    server1_ = {};
    timestamps1_ = {};
    pi1_.reset();
  }

  // Runs until `done()`, the pings that arrived on pi2 and the remote
  // timestamps on pi1 collected before each check. (Fetchers, not a
  // watcher: a real loop's watcher misses what arrives between two runs.)
  bool RunUntil(const std::function<bool()>& done) {
    return network_->RunUntil(
        pi2_.get(),
        [&]() {
          while (pings2_.FetchNext()) {
            arrivals_.push_back({pings2_->value(), pings2_.context()});
          }
          DrainTimestamps();
          return done();
        },
        kDeadline);
  }

  // Until both bridges say the other is connected.
  void WaitConnected() {
    ASSERT_TRUE(RunUntil([this]() {
      return SaysConnected(&server1_, "pi2") && SaysConnected(&client2_, "pi1");
    })) << "the bridges never said CONNECTED";
  }

  // Sends `count` pings from pi1, 10 ms apart, values counting on; runs
  // until they are sent.
  void SendPings(int count) {
    to_send_ = count;
    send_timer_->Schedule(pi2_->monotonic_now(), milliseconds(10));
    ASSERT_TRUE(RunUntil([this]() { return to_send_ == 0; }));
    send_timer_->Disable();
  }

  // Remote timestamps that came since the last call.
  void DrainTimestamps() {
    while (timestamps1_.FetchNext()) {
      timestamps_.push_back({timestamps1_->channel_index(),
                             timestamps1_->queue_index(),
                             timestamps1_->remote_queue_index(),
                             timestamps1_->monotonic_sent_time(),
                             timestamps1_->monotonic_remote_time(),
                             timestamps1_->boot_uuid()->str()});
    }
  }

  struct Timestamp {
    int32_t channel_index;
    uint32_t queue_index;
    uint32_t remote_queue_index;
    int64_t monotonic_sent_time;
    int64_t monotonic_remote_time;
    std::string boot;
  };

  NetworkUnderTest* const network_;
  std::unique_ptr<EventLoop> pi1_;
  std::unique_ptr<EventLoop> pi2_;
  Sender<examples::Ping> ping_;
  Fetcher<ServerStatistics> server1_;
  Fetcher<RemoteMessage> timestamps1_;
  Fetcher<ClientStatistics> client2_;
  Fetcher<examples::Ping> pings2_;
  TimerHandler* send_timer_ = nullptr;
  int to_send_ = 0;
  int next_value_ = 0;
  std::vector<Sent> sent_;
  std::vector<Arrival> arrivals_;
  std::vector<Timestamp> timestamps_;
};

uint32_t PingChannelIndex(const Configuration& config) {
  for (uint32_t i = 0; i < config.channels()->size(); ++i) {
    const Channel* channel = config.channels()->Get(i);
    if (channel->name()->string_view() == "/test" &&
        channel->type()->string_view() == "aos.examples.Ping") {
      return i;
    }
  }
  return 0xffffffff;
}

// Pings cross in order, each once, with the remote fields of its send on
// pi1 in pi2's context; and each comes back to pi1 as a remote timestamp
// naming its re-send on pi2.
TEST_P(NetworkConformanceTest, PingsCrossInOrderWithTheirRemoteFields) {
  Pi1ToPi2 nodes(network_.get());
  ASSERT_NO_FATAL_FAILURE(nodes.WaitConnected());
  ASSERT_NO_FATAL_FAILURE(nodes.SendPings(kPings));
  ASSERT_TRUE(nodes.RunUntil([&]() {
    return nodes.arrivals_.size() >= static_cast<size_t>(kPings) &&
           nodes.timestamps_.size() >= static_cast<size_t>(kPings);
  })) << nodes.arrivals_.size()
      << " pings and " << nodes.timestamps_.size() << " remote timestamps of "
      << kPings;

  ASSERT_EQ(nodes.arrivals_.size(), static_cast<size_t>(kPings));
  const UUID pi1_boot = nodes.pi1_->boot_uuid();
  for (int i = 0; i < kPings; ++i) {
    const Context& context = nodes.arrivals_[i].context;
    EXPECT_EQ(nodes.arrivals_[i].value, i);
    EXPECT_EQ(context.monotonic_remote_time, nodes.sent_[i].monotonic) << i;
    EXPECT_EQ(context.realtime_remote_time, nodes.sent_[i].realtime) << i;
    EXPECT_EQ(context.remote_queue_index, nodes.sent_[i].queue_index) << i;
    EXPECT_EQ(context.source_boot_uuid, pi1_boot) << i;
    if (network_->time_is_simulated()) {
      // The link's default delay, both clocks the same.
      EXPECT_EQ(context.monotonic_event_time - context.monotonic_remote_time,
                std::chrono::microseconds(100))
          << i;
    }
  }

  ASSERT_EQ(nodes.timestamps_.size(), static_cast<size_t>(kPings));
  const uint32_t ping_index = PingChannelIndex(*network_->configuration());
  const std::string pi2_boot = nodes.pi2_->boot_uuid().ToString();
  for (int i = 0; i < kPings; ++i) {
    const Pi1ToPi2::Timestamp& timestamp = nodes.timestamps_[i];
    const Context& arrival = nodes.arrivals_[i].context;
    EXPECT_EQ(timestamp.channel_index, static_cast<int32_t>(ping_index)) << i;
    EXPECT_EQ(timestamp.remote_queue_index, nodes.sent_[i].queue_index) << i;
    EXPECT_EQ(timestamp.monotonic_remote_time,
              nodes.sent_[i].monotonic.time_since_epoch().count())
        << i;
    EXPECT_EQ(timestamp.queue_index, arrival.queue_index) << i;
    EXPECT_EQ(timestamp.monotonic_sent_time,
              arrival.monotonic_event_time.time_since_epoch().count())
        << i;
    EXPECT_EQ(timestamp.boot, pi2_boot) << i;
  }
}

// What crossed is what both sides' statistics count: pi1's delivered pings,
// pi2's received ones, nothing lost, duplicated or dropped, one connection
// each way, each side knowing the other's boot, and a clock offset within
// its uncertainty of the truth (0: one machine, or one simulation).
TEST_P(NetworkConformanceTest, StatisticsCountWhatCrossed) {
  Pi1ToPi2 nodes(network_.get());
  ASSERT_NO_FATAL_FAILURE(nodes.WaitConnected());
  ASSERT_NO_FATAL_FAILURE(nodes.SendPings(kPings));
  const ServerConnection* to_pi2 = nullptr;
  const ClientConnection* from_pi1 = nullptr;
  ASSERT_TRUE(nodes.RunUntil([&]() {
    nodes.server1_.Fetch();
    nodes.client2_.Fetch();
    to_pi2 = ConnectionTo(nodes.server1_, "pi2");
    from_pi1 = ConnectionTo(nodes.client2_, "pi1");
    return to_pi2 != nullptr && from_pi1 != nullptr &&
           to_pi2->delivered_packets() >= static_cast<uint64_t>(kPings) &&
           from_pi1->received_packets() >= static_cast<uint64_t>(kPings);
  })) << "the statistics never counted "
      << kPings << " pings";

  EXPECT_EQ(to_pi2->state(), State::CONNECTED);
  EXPECT_EQ(to_pi2->delivered_packets(), static_cast<uint64_t>(kPings));
  EXPECT_GE(to_pi2->sent_packets(), static_cast<uint64_t>(kPings));
  EXPECT_GE(to_pi2->sent_bytes(), to_pi2->sent_packets());
  EXPECT_EQ(to_pi2->dropped_packets(), 0u);
  EXPECT_EQ(to_pi2->connection_count(), 1u);
  EXPECT_EQ(to_pi2->disconnects(), 0u);
  EXPECT_EQ(to_pi2->boot_uuid()->string_view(),
            nodes.pi2_->boot_uuid().ToString());
  EXPECT_GE(to_pi2->monotonic_offset_uncertainty(), 0);
  EXPECT_LE(std::abs(to_pi2->monotonic_offset()),
            to_pi2->monotonic_offset_uncertainty());

  EXPECT_EQ(from_pi1->state(), State::CONNECTED);
  EXPECT_GE(from_pi1->received_bytes(), from_pi1->received_packets());
  EXPECT_EQ(from_pi1->lost_packets(), 0u);
  EXPECT_EQ(from_pi1->duplicate_packets(), 0u);
  EXPECT_EQ(from_pi1->dropped_unknown_channel(), 0u);
  EXPECT_EQ(from_pi1->dropped_oversize(), 0u);
  EXPECT_EQ(from_pi1->dropped_invalid(), 0u);
  EXPECT_EQ(from_pi1->dropped_send_failed(), 0u);
  EXPECT_EQ(from_pi1->connection_count(), 1u);
  EXPECT_EQ(from_pi1->disconnects(), 0u);
  EXPECT_EQ(from_pi1->reboots(), 0u);
  EXPECT_EQ(from_pi1->boot_uuid()->string_view(),
            nodes.pi1_->boot_uuid().ToString());
  EXPECT_GE(from_pi1->monotonic_offset_uncertainty(), 0);
  EXPECT_LE(std::abs(from_pi1->monotonic_offset()),
            from_pi1->monotonic_offset_uncertainty());
  ASSERT_NE(from_pi1->one_way_latency(), nullptr);
  EXPECT_GE(from_pi1->one_way_latency()->min(), 0.0f);
  if (network_->time_is_simulated()) {
    EXPECT_EQ(to_pi2->monotonic_offset_uncertainty(), 0);
    EXPECT_EQ(from_pi1->monotonic_offset_uncertainty(), 0);
    EXPECT_FLOAT_EQ(from_pi1->one_way_latency()->max(), 100e-6f);
  }
}

// pi2 leaves the network and comes back: pi1 counts one disconnect and a
// second connection; the pings sent meanwhile are lost, but for the latest,
// which crosses when pi2 is back (the reliable channel's re-send), and pi2
// counts the gap.
TEST_P(NetworkConformanceTest, ALeaveAndReturnIsCountedAndTheLatestCrosses) {
  Pi1ToPi2 nodes(network_.get());
  ASSERT_NO_FATAL_FAILURE(nodes.WaitConnected());
  ASSERT_NO_FATAL_FAILURE(nodes.SendPings(1));
  ASSERT_TRUE(nodes.RunUntil([&]() { return nodes.arrivals_.size() == 1; }));

  network_->IsolatePi2();
  ASSERT_TRUE(nodes.RunUntil([&]() {
    nodes.server1_.Fetch();
    const ServerConnection* to_pi2 = ConnectionTo(nodes.server1_, "pi2");
    return to_pi2 != nullptr && to_pi2->state() == State::DISCONNECTED;
  })) << "pi1 never said pi2 DISCONNECTED";
  ASSERT_NO_FATAL_FAILURE(nodes.SendPings(5));

  network_->RejoinPi2();
  const ServerConnection* to_pi2 = nullptr;
  const ClientConnection* from_pi1 = nullptr;
  ASSERT_TRUE(nodes.RunUntil([&]() {
    nodes.server1_.Fetch();
    nodes.client2_.Fetch();
    to_pi2 = ConnectionTo(nodes.server1_, "pi2");
    from_pi1 = ConnectionTo(nodes.client2_, "pi1");
    return nodes.arrivals_.size() >= 2 && to_pi2 != nullptr &&
           to_pi2->state() == State::CONNECTED && from_pi1 != nullptr &&
           from_pi1->lost_packets() >= 4;
  })) << "after pi2 came back: "
      << nodes.arrivals_.size() << " pings, pi1 says pi2 "
      << (to_pi2 == nullptr ? "nothing" : EnumNameState(to_pi2->state()))
      << ", pi2 counts " << (from_pi1 == nullptr ? 0 : from_pi1->lost_packets())
      << " lost";

  ASSERT_EQ(nodes.arrivals_.size(), 2u);
  EXPECT_EQ(nodes.arrivals_[0].value, 0);
  EXPECT_EQ(nodes.arrivals_[1].value, 5);
  EXPECT_EQ(nodes.arrivals_[1].context.remote_queue_index,
            nodes.sent_.back().queue_index);
  EXPECT_EQ(to_pi2->disconnects(), 1u);
  EXPECT_EQ(to_pi2->connection_count(), 2u);
  // The four pings between, and whatever else pi1 forwarded meanwhile
  // (its best-effort ClientStatistics).
  EXPECT_GE(from_pi1->lost_packets(), 4u);
  EXPECT_EQ(from_pi1->duplicate_packets(), 0u);
}

// pi1 reboots: its new boot's pings cross (their queue indices start over),
// and pi2 counts a reboot and knows the new boot.
TEST_P(NetworkConformanceTest, ARebootIsCountedAndTheNewBootCrosses) {
  if (!network_->can_reboot()) {
    GTEST_SKIP() << "this network cannot reboot a node (loopback: both "
                    "bridges share the machine's boot)";
  }
  Pi1ToPi2 nodes(network_.get());
  ASSERT_NO_FATAL_FAILURE(nodes.WaitConnected());
  ASSERT_NO_FATAL_FAILURE(nodes.SendPings(3));
  ASSERT_TRUE(nodes.RunUntil([&]() { return nodes.arrivals_.size() == 3; }));
  const UUID old_boot = nodes.pi1_->boot_uuid();

  nodes.DestroyPi1();
  network_->RebootPi1();
  nodes.MakePi1();
  const UUID new_boot = nodes.pi1_->boot_uuid();
  ASSERT_NE(new_boot, old_boot);
  ASSERT_NO_FATAL_FAILURE(nodes.SendPings(1));
  const ClientConnection* from_pi1 = nullptr;
  ASSERT_TRUE(nodes.RunUntil([&]() {
    nodes.client2_.Fetch();
    from_pi1 = ConnectionTo(nodes.client2_, "pi1");
    return nodes.arrivals_.size() >= 4 && from_pi1 != nullptr &&
           from_pi1->reboots() >= 1 && from_pi1->state() == State::CONNECTED;
  }));
  ASSERT_EQ(nodes.arrivals_.size(), 4u);
  EXPECT_EQ(nodes.arrivals_[3].value, 3);
  EXPECT_EQ(nodes.arrivals_[3].context.source_boot_uuid, new_boot);
  EXPECT_EQ(nodes.arrivals_[3].context.remote_queue_index, 0u);
  EXPECT_EQ(from_pi1->reboots(), 1u);
  EXPECT_EQ(from_pi1->boot_uuid()->string_view(), new_boot.ToString());
  EXPECT_EQ(from_pi1->duplicate_packets(), 0u);
}

}  // namespace
}  // namespace aos::message_bridge
