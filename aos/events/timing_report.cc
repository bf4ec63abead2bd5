#include "aos/events/timing_report.h"

#include <algorithm>

namespace aos {
namespace {

using flatbuffers::Offset;

// Upper bounds, in bytes, of what each piece adds to a report: table data,
// its vtable (never shared, to be safe), the offset pointing at it, and
// alignment padding.
constexpr size_t kStatisticBound = 4 + 16 + 4 + 2 * 4 + 4 + 8;
constexpr size_t kTableOverhead = 4 + 4 + 8;  // soffset, vtable header, pad
constexpr size_t kStringOverhead = 4 + 1 + 3 + 4;

size_t StringBound(size_t length) { return length + kStringOverhead; }

size_t HistogramBound(const timing::LatencyHistogram& histogram) {
  return histogram.EncodedSizeBound() + 4 + 8;
}

size_t TimerBound(const timing::TimerTiming& timing, bool histograms) {
  size_t bound = kTableOverhead + 7 * (4 + 2 + 8) +
                 StringBound(timing.name.size()) + 2 * kStatisticBound;
  if (histograms) {
    bound += HistogramBound(timing.wakeup_latency.histogram()) +
             HistogramBound(timing.handler_time.histogram());
  }
  return bound;
}

size_t WatcherBound(const timing::WatcherTiming& timing, bool histograms) {
  size_t bound = kTableOverhead + 7 * (4 + 2 + 8) + 2 * kStatisticBound;
  if (histograms) {
    bound += HistogramBound(timing.wakeup_latency.histogram()) +
             HistogramBound(timing.handler_time.histogram());
  }
  return bound;
}

size_t FetcherBound(const timing::FetcherTiming& timing, bool histograms) {
  size_t bound = kTableOverhead + 5 * (4 + 2 + 8) + kStatisticBound;
  if (histograms) bound += HistogramBound(timing.latency.histogram());
  return bound;
}

size_t SenderBound() {
  constexpr size_t kErrorCountBound = kTableOverhead + 2 * (4 + 2 + 8) + 4;
  return kTableOverhead + 4 * (4 + 2 + 8) + kStatisticBound + 4 + 8 +
         timing::kSendErrorCount * kErrorCountBound;
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
         "bounds of aos/events/timing_report.cc";
  return buffer_.data();
}

TimingReporter::TimingReporter(EventLoop* event_loop,
                               std::unique_ptr<RawSender> sender)
    : event_loop_(event_loop),
      sender_(std::move(sender)),
      max_size_(sender_->size()),
      // The report is at most max_size_; flatbuffers also keeps its vtable
      // scratch in the same buffer.
      allocator_(ScratchSize(max_size_)),
      fbb_(ScratchSize(max_size_), &allocator_, false) {
  watcher_offsets_.reserve(event_loop->watchers().size());
  // This reporter's own sender is already among the senders.
  sender_offsets_.reserve(event_loop->senders().size());
  fetcher_offsets_.reserve(event_loop->fetchers().size());
  timer_offsets_.reserve(event_loop->timers().size());
  phased_loop_offsets_.reserve(event_loop->phased_loops().size());
}

TimingReporter::~TimingReporter() = default;

void TimingReporter::StartWindow() {
  window_start_ = event_loop_->monotonic_now();
  realtime_window_start_ = event_loop_->realtime_now();
}

size_t TimingReporter::HeaderSizeBound(const EventLoop& event_loop) {
  // The report table itself: strings, scalars, five vectors.
  return kTableOverhead + 18 * (4 + 2 + 8) + 5 * (4 + 8) + 8 +
         StringBound(event_loop.name().size()) +
         StringBound(event_loop.version_string().size()) +
         StringBound(event_loop.cpu_latency_limit_cpus().size()) +
         StringBound(event_loop.node() == nullptr
                         ? 0
                         : event_loop.node()->name()->size());
}

TimingReporter::Plan TimingReporter::MakePlan() const {
  // Every entry in report order, with its bound with and without histograms.
  struct Entry {
    size_t with_histograms;
    size_t without_histograms;
    int histograms;
  };
  std::array<size_t, 5> counts = {
      event_loop_->watchers().size(), event_loop_->senders().size(),
      event_loop_->fetchers().size(), event_loop_->timers().size(),
      event_loop_->phased_loops().size()};
  const size_t total =
      counts[0] + counts[1] + counts[2] + counts[3] + counts[4];
  auto entry = [&](size_t i) -> Entry {
    if (i < counts[0]) {
      const auto& timing = event_loop_->watchers()[i]->timing();
      return {WatcherBound(timing, true), WatcherBound(timing, false), 2};
    }
    i -= counts[0];
    if (i < counts[1]) return {SenderBound(), SenderBound(), 0};
    i -= counts[1];
    if (i < counts[2]) {
      const auto& timing = event_loop_->fetchers()[i]->timing();
      return {FetcherBound(timing, true), FetcherBound(timing, false), 1};
    }
    i -= counts[2];
    if (i < counts[3]) {
      const auto& timing = event_loop_->timers()[i]->timing();
      return {TimerBound(timing, true), TimerBound(timing, false), 2};
    }
    i -= counts[3];
    const auto& timing = event_loop_->phased_loops()[i]->timing();
    return {TimerBound(timing, true), TimerBound(timing, false), 2};
  };

  size_t with_all = HeaderSizeBound(*event_loop_);
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

namespace {

// A wakeup latency and a handler time, encoded; histograms only if asked.
struct EncodedLatencies {
  Offset<timing::Statistic> wakeup;
  Offset<timing::Statistic> handler;
  Offset<timing::Histogram> wakeup_histogram;
  Offset<timing::Histogram> handler_histogram;
};

EncodedLatencies EncodeLatencies(flatbuffers::FlatBufferBuilder* fbb,
                                 const timing::LatencyRecorder& wakeup,
                                 const timing::LatencyRecorder& handler,
                                 bool histograms) {
  EncodedLatencies encoded;
  encoded.wakeup = wakeup.statistic().Encode(fbb);
  encoded.handler = handler.statistic().Encode(fbb);
  if (histograms) {
    encoded.wakeup_histogram = wakeup.histogram().Encode(fbb);
    encoded.handler_histogram = handler.histogram().Encode(fbb);
  }
  return encoded;
}

// Adds the latencies to a Timer or Watcher builder.
template <typename Builder>
void AddLatencies(Builder* builder, const EncodedLatencies& encoded) {
  builder->add_wakeup_latency(encoded.wakeup);
  builder->add_handler_time(encoded.handler);
  if (!encoded.wakeup_histogram.IsNull()) {
    builder->add_wakeup_latency_histogram(encoded.wakeup_histogram);
    builder->add_handler_time_histogram(encoded.handler_histogram);
  }
}

Offset<timing::Timer> EncodeTimer(flatbuffers::FlatBufferBuilder* fbb,
                                  const timing::TimerTiming& t,
                                  bool histograms) {
  const auto name = fbb->CreateString(t.name);
  const EncodedLatencies latencies =
      EncodeLatencies(fbb, t.wakeup_latency, t.handler_time, histograms);
  timing::Timer::Builder builder(*fbb);
  builder.add_name(name);
  builder.add_count(t.count);
  AddLatencies(&builder, latencies);
  builder.add_missed_cycles(t.missed_cycles);
  return builder.Finish();
}

Offset<timing::Watcher> EncodeWatcher(flatbuffers::FlatBufferBuilder* fbb,
                                      const timing::WatcherTiming& t,
                                      bool histograms) {
  const EncodedLatencies latencies =
      EncodeLatencies(fbb, t.wakeup_latency, t.handler_time, histograms);
  timing::Watcher::Builder builder(*fbb);
  builder.add_channel_index(t.channel_index);
  builder.add_count(t.count);
  AddLatencies(&builder, latencies);
  builder.add_lost_messages(t.lost_messages);
  return builder.Finish();
}

Offset<timing::Fetcher> EncodeFetcher(flatbuffers::FlatBufferBuilder* fbb,
                                      const timing::FetcherTiming& t,
                                      bool histograms) {
  const auto latency = t.latency.statistic().Encode(fbb);
  Offset<timing::Histogram> latency_histogram;
  if (histograms) latency_histogram = t.latency.histogram().Encode(fbb);
  timing::Fetcher::Builder builder(*fbb);
  builder.add_channel_index(t.channel_index);
  builder.add_count(t.count);
  builder.add_latency(latency);
  if (histograms) builder.add_latency_histogram(latency_histogram);
  builder.add_lost_messages(t.lost_messages);
  return builder.Finish();
}

Offset<timing::Sender> EncodeSender(flatbuffers::FlatBufferBuilder* fbb,
                                    const timing::SenderTiming& t) {
  const auto size = t.size.Encode(fbb);
  std::array<Offset<timing::SendErrorCount>, timing::kSendErrorCount> errors;
  for (size_t i = 0; i < errors.size(); ++i) {
    errors[i] = timing::CreateSendErrorCount(
        *fbb, static_cast<timing::SendError>(i), t.error_counts[i]);
  }
  const auto error_counts = fbb->CreateVector(errors.data(), errors.size());
  timing::Sender::Builder builder(*fbb);
  builder.add_channel_index(t.channel_index);
  builder.add_count(t.count);
  builder.add_size(size);
  builder.add_error_counts(error_counts);
  return builder.Finish();
}

}  // namespace

std::span<const uint8_t> TimingReporter::Build(
    monotonic_clock::time_point end) {
  const Plan plan = MakePlan();
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
    watcher_offsets_.push_back(EncodeWatcher(
        &fbb_, event_loop_->watchers()[i]->timing(), histograms(i)));
  }
  first += event_loop_->watchers().size();
  sender_offsets_.clear();
  for (size_t i = 0; i < plan.senders; ++i) {
    sender_offsets_.push_back(
        EncodeSender(&fbb_, event_loop_->senders()[i]->timing()));
  }
  first += event_loop_->senders().size();
  fetcher_offsets_.clear();
  for (size_t i = 0; i < plan.fetchers; ++i) {
    fetcher_offsets_.push_back(EncodeFetcher(
        &fbb_, event_loop_->fetchers()[i]->timing(), histograms(i)));
  }
  first += event_loop_->fetchers().size();
  timer_offsets_.clear();
  for (size_t i = 0; i < plan.timers; ++i) {
    timer_offsets_.push_back(
        EncodeTimer(&fbb_, event_loop_->timers()[i]->timing(), histograms(i)));
  }
  first += event_loop_->timers().size();
  phased_loop_offsets_.clear();
  for (size_t i = 0; i < plan.phased_loops; ++i) {
    phased_loop_offsets_.push_back(EncodeTimer(
        &fbb_, event_loop_->phased_loops()[i]->timing(), histograms(i)));
  }

  const auto name = fbb_.CreateString(event_loop_->name());
  const auto version = fbb_.CreateString(event_loop_->version_string());
  const auto node =
      event_loop_->node() == nullptr
          ? fbb_.CreateString("")
          : fbb_.CreateString(event_loop_->node()->name()->string_view());
  const auto cpu_latency_limit_cpus =
      fbb_.CreateString(event_loop_->cpu_latency_limit_cpus());
  const auto watchers = fbb_.CreateVector(watcher_offsets_);
  const auto senders = fbb_.CreateVector(sender_offsets_);
  const auto fetchers = fbb_.CreateVector(fetcher_offsets_);
  const auto timers = fbb_.CreateVector(timer_offsets_);
  const auto phased_loops = fbb_.CreateVector(phased_loop_offsets_);

  timing::Report::Builder report(fbb_);
  report.add_name(name);
  report.add_pid(event_loop_->pid());
  report.add_version(version);
  report.add_node(node);
  report.add_watchers(watchers);
  report.add_senders(senders);
  report.add_fetchers(fetchers);
  report.add_timers(timers);
  report.add_phased_loops(phased_loops);
  report.add_send_failures(send_failures_);
  report.add_monotonic_start_time(window_start_.time_since_epoch().count());
  report.add_monotonic_end_time(end.time_since_epoch().count());
  report.add_realtime_start_time(
      realtime_window_start_.time_since_epoch().count());
  report.add_dropped_histograms(plan.dropped_histograms);
  report.add_dropped_entries(plan.dropped_entries);
  report.add_cpu_latency_limit_us(event_loop_->cpu_latency_limit_us());
  report.add_cpu_latency_limit_cpus(cpu_latency_limit_cpus);
  fbb_.Finish(report.Finish());
  CHECK_LE(fbb_.GetSize(), max_size_)
      << "timing report larger than its bound; this is a bug in "
         "aos/events/timing_report.cc";
  return {fbb_.GetBufferPointer(), fbb_.GetSize()};
}

void TimingReporter::ResetAll() {
  for (const auto& watcher : event_loop_->watchers()) watcher->timing_.Reset();
  for (RawSender* sender : event_loop_->senders()) sender->timing_.Reset();
  for (RawFetcher* fetcher : event_loop_->fetchers()) fetcher->timing_.Reset();
  for (const auto& timer : event_loop_->timers()) timer->timing_.Reset();
  for (const auto& phased_loop : event_loop_->phased_loops()) {
    phased_loop->timer_->timing_.Reset();
  }
}

void TimingReporter::Publish() {
  const monotonic_clock::time_point end = event_loop_->monotonic_now();
  const realtime_clock::time_point realtime_end = event_loop_->realtime_now();
  const std::span<const uint8_t> report = Build(end);
  // Reset before sending, so this report's own send is counted in the next.
  ResetAll();
  const RawSender::Error error = sender_->Send(report.data(), report.size());
  if (error == RawSender::Error::kOk) {
    send_failures_ = 0;
  } else {
    ++send_failures_;
  }
  window_start_ = end;
  realtime_window_start_ = realtime_end;
}

}  // namespace aos
