// Two nodes as two machines: pi1 and pi2 in network namespaces joined by a
// veth pair that delays each packet by kDelayMs each way
// (tools/netns_pair.sh: tc netem where the kernel has it, else
// tools/netdelay). pi1 runs the test's ping loop and its bridge, pi2 runs the
// real pong and its bridge. Checked: pings reach pong and pongs come back in
// order, none lost on the reliable /test; killing and restarting pong, then
// pi2's bridge, is recovered from, and the disconnect is counted; the path
// age from the ping timer to the Pong watcher (across both bridges' clock
// translations) is never below what the link alone takes, 2 x kDelayMs,
// minus the uncertainty it states. The one-way latency and the path ages
// are printed (wall-clock timing: not asserted beyond that physical bound).
// Needs root (network namespaces); otherwise it says why it skipped.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/testing/path.h"
#include "aos/testing/wait_until.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "examples/ping_generated.h"
#include "examples/pong_generated.h"
#include "gtest/gtest.h"

DECLARE_bool(timing_reports);

namespace aos::message_bridge {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The link's delay each way, by tools/netdelay (forced, so that every
// machine measures the same delay line; it never lets a packet through
// early). The one-way latency the bridge measures over it is printed, not
// asserted: it is wall-clock timing, which a loaded machine
// stretches (CI saw a 5.8 ms median over this 2 ms link), and the bridge's
// clock offset estimate over a 2 ms link is itself only good to a few ms.
// tools/bench/bridge.sh measures latency against a same-run baseline.
constexpr double kDelayMs = 2.0;
// Generous bounds on waits, so that a broken bridge fails instead of hangs.
constexpr auto kDeadline = seconds(30);

// Runs `command` through the shell; its exit status.
int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class MessageBridgeNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "skipped: needs root to make network namespaces "
                      "(ip netns); run the tests as root";
    }
    if (Shell("command -v ip >/dev/null") != 0) {
      GTEST_SKIP() << "skipped: no `ip` (Debian package iproute2)";
    }
    config_path_ =
        aos::testing::ArtifactPath("examples/multinode_pingpong_config.json");
    config_.emplace(configuration::ReadConfig(config_path_).value());
    dir_ = aos::testing::TestTempDir() + "/netns";
    for (const char* node : {"pi1", "pi2"}) {
      std::filesystem::create_directories(ShmBase(node));
    }
    netns_ = StrCat("aose", getpid() % 100000);
    const std::string up =
        StrCat("NETNS_PAIR_DELAY=netdelay NETDELAY=",
               aos::testing::ArtifactPath("tools/netdelay/netdelay"), " ",
               aos::testing::ArtifactPath("tools/netns_pair.sh"), " up ",
               netns_, " ", kDelayMs, " 2>&1");
    ASSERT_EQ(Shell(up), 0) << "could not make the namespaces: " << up;
    netns_up_ = true;
    FLAGS_timing_reports = false;
    FLAGS_permissions = "0600";
  }

  void TearDown() override {
    if (netns_up_) {
      Shell(StrCat(aos::testing::ArtifactPath("tools/netns_pair.sh"), " down ",
                   netns_));
    }
  }

  std::string ShmBase(std::string_view node) const {
    return StrCat(dir_, "/", node, "/shm");
  }

  // `binary` with `args`, run in node `node`'s namespace.
  std::unique_ptr<Subprocess> StartInNode(std::string_view node,
                                          const std::string& binary,
                                          std::vector<std::string> args,
                                          std::string_view log_name) {
    std::vector<std::string> argv = {"ip",
                                     "netns",
                                     "exec",
                                     StrCat(netns_, node == "pi1" ? "1" : "2"),
                                     aos::testing::ArtifactPath(binary),
                                     StrCat("--config=", config_path_),
                                     StrCat("--node=", node),
                                     StrCat("--shm_base=", ShmBase(node))};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string log_dir = StrCat(dir_, "/", log_name);
    std::filesystem::create_directories(log_dir);
    return std::make_unique<Subprocess>("/usr/bin/env", argv, log_dir);
  }

  std::unique_ptr<Subprocess> StartBridge(std::string_view node) {
    return StartInNode(node, "aos/network/message_bridge",
                       {"--dds_domain=7", StrCat("--dds_interface=", netns_,
                                                 node == "pi1" ? "1v" : "2v")},
                       StrCat("bridge_", node, "_", ++starts_));
  }

  std::unique_ptr<Subprocess> StartPong() {
    return StartInNode("pi2", "examples/pong", {"--priority=0"},
                       StrCat("pong_", ++starts_));
  }

  std::string config_path_;
  std::optional<FlatbufferDetachedBuffer<Configuration>> config_;
  std::string dir_;
  std::string netns_;
  bool netns_up_ = false;
  int starts_ = 0;
};

// What pi1's loop has seen, shared with the test's thread.
struct Seen {
  std::mutex mutex;
  // Pong values in arrival order.
  std::vector<int> pongs;
  // pi1's bridge's latest ClientStatistics (what it receives from pi2).
  std::vector<uint8_t> client_statistics;
  std::atomic<int> pong_count{0};
  std::atomic<uint32_t> disconnects{0};
  std::atomic<bool> connected{false};
  // Pongs whose origin (the ping timer, 2 hops) came back, and those that
  // came back without one (answers to pings that reached pi2 before its
  // bridge had a clock offset estimate); read after pi1's loop stopped.
  int pongs_with_origin = 0;
  int pongs_without_origin = 0;
  // Path ages, measured at the watcher's start, below
  // 2 x kDelayMs - the origin's uncertainty: the physically impossible.
  int too_young = 0;
  std::string first_too_young;
  // Origins further from the scheduled time than their uncertainty.
  int origins_off = 0;
};

TEST_F(MessageBridgeNetnsTest, DelayedLinkOrderLatencyAndRecovery) {
  auto bridge1 = StartBridge("pi1");
  auto bridge2 = StartBridge("pi2");
  auto pong = StartPong();

  const Node* pi1_node = configuration::GetNode(config_->message(), "pi1");
  FLAGS_shm_base = ShmBase("pi1");
  ShmEventLoop pi1(&config_->message(), "ping", pi1_node);
  Sender<examples::Ping> ping_sender = pi1.MakeSender<examples::Ping>("/test");
  int next_value = 0;
  // When the timer call that sent each ping was scheduled, by value: its
  // path origin, which the Pong brings back.
  std::vector<int64_t> scheduled_ns(100000, 0);
  TimerHandler* send_timer = pi1.AddTimer([&]() {
    if (next_value < static_cast<int>(scheduled_ns.size())) {
      scheduled_ns[next_value] =
          pi1.context().monotonic_event_time.time_since_epoch().count();
    }
    auto builder = ping_sender.MakeBuilder();
    examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
    ping.add_value(next_value++);
    ping.add_send_time(pi1.monotonic_now().time_since_epoch().count());
    (void)builder.Send(ping.Finish());
  });
  Seen seen;
  seen.pongs.reserve(100000);
  constexpr int64_t kLinkRoundTripNs = static_cast<int64_t>(2 * kDelayMs * 1e6);
  pi1.MakeWatcher("/test", [&](const examples::Pong& pong) {
    const int64_t start_ns = pi1.monotonic_now().time_since_epoch().count();
    bool found = false;
    for (const PathOrigin& origin : pi1.context().origins) {
      if (origin.id != send_timer->timing().origin_id || origin.hops != 2) {
        continue;
      }
      found = true;
      // One machine, one clock: after both translations the origin is the
      // scheduled time within the uncertainty it states (not a bound after
      // two crossings, docs/network.md: printed, not asserted).
      if (pong.value() >= 0 &&
          pong.value() < static_cast<int>(scheduled_ns.size()) &&
          std::abs(origin.monotonic_time_ns - scheduled_ns[pong.value()]) >
              int64_t{origin.uncertainty_us} * 1000) {
        ++seen.origins_off;
      }
      const int64_t age_ns = start_ns - origin.monotonic_time_ns;
      if (age_ns < kLinkRoundTripNs - int64_t{origin.uncertainty_us} * 1000 &&
          seen.too_young++ == 0) {
        seen.first_too_young =
            StrCat("pong ", pong.value(), ": path age ", age_ns,
                   " ns, uncertainty ", origin.uncertainty_us, " us");
      }
    }
    ++(found ? seen.pongs_with_origin : seen.pongs_without_origin);
    std::lock_guard<std::mutex> lock(seen.mutex);
    seen.pongs.push_back(pong.value());
    seen.pong_count = static_cast<int>(seen.pongs.size());
  });
  pi1.MakeWatcher("/aos", [&](const ClientStatistics& statistics) {
    const Context& context = pi1.context();
    std::lock_guard<std::mutex> lock(seen.mutex);
    seen.client_statistics.assign(
        static_cast<const uint8_t*>(context.data),
        static_cast<const uint8_t*>(context.data) + context.size);
    const ClientConnection* from_pi2 = statistics.connections()->Get(0);
    seen.disconnects = from_pi2->disconnects();
    seen.connected = from_pi2->state() == State::CONNECTED;
  });
  pi1.OnRun(
      [&]() { send_timer->Schedule(pi1.monotonic_now(), milliseconds(10)); });
  std::thread pi1_thread([&]() { pi1.Run(); });
  auto stop = [&]() {
    pi1.Exit();
    pi1_thread.join();
  };
  auto pongs_after = [&](int count) {
    return aos::testing::WaitUntil([&]() { return seen.pong_count >= count; },
                                   kDeadline, StrCat(count, " pongs in all"));
  };
  auto logs = [&]() {
    return StrCat("\nbridge pi1:\n", bridge1->Stderr(), "\nbridge pi2:\n",
                  bridge2->Stderr(), "\npong:\n", pong->Stderr());
  };

  // (a) In order, none lost, once the bridges found each other.
  if (!pongs_after(300)) {
    stop();
    FAIL() << "no 300 pongs came back" << logs();
  }
  std::vector<int> first_phase;
  {
    std::lock_guard<std::mutex> lock(seen.mutex);
    first_phase = seen.pongs;
  }
  for (size_t i = 1; i < first_phase.size(); ++i) {
    ASSERT_EQ(first_phase[i], first_phase[i - 1] + 1)
        << "pong " << i << " of " << first_phase.size() << logs();
  }

  // (b) pi1's bridge measured the one-way latency (pi2 -> pi1) of what it
  // received; shown for the reader.
  {
    std::lock_guard<std::mutex> lock(seen.mutex);
    ASSERT_FALSE(seen.client_statistics.empty());
    const auto* statistics =
        flatbuffers::GetRoot<ClientStatistics>(seen.client_statistics.data());
    const ClientConnection* from_pi2 = statistics->connections()->Get(0);
    ASSERT_NE(from_pi2->one_way_latency_histogram(), nullptr);
    timing::LatencyHistogram latency;
    std::string why;
    ASSERT_TRUE(timing::LatencyHistogram::Decode(
        *from_pi2->one_way_latency_histogram(), &latency, &why))
        << why;
    // Statistics are published once a second: some of the pongs so far.
    ASSERT_GT(latency.count(), 0u);
    const double median_ms =
        static_cast<double>(latency.PercentileNs(50)) / 1e6;
    std::cout << "one-way latency pi2 -> pi1 over a " << kDelayMs
              << " ms link: median " << median_ms << " ms, p99 "
              << static_cast<double>(latency.PercentileNs(99)) / 1e6 << " ms, "
              << latency.count() << " messages; p1 "
              << static_cast<double>(latency.PercentileNs(1)) / 1e6
              << " ms; clock offset estimate "
              << static_cast<double>(from_pi2->monotonic_offset()) / 1e6
              << " ms +- "
              << static_cast<double>(from_pi2->monotonic_offset_uncertainty()) /
                     1e6
              << " ms (the true offset is 0: one machine)\n";
    // The reliable /test is checked pong by pong above. The count also
    // covers best-effort reports, whose 500 ms lifespan a starved bridge on
    // a loaded machine may rightly let run out: shown, not asserted.
    std::cout << "lost packets pi2 -> pi1: " << from_pi2->lost_packets()
              << "\n";
  }

  // (c) pong killed and restarted: pongs come again.
  ASSERT_EQ(kill(pong->pid(), SIGKILL), 0);
  pong->Wait();
  const int before_pong_restart = seen.pong_count;
  pong = StartPong();
  if (!pongs_after(before_pong_restart + 100)) {
    stop();
    FAIL() << "no pongs after pong restarted" << logs();
  }

  // pi2's bridge killed: pi1's bridge counts the disconnect; restarted, it
  // reconnects and pongs come again.
  ASSERT_EQ(kill(bridge2->pid(), SIGKILL), 0);
  bridge2->Wait();
  if (!aos::testing::WaitUntil(
          [&]() { return seen.disconnects >= 1 && !seen.connected; }, kDeadline,
          "pi1's bridge to count pi2's disconnect")) {
    stop();
    FAIL() << "pi1's bridge never saw pi2's go" << logs();
  }
  const int before_bridge_restart = seen.pong_count;
  bridge2 = StartBridge("pi2");
  if (!pongs_after(before_bridge_restart + 100) ||
      !aos::testing::WaitUntil([&]() { return seen.connected.load(); },
                               kDeadline, "pi1's bridge to reconnect")) {
    stop();
    FAIL() << "no pongs after pi2's bridge restarted" << logs();
  }
  stop();

  // The ping timer -> Pong watcher path, as pi1's loop measured it (its
  // timing reports' figure, from the watcher's start).
  EXPECT_EQ(seen.too_young, 0) << seen.first_too_young;
  EXPECT_GT(seen.pongs_with_origin, 0);
  const timing::PathTiming* path = nullptr;
  for (const auto& watcher : pi1.watchers()) {
    if (watcher->channel()->type()->string_view() != "aos.examples.Pong") {
      continue;
    }
    for (const timing::PathTiming& candidate : watcher->timing().paths) {
      if (candidate.origin_id == send_timer->timing().origin_id &&
          candidate.hops == 2) {
        path = &candidate;
      }
    }
  }
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path->count(), static_cast<uint64_t>(seen.pongs_with_origin));
  // The same bound on the loop's own figures, with the largest uncertainty.
  EXPECT_GE(path->age.statistic().min() * 1e9,
            static_cast<double>(kLinkRoundTripNs - path->max_uncertainty_ns));
  const timing::LatencyHistogram& ages = path->age.histogram();
  std::cout << "path age ping timer -> Pong watcher (2 hops, both bridges' "
            << "clock translations) over a link of " << kDelayMs
            << " ms each way: p50 "
            << static_cast<double>(ages.PercentileNs(50)) / 1e6 << " ms, p99 "
            << static_cast<double>(ages.PercentileNs(99)) / 1e6 << " ms, max "
            << static_cast<double>(ages.max_ns()) / 1e6 << " ms, min "
            << static_cast<double>(ages.min_ns()) / 1e6 << " ms, "
            << path->count() << " pongs (" << seen.pongs_without_origin
            << " without an origin: before an offset estimate); largest "
            << "uncertainty "
            << static_cast<double>(path->max_uncertainty_ns) / 1e6
            << " ms; origins further from the truth than their uncertainty: "
            << seen.origins_off << "\n";

  // Across both restarts: never a pong twice or out of order.
  for (size_t i = 1; i < seen.pongs.size(); ++i) {
    ASSERT_GT(seen.pongs[i], seen.pongs[i - 1]) << "pong " << i << logs();
  }
  const auto* statistics =
      flatbuffers::GetRoot<ClientStatistics>(seen.client_statistics.data());
  const ClientConnection* from_pi2 = statistics->connections()->Get(0);
  // At least the kill; a bridge starved for over a second on a loaded
  // machine is rightly declared gone too. Every disconnect was followed by
  // a reconnection, but the last one if the statistics say disconnected.
  EXPECT_GE(from_pi2->disconnects(), 1u);
  EXPECT_EQ(from_pi2->connection_count(),
            from_pi2->disconnects() +
                (from_pi2->state() == State::CONNECTED ? 1 : 0));
  EXPECT_EQ(from_pi2->dropped_invalid(), 0u);
  EXPECT_EQ(from_pi2->invalid_origins(), 0u);

  EXPECT_EQ(pong->Terminate(), 0) << pong->Stderr();
  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
}

}  // namespace
}  // namespace aos::message_bridge
