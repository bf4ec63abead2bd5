#include "aos/tools/latency_plot.h"

#include <sys/stat.h>

#include <fstream>

#include "aos/events/timing_report_test_data.h"
#include "aos/testing/path.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::aos::testing::DecodedFromJson;
using ::aos::testing::kPingEnd;
using ::aos::testing::kPingStart;
using ::aos::testing::PingPongChannels;
using ::aos::testing::PingReport;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(LatencyPlotTest, CurvesAreTheWakeupHistogramsNamedByChannel) {
  const auto latencies =
      WakeupLatencies({DecodedFromJson(PingReport(kPingStart, kPingEnd))},
                      PingPongChannels().message());
  // The timer's report carries no histogram: only the watcher's is drawn.
  ASSERT_EQ(latencies.size(), 1u);
  EXPECT_EQ(latencies[0].label,
            "ping[3885755] watcher /test aos.examples.Pong");
  EXPECT_EQ(latencies[0].histogram.count(), 100u);
}

// The range shows the distribution; a far maximum is marked at the edge.
TEST(LatencyPlotTest, RangeFollowsTheDistributionAndMarksFarMaxima) {
  PlottedLatency latency;
  latency.label = "loop[1] timer t";
  for (int i = 0; i < 10000; ++i) latency.histogram.Record(5000 + i % 3000);
  latency.histogram.Record(4'000'000);    // One 4 ms outlier.
  EXPECT_EQ(PlotRangeUs({latency}), 50);  // 3 x p99 (8 us) -> 50 us.
  const std::string script =
      LatencyPlotScript({latency}, "/tmp/d.dat", "/tmp/p.png", "a title");
  EXPECT_THAT(script, HasSubstr("set xrange [0:50]"));
  EXPECT_THAT(script, HasSubstr("set logscale y"));
  EXPECT_THAT(script, HasSubstr("set yrange [0.7:*]"));
  EXPECT_THAT(script, HasSubstr("set ylabel 'samples per bucket (buckets "
                                "under 0.100 us merged into 0.100 us bins; "
                                "log scale)'"));
  EXPECT_THAT(script,
              HasSubstr("'1 sample beyond, max 4.00 ms ->' at graph 0.99"));
  EXPECT_THAT(script,
              HasSubstr("with boxes lc rgb '#1f77b4' title 'loop[1] timer t: "
                        "p50 6.33 us, p99 8.00 us, max 4.00 ms (10001 "
                        "samples)'"));
  // A short tail: the whole curve, and the maximum as a dashed line.
  PlottedLatency tight;
  tight.label = "loop[1] timer u";
  for (int i = 0; i < 100; ++i) tight.histogram.Record(3000 + i);
  EXPECT_EQ(PlotRangeUs({tight}), 5);
  EXPECT_THAT(LatencyPlotScript({tight}, "d", "p", "t"),
              HasSubstr("set arrow from 3.099, graph 0 to 3.099, graph 1"));
}

// A name is a gnuplot string in the script: a line break in it would start
// a command of the sender's choosing.
// Samples spread over many narrow buckets (the histogram's are 1 ns wide
// below 64 ns, and about 3 % of their value above) show as the mass they
// are: merged into bins of 1/500 of the range. Wider buckets stay as they
// are, and no sample is lost.
TEST(LatencyPlotTest, NarrowBucketsAreMergedIntoBins) {
  timing::LatencyHistogram histogram;
  for (int ns = 0; ns < 1000; ++ns) histogram.Record(ns);  // 0-1 us.
  histogram.Record(1500);
  histogram.Record(300'000);  // 300 us, in a bucket wider than 1 us.
  EXPECT_EQ(PlotBinUs(500), 1);
  const std::vector<PlotBox> boxes = PlotBoxes(histogram, 1);
  ASSERT_EQ(boxes.size(), 3u);
  EXPECT_EQ(boxes[0].lower_us, 0);
  EXPECT_EQ(boxes[0].upper_us, 1);
  EXPECT_EQ(boxes[0].count, 1000u);
  EXPECT_EQ(boxes[1].lower_us, 1);
  EXPECT_EQ(boxes[1].count, 1u);
  EXPECT_LE(boxes[2].lower_us, 300);
  EXPECT_GT(boxes[2].upper_us - boxes[2].lower_us, 1);
  EXPECT_EQ(boxes[2].count, 1u);
  // A narrower range: finer bins.
  EXPECT_EQ(PlotBoxes(histogram, 0.1).front().count, 100u);
}

TEST(LatencyPlotTest, NamesCannotEndTheirStrings) {
  timing::ReportContents report =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  report.header.name = "p'\nsystem(\"touch /tmp/x\")\n'";
  const auto latencies =
      WakeupLatencies({report}, PingPongChannels().message());
  ASSERT_EQ(latencies.size(), 1u);
  const std::string script =
      LatencyPlotScript(latencies, "d", "p", "title\nsystem('x')");
  EXPECT_THAT(script, Not(HasSubstr("\nsystem(")));
  EXPECT_THAT(script, HasSubstr("set title 'title?system(\"x\")'\n"));
}

TEST(LatencyPlotTest, PathAgesAreCurvesNamedByTheirRoutes) {
  testing::PingPongPaths paths;
  const testing::PingPongPathReports& reports = paths.reports();
  const PathDirectory& directory = paths.directory();
  const auto ages = PathAges({reports.ping, reports.pong}, &directory);
  ASSERT_EQ(ages.size(), 2u);
  EXPECT_EQ(ages[0].label,
            "ping[3885755] ping timer \"ping\" → /test aos.examples.Ping → "
            "pong → /test aos.examples.Pong → ping watcher (2 hops)");
  EXPECT_EQ(ages[0].histogram.count(), 100u);
  EXPECT_EQ(PathAges({reports.pong}, nullptr)[0].label,
            StrCat("pong[3885756] ", UnresolvedPath(reports.origin_id, 1)));
  EXPECT_EQ(PathPlotFile("/tmp/run.png"), "/tmp/run_paths.png");
  EXPECT_EQ(PathPlotFile("plot"), "plot_paths.png");
  EXPECT_THAT(LatencyPlotScript(ages, "d", "p", "t", kPathAgeAxis),
              HasSubstr("set xlabel 'path age: callback start - origin time "
                        "(us)'\n"));
  if (access("/usr/bin/gnuplot", X_OK) != 0) {
    GTEST_SKIP() << "gnuplot is not installed (tools/aos.sh install does it)";
  }
  // Kept for a look: bazel-testlogs/aos/tools/latency_plot_test/test.outputs.
  const char* outputs = getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  const std::string png = (outputs != nullptr ? std::string(outputs)
                                              : aos::testing::TestTempDir()) +
                          "/path_ages.png";
  ASSERT_TRUE(WriteLatencyPlot(ages, png, "ping and pong", kPathAgeAxis).ok());
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, sizeof(magic));
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

TEST(LatencyPlotTest, DrawsAPngWithGnuplot) {
  if (access("/usr/bin/gnuplot", X_OK) != 0) {
    GTEST_SKIP() << "gnuplot is not installed (tools/aos.sh install does it)";
  }
  const std::string png = aos::testing::TestTempDir() + "/plot.png";
  ASSERT_TRUE(
      WriteLatencyPlot({DecodedFromJson(PingReport(kPingStart, kPingEnd))},
                       PingPongChannels().message(), png, "test")
          .ok());
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, sizeof(magic));
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  const auto refused =
      WriteLatencyPlot({}, PingPongChannels().message(), png, "nothing");
  EXPECT_THAT(std::string(refused.message()),
              HasSubstr("nothing to plot in " + png));
}

}  // namespace
}  // namespace aos
