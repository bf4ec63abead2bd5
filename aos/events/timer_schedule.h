#ifndef AOS_EVENTS_TIMER_SCHEDULE_H_
#define AOS_EVENTS_TIMER_SCHEDULE_H_

// Which of many timers is due next: the user-space schedule behind the one
// kernel timer of a ShmEventLoop (aos/events/shm_event_loop.h).
//
//   class MyTimer : public TimerSchedule::Entry { ... };
//   TimerSchedule schedule;
//   MyTimer a, b;
//   schedule.Reserve();  // once per entry, when it is made
//   schedule.Reserve();
//   schedule.Schedule(&a, t + 2ms);
//   schedule.Schedule(&b, t + 1ms);
//   schedule.Earliest();  // &b: arm the kernel timer for its time()
//
// Order: by time; entries with the same time in the order they were
// scheduled (the last Schedule() of each counts). That is the order a loop
// runs timers that are due together in: the order they came due.
//
// Memory: a 4-ary heap of each entry's time and sequence with a pointer to
// it (each entry keeps its own place): sifting compares within the heap's
// own array, never through the entries, whose memory is cold when a loop
// has many timers. Reserve() makes room for one more entry and may
// allocate; Schedule(), Deschedule() and Earliest() never allocate, and
// cost O(log n) (Earliest() O(1)). Scheduling more entries at once than
// were reserved aborts. A ShmEventLoop reserves when it makes each timer,
// and timers are made before Run() only (EventLoop::AddTimer), so nothing
// the loop does with its schedule once running allocates.
//
// An entry belongs to at most one schedule and must be descheduled (or
// never scheduled) before it is destroyed; Unreserve() gives its room back.
// Not thread-safe.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "aos/time/time.h"

namespace aos {

class TimerSchedule {
 public:
  // Something scheduled: derive from it. Owned by whoever made it.
  class Entry {
   public:
    // When it is scheduled for (meaningless unless scheduled()).
    monotonic_clock::time_point time() const { return time_; }
    bool scheduled() const { return heap_index_ >= 0; }
    // Which Schedule() call placed it: later calls have larger numbers
    // (compare with TimerSchedule::next_sequence()).
    uint64_t sequence() const { return sequence_; }

   protected:
    Entry() = default;
    ~Entry() = default;

   private:
    friend class TimerSchedule;
    monotonic_clock::time_point time_ = monotonic_clock::min_time;
    // Breaks ties between equal times: later Schedule() calls get larger.
    uint64_t sequence_ = 0;
    int heap_index_ = -1;
  };

  TimerSchedule() = default;
  TimerSchedule(const TimerSchedule&) = delete;
  TimerSchedule& operator=(const TimerSchedule&) = delete;

  // Makes room for one more entry to be scheduled at once. Call when the
  // entry is made. May allocate.
  void Reserve();
  // Gives back the room of an entry that is going away (descheduled first).
  void Unreserve();

  // Schedules `entry` at `time`, replacing its earlier time if it was
  // scheduled (it then counts as scheduled now, behind entries already
  // scheduled for the same time). Never allocates; aborts if more entries
  // would be scheduled than were reserved.
  void Schedule(Entry* entry, monotonic_clock::time_point time);
  // Unschedules `entry`; nothing if it was not scheduled.
  void Deschedule(Entry* entry);

  // The entry due first (smallest time, then earliest scheduled); null if
  // none is scheduled.
  Entry* Earliest() const {
    return heap_.empty() ? nullptr : heap_.front().entry;
  }
  // The entry due second (the earliest of the root's children); null if
  // fewer than two are scheduled. O(1).
  Entry* SecondEarliest() const {
    const Slot* second = SecondSlot();
    return second == nullptr ? nullptr : second->entry;
  }
  // When the entry due second is due; nullopt if fewer than two are
  // scheduled. O(1).
  std::optional<monotonic_clock::time_point> SecondEarliestTime() const {
    const Slot* second = SecondSlot();
    if (second == nullptr) return std::nullopt;
    return second->time;
  }

  // How many entries are scheduled, and how many may be.
  size_t size() const { return heap_.size(); }
  size_t reserved() const { return reserved_; }
  // The sequence() the next Schedule() call gives: entries whose sequence()
  // is at least a value read earlier were scheduled since.
  uint64_t next_sequence() const { return next_sequence_; }

 private:
  // An entry's place in the heap: its key, copied, and the entry.
  struct Slot {
    monotonic_clock::time_point time;
    uint64_t sequence;
    Entry* entry;
  };
  // Children per node: four halves a binary heap's depth, so a sift moves
  // (and writes the place of) half as many entries, and a node's children
  // are 96 contiguous bytes.
  static constexpr size_t kArity = 4;
  static size_t Parent(size_t index) { return (index - 1) / kArity; }
  static size_t FirstChild(size_t index) { return kArity * index + 1; }
  static bool Before(const Slot& a, const Slot& b) {
    if (a.time != b.time) return a.time < b.time;
    return a.sequence < b.sequence;
  }
  // The earliest of the root's children; null if there are none.
  const Slot* SecondSlot() const {
    const size_t end = std::min(heap_.size(), FirstChild(0) + kArity);
    if (end <= 1) return nullptr;
    const Slot* second = &heap_[1];
    for (size_t i = 2; i < end; ++i) {
      if (Before(heap_[i], *second)) second = &heap_[i];
    }
    return second;
  }
  void Place(size_t index, const Slot& slot);
  // Puts `slot` in the heap at `index` (a hole, whatever it holds) and
  // moves it up (or down) to where the order needs it. `slot` must not be
  // an element of the heap.
  void SiftUp(size_t index, const Slot& slot);
  void SiftDown(size_t index, const Slot& slot);
  // SiftUp or SiftDown, whichever the order needs.
  void Sift(size_t index, const Slot& slot);

  std::vector<Slot> heap_;
  size_t reserved_ = 0;
  uint64_t next_sequence_ = 0;
};

}  // namespace aos

#endif  // AOS_EVENTS_TIMER_SCHEDULE_H_
