#include "aos/network/forwarded_message_check.h"

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/testing/path.h"
#include "examples/ping_generated.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using ::testing::HasSubstr;

class ForwardedMessageCheckTest : public ::testing::Test {
 protected:
  ForwardedMessageCheckTest()
      : config_(configuration::ReadConfig(
                    aos::testing::ArtifactPath(
                        "examples/multinode_pingpong_config.json"))
                    .value()),
        pi1_(configuration::GetNode(config_.message(), "pi1")),
        pi2_(configuration::GetNode(config_.message(), "pi2")),
        ping_(configuration::GetChannel(config_.message(), "/test",
                                        "aos.examples.Ping", "", pi2_)) {
    EXPECT_NE(ping_, nullptr);
    flatbuffers::FlatBufferBuilder fbb;
    examples::Ping::Builder ping(fbb);
    ping.add_value(7);
    ping.add_send_time(123);
    fbb.Finish(ping.Finish());
    message_.assign(fbb.GetBufferPointer(),
                    fbb.GetBufferPointer() + fbb.GetSize());
  }

  uint32_t NodeIndex(const Node* node) const {
    for (uint32_t i = 0; i < config_.message().nodes()->size(); ++i) {
      if (config_.message().nodes()->Get(i) == node) return i;
    }
    return 0xffffffff;
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  const Node* pi1_;
  const Node* pi2_;
  const Channel* ping_;
  std::vector<uint8_t> message_;
};

TEST_F(ForwardedMessageCheckTest, AValidMessageOfTheChannelPasses) {
  auto check = ForwardedMessageCheck::Make(config_.message(), *ping_, *pi2_);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->source_node_index(), NodeIndex(pi1_));
  EXPECT_EQ(check->Check(check->channel_index(), NodeIndex(pi1_),
                         message_.data(), message_.size()),
            ForwardedVerdict::kOk);
}

TEST_F(ForwardedMessageCheckTest, AnotherChannelOrNodeIsUnknown) {
  auto check = ForwardedMessageCheck::Make(config_.message(), *ping_, *pi2_);
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->Check(check->channel_index() + 1, NodeIndex(pi1_),
                         message_.data(), message_.size()),
            ForwardedVerdict::kUnknownChannel);
  EXPECT_EQ(check->Check(check->channel_index(), NodeIndex(pi2_),
                         message_.data(), message_.size()),
            ForwardedVerdict::kUnknownChannel);
  EXPECT_EQ(
      check->Check(0xffffffff, 0xffffffff, message_.data(), message_.size()),
      ForwardedVerdict::kUnknownChannel);
}

TEST_F(ForwardedMessageCheckTest, LargerThanMaxSizeIsOversize) {
  auto check = ForwardedMessageCheck::Make(config_.message(), *ping_, *pi2_);
  ASSERT_TRUE(check.ok());
  std::vector<uint8_t> big(static_cast<size_t>(ping_->max_size()) + 1, 0);
  EXPECT_EQ(check->Check(check->channel_index(), NodeIndex(pi1_), big.data(),
                         big.size()),
            ForwardedVerdict::kOversize);
}

TEST_F(ForwardedMessageCheckTest, DamagedOrEmptyMessagesAreInvalid) {
  auto check = ForwardedMessageCheck::Make(config_.message(), *ping_, *pi2_);
  ASSERT_TRUE(check.ok());
  const uint32_t pi1 = NodeIndex(pi1_);
  EXPECT_EQ(check->Check(check->channel_index(), pi1, nullptr, 0),
            ForwardedVerdict::kInvalid);
  // The root offset pointing outside the buffer.
  std::vector<uint8_t> damaged = message_;
  damaged[0] = 0xff;
  damaged[1] = 0xff;
  EXPECT_EQ(
      check->Check(check->channel_index(), pi1, damaged.data(), damaged.size()),
      ForwardedVerdict::kInvalid);
  // Cut short.
  EXPECT_EQ(check->Check(check->channel_index(), pi1, message_.data(),
                         message_.size() / 2),
            ForwardedVerdict::kInvalid);
  // Every single-byte change either still verifies or is refused: never a
  // crash (the Verifier bounds every read).
  for (size_t i = 0; i < message_.size(); ++i) {
    std::vector<uint8_t> flipped = message_;
    flipped[i] ^= 0xa5;
    (void)check->Check(check->channel_index(), pi1, flipped.data(),
                       flipped.size());
  }
}

TEST_F(ForwardedMessageCheckTest, AChannelNotForwardedHereIsRefusedByName) {
  // Ping is forwarded to pi2, not to pi1.
  const Channel* ping_on_pi1 = configuration::GetChannel(
      config_.message(), "/test", "aos.examples.Ping", "", pi1_);
  ASSERT_NE(ping_on_pi1, nullptr);
  auto check =
      ForwardedMessageCheck::Make(config_.message(), *ping_on_pi1, *pi1_);
  ASSERT_FALSE(check.ok());
  EXPECT_THAT(std::string(check.status().message()),
              HasSubstr("/test (aos.examples.Ping) is not forwarded to node "
                        "pi1"));
}

}  // namespace
}  // namespace aos::message_bridge
