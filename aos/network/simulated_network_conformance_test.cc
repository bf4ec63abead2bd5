// The network conformance suite (network_conformance_test.h) on the
// simulated network: the example's config in one SimulatedEventLoopFactory.
#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/network/network_conformance_test.h"
#include "aos/testing/path.h"

namespace aos::message_bridge {
namespace {

class SimulatedNetworkUnderTest : public NetworkUnderTest {
 public:
  SimulatedNetworkUnderTest()
      : config_(configuration::ReadConfig(
                    aos::testing::ArtifactPath(
                        "examples/multinode_pingpong_config.json"))
                    .value()),
        factory_(&config_.message()) {}

  const Configuration* configuration() const override {
    return &config_.message();
  }
  std::unique_ptr<EventLoop> MakeRunningLoop(std::string_view name,
                                             const Node* node) override {
    return factory_.MakeEventLoop(name, node);
  }
  std::unique_ptr<EventLoop> MakeIdleLoop(std::string_view name,
                                          const Node* node) override {
    return factory_.MakeEventLoop(name, node);
  }
  bool RunUntil(EventLoop*, const std::function<bool()>& done,
                std::chrono::nanoseconds deadline) override {
    constexpr std::chrono::milliseconds kStep(10);
    for (std::chrono::nanoseconds ran(0); !done(); ran += kStep) {
      if (ran >= deadline) return false;
      factory_.RunFor(kStep);
    }
    return true;
  }
  void IsolatePi2() override {
    factory_.DisconnectLink(pi1(), pi2());
    factory_.DisconnectLink(pi2(), pi1());
  }
  void RejoinPi2() override {
    factory_.ConnectLink(pi1(), pi2());
    factory_.ConnectLink(pi2(), pi1());
  }
  bool can_reboot() const override { return true; }
  void RebootPi1() override { factory_.RebootNode(pi1()); }
  bool time_is_simulated() const override { return true; }

 private:
  FlatbufferDetachedBuffer<Configuration> config_;
  SimulatedEventLoopFactory factory_;
};

std::unique_ptr<NetworkUnderTest> MakeSimulatedNetwork() {
  return std::make_unique<SimulatedNetworkUnderTest>();
}

INSTANTIATE_TEST_SUITE_P(Simulated, NetworkConformanceTest,
                         ::testing::Values(MakeSimulatedNetwork));

}  // namespace
}  // namespace aos::message_bridge
