#include "aos/network/peer_state.h"

#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using std::chrono::milliseconds;
using Result = PeerState::ProbeResult;

monotonic_clock::time_point At(int ms) {
  return monotonic_clock::time_point(milliseconds(ms));
}

const UUID kBoot1 = UUID::Parse("11111111-1111-4111-8111-111111111111").value();
const UUID kBoot2 = UUID::Parse("22222222-2222-4222-8222-222222222222").value();

TEST(PeerStateTest, ConnectsOnTheFirstProbeAndTimesOut) {
  PeerState peer(milliseconds(1000));
  EXPECT_FALSE(peer.connected());
  EXPECT_FALSE(peer.Check(At(5000)));
  EXPECT_EQ(peer.OnProbe(At(100), kBoot1), Result::kConnected);
  EXPECT_EQ(peer.connected_since(), At(100));
  EXPECT_EQ(peer.OnProbe(At(200), kBoot1), Result::kSame);
  EXPECT_FALSE(peer.Check(At(1200)));  // exactly the timeout: still there
  EXPECT_TRUE(peer.Check(At(1201)));
  EXPECT_FALSE(peer.connected());
  EXPECT_EQ(peer.connected_since(), monotonic_clock::min_time);
  EXPECT_FALSE(peer.Check(At(3000)));  // counted once
  EXPECT_EQ(peer.OnProbe(At(4000), kBoot1), Result::kConnected);
  EXPECT_EQ(peer.connection_count(), 2u);
  EXPECT_EQ(peer.disconnects(), 1u);
  EXPECT_EQ(peer.reboots(), 0u);
  EXPECT_EQ(peer.boot_uuid(), kBoot1);
}

TEST(PeerStateTest, AnotherBootIsANewConnectionNotTheSameOne) {
  PeerState peer(milliseconds(1000));
  EXPECT_EQ(peer.OnProbe(At(0), kBoot1), Result::kConnected);
  // Rebooted faster than the timeout.
  EXPECT_EQ(peer.OnProbe(At(500), kBoot2), Result::kRebooted);
  EXPECT_EQ(peer.boot_uuid(), kBoot2);
  EXPECT_EQ(peer.connected_since(), At(500));
  EXPECT_EQ(peer.connection_count(), 2u);
  EXPECT_EQ(peer.disconnects(), 1u);
  EXPECT_EQ(peer.reboots(), 1u);
  // Rebooted while disconnected: one disconnect, not two.
  EXPECT_TRUE(peer.Check(At(2000)));
  EXPECT_EQ(peer.OnProbe(At(3000), kBoot1), Result::kRebooted);
  EXPECT_EQ(peer.disconnects(), 2u);
  EXPECT_EQ(peer.reboots(), 2u);
  EXPECT_EQ(peer.connection_count(), 3u);
}

}  // namespace
}  // namespace aos::message_bridge
