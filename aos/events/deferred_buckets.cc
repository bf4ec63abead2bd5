#include "aos/events/deferred_buckets.h"

#include <algorithm>

namespace aos::timing {

void DeferredBuckets::Reserve(size_t samples) {
  reserved_ += samples;
  // Geometric growth: reserving for n timers one by one copies O(n).
  if (reserved_ > pending_.capacity()) {
    pending_.reserve(std::max(reserved_, 2 * pending_.capacity()));
  }
}

void DeferredBuckets::Fold() {
  for (const Pending& p : pending_) p.histogram->PrefetchBucket(p.index);
  for (const Pending& p : pending_) p.histogram->AddToBucket(p.index);
  pending_.clear();
}

}  // namespace aos::timing
