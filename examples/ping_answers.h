#ifndef EXAMPLES_PING_ANSWERS_H_
#define EXAMPLES_PING_ANSWERS_H_

// What ping makes of each Pong: whether it answers a ping this ping sent,
// and whether it is the first answer to it.
//
//   PingAnswers answers;
//   answers.Sent(1, send_time_ns, scheduled_ns);      // in the timer
//   switch (answers.Take(pong.value(), pong.initial_send_time())) {
//     case PingAnswers::Verdict::kAnswer: ...         // in the watcher
//   }
//
// A Pong carries the value and send time of the Ping it answers. Another
// ping on the same --shm_base sends the same values (1, 2, ...) at other
// times, and every pong there answers both pings; a second pong answers
// each ping twice. So an answer counts only if its value and send time are
// a ping this one sent, and only once.
//
// It keeps the last kRing pings (a fixed ring): an answer older than that
// cannot be checked and counts as a late answer. Nothing here allocates
// after construction, so ping's realtime handlers may call it.

#include <array>
#include <cstddef>
#include <cstdint>

namespace aos::examples {

class PingAnswers {
 public:
  static constexpr size_t kRing = 4096;

  enum class Verdict {
    // The first answer to the newest ping sent.
    kAnswer,
    // The first answer to an older ping: it came after the next ping was
    // sent (a round trip longer than the period, or a late watcher), not
    // necessarily out of order.
    kLateAnswer,
    // Not a ping this ping sent: another ping shares the channel.
    kForeign,
    // A ping already answered: more than one pong answers.
    kRepeat,
  };

  // Ping `value` (1, 2, ... in order) was sent with `send_time_ns` in it,
  // for the call scheduled at `scheduled_ns`.
  void Sent(int value, int64_t send_time_ns, int64_t scheduled_ns);

  // Classifies the Pong answering `value` sent at `send_time_ns`, and
  // counts it.
  Verdict Take(int value, int64_t send_time_ns);

  // When the ping a kAnswer or kLateAnswer of `value` answers was scheduled;
  // -1 when it is no longer in the ring.
  int64_t ScheduledNs(int value) const;

  // The newest value sent (0: none yet).
  int sent() const { return sent_; }
  // Pongs by verdict.
  int64_t answers() const { return answers_ + late_; }
  int64_t late() const { return late_; }
  int64_t foreign() const { return foreign_; }
  int64_t repeats() const { return repeats_; }

 private:
  struct Slot {
    int value = 0;
    int64_t send_time_ns = 0;
    int64_t scheduled_ns = 0;
    bool answered = false;
  };
  Slot& SlotOf(int value) { return ring_[static_cast<size_t>(value) % kRing]; }
  bool InRing(int value) const {
    return value > 0 && value <= sent_ &&
           sent_ - value < static_cast<int>(kRing);
  }

  std::array<Slot, kRing> ring_{};
  int sent_ = 0;
  int64_t answers_ = 0;
  int64_t late_ = 0;
  int64_t foreign_ = 0;
  int64_t repeats_ = 0;
};

}  // namespace aos::examples

#endif  // EXAMPLES_PING_ANSWERS_H_
