#include "aos/events/timing_histogram.h"

#include <cmath>

#include "aos/util/str_cat.h"

namespace aos::timing {
namespace {

using Histogram = aos::timing::Histogram;
using HistogramBucket = aos::timing::HistogramBucket;
using LH = LatencyHistogram;

// The layout in numbers: what the header promises, checked at compile time.
static_assert(LH::kBucketCount == LH::kExactBuckets + 57 * LH::kSubBuckets);
static_assert(LH::kBucketCount - 1 <= std::numeric_limits<uint16_t>::max(),
              "a bucket index must fit in HistogramBucket.index");
static_assert(LH::BucketIndex(0) == 0);
static_assert(LH::BucketIndex(63) == 63);
static_assert(LH::BucketIndex(64) == 64);
static_assert(LH::BucketIndex(-5) == 0);
static_assert(LH::BucketIndex(std::numeric_limits<int64_t>::max()) ==
              LH::kBucketCount - 1);
static_assert(LH::BucketLowerNs(LH::kBucketCount - 1) == int64_t{63} << 57);
static_assert(LH::BucketLowerNs(64) == 64 && LH::BucketUpperNs(64) == 66);

// One sentence naming a bucket's range, for error messages.
std::string DescribeBucket(size_t index) {
  return aos::StrCat("bucket index ", index, ", [", LH::BucketLowerNs(index),
                     ", ", LH::BucketUpperNs(index), ") ns");
}

}  // namespace

void LatencyHistogram::Merge(const LatencyHistogram& other) noexcept {
  if (other.count_ == 0) return;
  for (size_t index = other.lowest_index_; index <= other.highest_index_;
       ++index) {
    const uint64_t added = other.counts_[index];
    if (added == 0) continue;
    non_empty_buckets_ += (counts_[index] == 0);
    counts_[index] += added;
  }
  count_ += other.count_;
  lowest_index_ = std::min(lowest_index_, other.lowest_index_);
  highest_index_ = std::max(highest_index_, other.highest_index_);
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

void LatencyHistogram::Reset() noexcept {
  if (count_ != 0) {
    std::fill(counts_.begin() + lowest_index_,
              counts_.begin() + highest_index_ + 1, 0);
  }
  count_ = 0;
  non_empty_buckets_ = 0;
  lowest_index_ = kBucketCount;
  highest_index_ = 0;
  min_ns_ = std::numeric_limits<int64_t>::max();
  max_ns_ = std::numeric_limits<int64_t>::min();
}

uint64_t LatencyHistogram::PercentileRank(double percentile,
                                          uint64_t count) noexcept {
  if (count == 0) return 0;
  // `!(percentile > 0)` is also true for NaN.
  if (!(percentile > 0.0)) return 1;
  if (percentile >= 100.0) return count;
  const double rank =
      std::ceil(percentile * static_cast<double>(count) / 100.0);
  if (rank <= 1.0) return 1;
  // Rounding of count to double can only matter beyond 2^53 samples.
  if (rank >= static_cast<double>(count)) return count;
  return static_cast<uint64_t>(rank);
}

int64_t LatencyHistogram::PercentileNs(double percentile) const noexcept {
  if (count_ == 0) return -1;
  const uint64_t rank = PercentileRank(percentile, count_);
  if (rank <= 1) return min_ns_;
  if (rank >= count_) return max_ns_;
  uint64_t seen = 0;
  for (size_t index = lowest_index_; index <= highest_index_; ++index) {
    seen += counts_[index];
    if (seen >= rank) {
      return std::clamp(BucketRepresentativeNs(index), min_ns_, max_ns_);
    }
  }
  // Unreachable: the counts add up to count_ >= rank.
  return max_ns_;
}

flatbuffers::Offset<Histogram> LatencyHistogram::Encode(
    flatbuffers::FlatBufferBuilder* fbb) const {
  HistogramBucket* buckets = nullptr;
  const auto buckets_offset =
      fbb->CreateUninitializedVectorOfStructs(non_empty_buckets_, &buckets);
  // No push_back in flatbuffers' reverse-growing buffer: the vector's memory
  // is reserved above and filled front to back.
  size_t written = 0;
  ForEachNonEmptyBucket([&](size_t index, int64_t, int64_t, uint64_t count) {
    const uint32_t saturated = static_cast<uint32_t>(
        std::min<uint64_t>(count, std::numeric_limits<uint32_t>::max()));
    buckets[written++] =
        HistogramBucket(static_cast<uint16_t>(index), saturated);
  });

  const flatbuffers::uoffset_t start = fbb->StartTable();
  // Largest fields first, as flatc's generated Create* functions do, so the
  // table needs the least padding.
  fbb->AddElement<int64_t>(Histogram::VT_MIN_NS, count_ == 0 ? 0 : min_ns_, 0);
  fbb->AddElement<int64_t>(Histogram::VT_MAX_NS, count_ == 0 ? 0 : max_ns_, 0);
  fbb->AddOffset(Histogram::VT_BUCKETS, buckets_offset);
  // The two-argument AddElement stores the value even though it equals the
  // schema default: the layout id is what gives the indices their meaning.
  fbb->AddElement<uint16_t>(Histogram::VT_LAYOUT, kLayout);
  return flatbuffers::Offset<Histogram>(fbb->EndTable(start));
}

bool LatencyHistogram::Decode(const Histogram& encoded, LatencyHistogram* out,
                              std::string* error) {
  const auto fail = [error](std::string message) {
    if (error != nullptr) *error = std::move(message);
    return false;
  };

  if (encoded.layout() != kLayout) {
    return fail(aos::StrCat("histogram layout ", encoded.layout(),
                            " is unknown; this reader knows only layout ",
                            kLayout));
  }
  const int64_t min_ns = encoded.min_ns();
  const int64_t max_ns = encoded.max_ns();
  const auto* buckets = encoded.buckets();
  if (buckets == nullptr || buckets->size() == 0) {
    if (min_ns != 0 || max_ns != 0) {
      return fail(aos::StrCat(
          "histogram has no buckets, so its min_ns and max_ns must be 0, but "
          "they are ",
          min_ns, " and ", max_ns));
    }
    out->Reset();
    return true;
  }

  // First pass: validate everything, so that *out stays untouched on error.
  uint64_t total = 0;
  for (flatbuffers::uoffset_t i = 0; i < buckets->size(); ++i) {
    const HistogramBucket* bucket = buckets->Get(i);
    const size_t index = bucket->index();
    if (index >= kBucketCount) {
      return fail(aos::StrCat("histogram bucket ", i, ": index ", index,
                              " is beyond the ", kBucketCount,
                              " buckets of layout ", kLayout));
    }
    if (i > 0 && index <= buckets->Get(i - 1)->index()) {
      return fail(aos::StrCat("histogram bucket ", i, ": index ", index,
                              " does not come after index ",
                              buckets->Get(i - 1)->index(), " of bucket ",
                              i - 1, "; indices must be strictly increasing"));
    }
    if (bucket->count() == 0) {
      return fail(aos::StrCat("histogram bucket ", i, ": count is 0 (index ",
                              index,
                              "); the sparse form lists only non-empty "
                              "buckets"));
    }
    total += bucket->count();
  }
  if (min_ns < 0) {
    return fail(aos::StrCat("histogram min_ns ", min_ns,
                            " is negative; samples are never below 0"));
  }
  if (min_ns > max_ns) {
    return fail(aos::StrCat("histogram min_ns ", min_ns,
                            " is greater than its max_ns ", max_ns));
  }
  const size_t lowest = buckets->Get(0)->index();
  const size_t highest = buckets->Get(buckets->size() - 1)->index();
  if (BucketIndex(min_ns) != lowest) {
    return fail(aos::StrCat("histogram min_ns ", min_ns,
                            " is not in its lowest bucket (",
                            DescribeBucket(lowest), ")"));
  }
  if (BucketIndex(max_ns) != highest) {
    return fail(aos::StrCat("histogram max_ns ", max_ns,
                            " is not in its highest bucket (",
                            DescribeBucket(highest), ")"));
  }
  if (total == 1 && min_ns != max_ns) {
    return fail(aos::StrCat("histogram holds one sample, but its min_ns ",
                            min_ns, " differs from its max_ns ", max_ns));
  }

  // Second pass: the input is sound; replace *out.
  out->Reset();
  for (const HistogramBucket* bucket : *buckets) {
    out->counts_[bucket->index()] = bucket->count();
  }
  out->count_ = total;
  out->non_empty_buckets_ = buckets->size();
  out->lowest_index_ = lowest;
  out->highest_index_ = highest;
  out->min_ns_ = min_ns;
  out->max_ns_ = max_ns;
  return true;
}

}  // namespace aos::timing
