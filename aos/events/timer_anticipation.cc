#include "aos/events/timer_anticipation.h"

#include <algorithm>

#include "glog/logging.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace aos {
namespace {

// The quantile estimate's steps: up when a wakeup came later than the lead,
// down when it came within it. Three times as far up as down settles where
// one wakeup in four is later than the lead (the 75th percentile).
constexpr int64_t kStepUpNs = 1'500;
constexpr int64_t kStepDownNs = 500;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace

TimerAnticipation::TimerAnticipation(bool automatic, int64_t lead_ns,
                                     TimerAnticipationCounters* counters)
    : counters_(counters) {
  CHECK(counters != nullptr);
  CHECK(automatic || (lead_ns > 0 && lead_ns <= kMaxFixedLeadNs)) << lead_ns;
  counters_->automatic = automatic;
  counters_->lead_ns = automatic ? 0 : lead_ns;
}

monotonic_clock::time_point TimerAnticipation::KernelTime(
    monotonic_clock::time_point due, monotonic_clock::time_point since) const {
  const int64_t lead = lead_ns();
  if (lead <= 0 || (due - since).count() < kMinWaitPerLead * lead) return due;
  return due - std::chrono::nanoseconds(lead);
}

void TimerAnticipation::Learn(int64_t lateness_ns) {
  if (counters_ == nullptr || !counters_->automatic) return;
  int64_t& lead = counters_->lead_ns;
  lead = lateness_ns > lead ? std::min(lead + kStepUpNs, kMaxAutomaticLeadNs)
                            : std::max<int64_t>(lead - kStepDownNs, 0);
}

void TimerAnticipation::Woke(monotonic_clock::time_point armed,
                             monotonic_clock::time_point now) {
  if (counters_ == nullptr) return;
  ++counters_->wakeups;
  Learn((now - armed).count());
}

monotonic_clock::time_point TimerAnticipation::WaitUntil(
    monotonic_clock::time_point due) {
  const monotonic_clock::time_point start = monotonic_clock::now();
  monotonic_clock::time_point clock = start;
  while (clock < due) {
    CpuRelax();
    clock = monotonic_clock::now();
  }
  if (counters_ != nullptr && start < due) {
    ++counters_->early_wakeups;
    counters_->spin_ns += static_cast<uint64_t>((clock - start).count());
  }
  return clock;
}

}  // namespace aos
