#include "aos/network/forwarded_origins.h"

#include <algorithm>

namespace aos::message_bridge {
namespace {

static_assert(sizeof(aos_bridge_Message::origins) /
                  sizeof(aos_bridge_Message::origins[0]) ==
              kMaxPathOrigins);

// No clock reads further from zero than this (about 146 years): a time
// beyond it is not one, and keeping times within it keeps every sum below
// (translation, age, a time minus its uncertainty) inside int64.
constexpr int64_t kFarthest = int64_t{1} << 62;

bool Readable(__int128 time_ns) {
  return time_ns >= -kFarthest && time_ns <= kFarthest;
}

}  // namespace

void OriginsToWire(const PathOrigins& origins, aos_bridge_Message* message) {
  message->origin_count = static_cast<uint32_t>(origins.size());
  message->origins_dropped = origins.dropped();
  uint32_t i = 0;
  for (const PathOrigin& origin : origins) {
    message->origins[i++] = {.id = origin.id,
                             .hops = origin.hops,
                             .uncertainty_us = origin.uncertainty_us,
                             .monotonic_time_ns = origin.monotonic_time_ns};
  }
  for (; i < kMaxPathOrigins; ++i) message->origins[i] = {};
}

PathOrigins::Raw OriginsFromWire(const aos_bridge_Message& message) {
  PathOrigins::Raw raw{};
  raw.count = message.origin_count;
  raw.dropped = message.origins_dropped;
  for (uint32_t i = 0; i < kMaxPathOrigins; ++i) {
    const aos_bridge_Origin& origin = message.origins[i];
    raw.origins[i] = {.id = origin.id,
                      .hops = origin.hops,
                      .uncertainty_us = origin.uncertainty_us,
                      .monotonic_time_ns = origin.monotonic_time_ns};
  }
  return raw;
}

ReceivedOrigins ReceiveOrigins(const PathOrigins::Raw& raw,
                               const ClockOffsetEstimator::Estimate& estimate,
                               int64_t now_ns) {
  ReceivedOrigins received;
  // Times no clock reads, on the sender's clock or translated into ours,
  // are impossible origins: id 0 has FromRaw drop and count them. In
  // __int128: the offset may be anything forged probes made it.
  const bool translating = estimate.valid && estimate.offset_ns != INT64_MIN;
  PathOrigins::Raw checked = raw;
  if (checked.count <= kMaxPathOrigins) {
    for (uint32_t i = 0; i < checked.count; ++i) {
      PathOrigin& origin = checked.origins[i];
      const __int128 local =
          static_cast<__int128>(origin.monotonic_time_ns) - estimate.offset_ns;
      if (!Readable(origin.monotonic_time_ns) ||
          (estimate.valid && (!translating || !Readable(local)))) {
        origin.id = 0;
      }
    }
  }
  // What can be true whatever the time (the times are checked once in our
  // clock, below).
  const PathOrigins believed =
      PathOrigins::FromRaw(checked, kFarthest, &received.invalid);
  if (!translating) {
    // None with a valid estimate: the offset made every time unreadable.
    received.without_offset = static_cast<uint32_t>(believed.size());
    received.origins = PathOrigins::FromRaw(
        {.count = 0, .dropped = believed.dropped(), .origins = {}}, 0, nullptr);
    return received;
  }
  // Every time, translated, is Readable (above), so neither the
  // translation nor FromRaw's check overflows; an origin's uncertainty
  // saturates at UINT16_MAX us anyway.
  const int64_t uncertainty_ns = std::clamp<int64_t>(
      estimate.uncertainty_ns, 0, int64_t{UINT16_MAX} * 1000);
  received.origins = PathOrigins::FromRaw(
      believed.Translated(-estimate.offset_ns, uncertainty_ns).ToRaw(), now_ns,
      &received.invalid);
  return received;
}

}  // namespace aos::message_bridge
