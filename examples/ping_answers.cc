#include "examples/ping_answers.h"

namespace aos::examples {

void PingAnswers::Sent(int value, int64_t send_time_ns, int64_t scheduled_ns) {
  sent_ = value;
  SlotOf(value) = {.value = value,
                   .send_time_ns = send_time_ns,
                   .scheduled_ns = scheduled_ns,
                   .answered = false};
}

PingAnswers::Verdict PingAnswers::Take(int value, int64_t send_time_ns) {
  if (value <= 0 || value > sent_) {
    ++foreign_;
    return Verdict::kForeign;
  }
  if (!InRing(value)) {
    // Too old to check: ours as far as anyone can tell.
    ++late_;
    return Verdict::kLateAnswer;
  }
  Slot& slot = SlotOf(value);
  if (slot.send_time_ns != send_time_ns) {
    ++foreign_;
    return Verdict::kForeign;
  }
  if (slot.answered) {
    ++repeats_;
    return Verdict::kRepeat;
  }
  slot.answered = true;
  if (value != sent_) {
    ++late_;
    return Verdict::kLateAnswer;
  }
  ++answers_;
  return Verdict::kAnswer;
}

int64_t PingAnswers::ScheduledNs(int value) const {
  if (!InRing(value)) return -1;
  return ring_[static_cast<size_t>(value) % kRing].scheduled_ns;
}

}  // namespace aos::examples
