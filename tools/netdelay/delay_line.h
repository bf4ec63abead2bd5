#ifndef TOOLS_NETDELAY_DELAY_LINE_H_
#define TOOLS_NETDELAY_DELAY_LINE_H_

// The packets netdelay holds: a first-in first-out line of (packet id,
// release deadline) with a capacity fixed at construction. One fixed delay
// makes deadlines rise with arrival, so the front is always the next packet
// due and releasing from the front keeps the order packets arrived in.
//
//   DelayLine line(queue_maxlen);
//   line.Push(id, arrival + delay);
//   while (!line.empty() && line.front().deadline <= now) {
//     Accept(line.front().id);
//     line.Pop();
//   }

#include <cstddef>
#include <cstdint>
#include <vector>

#include "aos/time/time.h"

namespace aos::netdelay {

class DelayLine {
 public:
  struct Entry {
    uint32_t id;
    monotonic_clock::time_point deadline;
  };

  // Allocates room for `capacity` (> 0) entries; nothing allocates after.
  explicit DelayLine(size_t capacity);

  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == entries_.size(); }
  size_t size() const { return size_; }

  // Appends at the back. Returns false, changing nothing, when full.
  bool Push(uint32_t id, monotonic_clock::time_point deadline);

  // The oldest entry. Only when !empty().
  const Entry& front() const { return entries_[head_]; }
  // Removes the oldest entry. Only when !empty().
  void Pop();

 private:
  std::vector<Entry> entries_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace aos::netdelay

#endif  // TOOLS_NETDELAY_DELAY_LINE_H_
