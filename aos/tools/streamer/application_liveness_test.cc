#include "aos/tools/streamer/application_liveness.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::streamer {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// Two nodes: ping on pi1, pong on pi2, a bridge on both.
constexpr std::string_view kConfig = R"({
  "channels": [
    {"name": "/pi1/aos", "type": "aos.timing.Report", "source_node": "pi1"},
    {"name": "/pi2/aos", "type": "aos.timing.Report", "source_node": "pi2"}
  ],
  "nodes": [{"name": "pi1"}, {"name": "pi2"}],
  "applications": [
    {"name": "ping", "nodes": ["pi1"]},
    {"name": "pong", "nodes": ["pi2"]},
    {"name": "message_bridge", "nodes": ["pi1", "pi2"]}
  ]
})";

monotonic_clock::time_point At(std::chrono::nanoseconds t) {
  return monotonic_clock::time_point(t);
}

// A status of pong on pi2 from its starter: WAITING, 2 restarts.
flatbuffers::DetachedBuffer PongWaiting() {
  flatbuffers::FlatBufferBuilder fbb;
  const auto name = fbb.CreateString("pong");
  const auto message = fbb.CreateString("exited with status 3");
  starter::ApplicationStatus::Builder application(fbb);
  application.add_name(name);
  application.add_state(starter::State::WAITING);
  application.add_restarts(2);
  application.add_message(message);
  const auto entry = application.Finish();
  const auto statuses = fbb.CreateVector(
      std::vector<flatbuffers::Offset<starter::ApplicationStatus>>{entry});
  starter::Status::Builder status(fbb);
  status.add_statuses(statuses);
  fbb.Finish(status.Finish());
  return fbb.Release();
}

class LivenessWatchTest : public ::testing::Test {
 protected:
  LivenessWatchTest() : config_(*configuration::ReadConfigFromJson(kConfig)) {}

  const ApplicationLiveness& Find(const std::vector<ApplicationLiveness>& all,
                                  std::string_view node,
                                  std::string_view name) {
    for (const ApplicationLiveness& application : all) {
      if (application.node == node && application.name == name) {
        return application;
      }
    }
    ADD_FAILURE() << name << " on " << node << " is not watched";
    static const ApplicationLiveness none;
    return none;
  }

  FlatbufferDetachedBuffer<Configuration> config_;
  StreamerOptions options_;
};

TEST_F(LivenessWatchTest, WatchesEachApplicationOnEachOfItsNodes) {
  LivenessWatch watch(&config_.message(), &options_);
  ASSERT_TRUE(watch.Advance(At(seconds(10))) == false);
  const std::vector<ApplicationLiveness> all = watch.Applications();
  ASSERT_EQ(all.size(), 4u);
  Find(all, "pi1", "ping");
  Find(all, "pi2", "pong");
  Find(all, "pi1", "message_bridge");
  Find(all, "pi2", "message_bridge");
}

TEST_F(LivenessWatchTest, ASilentApplicationIsNamedWithWhatItsStarterSays) {
  options_.flags.silent_after_s = 3;
  LivenessWatch watch(&config_.message(), &options_);
  watch.OnReport("pi1", "ping", At(seconds(10)));
  watch.OnReport("pi2", "pong", At(seconds(10)));
  const flatbuffers::DetachedBuffer status = PongWaiting();
  watch.OnStarterStatus("pi2",
                        *flatbuffers::GetRoot<starter::Status>(status.data()),
                        At(seconds(12)));
  // Once a second: not again within the same second.
  EXPECT_TRUE(watch.Advance(At(seconds(11))));
  EXPECT_FALSE(watch.Advance(At(milliseconds(11500))));
  for (int s = 12; s <= 13; ++s) {
    watch.OnReport("pi1", "ping", At(seconds(s)));
    watch.Advance(At(seconds(s)));
  }
  const std::vector<ApplicationLiveness> all = watch.Applications();
  const ApplicationLiveness& ping = Find(all, "pi1", "ping");
  EXPECT_TRUE(ping.up);
  const ApplicationLiveness& pong = Find(all, "pi2", "pong");
  EXPECT_FALSE(pong.up);
  EXPECT_EQ(pong.silent_for, seconds(3));
  EXPECT_EQ(pong.Describe(),
            "pong on pi2: no report for 3 s; starter: WAITING, 2 restarts "
            "(exited with status 3)");
  // Never reported, no starter of its own: silent since the watch began.
  const ApplicationLiveness& bridge = Find(all, "pi1", "message_bridge");
  EXPECT_FALSE(bridge.ever_reported);
  EXPECT_EQ(bridge.Describe(),
            "message_bridge on pi1: no report in 3 s; no starter status");
  EXPECT_THAT(SilentLines(all),
              HasSubstr("silent: pong on pi2: no report for 3 s"));
  EXPECT_THAT(SilentLines(all), ::testing::Not(HasSubstr("ping on pi1")));
  EXPECT_THAT(
      LivenessJson(all),
      HasSubstr(R"({"node":"pi2","application":"pong","up":false,)"
                R"("seconds_since_report":3,"starter":{"state":"WAITING",)"
                R"("restarts":2,"message":"exited with status 3"}})"));
  EXPECT_THAT(LivenessJson(all),
              HasSubstr(R"("application":"message_bridge","up":false,)"
                        R"("seconds_since_report":null,"starter":null})"));
}

TEST_F(LivenessWatchTest, JustUnderTheLimitIsUp) {
  options_.flags.silent_after_s = 3;
  LivenessWatch watch(&config_.message(), &options_);
  watch.OnReport("pi2", "pong", At(seconds(10)));
  watch.Advance(At(seconds(13) - milliseconds(1)));
  EXPECT_TRUE(Find(watch.Applications(), "pi2", "pong").up);
  watch.Advance(At(seconds(13)));
  EXPECT_FALSE(Find(watch.Applications(), "pi2", "pong").up);
}

TEST_F(LivenessWatchTest, FiltersFollowNodeAndApplication) {
  options_.flags.node = "pi2";
  LivenessWatch on_pi2(&config_.message(), &options_);
  on_pi2.Advance(At(seconds(1)));
  EXPECT_EQ(on_pi2.Applications().size(), 2u);
  options_.flags.node = "";
  options_.applications = {"ping"};
  LivenessWatch only_ping(&config_.message(), &options_);
  only_ping.Advance(At(seconds(1)));
  ASSERT_EQ(only_ping.Applications().size(), 1u);
  EXPECT_EQ(only_ping.Applications()[0].name, "ping");
}

TEST_F(LivenessWatchTest, AConfigWithoutApplicationsWatchesNothing) {
  auto bare = configuration::ReadConfigFromJson(
      R"({"channels": [{"name": "/aos", "type": "aos.timing.Report"}]})");
  ASSERT_TRUE(bare.ok());
  LivenessWatch watch(&bare->message(), &options_);
  EXPECT_TRUE(watch.empty());
  EXPECT_FALSE(watch.Advance(At(seconds(100))));
}

}  // namespace
}  // namespace aos::streamer
