#include "aos/tools/streamer/streamer_options.h"

#include <filesystem>

#include "aos/testing/path.h"
#include "gtest/gtest.h"

namespace aos::streamer {
namespace {

std::string Problem(const StreamerFlags& flags) {
  absl::StatusOr<StreamerOptions> options = ParseStreamerOptions(flags);
  EXPECT_FALSE(options.ok());
  return options.ok() ? "" : std::string(options.status().message());
}

TEST(StreamerOptionsTest, DefaultsMeanTheTableLive) {
  absl::StatusOr<StreamerOptions> options = ParseStreamerOptions({});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ(options->format, OutputFormat::kTable);
  EXPECT_EQ(options->unit, TimeUnit::kMicroseconds);
  EXPECT_FALSE(options->from_log());
  EXPECT_TRUE(options->streams_text());
  EXPECT_TRUE(options->shows_bridges());
  EXPECT_TRUE(options->applications.empty());
}

TEST(StreamerOptionsTest, SaysWhatTheFlagsMean) {
  absl::StatusOr<StreamerOptions> options =
      ParseStreamerOptions({.application = "ping,,pong",
                            .format = "csv",
                            .units = "ms",
                            .top = true});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ(options->format, OutputFormat::kCsv);
  EXPECT_EQ(options->unit, TimeUnit::kMilliseconds);
  EXPECT_EQ(options->applications,
            (std::set<std::string, std::less<>>{"ping", "pong"}));
  // --top draws screens in place of the stream; only the table has bridges.
  EXPECT_FALSE(options->streams_text());
  EXPECT_FALSE(options->shows_bridges());
}

TEST(StreamerOptionsTest, EachProblemIsOneLineNamingTheFlag) {
  EXPECT_EQ(Problem({.format = "xml"}),
            "--format=xml is not one of table, aos, json, csv");
  EXPECT_EQ(Problem({.units = "s"}), "--units=s is not one of ns, us, ms");
  EXPECT_EQ(Problem({.count = -1}), "--count=-1 is negative: give 0 or more");
  EXPECT_EQ(Problem({.top_rows = -2}),
            "--top_rows=-2 is negative: give 0 or more");
  EXPECT_EQ(Problem({.no_match_warning_s = -0.5}),
            "--no_match_warning_s=-0.5 is negative: give 0 or more");
  EXPECT_EQ(Problem({.metrics_port = 65536}),
            "--metrics_port=65536 is not a TCP port: give 1-65535 (0: off)");
  EXPECT_EQ(Problem({.plot = "/nonexistent/dir/p.png"}),
            "cannot write --plot=/nonexistent/dir/p.png: No such file or "
            "directory");
}

TEST(StreamerOptionsTest, LiveOnlyFlagsAreRefusedWithALog) {
  EXPECT_EQ(Problem({.duration = 5, .log = "run.mcap"}),
            "--duration watches live reports; drop it with --log");
  EXPECT_EQ(Problem({.log = "run.mcap", .top = true}),
            "--top watches live reports; drop it with --log");
  EXPECT_EQ(Problem({.log = "run.mcap", .metrics_port = 9100}),
            "--metrics_port watches live reports; drop it with --log");
  EXPECT_TRUE(ParseStreamerOptions({.log = "run.mcap"}).ok());
}

TEST(StreamerOptionsTest, OutputFilesAreCheckedAtOnce) {
  const std::string path = testing::TestTempDir() + "/streamer_hist.dat";
  std::filesystem::remove(path);
  ASSERT_TRUE(ParseStreamerOptions({.histogram_file = path}).ok());
  EXPECT_TRUE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace aos::streamer
