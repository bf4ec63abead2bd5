#ifndef AOS_NETWORK_RESEND_PACER_H_
#define AOS_NETWORK_RESEND_PACER_H_

// When a refused re-send may be tried again. A channel refuses a send
// (kMessagesSentTooFast) while the message it would replace, queue_size
// sends back, is younger than the channel's storage duration. Messages
// forwarded on a reliable channel can arrive faster than that although
// their source sent them within the rate: after a stall anywhere upstream
// (a late bridge, DDS re-sending what was lost), the backlog arrives at
// once. The receiving bridge, the only sender on such a channel, keeps the
// sent times of its last queue_size re-sends here and retries a refused one
// when the oldest has aged out, instead of dropping it.
//
//   ResendPacer pacer(queue_size, storage_duration);   // before Run()
//   if (sender->Send(...) == kOk) pacer.Sent(sender->monotonic_sent_time());
//   else timer->Schedule(pacer.Refused(monotonic_clock::now()));
//
// Allocates its ring when made, never after. Not thread-safe: the bridge
// calls it under its receiver's lock.

#include <chrono>
#include <cstdint>
#include <vector>

#include "aos/time/time.h"

namespace aos::message_bridge {

class ResendPacer {
 public:
  // For a channel that holds `queue_size` (>= 1) messages within
  // `storage_duration` (> 0).
  ResendPacer(uint32_t queue_size, std::chrono::nanoseconds storage_duration);

  // A re-send went out, sent at `sent` (RawSender::monotonic_sent_time()).
  void Sent(monotonic_clock::time_point sent);

  // A re-send was refused as too fast at `now`: when to try it again. When
  // the last queue_size re-sends explain the refusal, that is when the
  // oldest of them is storage_duration old, the first moment the channel
  // takes one more. When they do not (the channel holds messages this pacer
  // never saw: a restarted bridge's), the wait starts at one slot's share
  // (storage_duration / queue_size) and doubles with every refusal in a row,
  // up to storage_duration, after which the channel has surely made room.
  monotonic_clock::time_point Refused(monotonic_clock::time_point now);

  // Whether a refused re-send that is `late` behind its source's send (its
  // one-way latency so far) is worth holding: not once it is later than the
  // storage duration. A stream that late has come faster than the channel
  // takes it for longer than pacing can make up (a source at the channel's
  // full rate leaves no room to drain a backlog): holding on would delay
  // everything after it further, until the reader's history overflows, so
  // it is dropped instead, and the stream catches up.
  bool WorthHolding(std::chrono::nanoseconds late) const {
    return late <= storage_duration_;
  }

  // Re-sends refused since construction (each refusal of a retry too).
  uint64_t refusals() const { return refusals_; }

 private:
  const std::chrono::nanoseconds storage_duration_;
  const std::chrono::nanoseconds slot_share_;
  // The last queue_size sent times, oldest at next_ (min_time: none yet).
  std::vector<monotonic_clock::time_point> sent_;
  size_t next_ = 0;
  // The wait after the last unexplained refusal in a row (0: none).
  std::chrono::nanoseconds unexplained_wait_{0};
  uint64_t refusals_ = 0;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_RESEND_PACER_H_
