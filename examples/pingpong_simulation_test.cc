// ping and pong as applications (ping_application.h, pong_application.h) on
// simulated time: every figure ping's summary has is exact there.

#include <chrono>

#include "aos/configuration.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "examples/ping_application.h"
#include "examples/pong_application.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::examples {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

class PingPongSimulationTest : public ::testing::Test {
 protected:
  PingPongSimulationTest()
      : config_(*configuration::ReadConfig(
            testing::ArtifactPath("examples/pingpong_config.json"))),
        factory_(&config_.message()),
        ping_loop_(factory_.MakeEventLoop("ping")),
        pong_loop_(factory_.MakeEventLoop("pong")),
        pong_(pong_loop_.get()) {}

  const FlatbufferDetachedBuffer<Configuration> config_;
  SimulatedEventLoopFactory factory_;
  std::unique_ptr<EventLoop> ping_loop_;
  std::unique_ptr<EventLoop> pong_loop_;
  PongApplication pong_;
};

// 100 pings every 10 ms, each answered at once: no late answer, every
// origin exactly its timer call, the loop stopped by the last answer.
TEST_F(PingPongSimulationTest, EveryPingIsAnsweredWithItsOrigin) {
  PingApplication ping(ping_loop_.get(),
                       {.period = milliseconds(10), .count = 100, .where = ""});
  factory_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(ping.pings(), 100);
  EXPECT_EQ(ping.not_sent(), 0);
  EXPECT_EQ(ping.pongs(), 100);
  EXPECT_EQ(pong_.answered(), 100);
  EXPECT_EQ(ping.answers().late(), 0);
  EXPECT_EQ(ping.origins_checked(), 100);
  EXPECT_EQ(ping.origins_wrong(), 0);
  // No send delay: the answer arrives when the ping is sent.
  EXPECT_EQ(ping.round_trip().max_ns(), 0);
  EXPECT_THAT(ping.SummaryLine(),
              HasSubstr("ping: 100 pings, 0 not sent, 100 pongs, 0 answered "
                        "late"));
  EXPECT_THAT(ping.SummaryLine(), HasSubstr("origins 100 checked, 0 wrong"));
}

// With AOS's send delay on each of the two sends, the round trip is
// exactly twice it, every time; a phased loop sends as the timer does.
TEST_F(PingPongSimulationTest, RoundTripIsTwiceTheSendDelay) {
  factory_.set_send_delay(microseconds(50));
  PingApplication ping(ping_loop_.get(), {.period = milliseconds(10),
                                          .count = 20,
                                          .phased_loop = true,
                                          .where = ""});
  factory_.RunFor(std::chrono::seconds(5));
  EXPECT_EQ(ping.pongs(), 20);
  EXPECT_EQ(ping.origins_wrong(), 0);
  EXPECT_EQ(ping.round_trip().min_ns(), 100000);
  EXPECT_EQ(ping.round_trip().max_ns(), 100000);
  EXPECT_THAT(ping.SummaryLine(), HasSubstr("phased loop wakeup"));
}

// Without pong, ping says where it looked, and the JSON has no made-up
// figure.
TEST(PingAloneTest, WithoutPongSaysWhereAndWritesNull) {
  const FlatbufferDetachedBuffer<Configuration> config =
      *configuration::ReadConfig(
          testing::ArtifactPath("examples/pingpong_config.json"));
  SimulatedEventLoopFactory factory(&config.message());
  auto loop = factory.MakeEventLoop("ping");
  PingApplication ping(loop.get(), {.period = milliseconds(10),
                                    .duration = milliseconds(500),
                                    .where = "--shm_base=/nowhere"});
  factory.RunFor(std::chrono::seconds(1));
  EXPECT_EQ(ping.pings(), 50);
  EXPECT_EQ(ping.pongs(), 0);
  EXPECT_THAT(ping.SummaryLine(),
              HasSubstr("0 pongs: is pong running on --shm_base=/nowhere?"));
  EXPECT_THAT(ping.SummaryJson(), HasSubstr("\"p50\": null"));
}

}  // namespace
}  // namespace aos::examples
