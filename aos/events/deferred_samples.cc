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
  // Loads started this many samples ahead: enough to overlap their misses,
  // few enough that the lines are still there when recorded (a thousand
  // timers' samples would not fit the cache).
  constexpr size_t kAhead = 16;
  const size_t count = pending_.size();
  for (size_t i = 0; i < std::min(count, kAhead); ++i) {
    pending_[i].recorder->Prefetch(pending_[i].sample);
  }
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) {
      pending_[i + kAhead].recorder->Prefetch(pending_[i + kAhead].sample);
    }
    pending_[i].recorder->Record(pending_[i].sample);
  }
  pending_.clear();
}

}  // namespace aos::timing
