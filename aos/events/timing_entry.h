#ifndef AOS_EVENTS_TIMING_ENTRY_H_
#define AOS_EVENTS_TIMING_ENTRY_H_

// What is measured about each timer, phased loop, watcher, fetcher and
// sender: the one entry model of timing reports. An event loop records into
// these during one report window; the accumulator of a tool merges many
// windows of the same entry into one. The exact meaning of every figure is
// in docs/timing_reports.md.
//
//   timing::TimerTiming timing;
//   timing.wakeup_latency.Record(start - scheduled);   // realtime-safe
//   ...
//   summary.Merge(timing);   // a tool adding up windows
//   timing.Reset();          // the loop starting the next window
//
// Recording, merging and resetting never allocate and cost a statistic
// update plus a histogram increment (see //tools/bench:timing_benchmark).

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "aos/events/busy_poll_counters.h"
#include "aos/events/event_loop_generated.h"
#include "aos/events/latency_recorder.h"
#include "aos/events/timer_anticipation_counters.h"
#include "aos/events/timing_path.h"
#include "aos/events/timing_statistic.h"
#include "aos/time/time.h"

namespace aos::timing {

// A timer or phased loop. What every call touches comes first, together;
// the recorders (about 15 KB of buckets each) after it.
struct TimerTiming {
  // Shown in reports; set with set_name() (before Run(): a long name may
  // allocate).
  std::string name;
  // Handler calls.
  uint64_t count = 0;
  // Scheduled times that got no call because the loop was late.
  uint64_t missed_cycles = 0;
  // PathOriginId of this callback (set by the loop when it starts running).
  uint32_t origin_id = 0;
  // Handler start - the time the call was scheduled for.
  LatencyRecorder wakeup_latency;
  // Handler end - handler start.
  LatencyRecorder handler_time;

  void Reset() noexcept {
    count = 0;
    wakeup_latency.Reset();
    handler_time.Reset();
    missed_cycles = 0;
  }
  void Merge(const TimerTiming& other) noexcept {
    count += other.count;
    wakeup_latency.Merge(other.wakeup_latency);
    handler_time.Merge(other.handler_time);
    missed_cycles += other.missed_cycles;
    if (origin_id == 0) origin_id = other.origin_id;
  }
};

// A watcher.
struct WatcherTiming {
  // The channel's index in the configuration.
  int channel_index = -1;
  uint64_t count = 0;
  // Handler start - the message's monotonic_sent_time.
  LatencyRecorder wakeup_latency;
  LatencyRecorder handler_time;
  // Messages overwritten before the watcher got to them.
  uint64_t lost_messages = 0;
  // How old the data was, by origin: handler start - origin time.
  PathTimings paths;

  void Reset() noexcept {
    count = 0;
    wakeup_latency.Reset();
    handler_time.Reset();
    lost_messages = 0;
    paths.Reset();
  }
  void Merge(const WatcherTiming& other) noexcept {
    count += other.count;
    wakeup_latency.Merge(other.wakeup_latency);
    handler_time.Merge(other.handler_time);
    lost_messages += other.lost_messages;
    paths.Merge(other.paths);
  }
};

// A fetcher.
struct FetcherTiming {
  int channel_index = -1;
  // Successful fetches (ones that returned a new message).
  uint64_t count = 0;
  // Fetch time - the message's monotonic_sent_time.
  LatencyRecorder latency;
  // Messages skipped because the fetcher fell behind the queue.
  uint64_t lost_messages = 0;
  // How old the data was, by origin: the start of the callback that
  // fetched it (the fetch, outside callbacks) - origin time.
  PathTimings paths;

  void Reset() noexcept {
    count = 0;
    latency.Reset();
    lost_messages = 0;
    paths.Reset();
  }
  void Merge(const FetcherTiming& other) noexcept {
    count += other.count;
    latency.Merge(other.latency);
    lost_messages += other.lost_messages;
    paths.Merge(other.paths);
  }
};

// One counter per aos.timing.SendError value.
inline constexpr size_t kSendErrorCount =
    static_cast<size_t>(SendError::MAX) + 1;

// A sender.
struct SenderTiming {
  int channel_index = -1;
  // Messages sent.
  uint64_t count = 0;
  // Sizes of the messages sent, in bytes.
  RunningStatistic size;
  // Failed sends, indexed by aos::timing::SendError.
  std::array<uint64_t, kSendErrorCount> error_counts = {};
  // Wakeups not signalled to registrations that failed the proof.
  uint64_t refused_wakeups = 0;
  // Replaced messages whose sent time was in the future.
  uint64_t impossible_sent_times = 0;
  // The origins the messages sent carried.
  SentOrigins sent_origins;

  void Reset() noexcept {
    count = 0;
    size.Reset();
    error_counts.fill(0);
    refused_wakeups = 0;
    impossible_sent_times = 0;
    sent_origins.Reset();
  }
  void Merge(const SenderTiming& other) noexcept {
    count += other.count;
    size.Merge(other.size);
    for (size_t i = 0; i < kSendErrorCount; ++i) {
      error_counts[i] += other.error_counts[i];
    }
    refused_wakeups += other.refused_wakeups;
    impossible_sent_times += other.impossible_sent_times;
    sent_origins.Merge(other.sent_origins);
  }
};

// Every entry one event loop measures, by kind, in the order they were
// made: what each of its reports covers. The loop's handlers add (and
// remove) their own entries; the reporter reads them and starts each window
// with ResetWindow(). The entries belong to the handlers.
struct LoopTimingEntries {
  std::vector<WatcherTiming*> watchers;
  std::vector<SenderTiming*> senders;
  std::vector<FetcherTiming*> fetchers;
  std::vector<TimerTiming*> timers;
  std::vector<TimerTiming*> phased_loops;
  // Queue files the loop found deleted or replaced, and re-opened.
  uint64_t reopened_queue_files = 0;
  // What busy-polling cost and won (ShmEventLoop's --busy_poll_us).
  BusyPollCounters busy_poll;
  // What waking timers early cost and won (--timer_anticipation_us).
  TimerAnticipationCounters timer_anticipation;

  // Every figure back to zero: the next window starts. Never allocates.
  void ResetWindow() noexcept {
    reopened_queue_files = 0;
    busy_poll.Reset();
    timer_anticipation.Reset();
    for (WatcherTiming* entry : watchers) entry->Reset();
    for (SenderTiming* entry : senders) entry->Reset();
    for (FetcherTiming* entry : fetchers) entry->Reset();
    for (TimerTiming* entry : timers) entry->Reset();
    for (TimerTiming* entry : phased_loops) entry->Reset();
  }
};

}  // namespace aos::timing

#endif  // AOS_EVENTS_TIMING_ENTRY_H_
