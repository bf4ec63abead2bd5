#include "tools/netdelay/delay_line.h"

#include "glog/logging.h"

namespace aos::netdelay {

DelayLine::DelayLine(size_t capacity) : entries_(capacity) {
  CHECK_GT(capacity, 0u) << ": a DelayLine needs room for one packet";
}

bool DelayLine::Push(uint32_t id, monotonic_clock::time_point deadline) {
  if (full()) return false;
  size_t tail = head_ + size_;
  if (tail >= entries_.size()) tail -= entries_.size();
  entries_[tail] = Entry{id, deadline};
  ++size_;
  return true;
}

void DelayLine::Pop() {
  CHECK(!empty()) << ": Pop() on an empty DelayLine";
  if (++head_ == entries_.size()) head_ = 0;
  --size_;
}

}  // namespace aos::netdelay
