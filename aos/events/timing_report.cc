#include "aos/events/timing_report.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <type_traits>

namespace aos {
namespace {

// The report's strings, from the loop's settings.
timing::ReportHeader HeaderOf(const EventLoop& event_loop) {
  timing::ReportHeader header;
  header.name = event_loop.name();
  header.pid = event_loop.pid();
  header.version = event_loop.version_string();
  if (event_loop.node() != nullptr) {
    header.node = event_loop.node()->name()->str();
  }
  header.cpu_latency_limit_us = event_loop.cpu_latency_limit_us();
  header.cpu_latency_limit_cpus = event_loop.cpu_latency_limit_cpus();
  header.busy_poll_us = event_loop.busy_poll_us();
  header.idle_poll_cpus = event_loop.idle_poll_cpus();
  return header;
}

}  // namespace

// The report is at most max_size; flatbuffers also keeps its vtable scratch
// in the same buffer, and rounds its request up to a multiple of 8.
size_t TimingReporter::ScratchSize(size_t max_size) {
  return (2 * max_size + 16384 + 7) & ~size_t{7};
}

uint8_t* TimingReporter::FixedAllocator::allocate(size_t size) {
  CHECK_LE(size, buffer_.size())
      << "timing report scratch buffer too small; this is a bug in the size "
         "bounds of aos/events/timing_report_codec.cc";
  return buffer_.data();
}

TimingReporter::TimingReporter(EventLoop* event_loop,
                               std::unique_ptr<RawSender> sender)
    : event_loop_(event_loop),
      entries_(event_loop->timing_entries()),
      sender_(std::move(sender)),
      max_size_(sender_->size()),
      allocator_(ScratchSize(max_size_)),
      fbb_(ScratchSize(max_size_), &allocator_, false),
      header_(HeaderOf(*event_loop)) {
  // This reporter's own sender is already among the senders.
  ReserveEntries();
}

void TimingReporter::ReserveEntries() {
  watcher_offsets_.reserve(entries_->watchers.size());
  sender_offsets_.reserve(entries_->senders.size());
  fetcher_offsets_.reserve(entries_->fetchers.size());
  timer_offsets_.reserve(entries_->timers.size());
  phased_loop_offsets_.reserve(entries_->phased_loops.size());
}

TimingReporter::~TimingReporter() = default;

void TimingReporter::StartWindow() {
  window_start_ = event_loop_->monotonic_now();
  realtime_window_start_ = event_loop_->realtime_now();
}

size_t TimingReporter::HeaderSizeBound(const EventLoop& event_loop) {
  return timing::ReportHeaderSizeBound(HeaderOf(event_loop));
}

TimingReporter::Plan TimingReporter::MakePlan() const {
  // Every entry in report order, with its bound with and without histograms.
  struct Entry {
    size_t with_histograms;
    size_t without_histograms;
    int histograms;
  };
  const timing::LoopTimingEntries& all = *entries_;
  const std::array<size_t, 5> counts = {all.watchers.size(), all.senders.size(),
                                        all.fetchers.size(), all.timers.size(),
                                        all.phased_loops.size()};
  const size_t total =
      counts[0] + counts[1] + counts[2] + counts[3] + counts[4];
  auto entry = [&](size_t i) -> Entry {
    if (i < counts[0]) {
      const timing::WatcherTiming& timing = *all.watchers[i];
      return {timing::WatcherSizeBound(timing, true),
              timing::WatcherSizeBound(timing, false), 2};
    }
    i -= counts[0];
    if (i < counts[1]) {
      return {timing::SenderSizeBound(), timing::SenderSizeBound(), 0};
    }
    i -= counts[1];
    if (i < counts[2]) {
      const timing::FetcherTiming& timing = *all.fetchers[i];
      return {timing::FetcherSizeBound(timing, true),
              timing::FetcherSizeBound(timing, false), 1};
    }
    i -= counts[2];
    const timing::TimerTiming& timing =
        i < counts[3] ? *all.timers[i] : *all.phased_loops[i - counts[3]];
    return {timing::TimerSizeBound(timing, true),
            timing::TimerSizeBound(timing, false), 2};
  };

  size_t with_all = timing::ReportHeaderSizeBound(header_);
  for (size_t i = 0; i < total; ++i) with_all += 4 + entry(i).with_histograms;

  Plan plan;
  size_t kept = total;
  size_t first_without = total;
  size_t size = with_all;
  // Drop histograms, last entries first.
  while (size > max_size_ && first_without > 0) {
    --first_without;
    const Entry e = entry(first_without);
    size -= e.with_histograms - e.without_histograms;
    plan.dropped_histograms += e.histograms;
  }
  // Then whole entries, last first.
  while (size > max_size_ && kept > 0) {
    --kept;
    size -= 4 + entry(kept).without_histograms;
    ++plan.dropped_entries;
    if (entry(kept).histograms > 0 && kept >= first_without) {
      // Already counted as a dropped histogram; it is now part of a dropped
      // entry instead.
      plan.dropped_histograms -= entry(kept).histograms;
    }
  }
  plan.first_without_histograms = first_without;
  // Split the kept count back into the five lists.
  size_t remaining = kept;
  auto take = [&](size_t count) {
    const size_t n = std::min(count, remaining);
    remaining -= n;
    return n;
  };
  plan.watchers = take(counts[0]);
  plan.senders = take(counts[1]);
  plan.fetchers = take(counts[2]);
  plan.timers = take(counts[3]);
  plan.phased_loops = take(counts[4]);
  return plan;
}

std::span<const uint8_t> TimingReporter::Build(
    monotonic_clock::time_point end) {
  const Plan plan = MakePlan();
  const timing::LoopTimingEntries& all = *entries_;
  fbb_.Clear();
  // Counts of 0 are figures too: write them.
  fbb_.ForceDefaults(true);
  // Entry i of the list being built is entry first + i in report order; it
  // keeps its histograms if that comes before plan.first_without_histograms.
  size_t first = 0;
  auto histograms = [&](size_t i) {
    return first + i < plan.first_without_histograms;
  };

  watcher_offsets_.clear();
  for (size_t i = 0; i < plan.watchers; ++i) {
    watcher_offsets_.push_back(
        timing::EncodeWatcher(&fbb_, *all.watchers[i], histograms(i)));
  }
  first += all.watchers.size();
  sender_offsets_.clear();
  for (size_t i = 0; i < plan.senders; ++i) {
    sender_offsets_.push_back(timing::EncodeSender(&fbb_, *all.senders[i]));
  }
  first += all.senders.size();
  fetcher_offsets_.clear();
  for (size_t i = 0; i < plan.fetchers; ++i) {
    fetcher_offsets_.push_back(
        timing::EncodeFetcher(&fbb_, *all.fetchers[i], histograms(i)));
  }
  first += all.fetchers.size();
  timer_offsets_.clear();
  for (size_t i = 0; i < plan.timers; ++i) {
    timer_offsets_.push_back(
        timing::EncodeTimer(&fbb_, *all.timers[i], histograms(i)));
  }
  first += all.timers.size();
  phased_loop_offsets_.clear();
  for (size_t i = 0; i < plan.phased_loops; ++i) {
    phased_loop_offsets_.push_back(
        timing::EncodeTimer(&fbb_, *all.phased_loops[i], histograms(i)));
  }

  // A kind of entry the loop has none of is left out, as AOS's reports
  // leave it (readers see null, not an empty vector); one whose entries
  // were all dropped to fit is an empty vector.
  auto vector_of = [this](const auto& offsets, size_t entries) {
    using Offset = std::remove_cvref_t<decltype(offsets[0])>;
    return entries == 0 ? flatbuffers::Offset<flatbuffers::Vector<Offset>>()
                        : fbb_.CreateVector(offsets);
  };
  timing::EncodedEntries encoded;
  encoded.watchers = vector_of(watcher_offsets_, all.watchers.size());
  encoded.senders = vector_of(sender_offsets_, all.senders.size());
  encoded.fetchers = vector_of(fetcher_offsets_, all.fetchers.size());
  encoded.timers = vector_of(timer_offsets_, all.timers.size());
  encoded.phased_loops =
      vector_of(phased_loop_offsets_, all.phased_loops.size());
  header_.monotonic_start_ns = window_start_.time_since_epoch().count();
  header_.monotonic_end_ns = end.time_since_epoch().count();
  header_.realtime_start_ns = realtime_window_start_.time_since_epoch().count();
  header_.dropped_histograms = plan.dropped_histograms;
  header_.dropped_entries = plan.dropped_entries;
  header_.reopened_queue_files = all.reopened_queue_files;
  header_.busy_poll_ns = all.busy_poll.polling_ns;
  header_.busy_poll_wakeups = all.busy_poll.caught;
  header_.timer_anticipation_lead_ns = all.timer_anticipation.lead_ns;
  header_.timer_anticipation_auto = all.timer_anticipation.automatic;
  header_.timer_anticipation_ns = all.timer_anticipation.spin_ns;
  header_.timer_wakeups = all.timer_anticipation.wakeups;
  header_.timer_wakeups_early = all.timer_anticipation.early_wakeups;
  fbb_.Finish(timing::EncodeReport(&fbb_, header_, encoded));
  CHECK_LE(fbb_.GetSize(), max_size_)
      << "timing report larger than its bound; this is a bug in "
         "aos/events/timing_report_codec.cc";
  return {fbb_.GetBufferPointer(), fbb_.GetSize()};
}

void TimingReporter::Publish() {
  const monotonic_clock::time_point end = event_loop_->monotonic_now();
  const realtime_clock::time_point realtime_end = event_loop_->realtime_now();
  std::span<const uint8_t> report;
  {
    // Sends from other threads wait while their figures are read and reset.
    const std::unique_lock<PriorityInheritanceMutex> other_thread_sends =
        event_loop_->HoldOtherThreadSends();
    report = Build(end);
    // Reset before sending, so this report's own send is counted in the
    // next.
    entries_->ResetWindow();
  }
  // As AOS counts them: every report that could not be sent, ever.
  if (sender_->Send(report.data(), report.size()) != RawSender::Error::kOk) {
    ++header_.send_failures;
  }
  window_start_ = end;
  realtime_window_start_ = realtime_end;
}

}  // namespace aos
