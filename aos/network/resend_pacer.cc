#include "aos/network/resend_pacer.h"

#include <algorithm>

namespace aos::message_bridge {

ResendPacer::ResendPacer(uint32_t queue_size,
                         std::chrono::nanoseconds storage_duration)
    : storage_duration_(storage_duration),
      slot_share_(std::max<std::chrono::nanoseconds>(
          std::chrono::nanoseconds(1),
          storage_duration / std::max<uint32_t>(queue_size, 1))),
      sent_(std::max<uint32_t>(queue_size, 1), monotonic_clock::min_time) {}

void ResendPacer::Sent(monotonic_clock::time_point sent) {
  sent_[next_] = sent;
  next_ = (next_ + 1) % sent_.size();
  unexplained_wait_ = std::chrono::nanoseconds(0);
}

monotonic_clock::time_point ResendPacer::Refused(
    monotonic_clock::time_point now) {
  ++refusals_;
  const monotonic_clock::time_point oldest = sent_[next_];
  if (oldest != monotonic_clock::min_time && oldest + storage_duration_ > now) {
    unexplained_wait_ = std::chrono::nanoseconds(0);
    return oldest + storage_duration_;
  }
  unexplained_wait_ = unexplained_wait_.count() == 0
                          ? slot_share_
                          : std::min(storage_duration_, 2 * unexplained_wait_);
  return now + unexplained_wait_;
}

}  // namespace aos::message_bridge
