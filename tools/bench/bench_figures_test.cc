#include "tools/bench/bench_figures.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Real `cyclictest --mlockall -p80 -i1000 -l300 --histogram=20 -q` output,
// shortened.
constexpr std::string_view kCyclictestOutput =
    "# /dev/cpu_dma_latency set to 0us\n"
    "# Histogram\n"
    "000000 000000\n"
    "000002 000049\n"
    "000003 000068\n"
    "000012 000004\n"
    "# Total: 000000121\n"
    "# Min Latencies: 00002\n"
    "# Avg Latencies: 00003\n"
    "# Max Latencies: 00012\n"
    "# Histogram Overflows: 00000\n"
    "# Histogram Overflow at cycle number:\n"
    "# Thread 0:\n";

TEST(ParseCyclictestTest, ReadsClassesAtTheirMiddle) {
  auto f = ParseCyclictest(kCyclictestOutput);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->count, 121);
  EXPECT_THAT(f->bins, ElementsAre(Pair(2, 49), Pair(3, 68), Pair(12, 4)));
  EXPECT_EQ(f->min_us, 2);
  EXPECT_EQ(f->max_us, 12);
  // Not the printed, rounded-down 3: the classes at 2.5, 3.5 and 12.5 us.
  EXPECT_DOUBLE_EQ(f->avg_us, (49 * 2.5 + 68 * 3.5 + 4 * 12.5) / 121);
  EXPECT_EQ(f->p50_us, 3.5);
  EXPECT_EQ(f->p99_us, 12.5);
}

TEST(ParseCyclictestTest, KeepsItsOwnAverageWhenTheHistogramOverflowed) {
  std::string output(kCyclictestOutput);
  output.replace(output.find("Overflows: 00000"), 16, "Overflows: 00002");
  output.replace(output.find("Max Latencies: 00012"), 20,
                 "Max Latencies: 00950");
  auto f = ParseCyclictest(output);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->count, 123);
  EXPECT_EQ(f->avg_us, 3);
  // The last 2 of 123 samples are beyond the classes: only the max is known.
  EXPECT_EQ(f->p999_us, 950);
}

TEST(ParseCyclictestTest, OutputWithoutASummaryIsAnError) {
  auto f = ParseCyclictest("000002 000049\n");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("Min/Avg/Max Latencies"));
}

// The shape of sigwaittest 2.40's --json file.
constexpr std::string_view kSigwaittestJson = R"({
  "file_version": 1,
  "num_threads": 1,
  "thread": {
    "0": {
      "sender": { "cpu": 0, "priority": 80, "samples": 2000, "interval": 1000 },
      "receiver": { "cpu": 1, "priority": 80, "min": 2, "avg": 23.94, "max": 218 }
    }
  }
})";

TEST(ParseRtTestsJsonTest, ReadsTheReceiversFiguresToAHundredth) {
  auto f = ParseRtTestsJson("sigwaittest", kSigwaittestJson);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->name, "sigwaittest");
  EXPECT_EQ(f->count, 2000);
  EXPECT_EQ(f->min_us, 2);
  EXPECT_DOUBLE_EQ(f->avg_us, 23.94);
  EXPECT_EQ(f->max_us, 218);
  EXPECT_TRUE(std::isnan(f->p99_us));
}

TEST(ParseRtTestsJsonTest, AFileWithoutReceiverFiguresIsAnErrorNamingTheTool) {
  auto f = ParseRtTestsJson("ptsematest", R"({ "return_code": 1 })");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("ptsematest"));
  EXPECT_THAT(f.status().message(), HasSubstr("receiver"));
}

// A run's summary figures (no classes yet).
Figures Summary(int64_t count, double min_us, double avg_us, double max_us) {
  Figures f;
  f.count = count;
  f.min_us = min_us;
  f.avg_us = avg_us;
  f.max_us = max_us;
  return f;
}

TEST(MergeTest, PoolsClassesAndWeightsAveragesByCount) {
  Figures a = Summary(1, 2, 2.5, 2);
  a.bins = {{2, 1}};
  Figures b = Summary(3, 4, 4.5, 4);
  b.bins = {{4, 3}};
  const Figures merged = Merge("both", {a, b});
  EXPECT_EQ(merged.count, 4);
  EXPECT_THAT(merged.bins, ElementsAre(Pair(2, 1), Pair(4, 3)));
  EXPECT_DOUBLE_EQ(merged.avg_us, (2.5 + 3 * 4.5) / 4);
  EXPECT_EQ(merged.min_us, 2);
  EXPECT_EQ(merged.max_us, 4);
  EXPECT_EQ(merged.p50_us, 4.5);
}

TEST(MergeTest, SummariesWithoutClassesStaySummaries) {
  const Figures merged =
      Merge("sigwaittest", {Summary(1000, 1, 5, 40), Summary(3000, 2, 7, 90)});
  EXPECT_EQ(merged.count, 4000);
  EXPECT_DOUBLE_EQ(merged.avg_us, 6.5);
  EXPECT_EQ(merged.min_us, 1);
  EXPECT_EQ(merged.max_us, 90);
  EXPECT_TRUE(std::isnan(merged.p50_us)) << "no percentiles were measured";
}

TEST(FromHistogramTest, SpreadsEveryBucketOverItsMicrosecondClasses) {
  timing::LatencyHistogram histogram;
  timing::RunningStatistic statistic;
  for (int64_t ns : {1500, 1700, 3200, 250000, 250100}) {
    histogram.Record(ns);
    statistic.Add(static_cast<double>(ns) * 1e-9);
  }
  const Figures f = FromHistogram("ours", histogram, statistic);
  EXPECT_EQ(f.count, 5);
  uint64_t in_classes = 0;
  for (const auto& [bin, count] : f.bins) in_classes += count;
  EXPECT_EQ(in_classes, 5u) << "rebinning lost or invented samples";
  EXPECT_EQ(f.bins.begin()->first, 1);
  EXPECT_EQ(f.bins.rbegin()->first, 250);
  EXPECT_DOUBLE_EQ(f.avg_us, (1.5 + 1.7 + 3.2 + 250 + 250.1) / 5);
}

TEST(FromHistogramTest, WithoutAHistogramOnlyTheStatisticsRemain) {
  timing::LatencyHistogram histogram;
  timing::RunningStatistic statistic;
  statistic.Add(2e-6);
  statistic.Add(4e-6);
  const Figures f = FromHistogram("dropped", histogram, statistic);
  EXPECT_EQ(f.count, 2);
  EXPECT_DOUBLE_EQ(f.avg_us, 3);
  EXPECT_TRUE(f.bins.empty());
  EXPECT_TRUE(std::isnan(f.p99_us));
}

}  // namespace
}  // namespace aos::bench
