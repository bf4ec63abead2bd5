#include "aos/events/event_loop.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <mutex>

#include "aos/configuration.h"
#include "aos/events/lttng_callback_register.h"
#include "aos/events/timing_report.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/tracing/lttng/trace_points.h"
#include "aos/tracing/ring_flags.h"
#include "aos/util/printable.h"
#include "aos/util/stderr_line.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_bool(timing_reports, true,
            "Publish an aos.timing.Report about each event loop on /aos.");
DEFINE_int32(timing_report_ms, 1000,
             "Milliseconds between timing reports (the report window).");
DEFINE_bool(path_origins, true,
            "Pass path origins on in the messages this program's callbacks "
            "send (docs/timing_reports.md, \"Path latency\"); false: they "
            "carry none, so nothing downstream measures their age (for "
            "measuring what path latency costs).");
DEFINE_bool(die_on_malloc, true,
            "In a loop at realtime priority, abort with a message naming "
            "the callback when a timer, phased loop or watcher callback "
            "allocates heap memory; false: warn once per callback and count "
            "them.");

namespace aos {
namespace {

std::string Describe(const Channel* channel) {
  return std::string(channel->name()->string_view()) + " (type " +
         std::string(channel->type()->string_view()) + ")";
}

// Writes one line to stderr and aborts, without allocating: the failure
// paths of CheckOk and friends run inside realtime callbacks, where the
// allocation guard (--die_on_malloc) would abort first on LOG(FATAL)'s
// allocation and blame it instead of the real error.
[[noreturn]] __attribute__((format(printf, 1, 2))) void DieSaying(
    const char* format, ...) {
  va_list arguments;
  va_start(arguments, format);
  VWriteStderrLine(format, arguments);
  va_end(arguments);
  abort();
}

// Nanoseconds on the loop's clock, as the flight recorder's ring keeps times.
int64_t Ns(monotonic_clock::time_point time) {
  return time.time_since_epoch().count();
}

using tracing::EventKind::kTimerEnd;
using tracing::EventKind::kTimerStart;
using tracing::EventKind::kWatcherEnd;
using tracing::EventKind::kWatcherStart;

}  // namespace

// RawSender.

RawSender::RawSender(EventLoop* event_loop, const Channel* channel)
    : event_loop_(event_loop), channel_(channel) {
  timing_.channel_index = event_loop->ChannelIndex(channel);
  event_loop->senders_.push_back(this);
  event_loop->timing_entries_.senders.push_back(&timing_);
}

RawSender::~RawSender() {
  event_loop_->CheckNotInCallback(
      StrCat("destroying the sender on ", Describe(channel_)));
  std::erase(event_loop_->senders_, this);
  std::erase(event_loop_->timing_entries_.senders, &timing_);
}

void RawSender::CheckLength(size_t length) {
  const size_t max_size =
      static_cast<size_t>(std::max<int32_t>(0, channel_->max_size()));
  if (length > max_size) {
    // Not LOG(FATAL): a send in a realtime callback must fail saying this,
    // not an allocation.
    const std::string_view name = channel_->name()->string_view();
    const std::string_view type = channel_->type()->string_view();
    DieSaying(
        "a %zu byte message on %.*s (type %.*s) is larger than its max_size "
        "%zu; raise max_size in the config",
        length, static_cast<int>(name.size()), name.data(),
        static_cast<int>(type.size()), type.data(), max_size);
  }
}

RawSender::Error RawSender::Send(size_t length) {
  CheckBuildsInPlace("Send(length) (how a Builder sends)");
  return CountedSend(length, nullptr);
}

RawSender::Error RawSender::Send(size_t length, const RemoteOrigin& origin) {
  CheckBuildsInPlace("Send(length, origin)");
  return CountedSend(length, &origin);
}

RawSender::Error RawSender::Send(const void* message, size_t length,
                                 const RemoteOrigin& origin) {
  CheckLength(length);
  // data() too: the loop may replace it between sends.
  std::unique_lock<PriorityInheritanceMutex> lock = LockIfFromAnotherThread();
  memcpy(static_cast<uint8_t*>(data()) + size() - length, message, length);
  return CountedSend(length, &origin);
}

void RawSender::CheckBuildsInPlace(std::string_view what) const {
  if (!from_another_thread_) return;
  // Not LOG(FATAL): builders run in realtime callbacks, where the
  // allocation guard would otherwise abort first, blaming an allocation.
  const std::string_view name = channel_->name()->string_view();
  const std::string_view type = channel_->type()->string_view();
  DieSaying(
      "sender on %.*s (type %.*s): %.*s sends what was built in data(), which "
      "the loop may replace under a thread that builds there; a sender that "
      "allows sends from another thread sends with Send(message, length), "
      "which copies under the loop's lock",
      static_cast<int>(name.size()), name.data(), static_cast<int>(type.size()),
      type.data(), static_cast<int>(what.size()), what.data());
}

std::unique_lock<PriorityInheritanceMutex>
RawSender::LockIfFromAnotherThread() {
  if (!from_another_thread_) return {};
  return std::unique_lock<PriorityInheritanceMutex>(
      event_loop_->other_thread_sends_mutex_);
}

void RawSender::SetOrigins(const PathOrigins& read) {
  set_origins_ = read;
  origins_set_ = true;
  origins_as_sent_ = false;
}

void RawSender::SetOriginsAsSent(const PathOrigins& sent) {
  set_origins_ = sent;
  origins_set_ = true;
  origins_as_sent_ = true;
}

void RawSender::AllowSendsFromAnotherThread() {
  if (event_loop_->is_running()) {
    LOG(FATAL) << "event loop " << event_loop_->name() << ": sender on "
               << Describe(channel_)
               << ": AllowSendsFromAnotherThread() while the loop runs; call "
                  "it during setup, before any other thread sends";
  }
  from_another_thread_ = true;
  event_loop_->has_senders_from_another_thread_ = true;
}

RawSender::Error RawSender::CountedSend(size_t length,
                                        const RemoteOrigin* origin) {
  CheckLength(length);
  // Forwarding passes a message's origins on as they are; anything else
  // is a hop from what the callback got (or from the callback itself).
  const PathOrigins* origins = nullptr;
  uint32_t dropped_here = 0;
  if (!FLAGS_path_origins) {
    origins_set_ = false;
  } else if (origin != nullptr) {
    origins = origin->origins;
  } else if (origins_set_) {
    // Used once: the hop goes on in place, without a copy.
    if (!origins_as_sent_) set_origins_.AddHop();
    origins = &set_origins_;
    origins_set_ = false;
  } else if (!from_another_thread_) {
    origins = event_loop_->OriginsToSend(&send_origins_, &dropped_here);
  }
  if (origins != nullptr && origins->empty() && origins->dropped() == 0) {
    origins = nullptr;
  }
  const Error error = DoSend(length, origin, origins);
  if (error == Error::kOk) {
    ++timing_.count;
    tracing::EventRing* ring = event_loop_->trace_ring_.get();
    if (ring != nullptr && !from_another_thread_)
      ring->Send(timing_.channel_index, sent_queue_index_,
                 Ns(monotonic_sent_time_));
    timing_.size.Add(static_cast<double>(length));
    tracing::lttng::TraceSend(&timing_, channel_->name()->c_str(),
                              sent_queue_index_, length,
                              Ns(monotonic_sent_time_));
    if (origins != nullptr) timing_.sent_origins.Record(*origins);
    if (dropped_here > 0) timing_.sent_origins.AddDropped(dropped_here);
  } else {
    ++timing_.error_counts[static_cast<size_t>(error) - 1];
  }
  return error;
}

RawSender::Error RawSender::Send(const void* message, size_t length) {
  CheckLength(length);
  // data() too: the loop may replace it between sends.
  std::unique_lock<PriorityInheritanceMutex> lock = LockIfFromAnotherThread();
  memcpy(static_cast<uint8_t*>(data()) + size() - length, message, length);
  return CountedSend(length, nullptr);
}

std::string_view RawSender::ErrorToString(Error error) {
  switch (error) {
    case Error::kOk:
      return "kOk";
    case Error::kMessagesSentTooFast:
      return "kMessagesSentTooFast";
    case Error::kInvalidRedzone:
      return "kInvalidRedzone";
  }
  return "unknown RawSender::Error";
}

std::ostream& operator<<(std::ostream& stream, RawSender::Error error) {
  return stream << RawSender::ErrorToString(error);
}

void DieNotMade(std::string_view what, std::string_view why_not) {
  // Not LOG(FATAL): this can be Sender::CheckOk in a realtime callback.
  if (why_not.empty()) {
    DieSaying(
        "using a %.*s that was not made (default-constructed); check "
        "valid() first",
        static_cast<int>(what.size()), what.data());
  }
  DieSaying("using a %.*s that was not made: %.*s",
            static_cast<int>(what.size()), what.data(),
            static_cast<int>(why_not.size()), why_not.data());
}

void RawSender::CheckOk(Error error) {
  if (error == Error::kOk) return;
  const std::string_view name = channel_->name()->string_view();
  const std::string_view type = channel_->type()->string_view();
  const std::string_view error_name = ErrorToString(error);
  if (error != Error::kMessagesSentTooFast) {
    DieSaying(
        "%.*s %.*s: %.*s: something wrote outside the message buffer (past "
        "max_size %d), or the queue's shared memory is damaged",
        static_cast<int>(name.size()), name.data(),
        static_cast<int>(type.size()), type.data(),
        static_cast<int>(error_name.size()), error_name.data(),
        channel_->max_size());
  }
  const int64_t storage_ns = configuration::ChannelStorageDurationNs(
      *event_loop_->configuration(), *channel_);
  // As the queues size themselves: ceil(frequency x storage), at least 1.
  const double limit =
      std::max(1.0, std::ceil(channel_->frequency() * (storage_ns * 1e-9)));
  // The rate this sender tried, from the gap since its last message that
  // went out (unknown when none did, or in the same instant).
  char rate[128] = "";
  if (monotonic_sent_time_ != monotonic_clock::min_time) {
    const int64_t gap_ns =
        (event_loop_->monotonic_now() - monotonic_sent_time_).count();
    if (gap_ns > 0) {
      snprintf(rate, sizeof(rate),
               "; this sender sent %.4g a second (%.4g ms after its previous "
               "message)",
               1e9 / static_cast<double>(gap_ns), gap_ns * 1e-6);
    }
  }
  DieSaying(
      "%.*s %.*s: %.*s: more than %.0f messages in %.4g s (the channel's "
      "frequency \u00d7 channel_storage_duration)%s; raise its "
      "\"frequency\" in the config, or send less often",
      static_cast<int>(name.size()), name.data(), static_cast<int>(type.size()),
      type.data(), static_cast<int>(error_name.size()), error_name.data(),
      limit, storage_ns * 1e-9, rate);
}

uint8_t* RawSender::BuilderAllocator::allocate(size_t size) {
  // Not LOG(FATAL): builders run in realtime callbacks, where the
  // allocation guard would otherwise abort first, blaming an allocation.
  const std::string_view name = sender_->channel()->name()->string_view();
  const std::string_view type = sender_->channel()->type()->string_view();
  if (allocated_) {
    DieSaying(
        "a second message is being built on %.*s (type %.*s) while another "
        "Builder's (or a Detach()ed buffer) is alive; send or destroy the "
        "first",
        static_cast<int>(name.size()), name.data(),
        static_cast<int>(type.size()), type.data());
  }
  if (size > sender_->size()) {
    DieSaying(
        "a message on %.*s (type %.*s) needs %zu bytes, more than its "
        "max_size %zu; raise max_size in the config",
        static_cast<int>(name.size()), name.data(),
        static_cast<int>(type.size()), type.data(), size, sender_->size());
  }
  allocated_ = true;
  return static_cast<uint8_t*>(sender_->data()) + sender_->size() - size;
}

uint8_t* RawSender::BuilderAllocator::reallocate_downward(uint8_t*, size_t,
                                                          size_t new_size,
                                                          size_t, size_t) {
  const std::string_view name = sender_->channel()->name()->string_view();
  const std::string_view type = sender_->channel()->type()->string_view();
  DieSaying(
      "a message on %.*s (type %.*s) grew to %zu bytes, more than its "
      "max_size %zu; raise max_size in the config",
      static_cast<int>(name.size()), name.data(), static_cast<int>(type.size()),
      type.data(), new_size, sender_->size());
}

namespace event_loop_internal {

absl::StatusOr<flatbuffers::DetachedBuffer> ChannelJsonToFlatbuffer(
    const Channel& channel, std::string_view json) {
  const std::string described = Describe(&channel);
  if (channel.schema() == nullptr) {
    return absl::FailedPreconditionError(
        StrCat("SendJson on ", described,
               ": the config has no schema for it; use a config flattened "
               "with its schemas (aos_config)"));
  }
  absl::StatusOr<flatbuffers::DetachedBuffer> message = JsonToFlatbuffer(
      json, *channel.schema(),
      {.source_name = described, .table_name = channel.type()->string_view()});
  if (!message.ok()) return message.status();
  const size_t max_size =
      static_cast<size_t>(std::max<int32_t>(0, channel.max_size()));
  if (message->size() > max_size) {
    return absl::InvalidArgumentError(
        StrCat("SendJson on ", described, ": the message is ", message->size(),
               " bytes, more than its max_size ", max_size));
  }
  return message;
}

absl::Status SentJson(const Channel& channel, RawSender::Error error) {
  if (error == RawSender::Error::kOk) return absl::OkStatus();
  return absl::FailedPreconditionError(StrCat("SendJson on ",
                                              Describe(&channel), ": ",
                                              RawSender::ErrorToString(error)));
}

}  // namespace event_loop_internal

// RawFetcher.

RawFetcher::RawFetcher(EventLoop* event_loop, const Channel* channel)
    : event_loop_(event_loop), channel_(channel) {
  timing_.channel_index = event_loop->ChannelIndex(channel);
  event_loop->fetchers_.push_back(this);
  event_loop->timing_entries_.fetchers.push_back(&timing_);
}

RawFetcher::~RawFetcher() {
  event_loop_->CheckNotInCallback(
      StrCat("destroying the fetcher on ", Describe(channel_)));
  std::erase(event_loop_->fetchers_, this);
  std::erase(event_loop_->timing_entries_.fetchers, &timing_);
}

bool RawFetcher::Record(FetchResult result) {
  timing_.lost_messages += result.lost;
  if (result.lost > 0) {
    if (tracing::EventRing* ring = event_loop_->trace_ring_.get()) {
      ring->Lost(timing_.channel_index, result.lost,
                 Ns(event_loop_->monotonic_now()));
    }
    tracing::lttng::TraceLost(&timing_, channel_->name()->c_str(), result.lost);
  }
  if (!result.fetched) return false;
  ++timing_.count;
  const monotonic_clock::time_point now = event_loop_->monotonic_now();
  timing_.latency.Record(now - context_.monotonic_event_time);
  if (!context_.origins.empty()) {
    const monotonic_clock::time_point age_time = event_loop_->PathAgeTime(now);
    const int64_t overrun = timing_.paths.Record(context_.origins, age_time);
    tracing::EventRing* ring = event_loop_->trace_ring_.get();
    if (overrun > 0 && ring != nullptr) {
      ring->PathDeadline(timing_.channel_index, Ns(age_time), overrun);
    }
    event_loop_->NoteOriginsRead(context_.origins);
  }
  timing_.paths.CountInvalid(result.invalid_origins);
  return true;
}

bool RawFetcher::Fetch() { return Record(DoFetch()); }

bool RawFetcher::FetchNext() { return Record(DoFetchNext()); }

bool RawFetcher::FetchIf(absl::FunctionRef<bool(const Context&)> fn) {
  return Record(DoFetchIf(fn));
}

bool RawFetcher::FetchNextIf(absl::FunctionRef<bool(const Context&)> fn) {
  return Record(DoFetchNextIf(fn));
}

// TimerHandler.

TimerHandler::TimerHandler(EventLoop* event_loop, std::function<void()> fn)
    : event_loop_(event_loop),
      fn_(std::move(fn)),
      timing_(std::make_unique<timing::TimerTiming>()) {}

TimerHandler::~TimerHandler() = default;

monotonic_clock::time_point TimerHandler::Call(
    monotonic_clock::time_point event_time) {
  event_loop_->SetTimerContext(event_time);
  const monotonic_clock::time_point start = event_loop_->monotonic_now();
  ++timing_->count;
  event_loop_->deferred_samples_.Record(&timing_->wakeup_latency,
                                        start - event_time);
  tracing::lttng::TraceTimerWakeup(timing_.get(), Ns(event_time), Ns(start));
  if (tracing::EventRing* ring = event_loop_->trace_ring_.get())
    ring->CallStart(kTimerStart, trace_index_, Ns(start), Ns(event_time));
  // Named after it was made (set_name) or made while running: known now.
  if (timing_->origin_id == 0)
    timing_->origin_id = event_loop_->OriginIdOf(*this);
  event_loop_->BeginCallbackPaths(
      start,
      PathOrigin{.id = timing_->origin_id,
                 .hops = 1,
                 .monotonic_time_ns = event_time.time_since_epoch().count()});
  tracing::lttng::TraceCallbackStart(timing_.get(), Ns(event_time));
  event_loop_->RunCallback(callback_kind_, timing_->name, {}, fn_);
  tracing::lttng::TraceCallbackEnd(timing_.get());
  const monotonic_clock::time_point end = event_loop_->monotonic_now();
  event_loop_->deferred_samples_.Record(&timing_->handler_time, end - start);
  if (tracing::EventRing* ring = event_loop_->trace_ring_.get())
    ring->CallEnd(kTimerEnd, trace_index_, Ns(end), Ns(start));
  return end;
}

monotonic_clock::time_point TimerHandler::NextScheduledTime(
    monotonic_clock::time_point event_time, monotonic_clock::duration period,
    monotonic_clock::time_point end) {
  monotonic_clock::time_point next = event_time + period;
  if (next < end) {
    // Scheduled times strictly before `end` have passed with no call.
    const int64_t missed =
        (end - next + period - std::chrono::nanoseconds(1)) / period;
    timing_->missed_cycles += static_cast<uint32_t>(missed);
    if (tracing::EventRing* ring = event_loop_->trace_ring_.get())
      ring->MissedCycles(trace_index_, static_cast<uint32_t>(missed), Ns(end));
    next += missed * period;
  }
  return next;
}

void TimerHandler::SetSchedule(monotonic_clock::time_point base,
                               monotonic_clock::duration period) {
  CHECK_GE(period.count(), 0) << "timer " << name() << ": negative period";
  if (base < monotonic_clock::epoch()) {
    const int64_t ns = base.time_since_epoch().count();
    LOG(FATAL) << "timer \"" << name() << "\" of event loop "
               << event_loop_->name() << " scheduled for "
               << (ns < 0 ? "-" : "") << std::abs(ns / 1000000000) << "."
               << std::setw(9) << std::setfill('0') << std::abs(ns % 1000000000)
               << " s, before the monotonic clock's epoch; schedule it at or "
                  "after 0";
  }
  base_ = base;
  period_ = period;
  enabled_ = true;
  ++generation_;
}

void TimerHandler::ClearSchedule() {
  enabled_ = false;
  ++generation_;
}

TimerHandler::DueCall TimerHandler::RunDueCall() {
  DueCall call;
  call.event_time = base_;
  const uint64_t generation = generation_;
  const bool repeating = period_ > monotonic_clock::duration::zero();
  if (!repeating) enabled_ = false;
  call.end = Call(call.event_time);
  // Rescheduled or disabled by the handler: that wins.
  call.rescheduled = generation != generation_;
  if (repeating && !call.rescheduled) {
    base_ = NextScheduledTime(call.event_time, period_, call.end);
    call.next = base_;
  }
  return call;
}

// PhasedLoopHandler.

PhasedLoopHandler::PhasedLoopHandler(EventLoop* event_loop,
                                     std::function<void(int)> fn,
                                     monotonic_clock::duration interval,
                                     monotonic_clock::duration offset)
    : event_loop_(event_loop),
      fn_(std::move(fn)),
      schedule_(interval, offset, event_loop->monotonic_now()) {
  timer_ = event_loop->AddInternalTimer([this]() { HandleTimer(); });
  timer_->callback_kind_ = "phased loop";
}

PhasedLoopHandler::~PhasedLoopHandler() = default;

void PhasedLoopHandler::set_interval_and_offset(
    monotonic_clock::duration interval, monotonic_clock::duration offset,
    std::optional<monotonic_clock::time_point> monotonic_now) {
  schedule_.SetIntervalAndOffset(interval, offset, monotonic_now);
}

void PhasedLoopHandler::Reschedule(monotonic_clock::time_point monotonic_now) {
  cycles_elapsed_ += schedule_.Iterate(monotonic_now);
  timer_->Schedule(schedule_.sleep_time());
}

void PhasedLoopHandler::Start() {
  const monotonic_clock::time_point now = event_loop_->monotonic_now();
  schedule_.Reset(now);
  Reschedule(now);
  // Counted again when the first call comes.
  cycles_elapsed_ = 0;
}

void PhasedLoopHandler::HandleTimer() {
  cycles_elapsed_ += schedule_.Iterate(event_loop_->monotonic_now());
  if (cycles_elapsed_ > 1) {
    timer_->timing_->missed_cycles +=
        static_cast<uint32_t>(cycles_elapsed_ - 1);
    if (tracing::EventRing* ring = event_loop_->trace_ring_.get())
      ring->MissedCycles(timer_->trace_index_, cycles_elapsed_ - 1,
                         Ns(event_loop_->monotonic_now()));
  }
  const int cycles_elapsed = cycles_elapsed_;
  cycles_elapsed_ = 0;
  fn_(cycles_elapsed);
  // At the boundary worked out when the handler started, even if it has
  // passed (then at once), or where set_interval_and_offset or Reschedule
  // in the handler moved it.
  timer_->Schedule(schedule_.sleep_time());
}

// WatcherState.

WatcherState::WatcherState(EventLoop* event_loop, const Channel* channel,
                           std::function<void(const Context&, const void*)> fn)
    : event_loop_(event_loop), channel_(channel), fn_(std::move(fn)) {
  timing_.channel_index = event_loop->ChannelIndex(channel);
  event_loop->timing_entries_.watchers.push_back(&timing_);
}

WatcherState::~WatcherState() {
  std::erase(event_loop_->timing_entries_.watchers, &timing_);
}

void WatcherState::Call(const Context& context, uint32_t invalid_origins) {
  Context delivered = context;
  if (!with_data_) delivered.data = nullptr;
  event_loop_->set_context(delivered);
  const monotonic_clock::time_point start = event_loop_->monotonic_now();
  ++timing_.count;
  timing_.wakeup_latency.Record(start - context.monotonic_event_time);
  if (tracing::EventRing* ring = event_loop_->trace_ring_.get()) {
    ring->CallStart(kWatcherStart, trace_index_, Ns(start),
                    Ns(context.monotonic_event_time), context.queue_index);
    // Forwarded from another node: where it was sent there, so a merged
    // snapshot can draw the flow from that node's send.
    if (context.remote_queue_index != Context::kInvalidQueueIndex &&
        context.monotonic_remote_time != context.monotonic_event_time) {
      ring->RemoteReceive(trace_index_, context.remote_queue_index, Ns(start),
                          Ns(context.monotonic_remote_time));
    }
  }
  const int64_t overrun = timing_.paths.Record(context.origins, start);
  if (tracing::EventRing* ring = event_loop_->trace_ring_.get();
      overrun > 0 && ring != nullptr) {
    ring->PathDeadline(trace_index_, Ns(start), overrun);
  }
  timing_.paths.CountInvalid(invalid_origins);
  event_loop_->BeginCallbackPaths(start, PathOrigin());
  event_loop_->NoteOriginsRead(context.origins);
  const int64_t sent_ns = Ns(context.monotonic_event_time);
  tracing::lttng::TraceReceive(&timing_, channel_->name()->c_str(),
                               context.queue_index, sent_ns);
  tracing::lttng::TraceCallbackStart(&timing_, sent_ns);
  event_loop_->RunCallback("watcher", channel_->name()->string_view(),
                           channel_->type()->string_view(),
                           [&]() { fn_(delivered, delivered.data); });
  tracing::lttng::TraceCallbackEnd(&timing_);
  const monotonic_clock::time_point end = event_loop_->monotonic_now();
  timing_.handler_time.Record(end - start);
  if (tracing::EventRing* ring = event_loop_->trace_ring_.get())
    ring->CallEnd(kWatcherEnd, trace_index_, Ns(end), Ns(start));
}

void WatcherState::AddLost(uint32_t lost) {
  timing_.lost_messages += lost;
  if (tracing::EventRing* ring = event_loop_->trace_ring_.get())
    ring->Lost(timing_.channel_index, lost, Ns(event_loop_->monotonic_now()));
  tracing::lttng::TraceLost(&timing_, channel_->name()->c_str(), lost);
}

// EventLoop.

namespace {

std::mutex& DefaultVersionMutex() {
  static std::mutex mutex;
  return mutex;
}

std::string& DefaultVersion() {
  static std::string* version = new std::string();
  return *version;
}

}  // namespace

void EventLoop::SetDefaultVersionString(std::string_view version) {
  std::lock_guard<std::mutex> lock(DefaultVersionMutex());
  DefaultVersion() = version;
}

EventLoop::EventLoop(std::string_view name, const Configuration* configuration,
                     const Node* node)
    : name_(name), configuration_(configuration), node_(node) {
  {
    std::lock_guard<std::mutex> lock(DefaultVersionMutex());
    version_ = DefaultVersion();
  }
  CHECK(configuration != nullptr)
      << "event loop " << name << ": no configuration";
}

EventLoop::~EventLoop() {
  CHECK(timers_.empty() && watchers_.empty() && phased_loops_.empty() &&
        timing_reporter_ == nullptr)
      << "event loop " << name_
      << ": its implementation must call DestroyHandlers() in its destructor";
  if (!senders_.empty() || !fetchers_.empty()) {
    std::string channels;
    for (RawSender* sender : senders_) {
      channels += " sender:" + Describe(sender->channel());
    }
    for (RawFetcher* fetcher : fetchers_) {
      channels += " fetcher:" + Describe(fetcher->channel());
    }
    LOG(FATAL) << "event loop " << name_
               << " destroyed before its senders and fetchers; destroy them "
                  "first:"
               << channels;
  }
}

void EventLoop::DestroyHandlers() {
  timing_reporter_.reset();
  timing_entries_.phased_loops.clear();
  phased_loops_.clear();
  internal_timers_.clear();
  timing_entries_.timers.clear();
  timers_.clear();
  watchers_.clear();
}

int EventLoop::pid() const { return getpid(); }

void EventLoop::CheckNotInCallback(std::string_view what) const {
  if (running_callbacks_ > 0) {
    LOG(FATAL) << "event loop " << name_ << ": " << what
               << " while the loop runs (inside one of its callbacks); keep "
                  "it until the loop is done, as AOS requires";
  }
}

void EventLoop::CheckChannelUsable(const Channel* channel,
                                   std::string_view what, bool readable) const {
  ChannelIndex(channel);
  if (readable && !configuration::ChannelIsReadableOnNode(*channel, node_)) {
    LOG(FATAL) << "event loop " << name_ << ": " << what << " on "
               << Describe(channel) << ": it is not readable on node "
               << node_->name()->string_view() << " (its source_node is "
               << (channel->source_node() == nullptr
                       ? std::string_view("unset")
                       : channel->source_node()->string_view())
               << ", and it is not forwarded here); check the config";
  }
}

void EventLoop::CheckNotRunning(std::string_view what) const {
  if (is_running_) {
    LOG(FATAL) << "event loop " << name_ << ": " << what
               << " must be called before the loop runs (it would allocate "
                  "on the realtime path); do it during setup";
  }
}

void EventLoop::CheckNotStarted(std::string_view what) const {
  if (started_) {
    LOG(FATAL) << "event loop " << name_ << ": " << what
               << " must be called before the loop first runs (it is read "
                  "once, when the loop starts); do it during setup";
  }
}

const Channel* EventLoop::FindChannel(std::string_view channel_name,
                                      std::string_view type,
                                      configuration::ChannelAccess access) {
  std::string why_not;
  const Channel* channel = configuration::GetChannel(
      *configuration_, channel_name, type, name_, node_, &why_not, access);
  if (channel == nullptr) {
    // The config is the user's: one line, not a stack trace.
    ExitForUserError(StrCat(why_not, "\n",
                            configuration::DescribeClosestChannels(
                                *configuration_, channel_name, type)));
  }
  return channel;
}

int EventLoop::ChannelIndex(const Channel* channel) const {
  const auto* channels = configuration_->channels();
  for (size_t i = 0; channels != nullptr && i < channels->size(); ++i) {
    if (channels->Get(i) == channel) return static_cast<int>(i);
  }
  LOG(FATAL) << "channel " << Describe(channel) << " is not from event loop "
             << name_ << "'s configuration";
  abort();
}

std::unique_ptr<RawSender> EventLoop::MakeRawSender(const Channel* channel) {
  CheckNotRunning("MakeSender");
  CheckChannelUsable(channel, "MakeSender", false);
  std::unique_ptr<RawSender> sender = DoMakeRawSender(channel);
  ReserveReportEntries();
  return sender;
}

std::unique_ptr<RawFetcher> EventLoop::MakeRawFetcher(const Channel* channel) {
  CheckNotRunning("MakeFetcher");
  CheckChannelUsable(channel, "MakeFetcher", true);
  std::unique_ptr<RawFetcher> fetcher = DoMakeRawFetcher(channel);
  ReserveReportEntries();
  ApplyPathDeadlines();
  return fetcher;
}

void EventLoop::MakeRawWatcher(
    const Channel* channel,
    std::function<void(const Context&, const void*)> watcher) {
  CheckNotRunning("MakeWatcher");
  CheckChannelUsable(channel, "MakeWatcher", true);
  for (const std::unique_ptr<WatcherState>& existing : watchers_) {
    if (existing->channel() == channel) {
      LOG(FATAL) << "event loop " << name_ << " already watches "
                 << Describe(channel) << "; one watcher per channel";
    }
  }
  watchers_.push_back(DoMakeWatcher(channel, std::move(watcher)));
  watchers_.back()->trace_index_ = next_trace_index_++;
  ReserveReportEntries();
  ApplyPathDeadlines();
}

void EventLoop::MakeRawNoArgWatcher(
    const Channel* channel, std::function<void(const Context&)> watcher) {
  MakeRawWatcher(
      channel, [watcher = std::move(watcher)](
                   const Context& context, const void*) { watcher(context); });
  watchers_.back()->with_data_ = false;
}

TimerHandler* EventLoop::AddTimer(std::function<void()> fn) {
  CheckNotRunning("AddTimer");
  timers_.push_back(DoMakeTimer(std::move(fn)));
  timers_.back()->trace_index_ = next_trace_index_++;
  timing_entries_.timers.push_back(timers_.back()->timing_.get());
  ReserveReportEntries();
  return timers_.back().get();
}

TimerHandler* EventLoop::AddInternalTimer(std::function<void()> fn) {
  internal_timers_.push_back(DoMakeTimer(std::move(fn)));
  internal_timers_.back()->trace_index_ = next_trace_index_++;
  return internal_timers_.back().get();
}

PhasedLoopHandler* EventLoop::AddPhasedLoop(std::function<void(int)> fn,
                                            monotonic_clock::duration interval,
                                            monotonic_clock::duration offset) {
  CheckNotRunning("AddPhasedLoop");
  phased_loops_.push_back(std::unique_ptr<PhasedLoopHandler>(
      new PhasedLoopHandler(this, std::move(fn), interval, offset)));
  timing_entries_.phased_loops.push_back(
      phased_loops_.back()->timer_->timing_.get());
  ReserveReportEntries();
  // Between two runs of a simulation: StartRunning() will not start it.
  if (started_) phased_loops_.back()->Start();
  return phased_loops_.back().get();
}

void EventLoop::OnRun(std::function<void()> fn) {
  CheckNotStarted("OnRun");
  on_run_.push_back(std::move(fn));
}

void EventLoop::SetVersionString(std::string_view version) {
  CheckNotStarted("SetVersionString");
  version_ = version;
}

void EventLoop::SkipTimingReport() {
  CheckNotStarted("SkipTimingReport");
  skip_timing_report_ = true;
}

void EventLoop::SetRuntimeRealtimePriority(int priority) {
  CheckNotStarted("SetRuntimeRealtimePriority");
  CHECK(priority >= 0 && priority <= 99)
      << "event loop " << name_ << ": realtime priority " << priority
      << " is outside 0..99";
  priority_ = priority;
}

void EventLoop::SetRuntimeAffinity(const cpu_set_t& cpus) {
  CheckNotStarted("SetRuntimeAffinity");
  CHECK_GT(CPU_COUNT(&cpus), 0)
      << "event loop " << name_ << ": affinity names no CPU";
  affinity_ = cpus;
}

cpu_set_t EventLoop::DefaultAffinity() {
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &all);
  return all;
}

bool EventLoop::pinned() const {
  const cpu_set_t all = DefaultAffinity();
  return !CPU_EQUAL(&affinity_, &all);
}

void EventLoop::GuardCallbacksAgainstAllocation(AllocationPolicy policy) {
  CheckNotStarted("GuardCallbacksAgainstAllocation");
  allocation_policy_ = policy;
}

void EventLoop::NoteAllocations(const GuardedCallback& callback) {
  realtime_allocations_ += callback.allocations;
  std::string what = StrCat(callback.kind, " \"", callback.name, "\"");
  if (!callback.type.empty()) StrAppend(&what, " (", callback.type, ")");
  if (std::find(allocation_warned_.begin(), allocation_warned_.end(), what) !=
      allocation_warned_.end()) {
    return;
  }
  LOG(WARNING) << "event loop " << name_ << ": " << what << " allocated "
               << callback.allocations
               << " times in one call while running at realtime priority "
                  "(counted, not aborted: --die_on_malloc=false); further "
                  "allocations of it are only counted";
  allocation_warned_.push_back(std::move(what));
}

void EventLoop::set_cpu_latency_limit(int32_t limit_us, std::string_view cpus) {
  // Each ShmEventLoop::Run() takes the limit anew.
  CheckNotRunning("set_cpu_latency_limit");
  cpu_latency_limit_us_ = limit_us;
  cpu_latency_limit_cpus_ = cpus;
}

void EventLoop::set_wakeup_polling(int32_t busy_poll_us,
                                   std::string_view idle_cpus) {
  CheckNotRunning("set_wakeup_polling");
  busy_poll_us_ = busy_poll_us;
  idle_poll_cpus_ = idle_cpus;
}

void EventLoop::StartRunning() {
  CHECK(!is_running_) << "event loop " << name_ << " started twice";
  // A realtime loop's callbacks may not allocate, in simulation too (AOS
  // marks them realtime in both).
  if (priority_ > 0 && !allocation_policy_.has_value()) {
    GuardCallbacksAgainstAllocation(FLAGS_die_on_malloc
                                        ? AllocationPolicy::kAbort
                                        : AllocationPolicy::kCount);
  }
  if (!started_) DeclareConfiguredPathDeadlines();
  started_ = true;
  if (timing_reporter_ != nullptr) {
    // Run() again (ShmEventLoop, as AOS's may be): the same reporter and
    // timer, in a new window.
    const auto period = std::chrono::milliseconds(FLAGS_timing_report_ms);
    timing_reporter_->StartWindow();
    timing_report_timer_->Schedule(monotonic_now() + period, period);
  } else if (FLAGS_timing_reports && !skip_timing_report_) {
    std::string why_not;
    const Channel* channel = configuration::GetChannel(
        *configuration_, "/aos", "aos.timing.Report", name_, node_, &why_not,
        configuration::ChannelAccess::kSend);
    const size_t header = TimingReporter::HeaderSizeBound(*this);
    if (channel == nullptr) {
      LOG(WARNING) << "event loop " << name_
                   << ": no timing reports: " << why_not;
    } else if (header > static_cast<size_t>(channel->max_size())) {
      LOG(ERROR) << "event loop " << name_ << ": no timing reports: even an "
                 << "empty report needs up to " << header
                 << " bytes, more than the max_size " << channel->max_size()
                 << " of " << Describe(channel)
                 << "; raise it (or shorten the version string)";
    } else {
      TimerHandler* timer = AddTimer([this]() {
        // Timers before this one in the same wakeup left their samples for
        // later: the report records them now.
        deferred_samples_.Fold();
        timing_reporter_->Publish();
      });
      timer->set_name("timing_reports");
      timing_report_timer_ = timer;
      timing_reporter_ =
          std::make_unique<TimingReporter>(this, MakeRawSender(channel));
      const auto period = std::chrono::milliseconds(FLAGS_timing_report_ms);
      if (period.count() <= 0) {
        ExitForUserError(StrCat("--timing_report_ms=", FLAGS_timing_report_ms,
                                " is not a report window: give 1 or more"));
      }
      timing_reporter_->StartWindow();
      timer->Schedule(monotonic_now() + period, period);
    }
  }
  for (const std::unique_ptr<PhasedLoopHandler>& phased_loop : phased_loops_) {
    phased_loop->Start();
  }
  TraceRegisterCallbacks(*this);
  // After the timing report's timer was made.
  MakeAskedTraceRing();
  WriteTraceNames();
  is_running_.store(true, std::memory_order_release);
  SetTimerContext(monotonic_now());
  ++running_callbacks_;
  for (const std::function<void()>& fn : on_run_) fn();
  --running_callbacks_;
  ClearContext();
}

void EventLoop::ResumeRunning() {
  CHECK(started_) << "event loop " << name_
                  << " resumed without having started";
  WriteTraceNames();
  is_running_.store(true, std::memory_order_release);
}

void EventLoop::ReserveReportEntries() {
  // Only between two runs of a simulation is there a reporter already.
  if (timing_reporter_ != nullptr) timing_reporter_->ReserveEntries();
}

void EventLoop::SetPathDeadline(std::string_view channel_name,
                                monotonic_clock::duration deadline) {
  CheckNotRunning("SetPathDeadline");
  bool known = false;
  for (const Channel* channel : *configuration_->channels()) {
    known |= channel->name()->string_view() == channel_name;
  }
  if (!known) {
    LOG(FATAL) << "event loop " << name_ << ": SetPathDeadline for "
               << InlinePrintable(channel_name)
               << ", a channel name the configuration does not have";
  }
  path_deadlines_.emplace_back(std::string(channel_name), deadline);
  ApplyPathDeadlines();
}

void EventLoop::ApplyPathDeadlines() {
  for (const auto& [name, deadline] : path_deadlines_) {
    for (const std::unique_ptr<WatcherState>& watcher : watchers_) {
      if (watcher->channel()->name()->string_view() == name) {
        watcher->SetPathDeadline(deadline);
      }
    }
    for (RawFetcher* fetcher : fetchers_) {
      if (fetcher->channel()->name()->string_view() == name) {
        fetcher->SetPathDeadline(deadline);
      }
    }
  }
}

void EventLoop::DeclareConfiguredPathDeadlines() {
  if (configuration_->applications() == nullptr) return;
  for (const Application* application : *configuration_->applications()) {
    if (application->name() == nullptr ||
        application->name()->string_view() != name_ ||
        application->path_deadlines() == nullptr) {
      continue;
    }
    for (const PathDeadline* declared : *application->path_deadlines()) {
      const std::string_view channel = declared->channel() == nullptr
                                           ? std::string_view()
                                           : declared->channel()->string_view();
      bool known = false;
      for (const Channel* candidate : *configuration_->channels()) {
        known |= candidate->name()->string_view() == channel;
      }
      if (!known || declared->deadline_ns() <= 0) {
        ExitForUserError(
            StrCat("event loop ", name_, ": the configuration's application ",
                   InlinePrintable(name_), " has path_deadlines {channel ",
                   InlinePrintable(channel), ", deadline_ns ",
                   declared->deadline_ns(), "}: ",
                   known ? "deadline_ns must be positive"
                         : "no channel of the configuration has that name"));
      }
      path_deadlines_.emplace_back(
          std::string(channel),
          std::chrono::nanoseconds(declared->deadline_ns()));
    }
  }
  ApplyPathDeadlines();
}

void EventLoop::BeginCallbackPaths(monotonic_clock::time_point start,
                                   const PathOrigin& self) {
  callback_start_ = start;
  callback_self_origin_ = self;
  callback_origins_dropped_here_ = 0;
  callback_origins_.Clear();
}

void EventLoop::NoteOriginsRead(const PathOrigins& origins) {
  if (callback_start_ == monotonic_clock::min_time) return;
  const uint32_t before = callback_origins_.dropped();
  callback_origins_.Merge(origins);
  callback_origins_dropped_here_ +=
      callback_origins_.dropped() - before - origins.dropped();
}

const PathOrigins* EventLoop::OriginsToSend(PathOrigins* scratch,
                                            uint32_t* dropped_here) const {
  if (!callback_origins_.empty() || callback_origins_.dropped() > 0) {
    *scratch = callback_origins_.NextHop();
    *dropped_here = callback_origins_dropped_here_;
    return scratch;
  }
  if (callback_self_origin_.id == 0) return nullptr;
  scratch->Clear();
  scratch->Add(callback_self_origin_);
  return scratch;
}

uint32_t EventLoop::OriginIdOf(const TimerHandler& timer) const {
  return PathOriginId(
      node_ == nullptr ? std::string_view() : node_->name()->string_view(),
      name_, timer.callback_kind_ == "timer" ? "timer" : "phased_loop",
      timer.name());
}

void EventLoop::SetTimerContext(
    monotonic_clock::time_point monotonic_event_time) {
  ClearContext();
  context_.monotonic_event_time = monotonic_event_time;
}

void EventLoop::ClearContext() const {
  if (context_empty_but_time_) {
    // After a timer's call only the time differs from an empty context (a
    // loop's boot never changes: a simulated node reboots without loops):
    // writing the whole of it, path origins and all, twice per call, cost
    // about a tenth of a call with many timers due together.
    context_.monotonic_event_time = monotonic_clock::min_time;
  } else {
    context_ = Context();
    context_.source_boot_uuid = boot_uuid();
    context_empty_but_time_ = true;
  }
  context_ready_ = true;
}

void EventLoop::SetTraceRing(std::unique_ptr<tracing::EventRing> ring) {
  CheckNotRunning("SetTraceRing");
  trace_ring_ = std::move(ring);
}

void EventLoop::AskForTraceRing(std::string_view shm_base) {
  trace_shm_base_ = std::string(shm_base);
}

void EventLoop::MakeAskedTraceRing() {
  if (!trace_shm_base_.has_value()) return;
  const std::string shm_base = *std::move(trace_shm_base_);
  trace_shm_base_.reset();
  const std::string boot_id = boot_uuid().ToString();
  tracing::RingIdentity identity;
  identity.pid = pid();
  identity.boot_id = boot_id;
  identity.node = node_ != nullptr ? node_->name()->string_view() : "";
  identity.application = name_;
  SetTraceRing(tracing::RingFromFlags(shm_base, identity));
  ApplyConfiguredTraceTriggers();
}

void EventLoop::ApplyConfiguredTraceTriggers() {
  if (trace_ring_ == nullptr || configuration_->applications() == nullptr) {
    return;
  }
  for (const Application* application : *configuration_->applications()) {
    if (application->name() == nullptr ||
        application->name()->string_view() != name_ ||
        application->trace_triggers() == nullptr) {
      continue;
    }
    const TraceTriggers& configured = *application->trace_triggers();
    for (const auto& [field, value] :
         {std::pair<std::string_view, int64_t>{
              "wakeup_threshold_us", configured.wakeup_threshold_us()},
          {"handler_threshold_us", configured.handler_threshold_us()}}) {
      if (value < 0 || value > 1'000'000'000) {
        ExitForUserError(
            StrCat("event loop ", name_, ": the configuration's application ",
                   InlinePrintable(name_), " has trace_triggers {", field, ": ",
                   value, "}: give 0 (off) to 1000000000 us"));
      }
    }
    // A flag that is set wins; a field of the config fills in the rest.
    tracing::TriggerThresholds thresholds = trace_ring_->thresholds();
    if (thresholds.wakeup_latency_ns == 0) {
      thresholds.wakeup_latency_ns = configured.wakeup_threshold_us() * 1000;
    }
    if (thresholds.handler_time_ns == 0) {
      thresholds.handler_time_ns = configured.handler_threshold_us() * 1000;
    }
    thresholds.on_missed_cycles |= configured.on_missed_cycles();
    thresholds.on_lost_messages |= configured.on_lost_messages();
    thresholds.on_path_deadline |= configured.on_path_deadline();
    trace_ring_->set_thresholds(thresholds);
  }
}

void EventLoop::WriteTraceNames() {
  tracing::EventRing* const ring = trace_ring_.get();
  if (ring == nullptr) return;
  ring->ClearNames();
  for (const std::unique_ptr<TimerHandler>& timer : timers_) {
    ring->AddName(tracing::TrackKind::kTimer, timer->trace_index_, -1,
                  timer->name());
  }
  for (const std::unique_ptr<PhasedLoopHandler>& phased_loop : phased_loops_) {
    ring->AddName(tracing::TrackKind::kPhasedLoop,
                  phased_loop->timer_->trace_index_, -1,
                  phased_loop->timer_->name());
  }
  // The loop's own timers (ShmEventLoop's shared memory check).
  for (const std::unique_ptr<TimerHandler>& timer : internal_timers_) {
    const bool phased =
        std::any_of(phased_loops_.begin(), phased_loops_.end(),
                    [&](const std::unique_ptr<PhasedLoopHandler>& phased_loop) {
                      return phased_loop->timer_ == timer.get();
                    });
    if (!phased && !timer->name().empty()) {
      ring->AddName(tracing::TrackKind::kTimer, timer->trace_index_, -1,
                    timer->name());
    }
  }
  // Once per channel; without allocating: a simulation resumes here
  // between runs, where the allocation tests count.
  auto add_channel = [&](int channel) {
    const uint16_t index = static_cast<uint16_t>(channel);
    if (ring->HasName(tracing::TrackKind::kChannel, index)) return;
    ring->AddName(
        tracing::TrackKind::kChannel, index, -1,
        configuration_->channels()->Get(channel)->name()->string_view());
  };
  for (const std::unique_ptr<WatcherState>& watcher : watchers_) {
    ring->AddName(tracing::TrackKind::kWatcher, watcher->trace_index_,
                  watcher->timing_.channel_index,
                  watcher->channel()->name()->string_view());
    add_channel(watcher->timing_.channel_index);
  }
  for (const RawSender* sender : senders_) {
    add_channel(sender->timing().channel_index);
  }
  for (const RawFetcher* fetcher : fetchers_) {
    add_channel(fetcher->timing().channel_index);
  }
}

}  // namespace aos
