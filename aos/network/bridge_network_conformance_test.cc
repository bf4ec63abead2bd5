// The network conformance suite (network_conformance_test.h) on two real
// message bridges on loopback (bridge_test_nodes.h), in a DDS domain of the
// test's own. Only the test's running loop runs (a ShmEventLoop on pi2);
// pi1's loop is used from its callbacks. Each node has a boot of its own
// (--boot_id_file), as two machines do, so pi1 can reboot: a new boot UUID,
// its shared memory gone, its bridge started again.
#include <filesystem>
#include <fstream>

#include "aos/events/shm_event_loop.h"
#include "aos/network/bridge_test_nodes.h"
#include "aos/network/network_conformance_test.h"

namespace aos::message_bridge {
namespace {

// A ::testing::Test only for BridgeTestNodes' helpers: made inside a case,
// never run by gtest itself.
class LoopbackBridges : public NetworkUnderTest, private BridgeTestNodes {
 public:
  LoopbackBridges() : BridgeTestNodes(DdsTestBinary::kMessageBridge) {
    for (const char* node : {"pi1", "pi2"}) NewBoot(node);
  }
  ~LoopbackBridges() override {
    for (std::unique_ptr<Subprocess>* bridge : {&bridge1_, &bridge2_}) {
      if (*bridge != nullptr) {
        EXPECT_EQ((*bridge)->Terminate(), 0) << (*bridge)->Stderr();
      }
    }
    FLAGS_boot_id_file = "/proc/sys/kernel/random/boot_id";
  }

  const Configuration* configuration() const override {
    return &config_.message();
  }
  std::unique_ptr<EventLoop> MakeRunningLoop(std::string_view name,
                                             const Node* node) override {
    StartBridges();
    return MakeNodeLoop(name, node);
  }
  std::unique_ptr<EventLoop> MakeIdleLoop(std::string_view name,
                                          const Node* node) override {
    StartBridges();
    return MakeNodeLoop(name, node);
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
  void RejoinPi2() override { bridge2_ = StartNodeBridge("pi2"); }
  bool can_reboot() const override { return true; }
  // As a machine reboots: its bridge ends, it comes back with a new boot
  // UUID and empty shared memory, and its bridge starts again.
  void RebootPi1() override {
    EXPECT_EQ(bridge1_->Terminate(), 0) << bridge1_->Stderr();
    std::filesystem::remove_all(ShmBase("pi1"));
    std::filesystem::create_directories(ShmBase("pi1"));
    NewBoot("pi1");
    bridge1_ = StartNodeBridge("pi1");
  }
  bool time_is_simulated() const override { return false; }

 private:
  void TestBody() override {}

  // With the case's first loop: a case that skips starts none (a bridge
  // stopped while it starts would not exit cleanly).
  void StartBridges() {
    if (bridge1_ != nullptr) return;
    bridge1_ = StartNodeBridge("pi1");
    bridge2_ = StartNodeBridge("pi2");
  }

  // The file holding `node`'s boot UUID.
  std::string BootFile(std::string_view node) const {
    return StrCat(ShmBase(node), "/../boot_id");
  }
  // Gives `node` a boot UUID never seen before.
  void NewBoot(std::string_view node) {
    std::filesystem::create_directories(ShmBase(node));
    std::ofstream(BootFile(node)) << UUID::Random().ToString() << "\n";
  }
  std::unique_ptr<Subprocess> StartNodeBridge(std::string_view node) {
    return StartBridge(node, {"--timing_reports=false",
                              StrCat("--boot_id_file=", BootFile(node))});
  }
  // A loop of `node`, on that node's boot.
  std::unique_ptr<EventLoop> MakeNodeLoop(std::string_view name,
                                          const Node* node) {
    FLAGS_boot_id_file = BootFile(node->name()->string_view());
    return MakeLoop(name, node);
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
