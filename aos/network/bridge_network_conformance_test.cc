// The network conformance suite (network_conformance_test.h) on two real
// message bridges on loopback (bridge_test_nodes.h), in a DDS domain of the
// test's own. Only the test's running loop runs (a ShmEventLoop on pi2);
// pi1's loop is used from its callbacks.
#include "aos/events/shm_event_loop.h"
#include "aos/network/bridge_test_nodes.h"
#include "aos/network/network_conformance_test.h"

namespace aos::message_bridge {
namespace {

// A ::testing::Test only for BridgeTestNodes' helpers: made inside a case,
// never run by gtest itself.
class LoopbackBridges : public NetworkUnderTest, private BridgeTestNodes {
 public:
  LoopbackBridges() : BridgeTestNodes(DdsTestBinary::kMessageBridge) {}
  ~LoopbackBridges() override {
    for (std::unique_ptr<Subprocess>* bridge : {&bridge1_, &bridge2_}) {
      if (*bridge != nullptr) {
        EXPECT_EQ((*bridge)->Terminate(), 0) << (*bridge)->Stderr();
      }
    }
  }

  const Configuration* configuration() const override {
    return &config_.message();
  }
  std::unique_ptr<EventLoop> MakeRunningLoop(std::string_view name,
                                             const Node* node) override {
    StartBridges();
    return MakeLoop(name, node);
  }
  std::unique_ptr<EventLoop> MakeIdleLoop(std::string_view name,
                                          const Node* node) override {
    StartBridges();
    return MakeLoop(name, node);
  }
  bool RunUntil(EventLoop* loop, const std::function<bool()>& done,
                std::chrono::nanoseconds deadline) override {
    ShmEventLoop* const shm = static_cast<ShmEventLoop*>(loop);
    bool finished = false;
    TimerHandler* poll = shm->AddTimer([&]() {
      if (done()) {
        finished = true;
        shm->Exit();
      }
    });
    TimerHandler* give_up = shm->AddTimer([&]() { shm->Exit(); });
    poll->Schedule(shm->monotonic_now(), std::chrono::milliseconds(10));
    give_up->Schedule(shm->monotonic_now() + deadline);
    shm->Run();
    poll->Disable();
    give_up->Disable();
    return finished;
  }
  void IsolatePi2() override {
    EXPECT_EQ(bridge2_->Terminate(), 0) << bridge2_->Stderr();
    bridge2_.reset();
  }
  void RejoinPi2() override {
    bridge2_ = StartBridge("pi2", {"--timing_reports=false"});
  }
  bool can_reboot() const override { return false; }
  void RebootPi1() override { FAIL() << "loopback bridges cannot reboot"; }
  bool time_is_simulated() const override { return false; }

 private:
  void TestBody() override {}

  // With the case's first loop: a case that skips starts none (a bridge
  // stopped while it starts would not exit cleanly).
  void StartBridges() {
    if (bridge1_ != nullptr) return;
    bridge1_ = StartBridge("pi1", {"--timing_reports=false"});
    bridge2_ = StartBridge("pi2", {"--timing_reports=false"});
  }

  std::unique_ptr<Subprocess> bridge1_;
  std::unique_ptr<Subprocess> bridge2_;
};

std::unique_ptr<NetworkUnderTest> MakeLoopbackBridges() {
  return std::make_unique<LoopbackBridges>();
}

INSTANTIATE_TEST_SUITE_P(LoopbackBridges, NetworkConformanceTest,
                         ::testing::Values(MakeLoopbackBridges));

}  // namespace
}  // namespace aos::message_bridge
