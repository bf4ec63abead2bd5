#ifndef AOS_EVENTS_TIMING_STATISTIC_H_
#define AOS_EVENTS_TIMING_STATISTIC_H_

// A running summary of samples in AOS's shape: average, min, max and sample
// standard deviation (over n - 1, as AOS computes it), as written in
// aos.timing.Statistic.
//
//   aos::timing::RunningStatistic handler_time;
//   handler_time.Add(std::chrono::duration<double>(end - start).count());
//   ...
//   auto offset = handler_time.Encode(&fbb);   // once per report
//   handler_time.Reset();
//
// It uses Welford's online algorithm (a running mean and a running sum of
// squared deviations, M2), which stays accurate where sum-of-squares
// formulas cancel catastrophically, and combines two summaries exactly with
// Chan et al.'s parallel formula. With no samples every figure is NaN, which
// AOS prints as "nan [nan, nan] std nan".
//
// Realtime: nothing here allocates, except Encode through the builder it is
// given. Not thread-safe.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "aos/events/event_loop_generated.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::timing {

class RunningStatistic {
 public:
  // An empty summary: count() == 0, every figure NaN.
  RunningStatistic() = default;

  // Adds one sample (seconds, by the report's convention, though any unit
  // works). `x` should be finite: a NaN sample makes average and
  // standard_deviation NaN until Reset(), and an infinite one makes them
  // infinite or NaN. O(1) (one division), never allocates.
  void Add(double x) noexcept {
    ++count_;
    const double delta = x - mean_;
    mean_ += delta / static_cast<double>(count_);
    m2_ += delta * (x - mean_);
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }

  // Adds every sample of `other`, as if each had been passed to Add: the
  // means and M2s combine exactly (up to double rounding), min and max
  // combine. O(1), never allocates.
  void Merge(const RunningStatistic& other) noexcept;

  // Forgets every sample. O(1).
  void Reset() noexcept { *this = RunningStatistic(); }

  // Samples added (or merged in) since construction or Reset().
  uint64_t count() const noexcept { return count_; }

  // Mean, extremes and sample standard deviation sqrt(M2 / (count - 1)) of
  // the samples (AOS's; 0 for one sample); NaN, each of them, when count()
  // is 0.
  double average() const noexcept { return count_ == 0 ? kNaN : mean_; }
  double min() const noexcept { return count_ == 0 ? kNaN : min_; }
  double max() const noexcept { return count_ == 0 ? kNaN : max_; }
  double standard_deviation() const noexcept {
    if (count_ == 0) return kNaN;
    if (count_ == 1) return 0.0;
    return std::sqrt(std::max(m2_, 0.0) / static_cast<double>(count_ - 1));
  }

  // Writes the four figures, as float, into `fbb` as an
  // aos.timing.Statistic. All four fields are always stored, even when NaN
  // (the schema default), so a report is explicit about an empty summary.
  // The count is not part of Statistic: the enclosing Timer, Watcher,
  // Fetcher or Sender table holds it. Call it while no table or vector is
  // being built in `fbb`. Adds at most kMaxEncodedSize bytes; allocates only
  // if fbb must grow its buffer. O(1).
  flatbuffers::Offset<aos::timing::Statistic> Encode(
      flatbuffers::FlatBufferBuilder* fbb) const;

  // An upper bound of the bytes Encode adds to a builder: four floats, the
  // table's soffset, its vtable (2 sizes + 4 fields) and alignment padding.
  static constexpr size_t kMaxEncodedSize = 4 * 4 + 4 + (2 + 2 + 4 * 2) + 3;

  // Rebuilds a summary from a report's Statistic and the count from its
  // enclosing table (M2 = standard_deviation^2 * (count - 1)). Only as exact as
  // the report's floats: about 7 significant digits, and Merge of decoded
  // summaries inherits that error. count == 0 gives an empty summary,
  // whatever `encoded` says. The fields are taken as they are; a report that
  // says NaN for a non-zero count yields NaN figures. O(1).
  static RunningStatistic Decode(const aos::timing::Statistic& encoded,
                                 uint64_t count) noexcept;

 private:
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  uint64_t count_ = 0;
  double mean_ = 0.0;
  // Sum of squared deviations from the mean.
  double m2_ = 0.0;
  // Sentinels so that Add needs no branch; the accessors hide them.
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

}  // namespace aos::timing

#endif  // AOS_EVENTS_TIMING_STATISTIC_H_
