#ifndef AOS_EVENTS_TIMING_HISTOGRAM_H_
#define AOS_EVENTS_TIMING_HISTOGRAM_H_

// A latency histogram of nanosecond samples, with the one bucket layout that
// timing reports use (layout 1), defined here and nowhere else.
//
//   aos::timing::LatencyHistogram wakeup_latency;
//   wakeup_latency.Record(handler_start_ns - scheduled_ns);  // realtime-safe
//   ...
//   int64_t p99 = wakeup_latency.PercentileNs(99.0);
//   auto offset = wakeup_latency.Encode(&fbb);  // sparse aos.timing.Histogram
//
// Layout 1 (log-linear):
//   * every value 0..63 ns has its own bucket: indices 0..63, exact;
//   * each power of two [2^e, 2^(e+1)) for e = 6..62 is split into 32 equal
//     sub-buckets of width 2^(e-5): indices 64 + 32 * (e - 6) + sub-bucket.
// That is 64 + 57 * 32 = 1888 buckets covering every non-negative int64_t up
// to INT64_MAX (about 292 years), with each bucket at most 1/32 (3.1%) as
// wide as its lower bound. Merging histograms adds their counts, so merging
// is exact, associative and commutative.
//
// Beside the counts the histogram keeps the exact minimum, maximum and total
// count of the samples, so p0 and p100 are exact.
//
// Realtime: Record, Merge, Reset, PercentileNs and the accessors never
// allocate; Encode allocates only through the FlatBufferBuilder it is given
// (nothing if the builder already has room). The counts live in a fixed
// array inside the object (about 15 KiB), so a LatencyHistogram belongs in
// a long-lived object set up before Run(), not in a small stack frame.
// Not thread-safe: one event loop thread records into it.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "aos/events/event_loop_generated.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::timing {

class LatencyHistogram {
 public:
  // The layout id written in Histogram.layout. A different layout would be a
  // new id; readers refuse ids they do not know.
  static constexpr uint16_t kLayout = 1;
  // Values 0..kExactBuckets-1 ns have one bucket each.
  static constexpr size_t kExactBuckets = 64;
  // Sub-buckets in each power of two above kExactBuckets (a power of two).
  static constexpr size_t kSubBuckets = 32;
  static constexpr size_t kBucketCount = 1888;

  // An empty histogram: count() == 0.
  LatencyHistogram() = default;
  LatencyHistogram(const LatencyHistogram&) = default;
  LatencyHistogram& operator=(const LatencyHistogram&) = default;

  // --- The layout --------------------------------------------------------

  // The index of the bucket that holds `ns`, in [0, kBucketCount). Negative
  // values map to bucket 0, as Record treats them as 0. O(1), no loops.
  static constexpr size_t BucketIndex(int64_t ns) noexcept {
    const uint64_t value = ns < 0 ? 0 : static_cast<uint64_t>(ns);
    // Values below 64 have bit_width <= 6 and get shift 0: index == value.
    // Above, the shift keeps the top 6 bits (32..63 after the shift), and
    // each doubling of the value moves the index on by 32.
    const int width = static_cast<int>(std::bit_width(value));
    const unsigned shift = static_cast<unsigned>(std::max(width, 6) - 6);
    return static_cast<size_t>(shift) * kSubBuckets +
           static_cast<size_t>(value >> shift);
  }

  // The smallest value in bucket `index` (inclusive). `index` must be below
  // kBucketCount; larger indices give meaningless values. O(1).
  static constexpr int64_t BucketLowerNs(size_t index) noexcept {
    if (index < kExactBuckets) return static_cast<int64_t>(index);
    const unsigned shift = static_cast<unsigned>(index / kSubBuckets) - 1;
    const uint64_t mantissa = index % kSubBuckets + kSubBuckets;
    return static_cast<int64_t>(mantissa << shift);
  }

  // The smallest value above bucket `index` (exclusive upper bound), which is
  // BucketLowerNs(index + 1). For the last bucket the true bound, 2^63, does
  // not fit in int64_t, so this returns INT64_MAX even though INT64_MAX
  // itself is in that bucket: compare with BucketIndex, not with this bound,
  // when the last bucket matters. `index` must be below kBucketCount. O(1).
  static constexpr int64_t BucketUpperNs(size_t index) noexcept {
    if (index + 1 >= kBucketCount) return std::numeric_limits<int64_t>::max();
    return BucketLowerNs(index + 1);
  }

  // The value PercentileNs reports for a sample in bucket `index` (before
  // clamping to [min_ns(), max_ns()]): the lower middle of the bucket's
  // integers, BucketLowerNs + (width - 1) / 2. For any value v in the
  // bucket, |BucketRepresentativeNs(index) - v| < v / 64, and it is exact
  // below 64 ns. `index` must be below kBucketCount. O(1).
  static constexpr int64_t BucketRepresentativeNs(size_t index) noexcept {
    if (index < kExactBuckets) return static_cast<int64_t>(index);
    const unsigned shift = static_cast<unsigned>(index / kSubBuckets) - 1;
    const int64_t width = int64_t{1} << shift;
    return BucketLowerNs(index) + (width - 1) / 2;
  }

  // --- Recording ---------------------------------------------------------

  // Adds one sample. Negative samples (a clock that stepped backwards, or a
  // callback that ran before its scheduled time) are recorded as 0 ns, so
  // min_ns() is never negative. O(1), never allocates, no loops: about 2 ns
  // (timing_benchmark). The counters are 64-bit and cannot overflow in
  // practice.
  void Record(int64_t ns) noexcept {
    if (ns < 0) ns = 0;
    const size_t index = BucketIndex(ns);
    ++count_;
    lowest_index_ = std::min(lowest_index_, index);
    highest_index_ = std::max(highest_index_, index);
    min_ns_ = std::min(min_ns_, ns);
    max_ns_ = std::max(max_ns_, ns);
    uint64_t& bucket = counts_[index];
    non_empty_buckets_ += (bucket == 0);
    ++bucket;
  }

  // For a caller that records many samples into many histograms at once
  // (aos/events/deferred_samples.h), the loads Record() needs, started
  // early. PrefetchSummary: the summary (count, range, extremes), from its
  // first line (a second prefetch for the line its end may fall on doubled
  // Fold's time with 100 timers: docs/benchmarks.md, "Calls of one wakeup
  // closer together").
  void PrefetchSummary() const noexcept { __builtin_prefetch(&count_, 1); }
  // PrefetchBucket: bucket `index`'s cache line.
  void PrefetchBucket(size_t index) const noexcept {
    __builtin_prefetch(&counts_[index], 1);
  }

  // Adds every sample of `other` to this histogram: counts add, min and max
  // combine. Exact, associative and commutative; merging with itself doubles
  // every count. Cost: O(width of other's non-empty index range), at most
  // kBucketCount; never allocates.
  void Merge(const LatencyHistogram& other) noexcept;

  // Forgets every sample. Cost: O(width of the non-empty index range), so
  // resetting a histogram once per report is cheap when it was sparse.
  // Never allocates.
  void Reset() noexcept;

  // --- Reading -----------------------------------------------------------

  // Samples recorded (or merged in) since construction or Reset().
  uint64_t count() const noexcept { return count_; }

  // Exact smallest and largest sample (negatives count as 0), or -1 when the
  // histogram is empty; a real sample is never negative, so -1 is
  // unambiguous.
  int64_t min_ns() const noexcept { return count_ == 0 ? -1 : min_ns_; }
  int64_t max_ns() const noexcept { return count_ == 0 ? -1 : max_ns_; }

  // The number of buckets with a non-zero count (what Encode writes).
  size_t non_empty_buckets() const noexcept { return non_empty_buckets_; }

  // The samples in bucket `index` (0 for an empty bucket). `index` must be
  // below kBucketCount.
  uint64_t bucket_count(size_t index) const noexcept { return counts_[index]; }

  // The 1-based rank of the sample that PercentileNs(percentile) describes,
  // for `count` samples sorted in increasing order:
  //   rank = ceil(percentile * count / 100), computed in double, then
  //   clamped to [1, count]
  // (so p0 is rank 1, the minimum, and p100 is rank count, the maximum).
  // Multiplying before dividing keeps decimal percentiles exact, e.g. p99.9
  // of 1000 samples is rank 999. `percentile` is clamped to [0, 100] and NaN
  // counts as 0. Returns 0 when count is 0. O(1).
  static uint64_t PercentileRank(double percentile, uint64_t count) noexcept;

  // An estimate of the sample of rank PercentileRank(percentile, count()).
  //   * p0 (rank 1) returns min_ns() and p100 (rank count()) returns
  //     max_ns(), exactly.
  //   * Otherwise it returns BucketRepresentativeNs of the bucket holding
  //     that sample, clamped to [min_ns(), max_ns()]. If v is the true
  //     sample of that rank, |result - v| < v / 64 (1.5625%), and result ==
  //     v when v < 64 ns (timing_histogram_test proves this for every
  //     bucket and checks it on random data).
  //   * Returns -1 when the histogram is empty.
  // `percentile` outside [0, 100] is clamped to it; NaN counts as 0.
  // Cost: O(width of the non-empty index range), at most kBucketCount
  // additions; never allocates.
  int64_t PercentileNs(double percentile) const noexcept;

  // Calls f(size_t index, int64_t lower_ns, int64_t upper_ns, uint64_t count)
  // for every non-empty bucket, in increasing index order, with the bounds
  // of BucketLowerNs and BucketUpperNs. `f` must not modify this histogram.
  // Cost: O(width of the non-empty index range) plus the calls.
  template <typename F>
  void ForEachNonEmptyBucket(F&& f) const {
    if (count_ == 0) return;
    for (size_t index = lowest_index_; index <= highest_index_; ++index) {
      if (counts_[index] != 0) {
        f(index, BucketLowerNs(index), BucketUpperNs(index), counts_[index]);
      }
    }
  }

  // Same samples in the same buckets with the same extremes. Compares every
  // bucket: O(kBucketCount).
  bool operator==(const LatencyHistogram& other) const = default;

  // --- The report's sparse form -------------------------------------------

  // Writes this histogram into `fbb` as an aos.timing.Histogram: layout
  // (always stored, even though it is the schema default, so a report names
  // its layout explicitly), min_ns, max_ns and a buckets vector holding only
  // the non-empty buckets in increasing index order. An empty histogram is
  // written as min_ns = max_ns = 0 and an empty buckets vector. A bucket
  // count above UINT32_MAX is written as UINT32_MAX (saturated, so such a
  // histogram no longer decodes to the same counts; a bucket needs 4.3e9
  // samples for that, 71 minutes of a 1 MHz callback, far beyond a report
  // window).
  //
  // As with every flatbuffers Create* function, call it while no table or
  // vector is being built in `fbb`, and add the returned offset to the
  // enclosing table afterwards. Adds at most EncodedSizeBound() bytes to
  // fbb; allocates only if fbb must grow its buffer. Cost: O(width of the
  // non-empty index range).
  flatbuffers::Offset<aos::timing::Histogram> Encode(
      flatbuffers::FlatBufferBuilder* fbb) const;

  // An upper bound of the bytes Encode adds to a builder for a histogram
  // with `non_empty_buckets` non-empty buckets, including alignment padding
  // and the table's vtable (even though flatbuffers may share the vtable
  // with an identical one): 8 bytes a bucket plus a fixed overhead. For a
  // report builder that must plan what fits in a channel's max_size.
  static constexpr size_t MaxEncodedSize(size_t non_empty_buckets) noexcept {
    // Buckets vector: length, 8-byte structs, up to 7 bytes of alignment.
    // Table: soffset, two int64, one offset, one uint16, up to 7 + 3 bytes of
    //   alignment padding. Vtable: 2 sizes + 4 fields, 2 bytes each.
    return (4 + 8 * non_empty_buckets + 7) + (4 + 8 + 8 + 4 + 2 + 10) +
           (2 + 2 + 4 * 2);
  }
  // MaxEncodedSize(non_empty_buckets()). O(1).
  size_t EncodedSizeBound() const noexcept {
    return MaxEncodedSize(non_empty_buckets_);
  }

  // Rebuilds a histogram from its sparse form, e.g. one read from a report.
  // `encoded` is untrusted: its flatbuffer must already have passed
  // flatbuffers::Verifier (this checks meaning, not wire format). Rejects:
  //   * a layout other than kLayout;
  //   * a bucket index >= kBucketCount, indices that are not strictly
  //     increasing, a bucket whose count is 0;
  //   * no buckets (missing or empty vector) with min_ns or max_ns not 0;
  //   * min_ns < 0, min_ns > max_ns, min_ns not in the lowest listed bucket,
  //     max_ns not in the highest listed bucket, or a single sample with
  //     min_ns != max_ns.
  // On success replaces *out with the decoded histogram and returns true.
  // On failure returns false, leaves *out unchanged, and sets *error (when
  // `error` is not null) to one sentence naming the field at fault, e.g.
  // "histogram bucket 3: index 4000 is beyond the 1888 buckets of layout 1".
  // Cost: O(buckets listed + kBucketCount); allocates only to write *error.
  [[nodiscard]] static bool Decode(const aos::timing::Histogram& encoded,
                                   LatencyHistogram* out, std::string* error);

 private:
  // The figures every Record() updates come first, next to the statistic a
  // LatencyRecorder keeps before this histogram, so that a sample touches
  // few cache lines (these, which may straddle two, and its bucket): with
  // many timers, each call's histograms are cold (docs/benchmarks.md,
  // "Timers at scale").
  uint64_t count_ = 0;
  size_t non_empty_buckets_ = 0;
  // The non-empty index range [lowest_index_, highest_index_], empty as
  // [kBucketCount, 0] so that Record needs no branch to start it.
  size_t lowest_index_ = kBucketCount;
  size_t highest_index_ = 0;
  // Sentinels for the same reason; the accessors hide them.
  int64_t min_ns_ = std::numeric_limits<int64_t>::max();
  int64_t max_ns_ = std::numeric_limits<int64_t>::min();
  std::array<uint64_t, kBucketCount> counts_{};
};

}  // namespace aos::timing

#endif  // AOS_EVENTS_TIMING_HISTOGRAM_H_
