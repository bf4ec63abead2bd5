#ifndef AOS_NETWORK_STAMPED_INBOX_H_
#define AOS_NETWORK_STAMPED_INBOX_H_

// A fixed-capacity queue of values, each with a time stamp, that one thread
// (Cyclone's listener) pushes into and another (the event loop) drains:
// the message bridge takes clock probes in the thread that received them,
// stamped there, and handles them in its loop.
//
//   StampedInbox<aos_bridge_Probe, 64> inbox;
//   inbox.Push(probe, now_ns);                 // Cyclone's thread
//   std::array<StampedInbox<...>::Entry, 64> entries;
//   const size_t n = inbox.Drain(&entries);    // the loop's thread
//
// Never allocates; Push() and Drain() take one mutex, briefly.

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace aos::message_bridge {

template <typename T, size_t kCapacity>
class StampedInbox {
 public:
  struct Entry {
    T value;
    int64_t stamp_ns;
  };

  // Adds `value` stamped `stamp_ns`; false (and nothing added) when the
  // inbox already holds kCapacity entries: the newest is dropped.
  bool Push(const T& value, int64_t stamp_ns) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (count_ == kCapacity) {
      ++dropped_;
      return false;
    }
    entries_[(first_ + count_) % kCapacity] = Entry{value, stamp_ns};
    ++count_;
    return true;
  }

  // Moves every entry, oldest first, into `out`; returns how many.
  size_t Drain(std::array<Entry, kCapacity>* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t count = count_;
    for (size_t i = 0; i < count; ++i) {
      (*out)[i] = entries_[(first_ + i) % kCapacity];
    }
    first_ = (first_ + count) % kCapacity;
    count_ = 0;
    return count;
  }

  // Values Push() refused because the inbox was full.
  uint64_t dropped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return dropped_;
  }

 private:
  mutable std::mutex mutex_;
  std::array<Entry, kCapacity> entries_{};
  size_t first_ = 0;
  size_t count_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_STAMPED_INBOX_H_
