#ifndef AOS_TRACING_RING_READER_H_
#define AOS_TRACING_RING_READER_H_

// Reading an event ring (event_ring.h) that another process may be writing:
// a copy of its header, names and complete events.
//
//   absl::StatusOr<RingCopy> copy = CopyRing(bytes);
//   if (!copy.ok()) { ++skipped; /* copy.status() says why */ }
//
// Never trusts the bytes: a ring of another layout version, record size or
// magic, a capacity that is no power of two or does not fit in the bytes,
// a names count past the table, is an error status naming what is wrong,
// never a crash. Events overwritten or half written while copying (a slot
// whose sequence is not the expected one before and after the copy) are
// left out and counted in `torn`.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/tracing/event_ring.h"

namespace aos::tracing {

// One event as copied out of a ring.
struct Event {
  // Its number in the ring (0 for the first the loop wrote).
  uint64_t sequence = 0;
  EventKind kind = EventKind::kNone;
  uint16_t index = 0;
  uint32_t queue_index = 0;
  int64_t monotonic_ns = 0;
  int64_t aux_ns = 0;
};

struct TrackName {
  TrackKind kind = TrackKind::kTimer;
  uint16_t index = 0;
  int32_t channel = -1;
  std::string name;
};

struct RingCopy {
  int32_t pid = 0;
  std::string boot_id;
  std::string node;
  std::string application;
  uint32_t capacity = 0;
  uint64_t written = 0;
  uint64_t trigger_count = 0;
  int64_t last_trigger_ns = 0;
  std::vector<TrackName> names;
  // Complete events, oldest first.
  std::vector<Event> events;
  // Events in the ring's window that were overwritten or half written.
  uint64_t torn = 0;
};

// Just the header's counters, cheaply (a recorder polls them): the same
// checks as CopyRing, no events copied.
struct RingCounters {
  uint64_t written = 0;
  uint64_t trigger_count = 0;
  int64_t last_trigger_ns = 0;
};
absl::StatusOr<RingCounters> ReadRingCounters(std::span<const std::byte> bytes);

// Copies the ring in `bytes` (a mapping of a ring file, or
// EventRing::memory() for RingBytes(capacity) bytes).
absl::StatusOr<RingCopy> CopyRing(std::span<const std::byte> bytes);

}  // namespace aos::tracing

#endif  // AOS_TRACING_RING_READER_H_
