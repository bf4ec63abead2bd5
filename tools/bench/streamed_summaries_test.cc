#include "tools/bench/streamed_summaries.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "aos/testing/path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

using ::testing::HasSubstr;

// The streamer's summaries on each node of a forwarded ping/pong run on
// loopback (tools/bench/bridge_bench.json), cut to the /test watchers and
// the timers, with the paths' max_uncertainty_ns the streamer has printed
// since (13.5 us for pi1's origin on pi2). Added by hand, in the shapes the
// streamer prints them with --stream: before pi1's, a notice of a silent
// application; before pi2's, one window's report (figures set to 1 ns).
// Neither is a summary.
std::string ReadTestdata(const std::string& name) {
  std::ifstream file(testing::ArtifactPath("tools/bench/testdata/" + name));
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The summaries in testdata file `name`; the test fails where they do not
// parse.
StreamedSummaries ParseTestdata(const std::string& name) {
  absl::StatusOr<StreamedSummaries> summaries =
      StreamedSummaries::Parse(ReadTestdata(name), name);
  EXPECT_TRUE(summaries.ok()) << summaries.status().message();
  return summaries.ok() ? *std::move(summaries) : StreamedSummaries();
}

TEST(StreamedSummariesTest, ReadsEachWatchersWakeupAndPathAge) {
  const StreamedSummaries pi1 = ParseTestdata("streamer_summary_pi1.jsonl");
  EXPECT_EQ(pi1.reports(), 2);
  const CallbackFigures bridge =
      pi1.Watcher("message_bridge", "/test", "aos.examples.Ping");
  EXPECT_DOUBLE_EQ(bridge.wakeup_p50_us, 26.879);
  EXPECT_DOUBLE_EQ(bridge.path_age_p50_us, 30.463);
  EXPECT_EQ(bridge.path_uncertainty_us, 0);
  EXPECT_EQ(bridge.hops, 1);
  const CallbackFigures ping =
      pi1.Watcher("ping", "/test", "aos.examples.Pong");
  EXPECT_DOUBLE_EQ(ping.path_age_p50_us, 153.599);
  EXPECT_EQ(ping.hops, 2);
}

TEST(StreamedSummariesTest, SkipsWindowsAndNotices) {
  const StreamedSummaries pi2 = ParseTestdata("streamer_summary_pi2.jsonl");
  EXPECT_EQ(pi2.reports(), 2);
  // The summary's, not the window's 1 ns.
  EXPECT_DOUBLE_EQ(pi2.Watcher("message_bridge", "/test", "aos.examples.Pong")
                       .path_age_p50_us,
                   121.855);
  const CallbackFigures pong =
      pi2.Watcher("pong", "/test", "aos.examples.Ping");
  EXPECT_DOUBLE_EQ(pong.path_age_p50_us, 101.375);
  EXPECT_DOUBLE_EQ(pong.path_uncertainty_us, 13.5);
}

TEST(StreamedSummariesTest, WhatIsNotThereIsNan) {
  const StreamedSummaries pi1 = ParseTestdata("streamer_summary_pi1.jsonl");
  const CallbackFigures nobody =
      pi1.Watcher("pong", "/test", "aos.examples.Ping");
  EXPECT_TRUE(std::isnan(nobody.wakeup_p50_us));
  EXPECT_TRUE(std::isnan(nobody.path_age_p50_us));
  EXPECT_EQ(nobody.hops, 0);
  // A watcher with samples but no path.
  absl::StatusOr<StreamedSummaries> no_path = StreamedSummaries::Parse(
      R"({"accumulated": true, "report": {"name": "a"}, "percentiles": [)"
      R"({"kind": "watcher", "name": "/x", "type": "T", "wakeup_latency": )"
      R"({"p50_ns": 2500}}]})",
      "text");
  ASSERT_TRUE(no_path.ok()) << no_path.status().message();
  const CallbackFigures a = no_path->Watcher("a", "/x", "T");
  EXPECT_DOUBLE_EQ(a.wakeup_p50_us, 2.5);
  EXPECT_TRUE(std::isnan(a.path_age_p50_us));
}

TEST(StreamedSummariesTest, MalformedLinesAreNamed) {
  absl::StatusOr<StreamedSummaries> broken =
      StreamedSummaries::Parse("\n{\"accumulated\": true, \"report\"", "out");
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr("out, line 2"));
  absl::StatusOr<StreamedSummaries> wrong = StreamedSummaries::Parse(
      R"({"accumulated": "yes", "report": {"name": "a"}})", "out");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(),
            "out, line 1: accumulated is a string, not true or false");
  absl::StatusOr<StreamedSummaries> hops = StreamedSummaries::Parse(
      R"({"accumulated": true, "report": {"name": "a"}, "percentiles": [)"
      R"({"kind": "watcher", "name": "/x", "type": "T", "paths": [)"
      R"({"hops": "two"}]}]})",
      "out");
  ASSERT_FALSE(hops.ok());
  EXPECT_THAT(hops.status().message(), HasSubstr("hops is a string"));
  // A percentile under a parent of the wrong type is no missing value.
  absl::StatusOr<StreamedSummaries> parent = StreamedSummaries::Parse(
      R"({"accumulated": true, "report": {"name": "a"}, "percentiles": [)"
      R"({"kind": "watcher", "name": "/x", "type": "T", )"
      R"("wakeup_latency": 5}]})",
      "out");
  ASSERT_FALSE(parent.ok());
  EXPECT_THAT(parent.status().message(),
              HasSubstr("wakeup_latency is a number, not an object"));
}

}  // namespace
}  // namespace aos::bench
