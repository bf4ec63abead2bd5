#include "aos/events/event_scheduler.h"

#include <algorithm>

#include "glog/logging.h"

namespace aos {

void EventScheduler::Reserve(size_t count) {
  reserved_ += count;
  heap_.reserve(reserved_);
}

bool EventScheduler::Before(const Event* a, const Event* b) const {
  if (a->time_ != b->time_) return a->time_ < b->time_;
  return a->sequence_ < b->sequence_;
}

void EventScheduler::Place(size_t index, Event* event) {
  heap_[index] = event;
  event->heap_index_ = static_cast<int>(index);
}

void EventScheduler::SiftUp(size_t index) {
  Event* event = heap_[index];
  while (index > 0) {
    const size_t parent = (index - 1) / 2;
    if (!Before(event, heap_[parent])) break;
    Place(index, heap_[parent]);
    index = parent;
  }
  Place(index, event);
}

void EventScheduler::SiftDown(size_t index) {
  Event* event = heap_[index];
  const size_t size = heap_.size();
  while (true) {
    size_t child = 2 * index + 1;
    if (child >= size) break;
    if (child + 1 < size && Before(heap_[child + 1], heap_[child])) ++child;
    if (!Before(heap_[child], event)) break;
    Place(index, heap_[child]);
    index = child;
  }
  Place(index, event);
}

void EventScheduler::RemoveAt(size_t index) {
  Event* removed = heap_[index];
  Event* last = heap_.back();
  heap_.pop_back();
  removed->heap_index_ = -1;
  if (removed == last) return;
  Place(index, last);
  SiftDown(index);
  SiftUp(static_cast<size_t>(last->heap_index_));
}

void EventScheduler::Schedule(Event* event, monotonic_clock::time_point time) {
  Deschedule(event);
  CHECK_LT(heap_.size(), reserved_)
      << "EventScheduler: more events scheduled than reserved; call "
         "Reserve() when creating an event source";
  event->time_ = time;
  event->sequence_ = next_sequence_++;
  heap_.push_back(event);
  event->heap_index_ = static_cast<int>(heap_.size() - 1);
  SiftUp(heap_.size() - 1);
}

void EventScheduler::Deschedule(Event* event) {
  if (event->heap_index_ < 0) return;
  RemoveAt(static_cast<size_t>(event->heap_index_));
}

void EventScheduler::AdvanceTime(monotonic_clock::duration duration) {
  CHECK_GE(duration.count(), 0) << "simulated time cannot go backwards";
  now_ += duration;
}

bool EventScheduler::RunOne(monotonic_clock::time_point end) {
  if (heap_.empty()) return false;
  Event* event = heap_.front();
  // Saturate: an event at max_time ("never") must not wrap around.
  const monotonic_clock::time_point due =
      event->time_ > monotonic_clock::max_time - wakeup_delay_
          ? monotonic_clock::max_time
          : event->time_ + wakeup_delay_;
  const monotonic_clock::time_point run_time = std::max(now_, due);
  if (run_time > end) return false;
  RemoveAt(0);
  now_ = run_time;
  event->Handle();
  return true;
}

void EventScheduler::RunFor(monotonic_clock::duration duration) {
  const monotonic_clock::time_point end = now_ + duration;
  while (!exit_ && RunOne(end)) {
  }
  if (!exit_) now_ = std::max(now_, end);
  exit_ = false;
}

void EventScheduler::Run() {
  while (!exit_ && RunOne(monotonic_clock::max_time)) {
  }
  exit_ = false;
}

}  // namespace aos
