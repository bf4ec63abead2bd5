#include "aos/network/dds_participant.h"

#include <unistd.h>

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

}  // namespace
}  // namespace aos::message_bridge
