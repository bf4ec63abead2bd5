#include "aos/events/deferred_samples.h"

#include <chrono>
#include <vector>

#include "aos/testing/allocation_counter.h"
#include "gtest/gtest.h"

namespace aos::timing {
namespace {

using std::chrono::nanoseconds;

// Every figure of two histograms, bucket by bucket.
void ExpectSameHistogram(const LatencyHistogram& a, const LatencyHistogram& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.min_ns(), b.min_ns());
  EXPECT_EQ(a.max_ns(), b.max_ns());
  for (size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    ASSERT_EQ(a.bucket_count(i), b.bucket_count(i)) << "bucket " << i;
  }
  EXPECT_EQ(a.PercentileNs(0.5), b.PercentileNs(0.5));
  EXPECT_EQ(a.PercentileNs(0.99), b.PercentileNs(0.99));
}

TEST(DeferredSamplesTest, FoldGivesWhatRecordingAtOnceGives) {
  DeferredSamples deferred;
  deferred.Reserve(8);
  LatencyRecorder direct[2], later[2];
  const std::vector<int64_t> samples = {0,    -5,     63,      64,
                                        1000, 123456, 5000000, 1000};
  deferred.Begin();
  for (size_t i = 0; i < samples.size(); ++i) {
    direct[i % 2].Record(nanoseconds(samples[i]));
    deferred.Record(&later[i % 2], nanoseconds(samples[i]));
  }
  // Nothing is recorded yet.
  EXPECT_EQ(deferred.pending(), samples.size());
  EXPECT_EQ(later[0].histogram().count(), 0u);
  EXPECT_EQ(later[0].statistic().count(), 0u);
  deferred.Fold();
  EXPECT_EQ(deferred.pending(), 0u);
  EXPECT_TRUE(deferred.deferring());
  deferred.End();
  EXPECT_FALSE(deferred.deferring());
  for (int i = 0; i < 2; ++i) {
    ExpectSameHistogram(direct[i].histogram(), later[i].histogram());
    EXPECT_EQ(direct[i].statistic().count(), later[i].statistic().count());
    EXPECT_EQ(direct[i].statistic().average(), later[i].statistic().average());
    EXPECT_EQ(direct[i].statistic().min(), later[i].statistic().min());
    EXPECT_EQ(direct[i].statistic().max(), later[i].statistic().max());
  }
}

TEST(DeferredSamplesTest, RecordsAtOnceWhenNotBegunOrFull) {
  DeferredSamples deferred;
  deferred.Reserve(1);
  LatencyRecorder recorder;
  deferred.Record(&recorder, nanoseconds(10));  // Not begun.
  EXPECT_EQ(recorder.histogram().bucket_count(10), 1u);
  deferred.Begin();
  deferred.Record(&recorder, nanoseconds(20));  // Deferred.
  deferred.Record(&recorder, nanoseconds(30));  // No room: at once.
  EXPECT_EQ(deferred.pending(), 1u);
  EXPECT_EQ(recorder.histogram().bucket_count(20), 0u);
  EXPECT_EQ(recorder.histogram().bucket_count(30), 1u);
  EXPECT_EQ(recorder.statistic().count(), 2u);
  deferred.End();
  EXPECT_EQ(recorder.histogram().bucket_count(20), 1u);
  EXPECT_EQ(recorder.histogram().count(), 3u);
  EXPECT_EQ(recorder.statistic().count(), 3u);
  deferred.Record(&recorder, nanoseconds(40));  // Ended: at once.
  EXPECT_EQ(recorder.histogram().bucket_count(40), 1u);
}

TEST(DeferredSamplesTest, RecordAndFoldNeverAllocate) {
  DeferredSamples deferred;
  for (int i = 0; i < 100; ++i) deferred.Reserve(2);
  std::vector<LatencyRecorder> recorders(100);
  const uint64_t before = aos::testing::HeapAllocations();
  for (int round = 0; round < 3; ++round) {
    deferred.Begin();
    for (LatencyRecorder& recorder : recorders) {
      deferred.Record(&recorder, nanoseconds(1000 + round));
      deferred.Record(&recorder, nanoseconds(2000 + round));
    }
    deferred.Record(&recorders[0], nanoseconds(5));  // Past the room.
    EXPECT_EQ(deferred.pending(), 200u);
    deferred.End();
  }
  EXPECT_EQ(aos::testing::HeapAllocations() - before, 0u);
  EXPECT_EQ(recorders[0].histogram().count(), 9u);
}

}  // namespace
}  // namespace aos::timing
