#include "aos/events/timing_path.h"

namespace aos::timing {

void PathTiming::Merge(const PathTiming& other) noexcept {
  age.Merge(other.age);
  deadline_overruns += other.deadline_overruns;
  max_uncertainty_ns = std::max(max_uncertainty_ns, other.max_uncertainty_ns);
}

PathTiming* PathTimings::Find(uint32_t origin_id, uint32_t hops) noexcept {
  for (size_t i = 0; i < count_; ++i) {
    if (paths_[i].origin_id == origin_id && paths_[i].hops == hops) {
      return &paths_[i];
    }
  }
  if (count_ == kMaxPathsPerEntry) return nullptr;
  PathTiming& path = paths_[count_++];
  path.origin_id = origin_id;
  path.hops = hops;
  return &path;
}

int64_t PathTimings::Record(
    const PathOrigins& origins,
    monotonic_clock::time_point callback_start) noexcept {
  int64_t worst_overrun = 0;
  for (const PathOrigin& origin : origins) {
    PathTiming* path = Find(origin.id, origin.hops);
    if (path == nullptr) {
      ++dropped_samples_;
      continue;
    }
    const std::chrono::nanoseconds age(
        callback_start.time_since_epoch().count() - origin.monotonic_time_ns);
    path->age.Record(age);
    if (deadline_ns_ > 0 && age.count() > deadline_ns_) {
      ++path->deadline_overruns;
      worst_overrun = std::max<int64_t>(worst_overrun, age.count());
    }
    path->max_uncertainty_ns = std::max<int64_t>(
        path->max_uncertainty_ns, int64_t{origin.uncertainty_us} * 1000);
  }
  return worst_overrun;
}

void PathTimings::Merge(const PathTimings& other) noexcept {
  for (const PathTiming& theirs : other) {
    PathTiming* ours = Find(theirs.origin_id, theirs.hops);
    if (ours == nullptr) {
      dropped_samples_ += theirs.count();
      continue;
    }
    ours->Merge(theirs);
  }
  dropped_samples_ += other.dropped_samples_;
  invalid_origins_ += other.invalid_origins_;
  if (deadline_ns_ <= 0) deadline_ns_ = other.deadline_ns_;
}

void PathTimings::Reset() noexcept {
  for (size_t i = 0; i < count_; ++i) paths_[i] = PathTiming();
  count_ = 0;
  dropped_samples_ = 0;
  invalid_origins_ = 0;
}

bool PathTimings::AddDecoded(const PathTiming& path) {
  PathTiming* ours = Find(path.origin_id, path.hops);
  if (ours == nullptr) {
    dropped_samples_ += path.count();
    return false;
  }
  ours->Merge(path);
  return true;
}

size_t SentOrigins::Add(uint32_t origin_id, uint32_t hops,
                        uint64_t count) noexcept {
  for (size_t i = 0; i < count_; ++i) {
    if (origins_[i].origin_id == origin_id && origins_[i].hops == hops) {
      origins_[i].count += count;
      return i;
    }
  }
  if (count_ == kCapacity) {
    dropped_ += count;
    return kCapacity;
  }
  origins_[count_] = SentOriginCount{origin_id, hops, count};
  return count_++;
}

void SentOrigins::RecordNew(const PathOrigins& origins) noexcept {
  last_size_ = origins.size();
  for (size_t i = 0; i < kMaxPathOrigins; ++i) {
    last_heads_[i] = 0;
    last_masks_[i] = 0;
    last_slots_[i] = kCapacity;
  }
  for (size_t i = 0; i < origins.size(); ++i) {
    const PathOrigin& origin = origins.begin()[i];
    const size_t slot = Add(origin.id, origin.hops, 1);
    // A dropped origin is counted in dropped() each time it is sent, which
    // RecordAsLast() does not do: such a message is never the last one.
    if (slot == kCapacity) last_size_ = kNoLast;
    last_heads_[i] = Head(origin);
    last_masks_[i] = kIdHopsBits;
    last_slots_[i] = static_cast<uint8_t>(slot);
  }
}

void SentOrigins::Merge(const SentOrigins& other) noexcept {
  for (const SentOriginCount& origin : other) {
    Add(origin.origin_id, origin.hops, origin.count);
  }
  dropped_ += other.dropped_;
}

void SentOrigins::AddDecoded(const SentOriginCount& origin) {
  Add(origin.origin_id, origin.hops, origin.count);
}

}  // namespace aos::timing
