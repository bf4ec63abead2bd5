#ifndef AOS_NETWORK_BRIDGE_TEST_NODES_H_
#define AOS_NETWORK_BRIDGE_TEST_NODES_H_

// For tests of real message bridge processes on loopback: the example's
// two nodes (examples/multinode_pingpong_config.json), each node's shared
// memory in a directory of the test's own, bridges started on the test
// binary's DDS domain, and the test's event loops on either node.
//
//   class MyTest : public BridgeTestNodes {
//    protected:
//     MyTest() : BridgeTestNodes(DdsTestBinary::kMessageBridge) {}
//   };
//   TEST_F(MyTest, X) {
//     auto bridge2 = StartBridge("pi2");
//     auto pi2 = MakeLoop("pong", pi2_);
//     ...
//   }

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/events/shm_event_loop.h"
#include "aos/network/test_dds_domain.h"
#include "aos/testing/path.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "gflags/gflags.h"
#include "gtest/gtest.h"

DECLARE_bool(timing_reports);

namespace aos::message_bridge {

class BridgeTestNodes : public ::testing::Test {
 protected:
  explicit BridgeTestNodes(DdsTestBinary binary)
      : config_path_(aos::testing::ArtifactPath(
            "examples/multinode_pingpong_config.json")),
        config_(configuration::ReadConfig(config_path_).value()),
        pi1_(configuration::GetNode(config_.message(), "pi1")),
        pi2_(configuration::GetNode(config_.message(), "pi2")),
        dir_(aos::testing::TestTempDir() + "/" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()),
        domain_(TestDdsDomain(binary)) {
    FLAGS_timing_reports = false;
    FLAGS_permissions = "0600";
    for (const char* node : {"pi1", "pi2"}) {
      std::filesystem::create_directories(dir_ + "/" + node + "/shm");
    }
  }

  std::string ShmBase(std::string_view node) const {
    return StrCat(dir_, "/", node, "/shm");
  }

  // The bridge of `node` on loopback, in the test's domain, with
  // `extra_args`; its output in the node's directory.
  std::unique_ptr<Subprocess> StartBridge(
      std::string_view node, std::vector<std::string> extra_args = {}) {
    std::vector<std::string> args{
        StrCat("--config=", config_path_), StrCat("--node=", node),
        StrCat("--shm_base=", ShmBase(node)), StrCat("--dds_domain=", domain_),
        "--dds_interface=lo"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    return std::make_unique<Subprocess>(
        aos::testing::ArtifactPath("aos/network/message_bridge"),
        std::move(args), StrCat(dir_, "/", node));
  }

  // A loop on `node`, its channels under that node's shared memory: a
  // ShmEventLoop reads --shm_base when it is made (as AOS's), and the
  // test's loops of both nodes live in one process.
  std::unique_ptr<ShmEventLoop> MakeLoop(std::string_view name,
                                         const Node* node) {
    FLAGS_shm_base = ShmBase(node->name()->string_view());
    return std::make_unique<ShmEventLoop>(&config_.message(), name, node);
  }

  uint32_t ChannelIndex(const Channel* channel) const {
    for (uint32_t i = 0; i < config_.message().channels()->size(); ++i) {
      if (config_.message().channels()->Get(i) == channel) return i;
    }
    return 0xffffffff;
  }
  uint32_t NodeIndex(const Node* node) const {
    for (uint32_t i = 0; i < config_.message().nodes()->size(); ++i) {
      if (config_.message().nodes()->Get(i) == node) return i;
    }
    return 0xffffffff;
  }

  const std::string config_path_;
  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* const pi1_;
  const Node* const pi2_;
  const std::string dir_;
  const uint32_t domain_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_BRIDGE_TEST_NODES_H_
