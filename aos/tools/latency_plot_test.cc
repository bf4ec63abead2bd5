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
