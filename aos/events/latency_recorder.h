#ifndef AOS_EVENTS_LATENCY_RECORDER_H_
#define AOS_EVENTS_LATENCY_RECORDER_H_

// One latency or duration figure of a timing report: the AOS-shaped
// statistic and the histogram of the same samples (timing_entry.h,
// timing_path.h). Recording costs a statistic update and a histogram
// increment and never allocates.

#include <chrono>

#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/time/time.h"

namespace aos::timing {

// A latency or duration: the AOS-shaped statistic (seconds) and the
// histogram (nanoseconds) of the same samples. After a merge of windows
// whose reports left the histogram out (to fit max_size), the histogram
// holds fewer samples than the statistic.
class LatencyRecorder {
 public:
  // Records one sample. Negative samples count as 0 in the histogram (and
  // stay negative in the statistic, so a clock problem stays visible).
  void Record(std::chrono::nanoseconds sample) noexcept {
    statistic_.Add(DurationInSeconds(sample));
    histogram_.Record(sample.count());
  }

  // Starts loading what Record(sample) will write: the statistic, the
  // histogram's summary and the sample's bucket (aos/events/
  // deferred_samples.h records many samples at once).
  void Prefetch(std::chrono::nanoseconds sample) const noexcept {
    __builtin_prefetch(&statistic_, 1);
    histogram_.PrefetchSummary();
    histogram_.PrefetchBucket(LatencyHistogram::BucketIndex(sample.count()));
  }

  // Adds every sample of `other`: statistics combine, histograms add.
  void Merge(const LatencyRecorder& other) noexcept {
    statistic_.Merge(other.statistic_);
    histogram_.Merge(other.histogram_);
  }

  void Reset() noexcept {
    statistic_.Reset();
    histogram_.Reset();
  }

  const RunningStatistic& statistic() const { return statistic_; }
  const LatencyHistogram& histogram() const { return histogram_; }

  // For decoding a report: the figures as it carried them.
  RunningStatistic* mutable_statistic() { return &statistic_; }
  LatencyHistogram* mutable_histogram() { return &histogram_; }

 private:
  RunningStatistic statistic_;
  LatencyHistogram histogram_;
};

}  // namespace aos::timing

#endif  // AOS_EVENTS_LATENCY_RECORDER_H_
