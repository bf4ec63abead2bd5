#include "aos/network/peer_state.h"

#include <deque>
#include <random>

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

// A forged reboot storm: while pi1 probes every 100 ms with its boot, a
// forger sends 1,500 probes in its name, one a millisecond, each with a new
// boot (the campaign made pi2 count 1,224 reboots of pi1 so, and reset its
// clock estimate each time). The first 3 are believed (the limit), the
// 4th refused, and with it the state goes back to pi1's real boot; the
// other 1,496 are refused too, and pi1's own probes keep it connected all
// along. The episode ends one window after its last refusal, once.
TEST(PeerStateTest, AForgedRebootStormIsBelievedOnlyUpToTheLimit) {
  PeerState peer(milliseconds(1000),
                 {.max_reboots = 3, .window = std::chrono::seconds(60)});
  std::mt19937_64 random(21);
  auto forged_boot = [&]() {
    uint8_t bytes[16];
    for (uint8_t& byte : bytes) byte = static_cast<uint8_t>(random());
    return UUID::FromBytes(bytes);
  };
  int rebooted = 0, refused = 0, same = 0;
  int first_refusal_at = -1;
  // Every millisecond for 70 s: pi1's probe at 50 ms past each 100 ms, the
  // forger's from 1,000 ms to 2,499 ms.
  for (int ms = 0; ms < 70000; ++ms) {
    if (ms >= 1000 && ms < 2500) {
      switch (peer.OnProbe(At(ms), forged_boot())) {
        case Result::kRebooted:
          ++rebooted;
          break;
        case Result::kRefused:
          if (refused++ == 0) {
            first_refusal_at = ms;
            // Back to pi1's boot at once.
            EXPECT_EQ(peer.boot_uuid(), kBoot1);
            EXPECT_EQ(peer.episode_refusals(), 1u);
          }
          break;
        default:
          ADD_FAILURE() << "a forged boot at " << ms << " ms was neither";
      }
    }
    if (ms % 100 == 50) {
      const Result result = peer.OnProbe(At(ms), kBoot1);
      if (ms == 50) {
        EXPECT_EQ(result, Result::kConnected);
      } else if (ms > first_refusal_at && first_refusal_at >= 0) {
        EXPECT_EQ(result, Result::kSame) << ms << " ms";
        ++same;
      }
    }
    EXPECT_FALSE(peer.Check(At(ms))) << "disconnected at " << ms << " ms";
    const std::optional<uint64_t> ended = peer.EndRefusals(At(ms));
    if (ms < 2499 + 60000) {
      EXPECT_FALSE(ended.has_value()) << ms << " ms";
    } else if (ms == 2499 + 60000) {
      ASSERT_TRUE(ended.has_value());
      EXPECT_EQ(*ended, 1497u);
    } else {
      EXPECT_FALSE(ended.has_value()) << "said twice, at " << ms << " ms";
    }
  }
  EXPECT_EQ(rebooted, 3);
  EXPECT_EQ(refused, 1497);
  EXPECT_EQ(first_refusal_at, 1003);
  EXPECT_EQ(peer.reboots(), 3u);
  EXPECT_EQ(peer.refused_reboots(), 1497u);
  EXPECT_EQ(peer.episode_refusals(), 0u);
  EXPECT_EQ(peer.boot_uuid(), kBoot1);
  EXPECT_TRUE(peer.connected());
  // Each believed boot was a new connection.
  EXPECT_EQ(peer.connection_count(), 4u);
  EXPECT_EQ(peer.disconnects(), 3u);
  EXPECT_GT(same, 600);

  // A window after the storm, a real reboot is believed again.
  EXPECT_EQ(peer.OnProbe(At(70050), kBoot2), Result::kRebooted);
  EXPECT_EQ(peer.reboots(), 4u);
}

// Whatever the forger's rate and pattern, no window holds more believed
// reboots than the limit, and with the storm over the real boot is back.
TEST(PeerStateTest, NoWindowBelievesMoreRebootsThanTheLimit) {
  for (const int forged_every_ms : {1, 7, 100, 1500, 4000, 25000}) {
    SCOPED_TRACE(forged_every_ms);
    PeerState peer(milliseconds(1000),
                   {.max_reboots = 3, .window = std::chrono::seconds(60)});
    std::deque<int> believed_at;
    uint32_t next_forged = 1;
    for (int ms = 0; ms < 600000; ++ms) {
      Result result = Result::kSame;
      if (ms % forged_every_ms == 0 && ms > 0 && ms < 500000) {
        uint8_t bytes[16] = {};
        memcpy(bytes, &next_forged, sizeof(next_forged));
        ++next_forged;
        result = peer.OnProbe(At(ms), UUID::FromBytes(bytes));
        if (result == Result::kRebooted) believed_at.push_back(ms);
      }
      if (ms % 100 == 0) {
        result = peer.OnProbe(At(ms), kBoot1);
        if (result == Result::kRebooted) believed_at.push_back(ms);
      }
      while (!believed_at.empty() && ms - believed_at.front() >= 60000) {
        believed_at.pop_front();
      }
      ASSERT_LE(believed_at.size(), 3u) << "at " << ms << " ms";
    }
    // Quiet for 100 s: the real boot, connected.
    EXPECT_EQ(peer.boot_uuid(), kBoot1);
    EXPECT_TRUE(peer.connected());
  }
}

// Real reboots, minutes apart, are all believed.
TEST(PeerStateTest, RebootsSlowerThanTheLimitAreAllBelieved) {
  PeerState peer(milliseconds(1000));
  EXPECT_EQ(peer.OnProbe(At(0), kBoot1), Result::kConnected);
  for (int i = 1; i <= 20; ++i) {
    EXPECT_EQ(peer.OnProbe(At(i * 25000), i % 2 ? kBoot2 : kBoot1),
              Result::kRebooted)
        << i;
  }
  EXPECT_EQ(peer.reboots(), 20u);
  EXPECT_EQ(peer.refused_reboots(), 0u);
}

}  // namespace
}  // namespace aos::message_bridge
