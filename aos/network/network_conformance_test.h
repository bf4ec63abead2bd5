#ifndef AOS_NETWORK_NETWORK_CONFORMANCE_TEST_H_
#define AOS_NETWORK_NETWORK_CONFORMANCE_TEST_H_

// The conformance suite of networks between nodes: the same cases run
// against every implementation of the network, today the simulated network
// (aos/events/simulated_network.h) and two real message bridges on loopback
// (message_bridge.h). An implementation provides a NetworkUnderTest and
// instantiates the suite:
//
//   INSTANTIATE_TEST_SUITE_P(Simulated, NetworkConformanceTest,
//                            ::testing::Values(MakeSimulatedNetwork));
//
// The network is the example's two nodes (examples/multinode_pingpong.json):
// /test aos.examples.Ping forwarded reliably from pi1 to pi2 with its
// timestamps going back, each node's bridge statistics on its /aos.
//
// The cases assert behaviour, never wall-clock timing: what arrives, in
// which order, with which remote fields, what the statistics count, and how
// the counts move when a node leaves the network and comes back, or
// reboots. They wait for what they expect with a generous deadline that
// fails the case; exact times are asserted only where time_is_simulated().

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

#include "aos/configuration.h"
#include "aos/events/event_loop.h"
#include "aos/flatbuffers.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {

// One network of pi1 and pi2 with everything that forwards between them
// running. Its test loops run one at a time.
class NetworkUnderTest {
 public:
  virtual ~NetworkUnderTest() = default;

  virtual const Configuration* configuration() const = 0;
  const Node* pi1() const;
  const Node* pi2() const;

  // A loop on `node` that RunUntil runs. A real network runs one in each
  // RunUntil, and its other loops not at all.
  virtual std::unique_ptr<EventLoop> MakeRunningLoop(std::string_view name,
                                                     const Node* node) = 0;
  // A loop on `node` whose senders and fetchers are used from the running
  // loop's callbacks; a real network never runs it (no watchers on it).
  virtual std::unique_ptr<EventLoop> MakeIdleLoop(std::string_view name,
                                                  const Node* node) = 0;
  // Runs `loop` (from MakeRunningLoop; in simulation, every loop) until
  // `done()` is true, checked every 10 ms, or `deadline` passed. Returns
  // done(). May be called again.
  virtual bool RunUntil(EventLoop* loop, const std::function<bool()>& done,
                        std::chrono::nanoseconds deadline) = 0;

  // pi2 leaves the network, both ways (real: its bridge stops); and comes
  // back (real: its bridge starts again, on the same boot).
  virtual void IsolatePi2() = 0;
  virtual void RejoinPi2() = 0;
  // Whether pi1 can reboot here: a new boot UUID, its channels empty.
  // Loopback cannot: both bridges share the machine's boot.
  virtual bool can_reboot() const = 0;
  // Reboots pi1; every loop of the test on pi1 must be gone.
  virtual void RebootPi1() = 0;

  // Nothing runs late, so exact times and counts may be asserted.
  virtual bool time_is_simulated() const = 0;
};

using NetworkFactory = std::function<std::unique_ptr<NetworkUnderTest>()>;

class NetworkConformanceTest : public ::testing::TestWithParam<NetworkFactory> {
 protected:
  NetworkConformanceTest() : network_(GetParam()()) {}

  std::unique_ptr<NetworkUnderTest> network_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_NETWORK_CONFORMANCE_TEST_H_
