#ifndef AOS_EVENTS_TIMING_ENTRY_H_
#define AOS_EVENTS_TIMING_ENTRY_H_

// What an event loop measures about each of its timers, phased loops,
// watchers, fetchers and senders during one report window. The exact meaning
// of every figure is in docs/timing_reports.md.
//
// Recording never allocates and costs a statistic update plus a histogram
// increment (see //aos/events:timing_benchmark). Everything is reset after
// each report.

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "aos/events/event_loop_generated.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/time/time.h"

namespace aos::timing {

// A latency or duration: the AOS-shaped statistic (seconds) and the
// histogram (nanoseconds) of the same samples.
class LatencyRecorder {
 public:
  // Records one sample. Negative samples count as 0 in the histogram (and
  // stay negative in the statistic, so a clock problem stays visible).
  void Record(std::chrono::nanoseconds sample) noexcept {
    statistic_.Add(DurationInSeconds(sample));
    histogram_.Record(sample.count());
  }

  void Reset() noexcept {
    statistic_.Reset();
    histogram_.Reset();
  }

  const RunningStatistic& statistic() const { return statistic_; }
  const LatencyHistogram& histogram() const { return histogram_; }

 private:
  RunningStatistic statistic_;
  LatencyHistogram histogram_;
};

// A timer or phased loop.
struct TimerTiming {
  // Shown in reports; set with set_name() (before Run(): a long name may
  // allocate).
  std::string name;
  // Handler calls.
  uint32_t count = 0;
  // Handler start - the time the call was scheduled for.
  LatencyRecorder wakeup_latency;
  // Handler end - handler start.
  LatencyRecorder handler_time;
  // Scheduled times that got no call because the loop was late.
  uint32_t missed_cycles = 0;

  void Reset() noexcept {
    count = 0;
    wakeup_latency.Reset();
    handler_time.Reset();
    missed_cycles = 0;
  }
};

// A watcher.
struct WatcherTiming {
  // The channel's index in the configuration.
  int channel_index = -1;
  uint32_t count = 0;
  // Handler start - the message's monotonic_sent_time.
  LatencyRecorder wakeup_latency;
  LatencyRecorder handler_time;
  // Messages overwritten before the watcher got to them.
  uint32_t lost_messages = 0;

  void Reset() noexcept {
    count = 0;
    wakeup_latency.Reset();
    handler_time.Reset();
    lost_messages = 0;
  }
};

// A fetcher.
struct FetcherTiming {
  int channel_index = -1;
  // Successful fetches (ones that returned a new message).
  uint32_t count = 0;
  // Fetch time - the message's monotonic_sent_time.
  LatencyRecorder latency;
  // Messages skipped because the fetcher fell behind the queue.
  uint32_t lost_messages = 0;

  void Reset() noexcept {
    count = 0;
    latency.Reset();
    lost_messages = 0;
  }
};

// One counter per aos.timing.SendError value.
inline constexpr size_t kSendErrorCount =
    static_cast<size_t>(SendError::MAX) + 1;

// A sender.
struct SenderTiming {
  int channel_index = -1;
  // Messages sent.
  uint32_t count = 0;
  // Sizes of the messages sent, in bytes.
  RunningStatistic size;
  // Failed sends, indexed by aos::timing::SendError.
  std::array<uint32_t, kSendErrorCount> error_counts = {};

  void Reset() noexcept {
    count = 0;
    size.Reset();
    error_counts.fill(0);
  }
};

}  // namespace aos::timing

#endif  // AOS_EVENTS_TIMING_ENTRY_H_
