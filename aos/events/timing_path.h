#ifndef AOS_EVENTS_TIMING_PATH_H_
#define AOS_EVENTS_TIMING_PATH_H_

// What a watcher or fetcher measures of the paths its data came by: per
// origin (and number of hops), how old the data was when a callback got it,
// against a deadline if one was declared (docs/timing_reports.md, "Path
// latency"). And what a sender measures of the origins it passed on.
//
//   timing::PathTimings paths;
//   paths.set_deadline(std::chrono::milliseconds(5));
//   paths.Record(message_origins, callback_start);   // realtime-safe
//   ...
//   summary.Merge(paths);   // a tool adding up windows
//
// Fixed in size (kMaxPathsPerEntry paths): recording, merging and resetting
// never allocate.

#include <array>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "aos/events/latency_recorder.h"
#include "aos/events/path_origins.h"
#include "aos/time/time.h"

namespace aos::timing {

// How many distinct (origin, hops) paths one watcher or fetcher reports; the
// samples of others are counted in PathTimings::dropped_samples().
inline constexpr size_t kMaxPathsPerEntry = 4;

// The data that reached one watcher or fetcher from one origin over one
// number of hops.
struct PathTiming {
  uint32_t origin_id = 0;
  uint32_t hops = 0;
  // Callback start - the origin's scheduled time, in this node's clock.
  LatencyRecorder age;
  // Ages over the entry's deadline.
  uint64_t deadline_overruns = 0;
  // The largest uncertainty of the translation of the origin's time into
  // this node's clock (forwarded messages), ns; 0 for local origins.
  int64_t max_uncertainty_ns = 0;

  uint64_t count() const { return age.statistic().count(); }
  void Merge(const PathTiming& other) noexcept;
};

// Every path of one watcher or fetcher.
class PathTimings {
 public:
  // Ages over `deadline` count as overruns; zero or negative: no deadline.
  void set_deadline(std::chrono::nanoseconds deadline) {
    deadline_ns_ = deadline.count() > 0 ? deadline.count() : -1;
  }
  // -1: none.
  int64_t deadline_ns() const { return deadline_ns_; }

  // Records, for each of `origins`, the age `callback_start` - its time
  // under its (origin, hops) path, and its uncertainty; a path beyond
  // kMaxPathsPerEntry adds to dropped_samples() instead. Never allocates.
  // Returns the largest age over the deadline (ns), 0 if none was.
  int64_t Record(const PathOrigins& origins,
                 monotonic_clock::time_point callback_start) noexcept;
  // Origins a message claimed that could not be true (PathOrigins::FromRaw).
  void CountInvalid(uint32_t invalid) noexcept { invalid_origins_ += invalid; }

  // Adds `other`'s paths (by origin and hops) and counts. A deadline set
  // on either is kept (ours first).
  void Merge(const PathTimings& other) noexcept;
  // Forgets every path and count of the window; keeps the deadline.
  void Reset() noexcept;

  const PathTiming* begin() const { return paths_.data(); }
  const PathTiming* end() const { return paths_.data() + count_; }
  size_t size() const { return count_; }
  uint64_t dropped_samples() const { return dropped_samples_; }
  uint64_t invalid_origins() const { return invalid_origins_; }

  // For decoding a report: adds a path as the report carried it (false,
  // and counted as dropped, if full).
  bool AddDecoded(const PathTiming& path);
  void AddDecodedCounts(uint64_t dropped_samples, uint64_t invalid_origins) {
    dropped_samples_ += dropped_samples;
    invalid_origins_ += invalid_origins;
  }
  void set_deadline_ns(int64_t deadline_ns) { deadline_ns_ = deadline_ns; }

 private:
  // The path for (origin_id, hops), made if there is room; null if not.
  PathTiming* Find(uint32_t origin_id, uint32_t hops) noexcept;

  std::array<PathTiming, kMaxPathsPerEntry> paths_{};
  size_t count_ = 0;
  uint64_t dropped_samples_ = 0;
  uint64_t invalid_origins_ = 0;
  int64_t deadline_ns_ = -1;
};

// The origins one sender passed on: per (origin, hops), how many messages
// carried it. What lets a tool follow a path back hop by hop.
struct SentOriginCount {
  uint32_t origin_id = 0;
  uint32_t hops = 0;
  uint64_t count = 0;
};

class SentOrigins {
 public:
  // Counts each of `origins` (as sent). Never allocates. A sender's
  // messages mostly carry the same origins (ids and hops) in the same order
  // as its last one: such a message costs one compare per origin and one
  // increment per origin, with no search and no branch per origin (what
  // keeps a send with kMaxPathOrigins origins cheap). Any other goes the
  // longer way, searching each origin's count.
  void Record(const PathOrigins& origins) noexcept {
    if (!RecordAsLast(origins)) RecordNew(origins);
  }
  void Merge(const SentOrigins& other) noexcept;
  void Reset() noexcept { *this = SentOrigins(); }

  const SentOriginCount* begin() const { return origins_.data(); }
  const SentOriginCount* end() const { return origins_.data() + count_; }
  size_t size() const { return count_; }
  // Origins left out of sent messages for want of room (beyond
  // kMaxPathOrigins), and sent ones beyond what this list holds.
  uint64_t dropped() const { return dropped_; }
  void AddDropped(uint64_t dropped) { dropped_ += dropped; }
  // For decoding a report.
  void AddDecoded(const SentOriginCount& origin);

 private:
  // How many (origin, hops) this list holds.
  static constexpr size_t kCapacity = 2 * kMaxPathOrigins;
  // last_size_ when no message is one RecordAsLast() may count.
  static constexpr size_t kNoLast = kMaxPathOrigins + 1;
  // The first 8 bytes of a PathOrigin (id, hops, uncertainty), and the bits
  // of them that are its id and hops: what a count is kept for.
  static uint64_t Head(const PathOrigin& origin) noexcept {
    return std::bit_cast<std::array<uint64_t, 2>>(origin)[0];
  }
  static constexpr uint64_t kIdHopsBits =
      std::bit_cast<std::array<uint64_t, 2>>(
          PathOrigin{.id = UINT32_MAX, .hops = UINT16_MAX})[0];

  // Counts `origins` if they are the last message's ids and hops, in the
  // same order; false (nothing counted) if not. The last message's
  // kMaxPathOrigins heads, masks and slots are compared and incremented
  // whole, past its size too (masks 0, slots kCapacity: the sink), so
  // the work does not depend on the size: what lies past origins.size() is
  // read (PathOrigins::slots()) but masked out.
  bool RecordAsLast(const PathOrigins& origins) noexcept {
    if (origins.size() != last_size_) return false;
    const std::array<PathOrigin, kMaxPathOrigins>& sent = origins.slots();
    uint64_t differ = 0;
#pragma GCC unroll 4
    for (size_t i = 0; i < kMaxPathOrigins; ++i) {
      differ |= (Head(sent[i]) ^ last_heads_[i]) & last_masks_[i];
    }
    if (differ != 0) return false;
#pragma GCC unroll 4
    for (size_t i = 0; i < kMaxPathOrigins; ++i) {
      ++origins_[last_slots_[i]].count;
    }
    return true;
  }
  // Counts `origins` one by one, and remembers them as the last message.
  void RecordNew(const PathOrigins& origins) noexcept;
  // Adds `count` to (origin_id, hops), made if there is room; returns its
  // slot, or kCapacity (the sink) if it was dropped.
  size_t Add(uint32_t origin_id, uint32_t hops, uint64_t count) noexcept;

  // The counts, and one more past them (origins_[kCapacity]): the sink, which
  // RecordAsLast() increments for the places past the last message's size.
  // Never read.
  std::array<SentOriginCount, kCapacity + 1> origins_{};
  size_t count_ = 0;
  uint64_t dropped_ = 0;
  // The last message recorded, as RecordAsLast() compares it: its size
  // (kNoLast when none, or when one of its origins was dropped: dropped()
  // must grow each time such a message is sent), each origin's head, a mask
  // of its id and hops bits (0 past its size), and the slot its count is
  // kept in (the sink past its size).
  size_t last_size_ = kNoLast;
  std::array<uint64_t, kMaxPathOrigins> last_heads_{};
  std::array<uint64_t, kMaxPathOrigins> last_masks_{};
  std::array<uint8_t, kMaxPathOrigins> last_slots_{};
};

}  // namespace aos::timing

#endif  // AOS_EVENTS_TIMING_PATH_H_
