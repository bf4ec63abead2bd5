// aos_send's work on the simulated loop: what it sends, when, and the one
// line it says for JSON that does not fit the channel's type.
#include "aos/tools/json_sender.h"

#include <vector>

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_generated.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::HasSubstr;

class JsonSenderTest : public ::testing::Test {
 protected:
  JsonSenderTest()
      : config_(Read()),
        factory_(&config_.message()),
        channel_(configuration::GetChannel(config_.message(), "/test",
                                           "aos.testing.TestMessage", "",
                                           nullptr)) {
    CHECK(channel_ != nullptr);
  }

  static FlatbufferDetachedBuffer<Configuration> Read() {
    auto config = configuration::ReadConfig(
        aos::testing::ArtifactPath("aos/testing/test_config.json"));
    CHECK(config.ok()) << config.status();
    return std::move(config).value();
  }

  // The message JsonSender::Make refuses `json` with.
  std::string Refusal(std::string_view json, JsonSender::Options options = {}) {
    std::unique_ptr<EventLoop> loop = factory_.MakeEventLoop("aos_send");
    auto sender = JsonSender::Make(loop.get(), channel_, json, options);
    return sender.ok() ? "made" : std::string(sender.status().message());
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  SimulatedEventLoopFactory factory_;
  const Channel* const channel_;
};

// --count=5 --rate_hz=10: five copies, the first at once, then every
// 100 ms; then the loop exits.
TEST_F(JsonSenderTest, SendsCountMessagesAtTheRate) {
  std::unique_ptr<EventLoop> reader = factory_.MakeEventLoop("reader");
  std::vector<std::pair<int, monotonic_clock::time_point>> got;
  reader->MakeWatcher("/test", [&](const aos::testing::TestMessage& message) {
    got.emplace_back(message.value(), reader->context().monotonic_event_time);
  });
  std::unique_ptr<EventLoop> loop = factory_.MakeEventLoop("aos_send");
  auto sender = JsonSender::Make(loop.get(), channel_,
                                 R"({ "value": 971, send_time: 5 })",
                                 {.count = 5, .rate_hz = 10});
  ASSERT_TRUE(sender.ok()) << sender.status();
  const monotonic_clock::time_point start =
      factory_.GetNodeEventLoopFactory(nullptr)->monotonic_now();
  factory_.Run();
  // Its Exit() ended the run before the last message was delivered.
  factory_.RunFor(std::chrono::seconds(1));
  EXPECT_TRUE((*sender)->status().ok()) << (*sender)->status();
  EXPECT_EQ((*sender)->sent(), 5);
  ASSERT_EQ(got.size(), 5u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, 971);
    EXPECT_EQ(got[i].second, start + std::chrono::milliseconds(100) * i);
  }
}

// Without a rate, --count messages back to back; more than the channel's
// frequency allows is one line naming the channel and the message.
TEST_F(JsonSenderTest, BackToBackUntilTheChannelRefuses) {
  std::unique_ptr<EventLoop> loop = factory_.MakeEventLoop("aos_send");
  auto sender =
      JsonSender::Make(loop.get(), channel_, R"({"value": 1})", {.count = 3});
  ASSERT_TRUE(sender.ok()) << sender.status();
  factory_.Run();
  EXPECT_EQ((*sender)->sent(), 3);
  EXPECT_TRUE((*sender)->status().ok());

  // /test keeps frequency 2000 x 2 s (the default storage duration).
  std::unique_ptr<EventLoop> flood = factory_.MakeEventLoop("aos_send2");
  auto too_many = JsonSender::Make(flood.get(), channel_, R"({"value": 1})",
                                   {.count = 100000});
  ASSERT_TRUE(too_many.ok()) << too_many.status();
  factory_.Run();
  EXPECT_LT((*too_many)->sent(), 100000);
  EXPECT_THAT(std::string((*too_many)->status().message()),
              HasSubstr("/test aos.testing.TestMessage: message "));
  EXPECT_THAT(std::string((*too_many)->status().message()),
              HasSubstr(" not sent: sent faster than the channel's frequency "
                        "allows"));
}

// Bad JSON is one line: the channel, the line and column, what is wrong.
TEST_F(JsonSenderTest, BadJsonNamesTheChannelThePlaceAndTheField) {
  EXPECT_EQ(Refusal("{\n  \"valu\": 1\n}"),
            "/test aos.testing.TestMessage:2:11: unknown field: valu");
  const std::string malformed = Refusal(R"({"value": })");
  EXPECT_THAT(malformed,
              ::testing::StartsWith("/test aos.testing.TestMessage:1:"));
  EXPECT_EQ(malformed.find('\n'), std::string::npos) << malformed;
  const std::string mistyped = Refusal(R"({"value": "x"})");
  EXPECT_THAT(mistyped,
              ::testing::StartsWith("/test aos.testing.TestMessage:1:"));
  EXPECT_EQ(mistyped.find('\n'), std::string::npos) << mistyped;
  EXPECT_EQ(Refusal(R"({"value": 1})", {.count = -1}),
            "--count=-1 is negative: give 0 or more");
  EXPECT_EQ(Refusal(R"({"value": 1})", {.count = 0}),
            "--count=0 sends until stopped: give a --rate_hz too");
  EXPECT_EQ(Refusal(R"({"value": 1})", {.rate_hz = -1}),
            "--rate_hz=-1 is not a rate: give 0 or more");
}

}  // namespace
}  // namespace aos
