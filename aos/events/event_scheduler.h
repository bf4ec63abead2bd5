#ifndef AOS_EVENTS_EVENT_SCHEDULER_H_
#define AOS_EVENTS_EVENT_SCHEDULER_H_

// A deterministic queue of events on one simulated clock: the heart of the
// simulated event loop.
//
//   EventScheduler scheduler;
//   scheduler.Reserve(1);
//   scheduler.Schedule(&my_event, scheduler.now() + std::chrono::seconds(1));
//   scheduler.RunFor(std::chrono::seconds(2));  // runs my_event.Handle()
//
// Events run in order of their time, and events with the same time in the
// order they were scheduled. Running an event sets now() to its time plus
// the wakeup delay (never backwards: a late event runs at the current time).
// A handler may move now() forward with AdvanceTime() to model time spent.
//
// Memory: Reserve() room for every event up front (setup may allocate);
// Schedule, Deschedule and running never allocate. Not thread-safe.

#include <cstdint>
#include <vector>

#include "aos/time/time.h"

namespace aos {

class EventScheduler {
 public:
  // Something that happens at a time. Owned by its creator, who must
  // Deschedule it (or let it run) before destroying it.
  class Event {
   public:
    virtual ~Event() = default;
    // Runs the event; now() is its run time.
    virtual void Handle() = 0;

    // When it is scheduled for (meaningless unless scheduled()).
    monotonic_clock::time_point scheduled_time() const { return time_; }
    bool scheduled() const { return heap_index_ >= 0; }

   private:
    friend class EventScheduler;
    monotonic_clock::time_point time_ = monotonic_clock::min_time;
    uint64_t sequence_ = 0;
    int heap_index_ = -1;
  };

  // Makes room for `count` more events to be scheduled at once. Call when
  // an event source is created. May allocate.
  void Reserve(size_t count);

  // Schedules `event` at `time` (replacing any earlier schedule). A time in
  // the past runs as soon as the events before it are done. Aborts if more
  // events are scheduled than were reserved.
  void Schedule(Event* event, monotonic_clock::time_point time);
  // Unschedules `event`; nothing if it was not scheduled.
  void Deschedule(Event* event);

  // The simulated time.
  monotonic_clock::time_point now() const { return now_; }

  // Every wakeup runs this much after its scheduled time (an injected
  // scheduling delay, to test latency figures). Default zero.
  void set_wakeup_delay(monotonic_clock::duration delay) {
    wakeup_delay_ = delay;
  }

  // Moves now() forward by `duration`, as if the running handler took that
  // long. Events that became due run after it, late.
  void AdvanceTime(monotonic_clock::duration duration);

  // Runs every event due up to now() + `duration`, then sets now() to that
  // time exactly (unless Exit() was called: then now() stays at the last
  // event's end).
  void RunFor(monotonic_clock::duration duration);
  // Runs events until none is left or Exit() is called.
  void Run();
  // Makes RunFor/Run return once the current event's handler returns (or,
  // called before them, as soon as they start).
  void Exit() { exit_ = true; }

  // How many events are scheduled.
  size_t size() const { return heap_.size(); }

 private:
  // Runs the earliest event if it would run at or before `end`.
  bool RunOne(monotonic_clock::time_point end);

  bool Before(const Event* a, const Event* b) const;
  void SiftUp(size_t index);
  void SiftDown(size_t index);
  void Place(size_t index, Event* event);
  void RemoveAt(size_t index);

  std::vector<Event*> heap_;
  size_t reserved_ = 0;
  uint64_t next_sequence_ = 0;
  monotonic_clock::time_point now_ = monotonic_clock::epoch();
  monotonic_clock::duration wakeup_delay_ = monotonic_clock::duration::zero();
  bool exit_ = false;
};

}  // namespace aos

#endif  // AOS_EVENTS_EVENT_SCHEDULER_H_
