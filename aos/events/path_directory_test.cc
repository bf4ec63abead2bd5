#include "aos/events/path_directory.h"

#include "aos/configuration.h"
#include "aos/events/channel_description.h"
#include "aos/events/path_origins.h"
#include "aos/events/timing_report_test_data.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kPing = 1;  // PingPongChannels(): /test aos.examples.Ping
constexpr int kPong = 2;  // and /test aos.examples.Pong.

// A report of `loop` on `node` to which the helpers below add entries.
timing::ReportContents Report(std::string_view node, std::string_view loop) {
  timing::ReportContents report;
  report.header.node = node;
  report.header.name = loop;
  return report;
}

PathOrigins Carrying(uint32_t origin_id, uint16_t hops) {
  PathOrigins origins;
  origins.Add({.id = origin_id, .hops = hops, .monotonic_time_ns = 1000});
  return origins;
}

void AddTimer(timing::ReportContents* report, std::string_view name,
              uint32_t origin_id) {
  timing::TimerTiming& timer = report->timers.emplace_back();
  timer.name = name;
  timer.origin_id = origin_id;
}

void AddSent(timing::ReportContents* report, int channel, uint32_t origin_id,
             uint16_t hops) {
  timing::SenderTiming& sender = report->senders.emplace_back();
  sender.channel_index = channel;
  sender.sent_origins.Record(Carrying(origin_id, hops));
}

void AddWatched(timing::ReportContents* report, int channel, uint32_t origin_id,
                uint16_t hops) {
  timing::WatcherTiming& watcher = report->watchers.emplace_back();
  watcher.channel_index = channel;
  watcher.paths.Record(
      Carrying(origin_id, hops),
      monotonic_clock::time_point(std::chrono::nanoseconds(5000)));
}

PathEnd PingWatcher(std::string_view node = "") {
  return {
      .node = node, .loop = "ping", .kind = "watcher", .channel_index = kPong};
}

// ping's timer sends a Ping; pong's watcher of it sends a Pong; ping's
// watcher gets the Pong: the data is 2 hops from ping's timer.
class PingPongPath : public ::testing::Test {
 protected:
  PingPongPath()
      : channels_(testing::PingPongChannels()),
        origin_(PathOriginId("", "ping", "timer", "ping")),
        ping_(Report("", "ping")),
        pong_(Report("", "pong")) {
    AddTimer(&ping_, "ping", origin_);
    AddSent(&ping_, kPing, origin_, 1);
    AddWatched(&ping_, kPong, origin_, 2);
    AddWatched(&pong_, kPing, origin_, 1);
    AddSent(&pong_, kPong, origin_, 2);
  }

  const Configuration& config() const { return channels_.message(); }

  FlatbufferDetachedBuffer<Configuration> channels_;
  const uint32_t origin_;
  timing::ReportContents ping_;
  timing::ReportContents pong_;
};

TEST_F(PingPongPath, FollowsEachHopBackToTheOrigin) {
  PathDirectory directory(&config());
  directory.Learn(ping_);
  directory.Learn(pong_);
  EXPECT_EQ(directory.loops(), 2u);
  EXPECT_EQ(directory.Route(PingWatcher(), origin_, 2),
            "ping timer \"ping\" → /test aos.examples.Ping → pong → "
            "/test aos.examples.Pong → ping watcher");
  // Pong's own path: one hop, straight from the origin.
  EXPECT_EQ(directory.Route(
                {.loop = "pong", .kind = "watcher", .channel_index = kPing},
                origin_, 1),
            "ping timer \"ping\" → /test aos.examples.Ping → pong watcher");
  EXPECT_EQ(directory.Origin(origin_), "ping timer \"ping\"");
}

TEST_F(PingPongPath, WithoutReportsTheOriginIsAnIdAndTheHopsAreCounted) {
  PathDirectory directory(&config());
  EXPECT_EQ(directory.Route(PingWatcher(), 0x1234abcd, 3),
            "origin 0x1234abcd (no report seen) → ? (2 hops) → "
            "/test aos.examples.Pong → ping watcher");
  // ping's report names the origin; who sent the Pong, only pong's says.
  directory.Learn(ping_);
  EXPECT_EQ(directory.Route(PingWatcher(), origin_, 2),
            "ping timer \"ping\" → ? (1 hop) → /test aos.examples.Pong → "
            "ping watcher");
  EXPECT_EQ(UnresolvedPath(0x1234abcd, 2), "origin 0x1234abcd (2 hops)");
  EXPECT_EQ(UnresolvedPath(7, 1), "origin 0x00000007 (1 hop)");
}

// A loop known to have sent the Pong, but not how it got the data.
TEST_F(PingPongPath, ASenderWithoutTheWatcherBeforeIt) {
  pong_.watchers.clear();
  PathDirectory directory(&config());
  directory.Learn(ping_);
  directory.Learn(pong_);
  EXPECT_EQ(directory.Route(PingWatcher(), origin_, 2),
            "ping timer \"ping\" → ? (1 hop) → pong → /test aos.examples.Pong "
            "→ ping watcher");
}

TEST_F(PingPongPath, TwoLoopsThatFitOneStepAreBothNamed) {
  timing::ReportContents other = Report("", "pong2");
  AddSent(&other, kPong, origin_, 2);
  AddWatched(&other, kPing, origin_, 1);
  PathDirectory directory(&config());
  for (const auto* report : {&ping_, &pong_, &other}) directory.Learn(*report);
  EXPECT_EQ(directory.Route(PingWatcher(), origin_, 2),
            "ping timer \"ping\" → ? (1 hop) → one of: pong, pong2 → "
            "/test aos.examples.Pong → ping watcher");
  // Two channels that fit one step, in the loop that sent.
  AddWatched(&pong_, kPong, origin_, 1);
  directory.Learn(pong_);
  directory.Learn(Report("", "pong2"));
  EXPECT_EQ(directory.Route(PingWatcher(), origin_, 2),
            "ping timer \"ping\" → one of: /test aos.examples.Ping, "
            "/test aos.examples.Pong → pong → /test aos.examples.Pong → ping "
            "watcher");
  // One id claimed by two loops (a collision, or a forged report).
  timing::ReportContents forged = Report("", "forger");
  AddTimer(&forged, "x", origin_);
  directory.Learn(forged);
  EXPECT_EQ(directory.Origin(origin_),
            "one of: forger timer \"x\", ping timer \"ping\"");
}

TEST_F(PingPongPath, TheLatestReportOfALoopWins) {
  PathDirectory directory(&config());
  directory.Learn(ping_);
  directory.Learn(pong_);
  // pong's next window sent nothing: who sent the Pong is forgotten.
  directory.Learn(Report("", "pong"));
  EXPECT_EQ(directory.loops(), 2u);
  EXPECT_THAT(directory.Route(PingWatcher(), origin_, 2),
              HasSubstr("ping timer \"ping\" → ? (1 hop) → /test"));
}

// Three hops through a fetcher: a relay fetches the Ping and passes it on
// in a Pong that ping watches.
TEST_F(PingPongPath, LongerRoutesAndFetchers) {
  timing::ReportContents relay = Report("", "relay");
  timing::FetcherTiming& fetcher = relay.fetchers.emplace_back();
  fetcher.channel_index = kPong;
  fetcher.paths.Record(Carrying(origin_, 2),
                       monotonic_clock::time_point(std::chrono::seconds(1)));
  AddSent(&relay, kPing, origin_, 3);
  PathDirectory directory(&config());
  for (const auto* report : {&ping_, &pong_, &relay}) directory.Learn(*report);
  EXPECT_EQ(directory.Route(
                {.loop = "pong", .kind = "watcher", .channel_index = kPing},
                origin_, 3),
            "ping timer \"ping\" → /test aos.examples.Ping → pong → "
            "/test aos.examples.Pong → relay → /test aos.examples.Ping → pong "
            "watcher");
  const std::vector<ReportPath> paths = PathsOf(relay);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0].kind, "fetcher");
  EXPECT_EQ(paths[0].channel_index, kPong);
  EXPECT_EQ(paths[0].path->hops, 2u);
  EXPECT_EQ(DescribePath(&directory, relay.header, paths[0]),
            "ping timer \"ping\" → /test aos.examples.Ping → pong → "
            "/test aos.examples.Pong → relay fetcher");
  EXPECT_EQ(DescribePath(nullptr, relay.header, paths[0]),
            UnresolvedPath(origin_, 2));
}

TEST_F(PingPongPath, ImpossibleHopsAndUnknownChannelsAreSaidSo) {
  PathDirectory directory(&config());
  directory.Learn(ping_);
  EXPECT_EQ(directory.Route(PingWatcher(), origin_, 0),
            "ping timer \"ping\" → ? (0 hops) → /test aos.examples.Pong → "
            "ping watcher");
  EXPECT_EQ(
      directory.Route({.loop = "ping", .kind = "fetcher", .channel_index = 99},
                      origin_, 1),
      "ping timer \"ping\" → <channel 99?> → ping fetcher");
}

// Names come from whoever sent the reports.
TEST_F(PingPongPath, NamesAreEscaped) {
  ping_.header.name = "pi\x1b[2Jng";
  ping_.timers[0].name = "t\n\"x\"";
  PathDirectory directory(&config());
  directory.Learn(ping_);
  directory.Learn(pong_);
  const std::string route = directory.Route(
      {.loop = ping_.header.name, .kind = "watcher", .channel_index = kPong},
      origin_, 2);
  EXPECT_THAT(route, Not(HasSubstr("\x1b")));
  EXPECT_THAT(route, Not(HasSubstr("\n")));
  EXPECT_EQ(route,
            "\"pi\\x1b[2Jng\" timer \"t\\n\\\"x\\\"\" → /test "
            "aos.examples.Ping → pong → /test aos.examples.Pong → "
            "\"pi\\x1b[2Jng\" watcher");
}

TEST_F(PingPongPath, HoldsABoundedNumberOfLoops) {
  PathDirectory directory(&config());
  for (size_t i = 0; i < PathDirectory::kMaxLoops + 10; ++i) {
    directory.Learn(Report("", StrCat("loop", i)));
  }
  EXPECT_EQ(directory.loops(), PathDirectory::kMaxLoops);
  EXPECT_EQ(directory.ignored_reports(), 10u);
  // Known loops still learn.
  directory.Learn(Report("", "loop0"));
  EXPECT_EQ(directory.ignored_reports(), 10u);
}

// Ping on pi1, pong on pi2; each node's message bridge sends the other's
// channel again where it arrives.
TEST(PathDirectoryTest, MultiNodeNamesNodesAndPassesOverTheBridges) {
  auto read = configuration::ReadConfigFromJson(R"({
    "nodes": [ { "name": "pi1" }, { "name": "pi2" } ],
    "channels": [
      { "name": "/test", "type": "aos.examples.Ping", "source_node": "pi1",
        "destination_nodes": [ { "name": "pi2" } ] },
      { "name": "/test", "type": "aos.examples.Pong", "source_node": "pi2",
        "destination_nodes": [ { "name": "pi1" } ] } ] })");
  ASSERT_TRUE(read.ok()) << read.status();
  const Configuration& config = read->message();
  int ping_channel = -1;
  int pong_channel = -1;
  for (int i = 0; i < static_cast<int>(config.channels()->size()); ++i) {
    const std::string description = DescribeChannel(config, i);
    if (description == "/test aos.examples.Ping") ping_channel = i;
    if (description == "/test aos.examples.Pong") pong_channel = i;
  }
  ASSERT_GE(ping_channel, 0);
  ASSERT_GE(pong_channel, 0);
  const uint32_t origin = PathOriginId("pi1", "ping", "timer", "ping");
  timing::ReportContents ping = Report("pi1", "ping");
  AddTimer(&ping, "ping", origin);
  AddSent(&ping, ping_channel, origin, 1);
  AddWatched(&ping, pong_channel, origin, 2);
  timing::ReportContents pong = Report("pi2", "pong");
  AddWatched(&pong, ping_channel, origin, 1);
  AddSent(&pong, pong_channel, origin, 2);
  timing::ReportContents bridge1 = Report("pi1", "message_bridge_client");
  AddSent(&bridge1, pong_channel, origin, 2);
  timing::ReportContents bridge2 = Report("pi2", "message_bridge_client");
  AddSent(&bridge2, ping_channel, origin, 1);
  const PathEnd ping_watcher = {.node = "pi1",
                                .loop = "ping",
                                .kind = "watcher",
                                .channel_index = pong_channel};
  PathDirectory directory(&config);
  for (const auto* report : {&ping, &pong, &bridge1, &bridge2}) {
    directory.Learn(*report);
  }
  EXPECT_EQ(directory.Route(ping_watcher, origin, 2),
            "pi1 ping timer \"ping\" → /test aos.examples.Ping → pi2 pong → "
            "/test aos.examples.Pong → pi1 ping watcher");
  // Without the source node's report, the bridge is all that fits: named,
  // not guessed away.
  directory.Learn(Report("pi2", "pong"));
  EXPECT_EQ(directory.Route(ping_watcher, origin, 2),
            "pi1 ping timer \"ping\" → ? (1 hop) → pi1 message_bridge_client "
            "→ /test aos.examples.Pong → pi1 ping watcher");
}

}  // namespace
}  // namespace aos
