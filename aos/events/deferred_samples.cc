#include "aos/events/deferred_samples.h"

#include <algorithm>

namespace aos::timing {

void DeferredSamples::Reserve(size_t samples) {
  reserved_ += samples;
  // Geometric growth: reserving for n timers one by one copies O(n).
  if (reserved_ > pending_.capacity()) {
    pending_.reserve(std::max(reserved_, 2 * pending_.capacity()));
  }
}

void DeferredSamples::Fold() {
  // Every load started first, then every sample recorded. Starting them
  // only 16 samples ahead (which keeps a thousand timers' lines from
  // pushing each other out of the first-level cache) made Fold three
  // times dearer with 100 timers: each bucket's load still missed
  // (docs/benchmarks.md, "Calls of one wakeup closer together").
  for (const Pending& p : pending_) p.recorder->Prefetch(p.sample);
  for (const Pending& p : pending_) p.recorder->Record(p.sample);
  pending_.clear();
}

}  // namespace aos::timing
