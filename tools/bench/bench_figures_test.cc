#include "tools/bench/bench_figures.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(FiguresJsonTest, WhatIsWrittenReadsBackTheSame) {
  Figures f;
  f.name = "aos \"ping\" timer";
  f.count = 123;
  f.min_us = 2;
  f.avg_us = 3.25;
  f.p50_us = 3.5;
  f.max_us = 950;
  f.overflows = 2;
  f.bins = {{2, 49}, {3, 68}, {12, 4}, {13, 0}};
  JsonWriter json;
  WriteFigures(f, &json);
  EXPECT_EQ(json.Text(),
            R"({"name":"aos \"ping\" timer","count":123,"min_us":2,)"
            R"("avg_us":3.25,"p50_us":3.5,"p99_us":null,"p999_us":null,)"
            R"("max_us":950,"histogram_overflows":2,)"
            R"("classes_us":{"2":49,"3":68,"12":4}})");
  auto doc = JsonDocument::Parse(json.Text(), "figures.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  auto read = ReadFigures(doc->root());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->name, f.name);
  EXPECT_EQ(read->count, 123);
  EXPECT_EQ(read->min_us, 2);
  EXPECT_EQ(read->avg_us, 3.25);
  EXPECT_EQ(read->p50_us, 3.5);
  EXPECT_TRUE(std::isnan(read->p99_us)) << "null reads back as NaN";
  EXPECT_EQ(read->max_us, 950);
  EXPECT_EQ(read->overflows, 2u);
  EXPECT_THAT(read->bins, ElementsAre(Pair(2, 49), Pair(3, 68), Pair(12, 4)));
}

TEST(FiguresJsonTest, WhatIsMissingOrMalformedIsNamed) {
  auto missing =
      JsonDocument::Parse(R"({ "name": "x", "count": 1 })", "a.json");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(ReadFigures(missing->root()).status().message(),
            "a.json: min_us is missing");
  std::map<int64_t, uint64_t> bins;
  auto bad_class = JsonDocument::Parse(R"({ "3.5": 1 })", "b.json");
  ASSERT_TRUE(bad_class.ok());
  EXPECT_THAT(ReadClasses(bad_class->root(), &bins).message(),
              HasSubstr("b.json: 3.5: the class \"3.5\" is not a whole"));
  auto bad_count = JsonDocument::Parse(R"({ "3": -1 })", "c.json");
  ASSERT_TRUE(bad_count.ok());
  EXPECT_EQ(ReadClasses(bad_count->root(), &bins).message(),
            "c.json: 3 is a negative count, -1");
}

TEST(FillPercentilesTest, ReadsClassesAtTheirMiddleAndKeepsTheAverage) {
  Figures f;
  f.avg_us = 3.1;
  f.max_us = 950;
  f.bins = {{2, 49}, {3, 68}, {12, 4}};
  FillPercentiles(&f);
  EXPECT_EQ(f.count, 121);
  EXPECT_EQ(f.avg_us, 3.1) << "the source's own average stays";
  EXPECT_EQ(f.p50_us, 3.5);
  EXPECT_EQ(f.p99_us, 12.5);
  f.overflows = 2;
  FillPercentiles(&f);
  EXPECT_EQ(f.count, 123);
  EXPECT_EQ(f.p999_us, 950) << "in the overflow only the max is known";
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
