// The bridge's receiving side re-sends where a message arrives, in
// Cyclone's receive thread (bridge_receiver.h): forwarded messages reach
// their local watchers, counted and confirmed to the source, while the
// bridge's own loop is busy in a callback that does not return.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "aos/events/shm_event_loop.h"
#include "aos/network/bridge_test_nodes.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/message_bridge.h"
#include "aos/network/remote_message_generated.h"
#include "aos/network/test_dds_domain.h"
#include "examples/ping_generated.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr auto kDeadline = seconds(60);

class BridgeReceiveThreadTest : public BridgeTestNodes {
 protected:
  BridgeReceiveThreadTest()
      : BridgeTestNodes(DdsTestBinary::kBridgeReceiveThread) {}
};

// pi2's bridge runs in this process, so that a timer of its loop can hold
// the loop: while it holds, pi1's pings must still reach pi2's watcher
// (reliable /test, whose timestamps go back to pi1), and pi1 must get their
// remote timestamps. Once released, pi2's ClientStatistics count them.
// With re-sending in the bridge's loop, nothing crosses while it is held
// and the test fails at its deadline.
TEST_F(BridgeReceiveThreadTest, MessagesCrossWhileTheBridgeLoopIsHeld) {
  constexpr int kPings = 20;
  auto bridge1 = StartBridge("pi1", {"--timing_reports=false"});

  auto bridge_loop = MakeLoop("message_bridge", pi2_);
  MessageBridge::Options options;
  options.dds.domain = domain_;
  options.dds.interface = "lo";
  auto bridge = MessageBridge::Make(bridge_loop.get(), options);
  ASSERT_TRUE(bridge.ok()) << bridge.status();
  // Held from its first call until `release`: the loop runs nothing else.
  std::atomic<bool> held{false};
  std::atomic<bool> release{false};
  TimerHandler* hold = bridge_loop->AddTimer([&]() {
    held = true;
    const auto give_up = std::chrono::steady_clock::now() + 2 * kDeadline;
    while (!release && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    held = false;
  });
  bridge_loop->OnRun([&]() {
    hold->Schedule(bridge_loop->monotonic_now() + milliseconds(1));
  });

  // pi1: a ping every 10 ms while the bridge's loop is held, and the
  // remote timestamps pi2's bridge confirms of them meanwhile.
  std::atomic<int> confirmed_while_held{0};
  auto pi1 = MakeLoop("ping", pi1_);
  Sender<examples::Ping> ping_sender = pi1->MakeSender<examples::Ping>("/test");
  int next_value = 0;
  TimerHandler* send_timer = pi1->AddTimer([&]() {
    if (!held || release) return;
    auto builder = ping_sender.MakeBuilder();
    examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
    ping.add_value(next_value++);
    ASSERT_EQ(builder.Send(ping.Finish()), RawSender::Error::kOk);
  });
  pi1->OnRun(
      [&]() { send_timer->Schedule(pi1->monotonic_now(), milliseconds(10)); });
  pi1->MakeWatcher("/aos/remote_timestamps/pi2", [&](const RemoteMessage&) {
    if (held) ++confirmed_while_held;
  });

  // pi2: the pings that arrive while the bridge's loop is held, then the
  // bridge's statistics once it is released.
  std::atomic<int> received_while_held{0};
  int received = 0;
  int received_with_remote_times = 0;
  uint64_t counted = 0;
  auto pi2 = MakeLoop("pong", pi2_);
  pi2->MakeWatcher("/test", [&](const examples::Ping&) {
    const Context& context = pi2->context();
    ++received;
    if (context.monotonic_remote_time != context.monotonic_event_time &&
        context.remote_queue_index != Context::kInvalidQueueIndex) {
      ++received_with_remote_times;
    }
    if (held && ++received_while_held >= kPings && confirmed_while_held > 0) {
      release = true;
    }
  });
  pi2->MakeWatcher("/aos", [&](const ClientStatistics& statistics) {
    if (!release || held) return;
    for (const ClientConnection* connection : *statistics.connections()) {
      if (connection->node()->string_view() == "pi1" &&
          connection->received_packets() >=
              static_cast<uint64_t>(received_while_held)) {
        counted = connection->received_packets();
        pi2->Exit();
      }
    }
  });
  TimerHandler* deadline = pi2->AddTimer([&]() {
    ADD_FAILURE() << received_while_held << " pings (of " << next_value
                  << " sent) and " << confirmed_while_held
                  << " remote timestamps crossed while pi2's bridge loop was "
                     "held; bridge pi1 said:\n"
                  << bridge1->Stderr();
    release = true;
    pi2->Exit();
  });
  pi2->OnRun([&]() { deadline->Schedule(pi2->monotonic_now() + kDeadline); });

  std::thread bridge_thread([&]() { bridge_loop->Run(); });
  std::thread pi1_thread([&]() { pi1->Run(); });
  pi2->Run();
  release = true;
  pi1->Exit();
  bridge_loop->Exit();
  pi1_thread.join();
  bridge_thread.join();

  EXPECT_GE(received_while_held, kPings);
  EXPECT_GT(confirmed_while_held, 0);
  EXPECT_EQ(received_with_remote_times, received);
  EXPECT_GE(counted, static_cast<uint64_t>(kPings));
  bridge->reset();
  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
}

}  // namespace
}  // namespace aos::message_bridge
