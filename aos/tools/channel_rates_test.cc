// aos_channels' figures on the simulated loop: exact counts and rates of a
// sender whose schedule is known, who sends (from its timing reports), and
// a channel nothing was sent on.
#include "aos/tools/channel_rates.h"

#include <optional>

#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_generated.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

FlatbufferDetachedBuffer<Configuration> ReadTestConfig() {
  auto config = configuration::ReadConfig(
      aos::testing::ArtifactPath("aos/testing/test_config.json"));
  CHECK(config.ok()) << config.status();
  return std::move(config).value();
}

class ChannelRatesTest : public ::testing::Test {
 protected:
  ChannelRatesTest()
      : config_(ReadTestConfig()),
        factory_(&config_.message()),
        sender_loop_(factory_.MakeEventLoop("sender")),
        sender_(sender_loop_->MakeSender<aos::testing::TestMessage>("/test")) {
    // 100 Hz, the first 5 ms after the start: never at the same time as a
    // poll.
    TimerHandler* timer = sender_loop_->AddTimer([this]() {
      auto builder = sender_->MakeBuilder();
      aos::testing::TestMessage::Builder message =
          builder.MakeBuilder<aos::testing::TestMessage>();
      message.add_value(++sent_);
      builder.CheckOk(builder.Send(message.Finish()));
    });
    sender_loop_->OnRun([this, timer]() {
      timer->Schedule(
          sender_loop_->monotonic_now() + std::chrono::milliseconds(5),
          std::chrono::milliseconds(10));
    });
  }

  const ChannelRates::Row& RowOf(const std::vector<ChannelRates::Row>& rows,
                                 std::string_view type) {
    for (const ChannelRates::Row& row : rows) {
      if (row.channel->type()->string_view() == type) return row;
    }
    LOG(FATAL) << "no row of " << type;
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  SimulatedEventLoopFactory factory_;
  std::unique_ptr<EventLoop> sender_loop_;
  std::optional<Sender<aos::testing::TestMessage>> sender_;
  int sent_ = 0;
};

TEST_F(ChannelRatesTest, CountsWhatWasSentWhileItWatched) {
  // Some sent before it starts watching: in the total, not in messages.
  factory_.RunFor(std::chrono::milliseconds(500));
  ASSERT_EQ(sent_, 50);
  std::unique_ptr<EventLoop> loop = factory_.MakeEventLoop("aos_channels");
  loop->SkipTimingReport();
  ChannelRates rates(loop.get());
  TimerHandler* poll = loop->AddTimer([&]() { rates.Poll(); });
  loop->OnRun([&]() {
    poll->Schedule(loop->monotonic_now() + std::chrono::seconds(1),
                   std::chrono::seconds(1));
  });
  const monotonic_clock::time_point start =
      factory_.GetNodeEventLoopFactory(nullptr)->monotonic_now();
  factory_.RunFor(std::chrono::seconds(3));
  ASSERT_EQ(sent_, 350);

  const std::vector<ChannelRates::Row> rows = rates.Rows();
  const ChannelRates::Row& test = RowOf(rows, "aos.testing.TestMessage");
  EXPECT_EQ(test.messages, 300u);
  ASSERT_TRUE(test.total.has_value());
  EXPECT_EQ(*test.total, 350u);
  EXPECT_EQ(test.rate_hz, 100.0);
  ASSERT_TRUE(test.last_sent.has_value());
  EXPECT_EQ(*test.last_sent, start + std::chrono::milliseconds(2995));
  EXPECT_GT(test.size, 0u);
  // Its timing reports (at 1, 2 and 3 s) say who sends.
  EXPECT_THAT(test.senders, ElementsAre("sender"));

  const ChannelRates::Row& reply = RowOf(rows, "aos.testing.TestReply");
  EXPECT_EQ(reply.messages, 0u);
  EXPECT_FALSE(reply.total.has_value());
  EXPECT_EQ(reply.rate_hz, 0.0);
  EXPECT_FALSE(reply.last_sent.has_value());
  EXPECT_TRUE(reply.senders.empty());

  const std::string table =
      rates.Render(factory_.GetNodeEventLoopFactory(nullptr)->monotonic_now());
  EXPECT_THAT(table, HasSubstr("channels readable, watched for 3 s\n"));
  EXPECT_THAT(table, ::testing::ContainsRegex(
                         "  /test aos.testing.TestMessage +100 +300 +350 +"
                         "0.005 s ago +[0-9]+ B +sender\n"));
  EXPECT_THAT(table,
              ::testing::ContainsRegex(
                  "  /test aos.testing.TestReply +0 +0 +- +never +- +-\n"));
}

// A report of an application that stopped reporting names no sender once
// it is older than kSenderReportAge.
TEST_F(ChannelRatesTest, SendersOfStaleReportsAreForgotten) {
  std::unique_ptr<EventLoop> loop = factory_.MakeEventLoop("aos_channels");
  loop->SkipTimingReport();
  ChannelRates rates(loop.get());
  factory_.RunFor(std::chrono::milliseconds(1500));
  rates.Poll();
  EXPECT_THAT(RowOf(rates.Rows(), "aos.testing.TestMessage").senders,
              ElementsAre("sender"));
  sender_.reset();
  sender_loop_.reset();
  factory_.RunFor(ChannelRates::kSenderReportAge + std::chrono::seconds(1));
  rates.Poll();
  EXPECT_TRUE(RowOf(rates.Rows(), "aos.testing.TestMessage").senders.empty());
}

}  // namespace
}  // namespace aos
