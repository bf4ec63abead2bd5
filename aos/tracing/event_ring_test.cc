#include "aos/tracing/event_ring.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "aos/tracing/ring_file.h"
#include "aos/tracing/ring_reader.h"
#include "gtest/gtest.h"

namespace aos::tracing {
namespace {

RingIdentity Identity() {
  RingIdentity identity;
  identity.pid = 1234;
  identity.boot_id = "boot";
  identity.node = "pi1";
  identity.application = "ping";
  return identity;
}

std::span<const std::byte> Bytes(const EventRing& ring) {
  return {static_cast<const std::byte*>(ring.memory()),
          RingBytes(ring.capacity())};
}

RingCopy Copy(const EventRing& ring) {
  absl::StatusOr<RingCopy> copy = CopyRing(Bytes(ring));
  EXPECT_TRUE(copy.ok()) << copy.status();
  return copy.ok() ? *copy : RingCopy();
}

TEST(EventRingTest, CapacityRoundsUpToAPowerOfTwo) {
  EXPECT_EQ(RingCapacityFor(0), 0u);
  EXPECT_EQ(RingCapacityFor(1), 1u);
  EXPECT_EQ(RingCapacityFor(1000), 1024u);
  EXPECT_EQ(RingCapacityFor(kMaxRingEvents + 1), kMaxRingEvents);
}

TEST(EventRingTest, ReadsBackHeaderNamesAndEvents) {
  std::unique_ptr<EventRing> ring = EventRing::InMemory(16, Identity());
  ring->AddName(TrackKind::kWatcher, 2, 7, "/test");
  ring->CallStart(EventKind::kWatcherStart, 2, 1000, 900, 42);
  ring->Send(7, 43, 1010);
  ring->CallEnd(EventKind::kWatcherEnd, 2, 1100, 1000);
  const RingCopy copy = Copy(*ring);
  EXPECT_EQ(copy.pid, 1234);
  EXPECT_EQ(copy.node, "pi1");
  EXPECT_EQ(copy.application, "ping");
  EXPECT_EQ(copy.boot_id, "boot");
  ASSERT_EQ(copy.names.size(), 1u);
  EXPECT_EQ(copy.names[0].kind, TrackKind::kWatcher);
  EXPECT_EQ(copy.names[0].index, 2);
  EXPECT_EQ(copy.names[0].channel, 7);
  EXPECT_EQ(copy.names[0].name, "/test");
  ASSERT_EQ(copy.events.size(), 3u);
  EXPECT_EQ(copy.events[0].kind, EventKind::kWatcherStart);
  EXPECT_EQ(copy.events[0].queue_index, 42u);
  EXPECT_EQ(copy.events[0].monotonic_ns, 1000);
  EXPECT_EQ(copy.events[0].aux_ns, 900);
  EXPECT_EQ(copy.events[1].kind, EventKind::kSend);
  EXPECT_EQ(copy.events[1].index, 7);
  EXPECT_EQ(copy.events[1].queue_index, 43u);
  EXPECT_EQ(copy.events[2].kind, EventKind::kWatcherEnd);
  EXPECT_EQ(copy.events[2].sequence, 2u);
  EXPECT_EQ(copy.torn, 0u);
  EXPECT_EQ(copy.trigger_count, 0u);
}

TEST(EventRingTest, KeepsTheLastCapacityEvents) {
  std::unique_ptr<EventRing> ring = EventRing::InMemory(8, Identity());
  for (int i = 0; i < 20; ++i) ring->Send(1, i, i * 10);
  const RingCopy copy = Copy(*ring);
  EXPECT_EQ(copy.written, 20u);
  ASSERT_EQ(copy.events.size(), 8u);
  EXPECT_EQ(copy.events.front().queue_index, 12u);
  EXPECT_EQ(copy.events.back().queue_index, 19u);
}

// A writer killed mid-write leaves its slot's sequence at 0; a slot
// overwritten since holds a later sequence. Both are skipped and counted.
TEST(EventRingTest, SkipsTornAndOverwrittenSlots) {
  std::unique_ptr<EventRing> ring = EventRing::InMemory(8, Identity());
  for (int i = 0; i < 8; ++i) ring->Send(1, i, i);
  Record* records = reinterpret_cast<Record*>(
      static_cast<char*>(const_cast<void*>(ring->memory())) + kRecordsOffset);
  records[3].sequence.store(0);
  records[5].sequence.store(5 + 1 + 8);
  const RingCopy copy = Copy(*ring);
  EXPECT_EQ(copy.torn, 2u);
  ASSERT_EQ(copy.events.size(), 6u);
  for (const Event& event : copy.events) {
    EXPECT_NE(event.queue_index, 3u);
    EXPECT_NE(event.queue_index, 5u);
  }
}

class DamagedRingTest : public ::testing::Test {
 protected:
  DamagedRingTest() : ring_(EventRing::InMemory(8, Identity())) {
    ring_->Send(1, 1, 1);
  }
  RingHeader* header() {
    return static_cast<RingHeader*>(const_cast<void*>(ring_->memory()));
  }
  absl::Status Read() {
    absl::Status counters = ReadRingCounters(Bytes(*ring_)).status();
    absl::Status copy = CopyRing(Bytes(*ring_)).status();
    EXPECT_EQ(counters, copy);
    return copy;
  }

  std::unique_ptr<EventRing> ring_;
};

TEST_F(DamagedRingTest, WrongMagic) {
  header()->magic = 0;
  EXPECT_EQ(Read().message(), "not an event ring (wrong magic)");
}

TEST_F(DamagedRingTest, OtherLayoutVersion) {
  header()->layout_version = kRingLayoutVersion + 1;
  EXPECT_EQ(Read().message(), "ring layout version 2, this reader knows 1");
}

TEST_F(DamagedRingTest, OtherRecordSize) {
  header()->record_size = 64;
  EXPECT_FALSE(Read().ok());
}

TEST_F(DamagedRingTest, CapacityPastTheBytes) {
  header()->capacity = 16;
  EXPECT_FALSE(Read().ok());
  header()->capacity = 6;
  EXPECT_FALSE(Read().ok());
  header()->capacity = 0;
  EXPECT_FALSE(Read().ok());
}

TEST_F(DamagedRingTest, TooManyNames) {
  header()->names_count = kNameCapacity + 1;
  EXPECT_FALSE(Read().ok());
}

TEST_F(DamagedRingTest, TooShort) {
  EXPECT_FALSE(CopyRing(Bytes(*ring_).first(100)).ok());
  EXPECT_FALSE(CopyRing(Bytes(*ring_).first(kRecordsOffset + 32)).ok());
}

TEST(EventRingTest, TriggersOverThresholds) {
  std::unique_ptr<EventRing> ring = EventRing::InMemory(64, Identity());
  TriggerThresholds thresholds;
  thresholds.wakeup_latency_ns = 100;
  thresholds.handler_time_ns = 1000;
  thresholds.on_lost_messages = true;
  ring->set_thresholds(thresholds);
  ring->CallStart(EventKind::kTimerStart, 0, 1100, 1000);  // 100: not over.
  ring->CallEnd(EventKind::kTimerEnd, 0, 2100, 1100);      // 1000: not over.
  EXPECT_EQ(Copy(*ring).trigger_count, 0u);
  ring->CallStart(EventKind::kTimerStart, 0, 5101, 5000);
  ring->MissedCycles(0, 2, 5101);  // Not asked for.
  ring->CallEnd(EventKind::kTimerEnd, 0, 7000, 5101);
  ring->Lost(3, 4, 8000);
  const RingCopy copy = Copy(*ring);
  EXPECT_EQ(copy.trigger_count, 3u);
  EXPECT_EQ(copy.last_trigger_ns, 8000);
  std::vector<std::pair<TriggerReason, int64_t>> triggers;
  for (const Event& event : copy.events) {
    if (event.kind == EventKind::kTrigger) {
      triggers.emplace_back(static_cast<TriggerReason>(event.queue_index),
                            event.aux_ns);
    }
  }
  EXPECT_EQ(triggers, (std::vector<std::pair<TriggerReason, int64_t>>{
                          {TriggerReason::kWakeupLatency, 101},
                          {TriggerReason::kHandlerTime, 1899},
                          {TriggerReason::kLostMessages, 4}}));
}

TEST(RingFileTest, MadeListedReadAndRemoved) {
  const std::string base =
      std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
      "/ring_file_test";
  std::filesystem::remove_all(base);
  RingIdentity identity = Identity();
  identity.pid = getpid();
  {
    absl::StatusOr<std::unique_ptr<EventRing>> ring =
        CreateRingFile(base, 16, identity);
    ASSERT_TRUE(ring.ok()) << ring.status();
    (*ring)->Send(1, 2, 3);
    // A ring of a process that is gone, and one that is no ring.
    std::ofstream(RingDirectory(base) + "/pi1.dead.999999999") << "x";
    std::ofstream(RingDirectory(base) + "/junk") << "x";
    int pruned = 0;
    const std::vector<std::string> paths = ListRingFiles(base, &pruned);
    EXPECT_EQ(pruned, 1);
    ASSERT_EQ(paths.size(), 2u);
    EXPECT_EQ(paths[1],
              RingDirectory(base) + "/pi1.ping." + std::to_string(getpid()));
    absl::StatusOr<MappedRing> mapped = MapRing(paths[1]);
    ASSERT_TRUE(mapped.ok()) << mapped.status();
    absl::StatusOr<RingCopy> copy = CopyRing(mapped->bytes());
    ASSERT_TRUE(copy.ok()) << copy.status();
    ASSERT_EQ(copy->events.size(), 1u);
    EXPECT_EQ(copy->events[0].queue_index, 2u);
    absl::StatusOr<MappedRing> junk = MapRing(paths[0]);
    ASSERT_TRUE(junk.ok());
    EXPECT_FALSE(CopyRing(junk->bytes()).ok());
  }
  EXPECT_EQ(ListRingFiles(base, nullptr).size(), 1u);  // The junk.
  EXPECT_FALSE(MapRing(base + "/missing").ok());
}

TEST(RingFileTest, UnwritableDirectoryNamesThePath) {
  absl::StatusOr<std::unique_ptr<EventRing>> ring =
      CreateRingFile("/proc/no_such_dir", 16, Identity());
  ASSERT_FALSE(ring.ok());
  EXPECT_NE(ring.status().message().find("/proc/no_such_dir/aos_trace"),
            std::string::npos)
      << ring.status();
}

}  // namespace
}  // namespace aos::tracing
