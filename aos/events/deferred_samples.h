#ifndef AOS_EVENTS_DEFERRED_SAMPLES_H_
#define AOS_EVENTS_DEFERRED_SAMPLES_H_

// Samples recorded later, all together: for a loop that runs many timers in
// one wakeup. Each timer's call records two samples, each into a recorder
// of its own (a statistic, a histogram's summary and one of its buckets:
// three cache lines, on two pages); with many timers those are cold, and
// missing them one after another delays every later timer of the wakeup.
// Deferred, a call only notes its samples, and Fold() records them after
// the last call: it starts loading every line at once, then adds.
//
//   DeferredSamples deferred;
//   deferred.Reserve(2);                 // per timer, when it is made
//   deferred.Begin();                    // a wakeup's timers start
//   deferred.Record(&timing.wakeup_latency, latency);  // in each call
//   deferred.Fold();                     // before anything reads the
//                                        // recorders (deferring goes on)
//   deferred.End();                      // after the wakeup's last call
//
// Between a deferred Record() and the next Fold() the recorder does not
// have the sample yet (count() included): fold before reading one. While
// not begun, Record() records at once. Record() never allocates: past the
// reserved room it records that sample at once. Not thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "aos/events/latency_recorder.h"

namespace aos::timing {

class DeferredSamples {
 public:
  // Room for `samples` more samples deferred at once. May allocate: call
  // when making what records (before a loop runs).
  void Reserve(size_t samples);

  // From now until End(), Record() defers.
  void Begin() { deferring_ = true; }
  bool deferring() const { return deferring_; }

  // Records `sample` in `recorder`: at once, or, between Begin() and End()
  // and while there is room, at the next Fold() or End(). `recorder` must
  // outlive that.
  void Record(LatencyRecorder* recorder, std::chrono::nanoseconds sample) {
    if (!deferring_ || pending_.size() >= reserved_) {
      recorder->Record(sample);
      return;
    }
    pending_.push_back({recorder, sample});
  }

  // Records every deferred sample (their lines loaded together first):
  // every recorder is whole again. Deferring goes on if it was on. Never
  // allocates.
  void Fold();
  // Fold(), and Record() records at once from now on.
  void End() {
    Fold();
    deferring_ = false;
  }

  // Samples deferred and not yet recorded.
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    LatencyRecorder* recorder;
    std::chrono::nanoseconds sample;
  };
  std::vector<Pending> pending_;
  size_t reserved_ = 0;
  bool deferring_ = false;
};

}  // namespace aos::timing

#endif  // AOS_EVENTS_DEFERRED_SAMPLES_H_
