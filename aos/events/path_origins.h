#ifndef AOS_EVENTS_PATH_ORIGINS_H_
#define AOS_EVENTS_PATH_ORIGINS_H_

// Where the data in a message started, and how old it is: the origins a
// message carries beside its bytes (never in the user's flatbuffer), so that
// every callback that gets it can say how long ago the chain that produced it
// began (docs/timing_reports.md, "Path latency").
//
// An origin is a timer or phased-loop callback (node, application, callback,
// named by a compact id, PathOriginId) and the time it was scheduled for on
// the monotonic clock of the node that holds the message. A message carries
// at most kMaxPathOrigins of them, one per id:
//
//   PathOrigins origins;
//   origins.Add({.id = id, .hops = 1, .monotonic_time_ns = scheduled});
//   origins.Merge(other);       // same id: the newer time wins
//   for (const PathOrigin& origin : origins) { ... }
//
// Trivially copyable and fixed in size: copying, merging and validating
// never allocate, so they may run on a realtime path.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace aos {

// No origin's time is further than this from 0 (146 years): ages and
// translations of believed origins never overflow.
inline constexpr int64_t kMaxPathOriginTimeNs = int64_t{1} << 62;

// How many origins one message carries. Four covers a controller that fuses
// a few sensors; beyond it the newest are kept and the rest counted.
inline constexpr size_t kMaxPathOrigins = 4;

// One origin as a message carries it: 16 bytes.
struct PathOrigin {
  // PathOriginId() of the callback; never 0.
  uint32_t id = 0;
  // Messages the data crossed from the origin to here: 1 for a message the
  // origin callback itself sent, one more per callback that passed it on.
  uint16_t hops = 0;
  // How far monotonic_time_ns may be off, in microseconds (saturating at
  // 65535): 0 for an origin on this node; for one on another node, the
  // uncertainty of the message bridge's clock offset estimate when the
  // origin was translated into this node's clock.
  uint16_t uncertainty_us = 0;
  // When the origin callback was scheduled to run, in nanoseconds of the
  // monotonic clock of the node holding the message (a forwarded message's
  // origins are translated into the receiving node's clock).
  int64_t monotonic_time_ns = 0;

  bool operator==(const PathOrigin&) const = default;
};
static_assert(sizeof(PathOrigin) == 16);

// The id of a callback as an origin: a hash of where it runs and what it is,
// the same in every process and every run, so that ids in messages, reports
// and logs can be resolved to names through the timing reports of the loop
// that owns the callback. Never 0. `kind` is "timer" or "phased_loop".
uint32_t PathOriginId(std::string_view node, std::string_view application,
                      std::string_view kind, std::string_view name);

// At most kMaxPathOrigins origins with distinct ids, and how many others
// were dropped on the way here for want of room.
class PathOrigins {
 public:
  // Keeps `origin`: an origin of the same id keeps the newer time (and that
  // time's hops; at equal times, the fewer hops). When full, the oldest of
  // the kMaxPathOrigins + 1 is dropped and counted in dropped().
  void Add(const PathOrigin& origin);
  // Add()s each of `other`'s origins and adds its dropped() to ours.
  void Merge(const PathOrigins& other);
  // The same origins, each with one more hop: what a callback that got
  // these passes on in the messages it sends.
  PathOrigins NextHop() const;
  // NextHop() in place, for origins used once (no copy). On a send's path:
  // every place (slots()) gets its hop, with no branch, so it costs the same
  // few instructions whatever size() is.
  void AddHop() {
#pragma GCC unroll 4
    for (PathOrigin& origin : origins_) {
      origin.hops += origin.hops != UINT16_MAX;  // Saturating.
    }
  }
  // The same origins in another node's clock: each time plus `offset_ns`,
  // each uncertainty its own plus `uncertainty_ns` (rounded up to us,
  // saturating at 65535 us): the errors of successive translations add.
  // What forwarding between nodes does.
  PathOrigins Translated(int64_t offset_ns, int64_t uncertainty_ns) const;
  // Empty, with nothing dropped. Cheap: what lies past size() is left as
  // it was (slots()).
  void Clear() {
    count_ = 0;
    dropped_ = 0;
  }

  const PathOrigin* begin() const { return origins_.data(); }
  const PathOrigin* end() const { return origins_.data() + count_; }
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Origins left out on the way to here because a message had no room.
  uint32_t dropped() const { return dropped_; }
  // All kMaxPathOrigins places, the first size() of them the origins; those
  // past it hold whatever they held last (always some initialized value,
  // never meaningful). For code that works on whole places, with no branch
  // per origin, and masks out what is past size().
  const std::array<PathOrigin, kMaxPathOrigins>& slots() const {
    return origins_;
  }

  // The stored form, as shared memory, the network and logs carry it.
  struct Raw {
    uint32_t count;
    uint32_t dropped;
    std::array<PathOrigin, kMaxPathOrigins> origins;
  };
  static_assert(sizeof(Raw) == 8 + 16 * kMaxPathOrigins);
  Raw ToRaw() const;
  // What can be believed of `raw`, which came from outside the process:
  // origins past a count over kMaxPathOrigins, with id 0 or 0 hops, with an
  // id seen before, more than kMaxPathOriginTimeNs from 0 (no clock is), or
  // later than `latest_possible_ns` by more than their own uncertainty are
  // dropped, and counted in *invalid (if not null).
  // For a message, latest_possible_ns is its sent time: its origins came
  // before it. Never allocates.
  static PathOrigins FromRaw(const Raw& raw, int64_t latest_possible_ns,
                             uint32_t* invalid);
  // The same, into *out (no copy: for reading messages on a realtime path).
  static void FromRaw(const Raw& raw, int64_t latest_possible_ns,
                      uint32_t* invalid, PathOrigins* out);

  // The same origins in the same order, and the same dropped count.
  bool operator==(const PathOrigins& other) const;

 private:
  std::array<PathOrigin, kMaxPathOrigins> origins_{};
  uint32_t count_ = 0;
  uint32_t dropped_ = 0;
};

}  // namespace aos

#endif  // AOS_EVENTS_PATH_ORIGINS_H_
