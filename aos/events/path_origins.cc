#include "aos/events/path_origins.h"

#include <algorithm>

namespace aos {
namespace {

// FNV-1a, 32 bits, over each part and a separator that no name holds.
uint32_t Hash(uint32_t hash, std::string_view text) {
  for (const char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 16777619u;
  }
  hash ^= 0xffu;
  return hash * 16777619u;
}

// True if `a` is the one to keep of two origins of the same id.
bool Newer(const PathOrigin& a, const PathOrigin& b) {
  if (a.monotonic_time_ns != b.monotonic_time_ns) {
    return a.monotonic_time_ns > b.monotonic_time_ns;
  }
  return a.hops < b.hops;
}

}  // namespace

uint32_t PathOriginId(std::string_view node, std::string_view application,
                      std::string_view kind, std::string_view name) {
  uint32_t hash = 2166136261u;
  for (std::string_view part : {node, application, kind, name}) {
    hash = Hash(hash, part);
  }
  return hash == 0 ? 1 : hash;
}

void PathOrigins::Add(const PathOrigin& origin) {
  for (uint32_t i = 0; i < count_; ++i) {
    if (origins_[i].id == origin.id) {
      if (Newer(origin, origins_[i])) origins_[i] = origin;
      return;
    }
  }
  if (count_ < kMaxPathOrigins) {
    origins_[count_++] = origin;
    return;
  }
  ++dropped_;
  uint32_t oldest = 0;
  for (uint32_t i = 1; i < count_; ++i) {
    if (origins_[i].monotonic_time_ns < origins_[oldest].monotonic_time_ns) {
      oldest = i;
    }
  }
  if (origin.monotonic_time_ns > origins_[oldest].monotonic_time_ns) {
    origins_[oldest] = origin;
  }
}

void PathOrigins::Merge(const PathOrigins& other) {
  for (const PathOrigin& origin : other) Add(origin);
  dropped_ += other.dropped_;
}

PathOrigins PathOrigins::NextHop() const {
  PathOrigins next = *this;
  next.AddHop();
  return next;
}

PathOrigins PathOrigins::Translated(int64_t offset_ns,
                                    int64_t uncertainty_ns) const {
  PathOrigins translated = *this;
  const int64_t uncertainty_us =
      std::clamp<int64_t>((uncertainty_ns + 999) / 1000, 0, UINT16_MAX);
  for (uint32_t i = 0; i < translated.count_; ++i) {
    PathOrigin& origin = translated.origins_[i];
    origin.monotonic_time_ns += offset_ns;
    origin.uncertainty_us = static_cast<uint16_t>(std::min<int64_t>(
        int64_t{origin.uncertainty_us} + uncertainty_us, UINT16_MAX));
  }
  return translated;
}

PathOrigins::Raw PathOrigins::ToRaw() const {
  Raw raw{};  // What lies past count_ is zeros, never stale.
  raw.count = count_;
  raw.dropped = dropped_;
  std::copy(begin(), end(), raw.origins.begin());
  return raw;
}

PathOrigins PathOrigins::FromRaw(const Raw& raw, int64_t latest_possible_ns,
                                 uint32_t* invalid) {
  PathOrigins origins;
  FromRaw(raw, latest_possible_ns, invalid, &origins);
  return origins;
}

void PathOrigins::FromRaw(const Raw& raw, int64_t latest_possible_ns,
                          uint32_t* invalid, PathOrigins* out) {
  out->count_ = 0;
  out->dropped_ = raw.dropped;
  if (raw.count == 0) return;  // Most messages.
  uint32_t bad = 0;
  if (raw.count > kMaxPathOrigins) {
    // Nothing in it can be trusted to be what a sender wrote: counted as
    // the most it could have held.
    bad = kMaxPathOrigins;
  } else {
    for (uint32_t i = 0; i < raw.count; ++i) {
      const PathOrigin& origin = raw.origins[i];
      bool seen = false;
      for (const PathOrigin& kept : *out) seen |= kept.id == origin.id;
      const int64_t time = origin.monotonic_time_ns;
      if (origin.id == 0 || seen || origin.hops == 0 ||
          time > kMaxPathOriginTimeNs || time < -kMaxPathOriginTimeNs ||
          static_cast<__int128>(time) - int64_t{origin.uncertainty_us} * 1000 >
              latest_possible_ns) {
        ++bad;
        continue;
      }
      out->origins_[out->count_++] = origin;
    }
  }
  if (invalid != nullptr) *invalid += bad;
}

bool PathOrigins::operator==(const PathOrigins& other) const {
  return count_ == other.count_ && dropped_ == other.dropped_ &&
         std::equal(begin(), end(), other.begin());
}

}  // namespace aos
