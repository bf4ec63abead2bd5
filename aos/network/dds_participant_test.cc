#include "aos/network/dds_participant.h"

#include <unistd.h>

#include "aos/time/time.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

// A domain of this test's own (pid-based, like the bridge tests), on
// loopback.
DdsParticipant::Options OptionsFor(bool batch_writes) {
  return {.domain = static_cast<uint32_t>(100 + getpid() % 100),
          .interface = "lo",
          .batch_writes = batch_writes};
}

// Cyclone keeps a domain's first configuration for every participant of
// the process on it: asking for the other batching is refused, not
// silently ignored; once the domain is gone, it may be made either way.
TEST(DdsParticipantTest, ADomainsWriteBatchingIsItsFirstParticipants) {
  auto batching = DdsParticipant::Make(OptionsFor(true));
  ASSERT_TRUE(batching.ok()) << batching.status();
  auto same = DdsParticipant::Make(OptionsFor(true));
  EXPECT_TRUE(same.ok()) << same.status();
  auto other = DdsParticipant::Make(OptionsFor(false));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "DDS domain " + std::to_string(OptionsFor(false).domain) +
                " was made in this process with batch_writes=true, which "
                "every participant on it shares; this one asked for false");
  same->reset();
  batching->reset();
  auto remade = DdsParticipant::Make(OptionsFor(false));
  EXPECT_TRUE(remade.ok()) << remade.status();
}

int64_t NowNs() { return monotonic_clock::now().time_since_epoch().count(); }

// Take() tells when the signal was first raised since the last Take(): a
// second Raise() keeps the first one's time, and Take() starts over.
TEST(DdsParticipantTest, SignalTellsWhenItWasFirstRaised) {
  DdsParticipant::Signal signal;
  int64_t first_raised_ns = -1;
  EXPECT_FALSE(signal.Take(&first_raised_ns));
  EXPECT_EQ(first_raised_ns, 0);

  const int64_t before = NowNs();
  signal.Raise();
  const int64_t between = NowNs();
  signal.Raise();
  const int64_t after = NowNs();
  ASSERT_TRUE(signal.Take(&first_raised_ns));
  EXPECT_GE(first_raised_ns, before);
  EXPECT_LE(first_raised_ns, between);

  EXPECT_FALSE(signal.Take(&first_raised_ns));
  EXPECT_EQ(first_raised_ns, 0);
  signal.Raise();
  ASSERT_TRUE(signal.Take(&first_raised_ns));
  EXPECT_GE(first_raised_ns, after);
  // Without asking for the time.
  signal.Raise();
  EXPECT_TRUE(signal.Take());
  EXPECT_FALSE(signal.Take());
}

}  // namespace
}  // namespace aos::message_bridge
