#ifndef AOS_EVENTS_TIMING_REPORT_H_
#define AOS_EVENTS_TIMING_REPORT_H_

// Builds and sends an event loop's aos.timing.Report.
//
// Each report covers one window [monotonic_start_time, monotonic_end_time)
// of the loop's monotonic clock: everything recorded since the previous
// report. After sending, every figure is reset.
//
// Fitting max_size: before building, the reporter bounds the encoded size of
// each entry from above (timing_report_codec.h). If everything would not fit
// the channel's max_size, it leaves out histograms (last entries first),
// then whole entries (last first), and counts both in the report
// (dropped_histograms, dropped_entries). The bounds are upper bounds, so the
// report it builds always fits; it never crashes for size.
//
// It sees the loop only through its public API: clocks, name, settings and
// timing_entries(). It knows nothing of the handlers that own the entries.
//
// Memory: the builder works in a buffer allocated at construction (before
// the loop runs); Publish() never allocates.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "aos/events/event_loop.h"
#include "aos/events/timing_entry.h"
#include "aos/events/timing_report_codec.h"
#include "flatbuffers/flatbuffers.h"

namespace aos {

class TimingReporter {
 public:
  // Reports the entries of `event_loop`; `sender` sends on the loop's /aos
  // aos.timing.Report channel. The loop gets no new entry while it runs;
  // one added between runs (simulation) needs ReserveEntries() first.
  TimingReporter(EventLoop* event_loop, std::unique_ptr<RawSender> sender);
  ~TimingReporter();

  // Makes room for every entry the loop has now, so building a report with
  // them does not allocate. Allocates: not while the loop runs.
  void ReserveEntries();

  // The most bytes a report of `event_loop` with no entries takes (name,
  // version, node, CPU list and the table). A channel smaller than this
  // cannot carry the loop's reports at all.
  static size_t HeaderSizeBound(const EventLoop& event_loop);

  // Starts the first window now.
  void StartWindow();

  // Builds the report of the window ending now, sends it, resets every
  // figure and starts the next window.
  void Publish();

  // Builds the report of the window ending at `end` into the internal
  // buffer, without sending or resetting; returns it. For tests.
  std::span<const uint8_t> Build(monotonic_clock::time_point end);

 private:
  class FixedAllocator : public flatbuffers::Allocator {
   public:
    explicit FixedAllocator(size_t size) : buffer_(size) {}
    uint8_t* allocate(size_t size) override;
    void deallocate(uint8_t*, size_t) override {}

   private:
    std::vector<uint8_t> buffer_;
  };

  // What goes in the report; decided before building.
  struct Plan {
    size_t watchers = 0;
    size_t senders = 0;
    size_t fetchers = 0;
    size_t timers = 0;
    size_t phased_loops = 0;
    // Entries (in report order) from this one on have no histograms.
    size_t first_without_histograms = 0;
    uint32_t dropped_histograms = 0;
    uint32_t dropped_entries = 0;
  };
  Plan MakePlan() const;
  static size_t ScratchSize(size_t max_size);

  // Offsets of the entries being built; reserved before the loop runs
  // (ReserveEntries) so building never allocates.
  std::vector<flatbuffers::Offset<timing::Watcher>> watcher_offsets_;
  std::vector<flatbuffers::Offset<timing::Sender>> sender_offsets_;
  std::vector<flatbuffers::Offset<timing::Fetcher>> fetcher_offsets_;
  std::vector<flatbuffers::Offset<timing::Timer>> timer_offsets_;
  std::vector<flatbuffers::Offset<timing::Timer>> phased_loop_offsets_;

  EventLoop* const event_loop_;
  timing::LoopTimingEntries* const entries_;
  std::unique_ptr<RawSender> sender_;
  const size_t max_size_;
  FixedAllocator allocator_;
  flatbuffers::FlatBufferBuilder fbb_;
  // The strings are filled at construction; Build() updates the rest.
  timing::ReportHeader header_;
  realtime_clock::time_point realtime_window_start_ = realtime_clock::min_time;
  monotonic_clock::time_point window_start_ = monotonic_clock::min_time;
};

}  // namespace aos

#endif  // AOS_EVENTS_TIMING_REPORT_H_
