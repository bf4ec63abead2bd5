#ifndef AOS_EVENTS_DEFERRED_BUCKETS_H_
#define AOS_EVENTS_DEFERRED_BUCKETS_H_

// Histogram buckets counted later, all together: for a loop that runs many
// timers in one wakeup. Each timer's call records two samples, each into a
// bucket (a cache line) of its own histogram; with many timers those lines
// are cold, and missing them one after another delays every later timer of
// the wakeup. Deferred, the calls record all but the buckets
// (LatencyHistogram::RecordAllButBucket) and Fold() counts them after the
// last call: it starts loading every line at once, then adds.
//
//   DeferredBuckets deferred;
//   deferred.Reserve(2);                 // per timer, when it is made
//   deferred.Begin();                    // a wakeup's timers start
//   deferred.Record(&timing.wakeup_latency, latency);  // in each call
//   deferred.Fold();                     // before anything reads the
//                                        // histograms (deferring goes on)
//   deferred.End();                      // after the wakeup's last call
//
// While not begun, Record() records at once. Record() never allocates: past
// the reserved room it counts that sample's bucket at once. Not
// thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "aos/events/latency_recorder.h"

namespace aos::timing {

class DeferredBuckets {
 public:
  // Room for `samples` more samples deferred at once. May allocate: call
  // when making what records (before a loop runs).
  void Reserve(size_t samples);

  // From now until End(), Record() defers buckets.
  void Begin() { deferring_ = true; }
  bool deferring() const { return deferring_; }

  // Records `sample` in `recorder`: all of it, or, between Begin() and
  // End() and while there is room, all but its bucket, which the next
  // Fold() or End() counts. `recorder` must outlive that.
  void Record(LatencyRecorder* recorder, std::chrono::nanoseconds sample) {
    if (!deferring_ || pending_.size() >= reserved_) {
      recorder->Record(sample);
      return;
    }
    const size_t index = recorder->RecordAllButBucket(sample);
    pending_.push_back({recorder->mutable_histogram(), index});
  }

  // Counts every deferred bucket (their lines loaded together first):
  // every histogram is whole again. Deferring goes on if it was on. Never
  // allocates.
  void Fold();
  // Fold(), and Record() records at once from now on.
  void End() {
    Fold();
    deferring_ = false;
  }

  // Buckets deferred and not yet counted.
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    LatencyHistogram* histogram;
    size_t index;
  };
  std::vector<Pending> pending_;
  size_t reserved_ = 0;
  bool deferring_ = false;
};

}  // namespace aos::timing

#endif  // AOS_EVENTS_DEFERRED_BUCKETS_H_
