#include "aos/tracing/trace_snapshot_message.h"

#include "aos/configuration.h"
#include "aos/testing/path.h"
#include "aos/tracing/trace_snapshot_reader.h"
#include "aos/tracing/traced_pingpong.h"
#include "gtest/gtest.h"

namespace aos::tracing {
namespace {

class TraceSnapshotMessageTest : public ::testing::Test {
 protected:
  TraceSnapshotMessageTest()
      : config_(configuration::ReadConfig(
                    aos::testing::ArtifactPath("aos/testing/test_config.json"))
                    .value()),
        pingpong_(&config_.message()) {
    pingpong_.factory()->RunFor(std::chrono::milliseconds(200));
    rings_ = {CopyRingOf(*pingpong_.ping()), CopyRingOf(*pingpong_.pong())};
    info_.node = "pi1";
    info_.reason = "ping: wakeup latency";
    info_.trigger_ns = 100'000'000;
    window_ = TraceWindow{rings_[0].events.front().monotonic_ns,
                          rings_[0].events.back().monotonic_ns};
  }

  // The window's events of both rings.
  size_t InWindow() const {
    size_t count = 0;
    for (const RingCopy& ring : rings_) {
      for (const Event& event : ring.events) {
        count += event.monotonic_ns >= window_.begin_ns &&
                 event.monotonic_ns <= window_.end_ns;
      }
    }
    return count;
  }

  const TraceSnapshot& Verified(const flatbuffers::DetachedBuffer& message) {
    flatbuffers::Verifier verifier(message.data(), message.size());
    EXPECT_TRUE(verifier.VerifyBuffer<TraceSnapshot>(nullptr));
    return *flatbuffers::GetRoot<TraceSnapshot>(message.data());
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  TracedPingPong pingpong_;
  std::vector<RingCopy> rings_;
  SnapshotInfo info_;
  TraceWindow window_;
};

TEST_F(TraceSnapshotMessageTest, HoldsTheWindowsEventsAndNames) {
  const flatbuffers::DetachedBuffer message =
      TraceSnapshotMessage(rings_, window_, info_, 1 << 20);
  ASSERT_GT(message.size(), 0u);
  const TraceSnapshot& snapshot = Verified(message);
  EXPECT_EQ(snapshot.node()->string_view(), "pi1");
  EXPECT_EQ(snapshot.reason()->string_view(), "ping: wakeup latency");
  EXPECT_EQ(snapshot.trigger_ns(), 100'000'000);
  EXPECT_EQ(snapshot.window_begin_ns(), window_.begin_ns);
  EXPECT_EQ(snapshot.events_left_out(), 0u);
  ASSERT_EQ(snapshot.rings()->size(), 2u);
  EXPECT_EQ(snapshot.rings()->Get(0)->application()->string_view(),
            rings_[0].application);
  EXPECT_EQ(snapshot.rings()->Get(1)->names()->size(), rings_[1].names.size());
  ASSERT_EQ(snapshot.events()->size(), InWindow());
  // In time order, each naming its ring; ping's first event first.
  const TraceSnapshotEvent* first = snapshot.events()->Get(0);
  EXPECT_EQ(first->monotonic_ns(), rings_[0].events.front().monotonic_ns);
  EXPECT_EQ(first->kind(), static_cast<uint8_t>(rings_[0].events.front().kind));
  int64_t last = 0;
  int pong_events = 0;
  for (const TraceSnapshotEvent* event : *snapshot.events()) {
    EXPECT_GE(event->monotonic_ns(), last);
    last = event->monotonic_ns();
    pong_events += event->ring() == 1;
  }
  EXPECT_GT(pong_events, 0);
  EXPECT_EQ(snapshot.requested_by(), nullptr);
}

TEST_F(TraceSnapshotMessageTest, KeepsTheNewestThatFitAndCountsTheRest) {
  const size_t max_size = 4096;
  const flatbuffers::DetachedBuffer message =
      TraceSnapshotMessage(rings_, window_, info_, max_size);
  ASSERT_GT(message.size(), 0u);
  EXPECT_LE(message.size(), max_size);
  const TraceSnapshot& snapshot = Verified(message);
  ASSERT_GT(snapshot.events()->size(), 0u);
  EXPECT_EQ(snapshot.events()->size() + snapshot.events_left_out(), InWindow());
  EXPECT_GT(snapshot.events_left_out(), 0u);
  // The newest kept: the last is the window's last.
  int64_t newest = 0;
  for (const RingCopy& ring : rings_) {
    for (const Event& event : ring.events) {
      if (event.monotonic_ns <= window_.end_ns) {
        newest = std::max(newest, event.monotonic_ns);
      }
    }
  }
  EXPECT_EQ(
      snapshot.events()->Get(snapshot.events()->size() - 1)->monotonic_ns(),
      newest);
  // Not even the names fit: nothing.
  EXPECT_EQ(TraceSnapshotMessage(rings_, window_, info_, 64).size(), 0u);
}

// Read back, a message gives the same Chrome trace as the rings it was
// made of (for a window holding all their events).
TEST_F(TraceSnapshotMessageTest, ReadsBackAsTheSameTrace) {
  TraceWindow all{INT64_MAX, INT64_MIN};
  for (const RingCopy& ring : rings_) {
    all.begin_ns = std::min(all.begin_ns, ring.events.front().monotonic_ns);
    all.end_ns = std::max(all.end_ns, ring.events.back().monotonic_ns);
  }
  const flatbuffers::DetachedBuffer message =
      TraceSnapshotMessage(rings_, all, info_, 1 << 20);
  absl::StatusOr<LoggedSnapshot> logged =
      ReadTraceSnapshot({message.data(), message.size()});
  ASSERT_TRUE(logged.ok()) << logged.status();
  EXPECT_EQ(logged->left_out, 0u);
  EXPECT_EQ(logged->unplaced, 0u);
  EXPECT_EQ(logged->info.reason, info_.reason);
  EXPECT_EQ(TraceJson(BuildTrace(logged->rings, logged->window, logged->info)),
            TraceJson(BuildTrace(rings_, all, info_)));
  // A window that begins inside handler runs: those runs are in the file's
  // trace, and in the message's too.
  TraceWindow cut{0, all.end_ns};
  for (const Event& event : rings_[1].events) {
    if (event.kind == EventKind::kWatcherStart) {
      cut.begin_ns = event.monotonic_ns + 1;
      break;
    }
  }
  ASSERT_GT(cut.begin_ns, 0);
  const flatbuffers::DetachedBuffer cut_message =
      TraceSnapshotMessage(rings_, cut, info_, 1 << 20);
  absl::StatusOr<LoggedSnapshot> cut_logged =
      ReadTraceSnapshot({cut_message.data(), cut_message.size()});
  ASSERT_TRUE(cut_logged.ok()) << cut_logged.status();
  EXPECT_EQ(TraceJson(BuildTrace(cut_logged->rings, cut_logged->window,
                                 cut_logged->info)),
            TraceJson(BuildTrace(rings_, cut, info_)));
  // A window that ends inside a handler run, and one that lies inside a
  // run: the runs that overlap it are in both traces.
  const Event* run_start = nullptr;
  for (const Event& event : rings_[1].events) {
    if (event.kind == EventKind::kWatcherStart) {
      run_start = &event;
      break;
    }
  }
  ASSERT_NE(run_start, nullptr);
  for (const TraceWindow& window :
       {TraceWindow{all.begin_ns, run_start->monotonic_ns},
        TraceWindow{run_start->monotonic_ns + 1,
                    run_start->monotonic_ns + 1}}) {
    const flatbuffers::DetachedBuffer straddling =
        TraceSnapshotMessage(rings_, window, info_, 1 << 20);
    absl::StatusOr<LoggedSnapshot> read =
        ReadTraceSnapshot({straddling.data(), straddling.size()});
    ASSERT_TRUE(read.ok()) << read.status();
    const std::string from_rings = TraceJson(BuildTrace(rings_, window, info_));
    EXPECT_NE(from_rings.find(R"("ph": "X")"), std::string::npos);
    EXPECT_EQ(TraceJson(BuildTrace(read->rings, read->window, read->info)),
              from_rings);
  }
  // Damaged: refused, never a crash.
  std::vector<uint8_t> damaged(message.data(), message.data() + message.size());
  damaged[damaged.size() / 2] ^= 0xff;
  damaged.resize(damaged.size() / 3);
  EXPECT_FALSE(ReadTraceSnapshot(damaged).ok());
}

}  // namespace
}  // namespace aos::tracing
