#include "aos/events/timing_statistic.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "aos/testing/allocation_counter.h"
#include "flatbuffers/flatbuffers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::timing::testing {
namespace {

// The straightforward two-pass figures, to check the online ones against.
struct TwoPass {
  double average;
  double min;
  double max;
  double standard_deviation;
};

TwoPass Exact(const std::vector<double>& samples) {
  double sum = 0;
  double min = samples.front();
  double max = samples.front();
  for (double x : samples) {
    sum += x;
    min = std::min(min, x);
    max = std::max(max, x);
  }
  const double average = sum / samples.size();
  double squares = 0;
  for (double x : samples) squares += (x - average) * (x - average);
  // The sample standard deviation, as AOS reports it.
  const double n = static_cast<double>(samples.size());
  return TwoPass{average, min, max,
                 samples.size() == 1 ? 0.0 : std::sqrt(squares / (n - 1))};
}

// Relative closeness, with `scale` standing in for a zero expectation.
::testing::AssertionResult Near(double actual, double expected, double relative,
                                double scale) {
  const double tolerance =
      relative * std::max(std::abs(expected), std::abs(scale));
  if (std::abs(actual - expected) <= tolerance) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << actual << " differs from " << expected << " by "
         << std::abs(actual - expected) << ", more than " << tolerance;
}

std::vector<double> Normal(size_t n, double mean, double sd, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> distribution(mean, sd);
  std::vector<double> samples(n);
  for (double& x : samples) x = distribution(rng);
  return samples;
}

RunningStatistic StatisticOf(const std::vector<double>& samples) {
  RunningStatistic statistic;
  for (double x : samples) statistic.Add(x);
  return statistic;
}

void ExpectMatchesTwoPass(const RunningStatistic& statistic,
                          const std::vector<double>& samples) {
  const TwoPass exact = Exact(samples);
  EXPECT_EQ(statistic.count(), samples.size());
  EXPECT_EQ(statistic.min(), exact.min);
  EXPECT_EQ(statistic.max(), exact.max);
  EXPECT_TRUE(Near(statistic.average(), exact.average, 1e-9, 0));
  EXPECT_TRUE(
      Near(statistic.standard_deviation(), exact.standard_deviation, 1e-9, 0));
}

TEST(RunningStatisticTest, EmptyIsNaN) {
  const RunningStatistic statistic;
  EXPECT_EQ(statistic.count(), 0u);
  EXPECT_TRUE(std::isnan(statistic.average()));
  EXPECT_TRUE(std::isnan(statistic.min()));
  EXPECT_TRUE(std::isnan(statistic.max()));
  EXPECT_TRUE(std::isnan(statistic.standard_deviation()));
}

TEST(RunningStatisticTest, OneSample) {
  RunningStatistic statistic;
  statistic.Add(0.25);
  EXPECT_EQ(statistic.count(), 1u);
  EXPECT_EQ(statistic.average(), 0.25);
  EXPECT_EQ(statistic.min(), 0.25);
  EXPECT_EQ(statistic.max(), 0.25);
  EXPECT_EQ(statistic.standard_deviation(), 0.0);
}

// The sample standard deviation sqrt(M2 / (n - 1)), as AOS's
// TimingStatistic computes it, so AOS users read the same figure; not the
// population one sqrt(M2 / n).
TEST(RunningStatisticTest, KnownSampleStandardDeviation) {
  // Mean 5, squared deviations 9+1+1+1+0+0+4+16 = 32 over 8 samples:
  // sample sd sqrt(32 / 7), population sd 2.
  const RunningStatistic statistic = StatisticOf({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(statistic.average(), 5.0);
  EXPECT_DOUBLE_EQ(statistic.standard_deviation(), std::sqrt(32.0 / 7.0));
  // Two samples 1 and 3: sample sd sqrt(2), population sd 1.
  EXPECT_DOUBLE_EQ(StatisticOf({1, 3}).standard_deviation(), std::sqrt(2.0));
}

TEST(RunningStatisticTest, MatchesTwoPassOnRandomData) {
  // Handler times of about a millisecond.
  const std::vector<double> small = Normal(100'000, 1e-3, 1e-4, 1);
  ExpectMatchesTwoPass(StatisticOf(small), small);
  // A large offset with a small spread, where sum-of-squares formulas lose
  // every digit and Welford's does not.
  const std::vector<double> offset = Normal(100'000, 1e6, 1.0, 2);
  ExpectMatchesTwoPass(StatisticOf(offset), offset);
  // Exponential, skewed like real latency.
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> exponential(1.0 / 50e-6);
  std::vector<double> skewed(50'000);
  for (double& x : skewed) x = exponential(rng);
  ExpectMatchesTwoPass(StatisticOf(skewed), skewed);
}

TEST(RunningStatisticTest, MergeEqualsAddingEverything) {
  const std::vector<double> a = Normal(1000, 1e-3, 1e-4, 4);
  const std::vector<double> b = Normal(37, 5e-3, 1e-3, 5);
  const std::vector<double> c = Normal(20'000, 2e-4, 1e-5, 6);
  std::vector<double> all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());

  RunningStatistic merged = StatisticOf(a);
  merged.Merge(StatisticOf(b));
  merged.Merge(RunningStatistic());
  merged.Merge(StatisticOf(c));
  ExpectMatchesTwoPass(merged, all);

  // Into an empty one, and in the other order.
  RunningStatistic reversed;
  reversed.Merge(StatisticOf(c));
  reversed.Merge(StatisticOf(b));
  reversed.Merge(StatisticOf(a));
  ExpectMatchesTwoPass(reversed, all);
}

TEST(RunningStatisticTest, ResetEqualsNew) {
  RunningStatistic statistic = StatisticOf({1, 2, 3});
  statistic.Reset();
  EXPECT_EQ(statistic.count(), 0u);
  EXPECT_TRUE(std::isnan(statistic.average()));
  statistic.Add(4);
  EXPECT_EQ(statistic.average(), 4);
  EXPECT_EQ(statistic.min(), 4);
}

// Whether `field` is stored in `table`'s buffer rather than defaulted.
bool IsStored(const Statistic* table, flatbuffers::voffset_t field) {
  return reinterpret_cast<const flatbuffers::Table*>(table)->CheckField(field);
}

const Statistic* Finished(flatbuffers::FlatBufferBuilder* fbb,
                          const RunningStatistic& statistic) {
  const size_t before = fbb->GetSize();
  const auto offset = statistic.Encode(fbb);
  EXPECT_LE(fbb->GetSize() - before, RunningStatistic::kMaxEncodedSize);
  fbb->Finish(offset);
  flatbuffers::Verifier verifier(fbb->GetBufferPointer(), fbb->GetSize());
  EXPECT_TRUE(verifier.VerifyBuffer<Statistic>(nullptr));
  return flatbuffers::GetRoot<Statistic>(fbb->GetBufferPointer());
}

TEST(RunningStatisticTest, EncodeWritesAllFourFieldsEvenWhenNaN) {
  flatbuffers::FlatBufferBuilder fbb;
  const Statistic* encoded = Finished(&fbb, RunningStatistic());
  for (auto field : {Statistic::VT_AVERAGE, Statistic::VT_MIN,
                     Statistic::VT_MAX, Statistic::VT_STANDARD_DEVIATION}) {
    EXPECT_TRUE(IsStored(encoded, field)) << "field " << field;
  }
  EXPECT_TRUE(std::isnan(encoded->average()));
  EXPECT_TRUE(std::isnan(encoded->min()));
  EXPECT_TRUE(std::isnan(encoded->max()));
  EXPECT_TRUE(std::isnan(encoded->standard_deviation()));
  EXPECT_EQ(RunningStatistic::Decode(*encoded, 0).count(), 0u);
}

TEST(RunningStatisticTest, EncodeDecodeRoundTripWithinFloatPrecision) {
  const std::vector<double> samples = Normal(5000, 1e-3, 1e-4, 7);
  const RunningStatistic original = StatisticOf(samples);
  flatbuffers::FlatBufferBuilder fbb;
  const Statistic* encoded = Finished(&fbb, original);
  EXPECT_EQ(encoded->average(), static_cast<float>(original.average()));
  EXPECT_EQ(encoded->min(), static_cast<float>(original.min()));
  EXPECT_EQ(encoded->max(), static_cast<float>(original.max()));
  EXPECT_EQ(encoded->standard_deviation(),
            static_cast<float>(original.standard_deviation()));

  const RunningStatistic decoded =
      RunningStatistic::Decode(*encoded, original.count());
  constexpr double kFloat = 1e-7;  // A float keeps 24 bits: 6e-8 relative.
  EXPECT_EQ(decoded.count(), original.count());
  EXPECT_TRUE(Near(decoded.average(), original.average(), kFloat, 0));
  EXPECT_TRUE(Near(decoded.min(), original.min(), kFloat, 0));
  EXPECT_TRUE(Near(decoded.max(), original.max(), kFloat, 0));
  EXPECT_TRUE(Near(decoded.standard_deviation(), original.standard_deviation(),
                   kFloat, 0));

  // Decoded summaries merge like the originals, to float precision.
  const std::vector<double> more = Normal(3000, 2e-3, 3e-4, 8);
  RunningStatistic merged_decoded = decoded;
  merged_decoded.Merge(StatisticOf(more));
  RunningStatistic merged = original;
  merged.Merge(StatisticOf(more));
  EXPECT_TRUE(Near(merged_decoded.average(), merged.average(), 1e-6, 0));
  EXPECT_TRUE(Near(merged_decoded.standard_deviation(),
                   merged.standard_deviation(), 1e-6, 0));
}

TEST(RunningStatisticTest, EncodedSizeBoundHolds) {
  for (const RunningStatistic& statistic :
       {RunningStatistic(), StatisticOf({1, 2})}) {
    // Whatever the builder's alignment when Encode starts.
    for (size_t before = 0; before < 16; ++before) {
      flatbuffers::FlatBufferBuilder fbb;
      fbb.CreateVector(std::vector<uint8_t>(before, 0xaa));
      if (before % 2 == 1) fbb.CreateVector(std::vector<int64_t>{1});
      const size_t start = fbb.GetSize();
      statistic.Encode(&fbb);
      EXPECT_LE(fbb.GetSize() - start, RunningStatistic::kMaxEncodedSize)
          << before;
    }
  }
}

TEST(RunningStatisticTest, RealtimePathsNeverAllocate) {
  const std::vector<double> samples = Normal(10'000, 1e-3, 1e-4, 9);
  RunningStatistic other = StatisticOf(samples);
  flatbuffers::FlatBufferBuilder fbb(64 * 1024);
  other.Encode(&fbb);  // Warm-up: the builder allocates on first use.
  fbb.Clear();

  RunningStatistic statistic;
  double sink = 0;
  const uint64_t before = aos::testing::HeapAllocations();
  for (double x : samples) statistic.Add(x);
  statistic.Merge(other);
  sink += statistic.average() + statistic.standard_deviation() +
          statistic.min() + statistic.max();
  statistic.Encode(&fbb);
  fbb.Clear();
  statistic.Encode(&fbb);
  statistic.Reset();
  const uint64_t after = aos::testing::HeapAllocations();
  EXPECT_EQ(after - before, 0u);
  EXPECT_NE(sink, 0);

  // The counter does see allocations: this check is not vacuous.
  auto control = std::make_unique<int>(1);
  EXPECT_EQ(aos::testing::HeapAllocations() - after, 1u);
}

}  // namespace
}  // namespace aos::timing::testing
