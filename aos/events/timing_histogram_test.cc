#include "aos/events/timing_histogram.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "aos/testing/allocation_counter.h"
#include "flatbuffers/flatbuffers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::timing::testing {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr size_t kLast = LatencyHistogram::kBucketCount - 1;
// Three hours in nanoseconds.
constexpr int64_t kThreeHoursNs = int64_t{3} * 3600 * 1'000'000'000;

// The checks the header promises for an estimate `estimate` of the true
// sample `truth`: exact below 64 ns, otherwise |estimate - truth| < truth/64.
::testing::AssertionResult WithinBound(int64_t estimate, int64_t truth) {
  if (truth < 64) {
    if (estimate == truth) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "estimate " << estimate << " of " << truth
           << " ns should be exact below 64 ns";
  }
  const int64_t error = estimate > truth ? estimate - truth : truth - estimate;
  if (error <= kMax / 64 && 64 * error < truth) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "estimate " << estimate << " of " << truth << " ns is off by "
         << error << " ns, relative " << static_cast<double>(error) / truth
         << ", not below 1/64";
}

// Compares everything observable, with a message naming the first difference.
void ExpectSameHistogram(const LatencyHistogram& actual,
                         const LatencyHistogram& expected) {
  EXPECT_EQ(actual.count(), expected.count());
  EXPECT_EQ(actual.min_ns(), expected.min_ns());
  EXPECT_EQ(actual.max_ns(), expected.max_ns());
  EXPECT_EQ(actual.non_empty_buckets(), expected.non_empty_buckets());
  for (size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    ASSERT_EQ(actual.bucket_count(i), expected.bucket_count(i))
        << "bucket " << i;
  }
  EXPECT_TRUE(actual == expected);
}

// Samples from a few distributions latency really has, fixed seeds.
enum class Distribution { kUniform, kSmall, kExponential, kLogNormal };

std::vector<int64_t> Samples(Distribution distribution, size_t n,
                             uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> samples;
  samples.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    double value = 0;
    switch (distribution) {
      case Distribution::kUniform:
        // 0..10 ms.
        value = std::uniform_int_distribution<int64_t>(0, 10'000'000)(rng);
        break;
      case Distribution::kSmall:
        // Many ties, across the exact buckets and the first sub-buckets.
        value = std::uniform_int_distribution<int64_t>(0, 200)(rng);
        break;
      case Distribution::kExponential:
        // Mean 50 us.
        value = std::exponential_distribution<double>(1.0 / 50'000)(rng);
        break;
      case Distribution::kLogNormal:
        // Median 10 us; +-3 sigma spans under 1 ns to 1.6 s.
        value = std::lognormal_distribution<double>(std::log(1e4), 4.0)(rng);
        break;
    }
    samples.push_back(static_cast<int64_t>(value));
  }
  return samples;
}

LatencyHistogram HistogramOf(const std::vector<int64_t>& samples) {
  LatencyHistogram histogram;
  for (int64_t sample : samples) histogram.Record(sample);
  return histogram;
}

// --- Layout ------------------------------------------------------------

TEST(TimingHistogramLayoutTest, BoundsTileTheNonNegativeInt64s) {
  EXPECT_EQ(LatencyHistogram::BucketLowerNs(0), 0);
  for (size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    const int64_t lower = LatencyHistogram::BucketLowerNs(i);
    const int64_t upper = LatencyHistogram::BucketUpperNs(i);
    ASSERT_EQ(LatencyHistogram::BucketIndex(lower), i) << "lower " << lower;
    ASSERT_LT(lower, upper) << "bucket " << i;
    if (i < kLast) {
      ASSERT_EQ(upper, LatencyHistogram::BucketLowerNs(i + 1));
      ASSERT_EQ(LatencyHistogram::BucketIndex(upper - 1), i);
    }
  }
  EXPECT_EQ(LatencyHistogram::BucketUpperNs(kLast), kMax);
  EXPECT_EQ(LatencyHistogram::BucketIndex(kMax), kLast);
}

TEST(TimingHistogramLayoutTest, KnownIndices) {
  EXPECT_EQ(LatencyHistogram::BucketIndex(0), 0u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(1), 1u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(63), 63u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(64), 64u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(65), 64u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(66), 65u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(127), 95u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(128), 96u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(-1), 0u);
  EXPECT_EQ(LatencyHistogram::BucketIndex(std::numeric_limits<int64_t>::min()),
            0u);
  // 2^62 starts the last power of two.
  EXPECT_EQ(LatencyHistogram::BucketIndex(int64_t{1} << 62),
            LatencyHistogram::kBucketCount - 32);
}

TEST(TimingHistogramLayoutTest, IndexIsMonotonicOverASweep) {
  std::vector<int64_t> values;
  for (int64_t v = 0; v <= 300; ++v) values.push_back(v);
  for (int bit = 0; bit < 63; ++bit) {
    const int64_t power = int64_t{1} << bit;
    values.push_back(power - 1);
    values.push_back(power);
    values.push_back(power + 1);
    values.push_back(power + power / 2);
  }
  values.push_back(kThreeHoursNs);
  values.push_back(kMax - 1);
  values.push_back(kMax);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100'000; ++i) {
    values.push_back(static_cast<int64_t>(rng() >> (1 + rng() % 63)));
  }
  std::sort(values.begin(), values.end());
  size_t previous = 0;
  for (int64_t value : values) {
    const size_t index = LatencyHistogram::BucketIndex(value);
    ASSERT_LT(index, LatencyHistogram::kBucketCount) << value;
    ASSERT_GE(index, previous) << value;
    ASSERT_GE(value, LatencyHistogram::BucketLowerNs(index));
    if (index < kLast) {
      ASSERT_LT(value, LatencyHistogram::BucketUpperNs(index));
    }
    previous = index;
  }
}

TEST(TimingHistogramLayoutTest, RelativeWidthIsAtMostOneThirtySecond) {
  for (size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    const int64_t lower = LatencyHistogram::BucketLowerNs(i);
    // The last bucket's true upper bound is 2^63, one more than INT64_MAX.
    const int64_t width = i == kLast
                              ? int64_t{1} << 57
                              : LatencyHistogram::BucketUpperNs(i) - lower;
    if (i < 64) {
      EXPECT_EQ(width, 1) << "bucket " << i;
    } else {
      ASSERT_LE(32 * width, lower) << "bucket " << i;
    }
  }
}

// PercentileNs reports BucketRepresentativeNs for every sample in a bucket.
// For a representative r inside [lower, upper - 1], the relative error
// |r - v| / v falls as v rises towards r and rises as v moves above r, so it
// is largest at one of the bucket's ends: checking both ends of every bucket
// proves the bound for every possible sample value.
TEST(TimingHistogramLayoutTest, RepresentativeErrorBoundHoldsForEveryValue) {
  // long double: the worst case, 1/64 - 2^-62, rounds to 1/64 in double.
  long double worst = 0;
  for (size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    const int64_t representative = LatencyHistogram::BucketRepresentativeNs(i);
    const int64_t first = LatencyHistogram::BucketLowerNs(i);
    const int64_t last =
        i == kLast ? kMax : LatencyHistogram::BucketUpperNs(i) - 1;
    ASSERT_GE(representative, first);
    ASSERT_LE(representative, last);
    ASSERT_TRUE(WithinBound(representative, first)) << "bucket " << i;
    ASSERT_TRUE(WithinBound(representative, last)) << "bucket " << i;
    for (int64_t v : {first, last}) {
      if (v > 0) {
        worst = std::max(
            worst, std::abs(static_cast<long double>(representative - v)) / v);
      }
    }
  }
  EXPECT_LT(worst, 1.0L / 64);
  ::testing::Test::RecordProperty("worst_relative_error",
                                  std::to_string(worst));
}

// --- Percentiles -------------------------------------------------------

TEST(TimingHistogramPercentileTest, RankDefinition) {
  using H = LatencyHistogram;
  EXPECT_EQ(H::PercentileRank(50, 0), 0u);
  EXPECT_EQ(H::PercentileRank(0, 10), 1u);
  EXPECT_EQ(H::PercentileRank(0.0001, 10), 1u);
  EXPECT_EQ(H::PercentileRank(100, 10), 10u);
  EXPECT_EQ(H::PercentileRank(50, 3), 2u);
  EXPECT_EQ(H::PercentileRank(50, 4), 2u);
  EXPECT_EQ(H::PercentileRank(1, 1000), 10u);
  EXPECT_EQ(H::PercentileRank(99, 1000), 990u);
  EXPECT_EQ(H::PercentileRank(99.9, 1000), 999u);
  EXPECT_EQ(H::PercentileRank(99.9, 1001), 1000u);
  EXPECT_EQ(H::PercentileRank(-3, 5), 1u);
  EXPECT_EQ(H::PercentileRank(150, 5), 5u);
  EXPECT_EQ(H::PercentileRank(std::nan(""), 5), 1u);
}

struct PercentileCase {
  Distribution distribution;
  size_t n;
};

class TimingHistogramPercentileBoundTest
    : public ::testing::TestWithParam<PercentileCase> {};

TEST_P(TimingHistogramPercentileBoundTest, MatchesExactSortWithinBound) {
  const PercentileCase& c = GetParam();
  std::vector<int64_t> samples =
      Samples(c.distribution, c.n, 1000 + static_cast<int>(c.distribution));
  const LatencyHistogram histogram = HistogramOf(samples);
  std::sort(samples.begin(), samples.end());
  ASSERT_EQ(histogram.count(), samples.size());
  EXPECT_EQ(histogram.min_ns(), samples.front());
  EXPECT_EQ(histogram.max_ns(), samples.back());
  EXPECT_EQ(histogram.PercentileNs(0), samples.front());
  EXPECT_EQ(histogram.PercentileNs(100), samples.back());
  for (double p : {1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99}) {
    const uint64_t rank = LatencyHistogram::PercentileRank(p, samples.size());
    const int64_t truth = samples[rank - 1];
    EXPECT_TRUE(WithinBound(histogram.PercentileNs(p), truth))
        << "p" << p << " (rank " << rank << " of " << samples.size() << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Distributions, TimingHistogramPercentileBoundTest,
    ::testing::Values(PercentileCase{Distribution::kUniform, 100'000},
                      PercentileCase{Distribution::kUniform, 7},
                      PercentileCase{Distribution::kSmall, 10'001},
                      PercentileCase{Distribution::kExponential, 100'000},
                      PercentileCase{Distribution::kExponential, 1000},
                      PercentileCase{Distribution::kLogNormal, 100'000},
                      PercentileCase{Distribution::kLogNormal, 999}));

TEST(TimingHistogramPercentileTest, EmptyHistogram) {
  const LatencyHistogram histogram;
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.min_ns(), -1);
  EXPECT_EQ(histogram.max_ns(), -1);
  EXPECT_EQ(histogram.non_empty_buckets(), 0u);
  for (double p : {0.0, 50.0, 100.0}) EXPECT_EQ(histogram.PercentileNs(p), -1);
  bool called = false;
  histogram.ForEachNonEmptyBucket(
      [&](size_t, int64_t, int64_t, uint64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(TimingHistogramPercentileTest, SingleSampleIsEveryPercentile) {
  LatencyHistogram histogram;
  histogram.Record(123'457);
  for (double p : {0.0, 1.0, 50.0, 99.9, 100.0}) {
    EXPECT_EQ(histogram.PercentileNs(p), 123'457) << "p" << p;
  }
}

TEST(TimingHistogramPercentileTest, ClampsToTheExactExtremes) {
  // Both samples share bucket [1024, 1056), whose representative 1039 lies
  // outside [1030, 1031]: clamping keeps every answer inside.
  LatencyHistogram histogram;
  histogram.Record(1030);
  histogram.Record(1031);
  histogram.Record(1031);
  EXPECT_EQ(histogram.PercentileNs(50), 1031);
  EXPECT_EQ(histogram.PercentileNs(1), 1030);
}

// --- Merge -------------------------------------------------------------

TEST(TimingHistogramMergeTest, AssociativeCommutativeAndExact) {
  const std::vector<int64_t> a = Samples(Distribution::kUniform, 5000, 1);
  const std::vector<int64_t> b = Samples(Distribution::kLogNormal, 3000, 2);
  const std::vector<int64_t> c = Samples(Distribution::kSmall, 2000, 3);
  const LatencyHistogram ha = HistogramOf(a);
  const LatencyHistogram hb = HistogramOf(b);
  const LatencyHistogram hc = HistogramOf(c);

  LatencyHistogram ab_c = ha;
  ab_c.Merge(hb);
  ab_c.Merge(hc);
  LatencyHistogram bc = hb;
  bc.Merge(hc);
  LatencyHistogram a_bc = ha;
  a_bc.Merge(bc);
  ExpectSameHistogram(ab_c, a_bc);

  LatencyHistogram ba = hb;
  ba.Merge(ha);
  LatencyHistogram ab = ha;
  ab.Merge(hb);
  ExpectSameHistogram(ab, ba);

  std::vector<int64_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  ExpectSameHistogram(ab_c, HistogramOf(all));
}

TEST(TimingHistogramMergeTest, EmptyIsTheIdentity) {
  const LatencyHistogram h = HistogramOf(Samples(Distribution::kSmall, 50, 4));
  LatencyHistogram with_empty = h;
  with_empty.Merge(LatencyHistogram());
  ExpectSameHistogram(with_empty, h);
  LatencyHistogram into_empty;
  into_empty.Merge(h);
  ExpectSameHistogram(into_empty, h);
}

TEST(TimingHistogramMergeTest, MergingWithItselfDoubles) {
  LatencyHistogram h = HistogramOf({5, 70, 70, 1'000'000});
  h.Merge(h);
  EXPECT_EQ(h.count(), 8u);
  EXPECT_EQ(h.bucket_count(LatencyHistogram::BucketIndex(70)), 4u);
  EXPECT_EQ(h.non_empty_buckets(), 3u);
  EXPECT_EQ(h.min_ns(), 5);
  EXPECT_EQ(h.max_ns(), 1'000'000);
}

TEST(TimingHistogramTest, ResetEqualsNew) {
  LatencyHistogram h = HistogramOf(Samples(Distribution::kLogNormal, 500, 5));
  h.Reset();
  ExpectSameHistogram(h, LatencyHistogram());
  h.Record(99);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.min_ns(), 99);
  EXPECT_EQ(h.PercentileNs(50), 99);
}

// --- Extremes ----------------------------------------------------------

TEST(TimingHistogramTest, Extremes) {
  LatencyHistogram h;
  h.Record(0);
  h.Record(1);
  h.Record(kThreeHoursNs);
  h.Record(kMax);
  h.Record(kMax);
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(h.min_ns(), 0);
  EXPECT_EQ(h.max_ns(), kMax);
  EXPECT_EQ(h.bucket_count(0), 1u);
  EXPECT_EQ(h.bucket_count(1), 1u);
  EXPECT_EQ(h.bucket_count(LatencyHistogram::BucketIndex(kThreeHoursNs)), 1u);
  EXPECT_EQ(h.bucket_count(kLast), 2u);
  EXPECT_EQ(h.PercentileNs(0), 0);
  EXPECT_EQ(h.PercentileNs(20), 0);
  EXPECT_EQ(h.PercentileNs(40), 1);
  EXPECT_TRUE(WithinBound(h.PercentileNs(60), kThreeHoursNs));
  EXPECT_TRUE(WithinBound(h.PercentileNs(80), kMax));
  EXPECT_EQ(h.PercentileNs(100), kMax);
}

TEST(TimingHistogramTest, NegativeSamplesCountAsZero) {
  LatencyHistogram h;
  h.Record(-5);
  h.Record(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.bucket_count(0), 2u);
  EXPECT_EQ(h.min_ns(), 0);
  EXPECT_EQ(h.max_ns(), 0);
  EXPECT_EQ(h.PercentileNs(50), 0);
}

TEST(TimingHistogramTest, ForEachNonEmptyBucketInOrder) {
  const LatencyHistogram h = HistogramOf({300, 3, 3, 70'000, 64});
  std::vector<std::pair<size_t, uint64_t>> seen;
  h.ForEachNonEmptyBucket(
      [&](size_t index, int64_t lower, int64_t upper, uint64_t count) {
        EXPECT_EQ(lower, LatencyHistogram::BucketLowerNs(index));
        EXPECT_EQ(upper, LatencyHistogram::BucketUpperNs(index));
        seen.emplace_back(index, count);
      });
  EXPECT_THAT(
      seen,
      ::testing::ElementsAre(
          std::pair<size_t, uint64_t>{3, 2}, std::pair<size_t, uint64_t>{64, 1},
          std::pair<size_t, uint64_t>{LatencyHistogram::BucketIndex(300), 1},
          std::pair<size_t, uint64_t>{LatencyHistogram::BucketIndex(70'000),
                                      1}));
}

// --- Encoding ----------------------------------------------------------

// A finished buffer whose root is a Histogram, checked by the Verifier.
const Histogram* VerifiedRoot(const flatbuffers::FlatBufferBuilder& fbb) {
  flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  EXPECT_TRUE(verifier.VerifyBuffer<Histogram>(nullptr));
  return flatbuffers::GetRoot<Histogram>(fbb.GetBufferPointer());
}

// Whether `field` is stored in `table`'s buffer rather than defaulted.
template <typename T>
bool IsStored(const T* table, flatbuffers::voffset_t field) {
  return reinterpret_cast<const flatbuffers::Table*>(table)->CheckField(field);
}

void ExpectRoundTrip(const LatencyHistogram& original) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(original.Encode(&fbb));
  const Histogram* encoded = VerifiedRoot(fbb);
  ASSERT_NE(encoded, nullptr);
  EXPECT_TRUE(IsStored(encoded, Histogram::VT_LAYOUT));
  EXPECT_EQ(encoded->layout(), LatencyHistogram::kLayout);
  ASSERT_NE(encoded->buckets(), nullptr);
  EXPECT_EQ(encoded->buckets()->size(), original.non_empty_buckets());
  size_t k = 0;
  original.ForEachNonEmptyBucket(
      [&](size_t index, int64_t, int64_t, uint64_t count) {
        ASSERT_LT(k, encoded->buckets()->size());
        EXPECT_EQ(encoded->buckets()->Get(k)->index(), index);
        EXPECT_EQ(encoded->buckets()->Get(k)->count(), count);
        ++k;
      });

  LatencyHistogram decoded = HistogramOf({1, 2, 3});  // Replaced by Decode.
  std::string error;
  ASSERT_TRUE(LatencyHistogram::Decode(*encoded, &decoded, &error)) << error;
  ExpectSameHistogram(decoded, original);
}

TEST(TimingHistogramEncodeTest, RoundTrip) {
  ExpectRoundTrip(LatencyHistogram());
  ExpectRoundTrip(HistogramOf({42}));
  ExpectRoundTrip(HistogramOf({0, 1, kThreeHoursNs, kMax}));
  for (Distribution d :
       {Distribution::kUniform, Distribution::kSmall,
        Distribution::kExponential, Distribution::kLogNormal}) {
    ExpectRoundTrip(HistogramOf(Samples(d, 20'000, 11)));
  }
}

TEST(TimingHistogramEncodeTest, EmptyIsZeroExtremesAndNoBuckets) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(LatencyHistogram().Encode(&fbb));
  const Histogram* encoded = VerifiedRoot(fbb);
  EXPECT_EQ(encoded->min_ns(), 0);
  EXPECT_EQ(encoded->max_ns(), 0);
  ASSERT_NE(encoded->buckets(), nullptr);
  EXPECT_EQ(encoded->buckets()->size(), 0u);
}

TEST(TimingHistogramEncodeTest, CountsSaturateAtUint32Max) {
  LatencyHistogram h;
  h.Record(1000);
  for (int i = 0; i < 33; ++i) h.Merge(h);  // 2^33 samples.
  ASSERT_EQ(h.count(), uint64_t{1} << 33);
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(h.Encode(&fbb));
  const Histogram* encoded = VerifiedRoot(fbb);
  ASSERT_EQ(encoded->buckets()->size(), 1u);
  EXPECT_EQ(encoded->buckets()->Get(0)->count(),
            std::numeric_limits<uint32_t>::max());
}

TEST(TimingHistogramEncodeTest, EncodedSizeBoundHolds) {
  std::vector<LatencyHistogram> histograms(5);
  histograms[1].Record(7);
  histograms[2] = HistogramOf({0, kMax});
  histograms[3] = HistogramOf(Samples(Distribution::kExponential, 2000, 3));
  for (size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    histograms[4].Record(LatencyHistogram::BucketLowerNs(i));
  }
  ASSERT_EQ(histograms[4].non_empty_buckets(), LatencyHistogram::kBucketCount);
  for (const LatencyHistogram& h : histograms) {
    // Whatever the builder's alignment when Encode starts.
    for (size_t before = 0; before < 16; ++before) {
      flatbuffers::FlatBufferBuilder fbb;
      std::vector<uint8_t> filler(before, 0xaa);
      fbb.CreateVector(filler);
      if (before % 2 == 1) fbb.CreateVector(std::vector<int64_t>{1});
      const size_t start = fbb.GetSize();
      h.Encode(&fbb);
      const size_t added = fbb.GetSize() - start;
      EXPECT_LE(added, h.EncodedSizeBound())
          << h.non_empty_buckets() << " buckets, " << before << " before";
      // The bound is meant for planning: it should not be loose either. (An
      // empty histogram leaves out min_ns and max_ns, 16 bytes and padding.)
      EXPECT_LE(h.EncodedSizeBound(), added + 32);
    }
  }
  EXPECT_EQ(LatencyHistogram::MaxEncodedSize(50) -
                LatencyHistogram::MaxEncodedSize(0),
            400u);
}

// --- Decoding untrusted input -----------------------------------------

struct BadHistogram {
  std::string name;
  uint16_t layout;
  int64_t min_ns;
  int64_t max_ns;
  // Missing buckets vector when `has_buckets` is false.
  bool has_buckets;
  std::vector<std::pair<uint16_t, uint32_t>> buckets;
  std::string expected_error;
};

class TimingHistogramDecodeTest
    : public ::testing::TestWithParam<BadHistogram> {};

TEST_P(TimingHistogramDecodeTest, RejectsWithAMessageAndKeepsOut) {
  const BadHistogram& bad = GetParam();
  flatbuffers::FlatBufferBuilder fbb;
  flatbuffers::Offset<flatbuffers::Vector<const HistogramBucket*>> buckets;
  if (bad.has_buckets) {
    std::vector<HistogramBucket> structs;
    for (const auto& [index, count] : bad.buckets) {
      structs.emplace_back(index, count);
    }
    buckets = fbb.CreateVectorOfStructs(structs);
  }
  fbb.Finish(CreateHistogram(fbb, bad.layout, bad.min_ns, bad.max_ns, buckets));
  const Histogram* encoded = VerifiedRoot(fbb);

  const LatencyHistogram before =
      HistogramOf(Samples(Distribution::kExponential, 100, 9));
  LatencyHistogram out = before;
  std::string error;
  EXPECT_FALSE(LatencyHistogram::Decode(*encoded, &out, &error));
  EXPECT_THAT(error, HasSubstr(bad.expected_error));
  ExpectSameHistogram(out, before);
  // A null error is allowed.
  EXPECT_FALSE(LatencyHistogram::Decode(*encoded, &out, nullptr));
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, TimingHistogramDecodeTest,
    ::testing::Values(
        BadHistogram{"UnknownLayout",
                     2,
                     5,
                     5,
                     true,
                     {{5, 1}},
                     "histogram layout 2 is unknown; this reader knows only "
                     "layout 1"},
        BadHistogram{"IndexBeyondLayout",
                     1,
                     1,
                     4000,
                     true,
                     {{1, 1}, {2, 1}, {3, 1}, {4000, 1}},
                     "histogram bucket 3: index 4000 is beyond the 1888 "
                     "buckets of layout 1"},
        BadHistogram{"IndexJustBeyond",
                     1,
                     1,
                     1,
                     true,
                     {{1, 1}, {1888, 1}},
                     "histogram bucket 1: index 1888 is beyond"},
        BadHistogram{"RepeatedIndex",
                     1,
                     1,
                     7,
                     true,
                     {{1, 1}, {7, 1}, {7, 2}},
                     "histogram bucket 2: index 7 does not come after index 7 "
                     "of bucket 1; indices must be strictly increasing"},
        BadHistogram{"DecreasingIndex",
                     1,
                     1,
                     9,
                     true,
                     {{9, 1}, {1, 1}},
                     "histogram bucket 1: index 1 does not come after index 9"},
        BadHistogram{"ZeroCount",
                     1,
                     1,
                     9,
                     true,
                     {{1, 1}, {5, 0}, {9, 1}},
                     "histogram bucket 1: count is 0 (index 5)"},
        BadHistogram{"MissingBucketsWithExtremes",
                     1,
                     3,
                     8,
                     false,
                     {},
                     "histogram has no buckets, so its min_ns and max_ns must "
                     "be 0, but they are 3 and 8"},
        BadHistogram{"EmptyBucketsWithExtremes",
                     1,
                     0,
                     8,
                     true,
                     {},
                     "histogram has no buckets"},
        BadHistogram{"NegativeMin",
                     1,
                     -4,
                     3,
                     true,
                     {{0, 1}, {3, 1}},
                     "histogram min_ns -4 is negative"},
        BadHistogram{"MinAboveMax",
                     1,
                     9,
                     3,
                     true,
                     {{3, 1}, {9, 1}},
                     "histogram min_ns 9 is greater than its max_ns 3"},
        BadHistogram{"MinOutsideLowestBucket",
                     1,
                     2,
                     100,
                     true,
                     {{3, 1}, {LatencyHistogram::BucketIndex(100), 1}},
                     "histogram min_ns 2 is not in its lowest bucket (bucket "
                     "index 3, [3, 4) ns)"},
        BadHistogram{"MaxOutsideHighestBucket",
                     1,
                     3,
                     150,
                     true,
                     {{3, 1}, {LatencyHistogram::BucketIndex(100), 1}},
                     "histogram max_ns 150 is not in its highest bucket "
                     "(bucket index 82, [100, 102) ns)"},
        BadHistogram{"OneSampleTwoValues",
                     1,
                     100,
                     101,
                     true,
                     {{LatencyHistogram::BucketIndex(100), 1}},
                     "histogram holds one sample, but its min_ns 100 differs "
                     "from its max_ns 101"}),
    [](const ::testing::TestParamInfo<BadHistogram>& info) {
      return info.param.name;
    });

TEST(TimingHistogramDecodeTest, MissingBucketsWithZeroExtremesIsEmpty) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(CreateHistogram(fbb));
  LatencyHistogram out = HistogramOf({1, 2, 3});
  std::string error;
  EXPECT_TRUE(LatencyHistogram::Decode(*VerifiedRoot(fbb), &out, &error))
      << error;
  ExpectSameHistogram(out, LatencyHistogram());
}

// --- Realtime: no allocation ------------------------------------------

TEST(TimingHistogramTest, RealtimePathsNeverAllocate) {
  const std::vector<int64_t> samples =
      Samples(Distribution::kLogNormal, 10'000, 21);
  // Heap-allocated so that the test's own frame stays small.
  auto histogram = std::make_unique<LatencyHistogram>();
  auto other = std::make_unique<LatencyHistogram>();
  flatbuffers::FlatBufferBuilder fbb(64 * 1024);
  // Warm-up: the builder allocates its buffer on first use and keeps it
  // across Clear().
  for (int64_t sample : samples) other->Record(sample);
  other->Encode(&fbb);
  fbb.Clear();

  int64_t sink = 0;
  const uint64_t before = aos::testing::HeapAllocations();
  for (int64_t sample : samples) histogram->Record(sample);
  histogram->Merge(*other);
  for (double p : {0.0, 50.0, 99.0, 99.9, 100.0}) {
    sink += histogram->PercentileNs(p);
  }
  histogram->ForEachNonEmptyBucket(
      [&](size_t, int64_t, int64_t, uint64_t count) { sink += count; });
  histogram->Encode(&fbb);
  fbb.Clear();
  histogram->Encode(&fbb);
  histogram->Reset();
  const uint64_t after = aos::testing::HeapAllocations();
  EXPECT_EQ(after - before, 0u);
  EXPECT_NE(sink, 0);

  // The counter does see allocations: this check is not vacuous.
  auto control = std::make_unique<int>(1);
  EXPECT_EQ(aos::testing::HeapAllocations() - after, 1u);
}

}  // namespace
}  // namespace aos::timing::testing
