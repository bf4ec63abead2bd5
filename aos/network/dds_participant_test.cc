#include "aos/network/dds_participant.h"

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "aos/network/bridge_wire.h"
#include "aos/network/test_dds_domain.h"
#include "aos/testing/wait_until.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

// This test's own DDS domain (test_dds_domain.h), on loopback.
DdsParticipant::Options OptionsFor(bool batch_writes) {
  return {.domain = TestDdsDomain(DdsTestBinary::kDdsParticipant),
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

// The receive buffer of every UDP socket (IPv4 or IPv6) of this process
// (SO_RCVBUF, as the kernel reports it: twice what it granted), by
// descriptor.
std::map<int, int> UdpReceiveBuffers() {
  std::map<int, int> buffers;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    int type = 0, domain = 0, size = 0;
    socklen_t length = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 ||
        type != SOCK_DGRAM) {
      continue;
    }
    length = sizeof(domain);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0 ||
        (domain != AF_INET && domain != AF_INET6)) {
      continue;
    }
    length = sizeof(size);
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, &length) == 0) {
      buffers[fd] = size;
    }
  }
  return buffers;
}

// The domain's sockets ask for kSocketReceiveBufferBytes and get what the
// kernel grants of it (net.core.rmem_max). Where that is 1 MiB or less,
// Cyclone's own default (1 MiB asked) gets the same: there the test cannot
// tell the two apart, and does not need to.
TEST(DdsParticipantTest, ItsSocketsAskForTheReceiveBuffer) {
  const std::optional<int64_t> granted =
      DdsParticipant::GrantedSocketReceiveBufferBytes();
  if (!granted.has_value()) {
    GTEST_SKIP() << "/proc/sys/net/core/rmem_max cannot be read here";
  }
  const std::map<int, int> before = UdpReceiveBuffers();
  auto dds = DdsParticipant::Make(OptionsFor(false));
  ASSERT_TRUE(dds.ok()) << dds.status();
  // Cyclone sets the buffer on every socket it makes, the ones it only
  // sends on too.
  int made = 0;
  for (const auto& [fd, size] : UdpReceiveBuffers()) {
    if (before.count(fd) != 0) continue;
    ++made;
    EXPECT_EQ(size, 2 * *granted) << "socket " << fd;
  }
  EXPECT_GT(made, 0) << "the domain made no UDP socket";
}

// An interface Cyclone cannot use is one error that says what Cyclone said
// of it, not Cyclone's own line beside ours.
TEST(DdsParticipantTest, ARefusedInterfaceIsOneErrorWithCyclonesReason) {
  DdsParticipant::Options options = OptionsFor(false);
  options.interface = "nosuch0";
  auto dds = DdsParticipant::Make(options);
  ASSERT_FALSE(dds.ok());
  EXPECT_EQ(dds.status().message(),
            "Cyclone DDS refused domain " + std::to_string(options.domain) +
                " on interface nosuch0: Error: Cyclone DDS said \"nosuch0: "
                "does not match an available interface.\" (is the interface "
                "up and does it have an address?)");
}

// A reader's Signal with an in_listener function runs it, with the reader,
// where the sample arrives, before raising the signal: the sample is there
// to take, and the loop is woken only after.
TEST(DdsParticipantTest, InListenerRunsWithTheReaderBeforeTheSignal) {
  auto dds = DdsParticipant::Make(OptionsFor(false));
  ASSERT_TRUE(dds.ok()) << dds.status();
  std::atomic<int> calls = 0;
  std::atomic<int> taken = 0;
  std::atomic<bool> raised_before = false;
  std::atomic<bool> raised_inside = false;
  dds_entity_t reader = 0;
  DdsParticipant::Signal arrived([&](dds_entity_t from) {
    EXPECT_EQ(from, reader);
    if (arrived.Take()) raised_inside = true;
    aos_bridge_Probe probe;
    void* samples[1] = {&probe};
    dds_sample_info_t info;
    while (dds_take(from, samples, &info, 1, 1) > 0) {
      if (info.valid_data && probe.from_node == 7) ++taken;
    }
    ++calls;
    return true;
  });
  const DdsParticipant::Qos qos{.reliable = true, .depth = 4};
  auto made =
      (*dds)->MakeReader(&aos_bridge_Probe_desc, "probe_test", qos, &arrived);
  ASSERT_TRUE(made.ok()) << made.status();
  reader = *made;
  auto writer = (*dds)->MakeWriter(&aos_bridge_Probe_desc, "probe_test", qos);
  ASSERT_TRUE(writer.ok()) << writer.status();
  raised_before = arrived.Take();

  aos_bridge_Probe probe = {};
  probe.from_node = 7;
  ASSERT_EQ(dds_write(*writer, &probe), 0);
  // Delivery may be in Cyclone's thread: bounded wait, no timing asserted.
  // Waits for the signal itself: the listener counts the sample just before
  // it raises the signal, so `taken` alone could be seen a moment early.
  EXPECT_TRUE(aos::testing::WaitUntil([&]() { return arrived.Take(); },
                                      std::chrono::seconds(30),
                                      "the reader's signal to be raised"));
  EXPECT_FALSE(raised_before);
  EXPECT_FALSE(raised_inside);
  // Taken in the listener before the signal was raised.
  EXPECT_EQ(taken, 1);
  EXPECT_GE(calls, 1);
  dds->reset();  // Waits for running listeners, before `arrived` goes.
}

// An in_listener function that returns false took what it needed where the
// sample arrived: the signal stays down and the participant's wakeup fd
// unreadable, so the loop sleeps on.
TEST(DdsParticipantTest, InListenerReturningFalseLeavesTheLoopAsleep) {
  auto dds = DdsParticipant::Make(OptionsFor(false));
  ASSERT_TRUE(dds.ok()) << dds.status();
  std::atomic<int> taken = 0;
  DdsParticipant::Signal arrived([&](dds_entity_t from) {
    aos_bridge_Probe probe;
    void* samples[1] = {&probe};
    dds_sample_info_t info;
    while (dds_take(from, samples, &info, 1, 1) > 0) {
      if (info.valid_data && probe.from_node == 9) ++taken;
    }
    return false;
  });
  const DdsParticipant::Qos qos{.reliable = true, .depth = 4};
  auto reader = (*dds)->MakeReader(&aos_bridge_Probe_desc, "probe_asleep_test",
                                   qos, &arrived);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto writer =
      (*dds)->MakeWriter(&aos_bridge_Probe_desc, "probe_asleep_test", qos);
  ASSERT_TRUE(writer.ok()) << writer.status();
  (*dds)->ClearWakeup();

  aos_bridge_Probe probe = {};
  probe.from_node = 9;
  ASSERT_EQ(dds_write(*writer, &probe), 0);
  EXPECT_TRUE(aos::testing::WaitUntil([&]() { return taken == 1; },
                                      std::chrono::seconds(30),
                                      "the listener to take the sample"));
  pollfd wakeup = {.fd = (*dds)->wakeup_fd(), .events = POLLIN, .revents = 0};
  EXPECT_EQ(poll(&wakeup, 1, 0), 0);
  dds->reset();  // Waits for running listeners: none raises after this.
  EXPECT_FALSE(arrived.Take());
}

}  // namespace
}  // namespace aos::message_bridge
