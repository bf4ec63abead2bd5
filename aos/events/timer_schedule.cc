#include "aos/events/timer_schedule.h"

#include <algorithm>

#include "glog/logging.h"

namespace aos {

void TimerSchedule::Reserve() {
  ++reserved_;
  // Geometric growth: making n entries one by one copies O(n) slots.
  if (reserved_ > heap_.capacity()) {
    heap_.reserve(std::max<size_t>(reserved_, 2 * heap_.capacity()));
  }
}

void TimerSchedule::Unreserve() {
  CHECK_GT(reserved_, 0u) << "TimerSchedule: Unreserve() without Reserve()";
  --reserved_;
  CHECK_LE(heap_.size(), reserved_)
      << "TimerSchedule: an entry went away while scheduled";
}

void TimerSchedule::Place(size_t index, const Slot& slot) {
  heap_[index] = slot;
  slot.entry->heap_index_ = static_cast<int>(index);
}

void TimerSchedule::SiftUp(size_t index, const Slot& slot) {
  while (index > 0) {
    const size_t parent = Parent(index);
    if (!Before(slot, heap_[parent])) break;
    Place(index, heap_[parent]);
    index = parent;
  }
  Place(index, slot);
}

void TimerSchedule::SiftDown(size_t index, const Slot& slot) {
  const size_t size = heap_.size();
  while (true) {
    const size_t first = FirstChild(index);
    if (first >= size) break;
    const size_t end = std::min(size, first + kArity);
    size_t child = first;
    for (size_t other = first + 1; other < end; ++other) {
      if (Before(heap_[other], heap_[child])) child = other;
    }
    if (!Before(heap_[child], slot)) break;
    Place(index, heap_[child]);
    index = child;
  }
  Place(index, slot);
}

void TimerSchedule::Sift(size_t index, const Slot& slot) {
  if (index > 0 && Before(slot, heap_[Parent(index)])) {
    SiftUp(index, slot);
  } else {
    SiftDown(index, slot);
  }
}

void TimerSchedule::Schedule(Entry* entry, monotonic_clock::time_point time) {
  entry->time_ = time;
  entry->sequence_ = next_sequence_++;
  // The slot is built here and passed on, not re-read from the heap: a
  // read of fields just written one by one waits for the writes to reach
  // the cache, and with them every earlier write (cold ones too).
  const Slot slot{time, entry->sequence_, entry};
  if (entry->heap_index_ >= 0) {
    // Moved in place: earlier goes up, later (or the same time, now behind
    // its equals) goes down.
    Sift(static_cast<size_t>(entry->heap_index_), slot);
    return;
  }
  CHECK_LT(heap_.size(), reserved_)
      << "TimerSchedule: more entries scheduled than reserved; call "
         "Reserve() when making an entry";
  // Within the capacity Reserve() made: no allocation.
  heap_.push_back(slot);
  SiftUp(heap_.size() - 1, slot);
}

void TimerSchedule::Deschedule(Entry* entry) {
  if (entry->heap_index_ < 0) return;
  const size_t index = static_cast<size_t>(entry->heap_index_);
  entry->heap_index_ = -1;
  const Slot last = heap_.back();
  heap_.pop_back();
  if (last.entry == entry) return;
  Sift(index, last);
}

}  // namespace aos
