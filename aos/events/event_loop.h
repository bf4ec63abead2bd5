#ifndef AOS_EVENTS_EVENT_LOOP_H_
#define AOS_EVENTS_EVENT_LOOP_H_

// The event loop: one thread that reacts to timers, phased loops and new
// messages, and measures every callback it runs.
//
// clang-format off
//   std::unique_ptr<aos::EventLoop> loop = factory.MakeEventLoop("ping");
//   aos::Sender<aos::examples::Ping> sender =
//       loop->MakeSender<aos::examples::Ping>("/test");
//   loop->MakeWatcher("/test", [&](const aos::examples::Pong& pong) {
//     LOG(INFO) << "pong " << pong.value();
//   });
//   aos::TimerHandler* timer = loop->AddTimer([&]() {
//     auto builder = sender.MakeBuilder();
//     aos::examples::Ping::Builder ping =
//         builder.MakeBuilder<aos::examples::Ping>();
//     ping.add_value(++count);
//     builder.CheckOk(builder.Send(ping.Finish()));
//   });
//   timer->set_name("ping");
//   loop->OnRun([&]() {
//     timer->Schedule(loop->monotonic_now(), std::chrono::milliseconds(10));
//   });
// clang-format on
//
// Life cycle: an event loop is set up (senders, fetchers, watchers, timers,
// phased loops, OnRun callbacks) and then run; in simulation by
// SimulatedEventLoopFactory, in production by ShmEventLoop::Run(). Setting
// anything up while the loop runs is a programming error and aborts with a
// message: it would allocate on the realtime path. "Before Run() only"
// below means exactly that: a simulated loop is not running between two of
// its factory's runs (is_running()), so senders, fetchers, watchers, timers
// and phased loops may be made then, as in AOS. What is read once, when the
// loop starts (OnRun callbacks, SetVersionString, SkipTimingReport,
// priority, affinity), must come before its first run.
//
// Measurement: every timer, phased loop and watcher call is timed (wakeup
// latency, handler time, missed cycles, histograms), and so is every fetch
// and send. Once every --timing_report_ms the loop publishes an
// aos.timing.Report about itself on /aos from a timer named
// "timing_reports", which appears in its own report. docs/timing_reports.md
// defines each figure.
//
// Realtime promise: once running, sending, fetching, watcher and timer
// dispatch, recording the figures and building and sending reports never
// allocate (tested by //aos/events:simulated_event_loop_test).
//
// Threads: an event loop and everything it makes belong to one thread.

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aos/configuration.h"
#include "aos/configuration_generated.h"
#include "aos/events/allocation_guard.h"
#include "aos/events/deferred_samples.h"
#include "aos/events/path_origins.h"
#include "aos/events/phased_schedule.h"
#include "aos/events/timing_entry.h"
#include "aos/flatbuffers.h"
#include "aos/time/time.h"
#include "aos/tracing/event_ring.h"
#include "aos/util/priority_inheritance_mutex.h"
#include "aos/util/uuid.h"
#include "flatbuffers/flatbuffers.h"
#include "glog/logging.h"

namespace aos {

class EventLoop;
class TimingReporter;

// What the loop knows about the message (or timer event) being handled.
struct Context {
  // For a message: when it was sent, on the sender's monotonic clock. For a
  // timer or phased loop: the time the call was scheduled for.
  monotonic_clock::time_point monotonic_event_time = monotonic_clock::min_time;
  // The sender's realtime clock when it was sent (min_time for timers).
  realtime_clock::time_point realtime_event_time = realtime_clock::min_time;
  // For a message forwarded from another node: when it was sent there, on
  // that node's clocks. For a local message: the same as the event times.
  monotonic_clock::time_point monotonic_remote_time = monotonic_clock::min_time;
  realtime_clock::time_point realtime_remote_time = realtime_clock::min_time;
  // Position of the message in its channel; increases by one per message.
  // kInvalidQueueIndex for timers and before the first fetch.
  uint32_t queue_index = kInvalidQueueIndex;
  // queue_index on the node the message was first sent on.
  uint32_t remote_queue_index = kInvalidQueueIndex;
  // The boot of the node the message was first sent on (this node's for a
  // local message): a forwarded message from a rebooted node carries a new
  // one. For a timer or phased loop, in OnRun and outside callbacks, this
  // loop's boot (EventLoop::boot_uuid()), as in AOS.
  UUID source_boot_uuid;
  // Size in bytes of the message at `data` (0 for timers).
  size_t size = 0;
  // The message (a finished flatbuffer), valid until the handler returns (or
  // until the fetcher fetches again). Null for timers, and in a no-arg
  // watcher (size is still the message's), as in AOS.
  const void* data = nullptr;
  // AOS's: when the node a forwarded message came from put it on the
  // network. Neither our queues nor our bridge record it: always min_time
  // (docs/porting_from_aos.md).
  monotonic_clock::time_point monotonic_remote_transmit_time =
      monotonic_clock::min_time;
  // AOS's index of the pinned buffer `data` points into; -1: this
  // implementation copies every message (no pinned reads).
  int buffer_index = -1;
  // Where the message's data started (docs/timing_reports.md, "Path
  // latency"): the timers and phased loops whose calls led to it, when they
  // were scheduled (on this node's clock) and how many messages it crossed
  // since. Empty for timers and phased loops themselves, and for messages
  // from senders that pass none on.
  PathOrigins origins;

  static constexpr uint32_t kInvalidQueueIndex = 0xffffffff;
};

// Where a message forwarded from another node was first sent: what the
// message bridge (aos/network) gives RawSender::Send when it re-sends it.
struct RemoteOrigin {
  // When it was sent there, on that node's clocks.
  monotonic_clock::time_point monotonic_remote_time = monotonic_clock::min_time;
  realtime_clock::time_point realtime_remote_time = realtime_clock::min_time;
  // Its queue index there.
  uint32_t remote_queue_index = Context::kInvalidQueueIndex;
  // That node's boot.
  UUID source_boot_uuid;
  // The message's path origins, already in this node's clock (null: none).
  // They are sent as they are: forwarding is not a hop.
  const PathOrigins* origins = nullptr;
};

// Sends raw bytes on one channel. Made by EventLoop::MakeRawSender; usually
// wrapped in a Sender<T>.
class RawSender {
 public:
  // Why a send failed. Values match aos.timing.SendError (+1).
  enum class [[nodiscard]] Error{
      kOk,
      // More than frequency * channel_storage_duration messages were sent
      // within one channel_storage_duration; the message was not sent.
      kMessagesSentTooFast,
      // Something wrote outside the message buffer (past max_size); the
      // message was not sent.
      kInvalidRedzone,
  };

  virtual ~RawSender();

  // The buffer to build a message in: size() bytes at data(). A message of
  // n bytes occupies the last n bytes, as a FlatBufferBuilder leaves it.
  // Writing outside it is detected at Send() (kInvalidRedzone).
  virtual void* data() = 0;
  // The buffer's size: the channel's max_size rounded up to a multiple of 8
  // (configuration::MessageBufferSize), so a message built backwards from
  // its end is aligned. Messages may use max_size bytes of it.
  virtual size_t size() = 0;

  // Sends the last `length` bytes of data(). `length` > size() aborts with a
  // message naming the channel, the length and max_size. Never allocates.
  Error Send(size_t length);
  // Copies `length` bytes from `message` into data() and sends them.
  // `length` > size() aborts as above, before anything is written.
  Error Send(const void* message, size_t length);
  // As above, for a message forwarded from another node: receivers see
  // `origin` as the context's remote times, remote_queue_index and
  // source_boot_uuid (a local message has its own times, its own queue
  // index and this node's boot there).
  Error Send(size_t length, const RemoteOrigin& origin);
  Error Send(const void* message, size_t length, const RemoteOrigin& origin);

  // The channel, as found in the configuration.
  const Channel* channel() const { return channel_; }
  EventLoop* event_loop() { return event_loop_; }

  // Times and queue index of the last successful send.
  monotonic_clock::time_point monotonic_sent_time() const {
    return monotonic_sent_time_;
  }
  realtime_clock::time_point realtime_sent_time() const {
    return realtime_sent_time_;
  }
  uint32_t sent_queue_index() const { return sent_queue_index_; }

  // "kOk", "kMessagesSentTooFast", "kInvalidRedzone".
  static std::string_view ErrorToString(Error error);

  // Aborts if `error` is not kOk (AOS's RawSender::CheckOk): for sends that
  // must not fail. The one line it writes names the channel and `error`;
  // for kMessagesSentTooFast also the config's limit (frequency x
  // channel_storage_duration), the rate this sender tried (from the gap
  // since its last successful send, when there was one) and the field to
  // raise. Never allocates, even failing: the line is formatted on the
  // stack and written with write(2), so inside a realtime callback
  // (--die_on_malloc) it is the send that is reported, not an allocation.
  void CheckOk(Error error);

  // The path origins of the next message this sender sends, instead of
  // those of the running callback: `read` as they were read (a message's
  // context().origins, or several merged), each with one hop more when
  // sent. For code that keeps messages and sends later, outside the
  // callback that got them:
  //
  //   PathOrigins kept;                  // in the watcher of each input
  //   kept.Merge(event_loop->context().origins);
  //   ...                                // later, in a timer
  //   sender.SetOrigins(kept);
  //   builder.CheckOk(builder.Send(...));
  //
  // Without it, a send carries the origins of every message the running
  // callback was called for or fetched (the newest per origin), or, from a
  // timer or phased loop that got none, that callback itself; a forwarded
  // message (Send with a RemoteOrigin) carries its own. Never allocates.
  void SetOrigins(const PathOrigins& read);
  // The path origins of the next message exactly as given, with no hop
  // added: for code that re-sends recorded messages (log replay).
  void SetOriginsAsSent(const PathOrigins& sent);

  // What a Sender<T>::Builder builds into: the end of data(). One message
  // may be under construction at a time: allocating while another is
  // (a second live Builder, or a Detach()ed buffer not yet sent or
  // destroyed) aborts naming the channel, as does outgrowing max_size.
  flatbuffers::Allocator* builder_allocator() { return &builder_allocator_; }

  const timing::SenderTiming& timing() const { return timing_; }

  // Lets this sender be sent on from a thread other than the loop's (a
  // network library's receive thread, where a message arrived), one send
  // at a time: its user serialises them. Such a sender sends only with
  // Send(message, length[, origin]), which copies the message in and sends
  // it under the loop's lock for such sends
  // (EventLoop::HoldOtherThreadSends(), priority-inheriting); building
  // in data() (a Builder, Send(length)) aborts naming the channel, since
  // the loop may replace data() between the build and the send. The loop
  // holds the lock while it reads and resets the figures (the timing
  // report) or works on the sender (a shared memory loop re-opening a
  // replaced queue file, auditing the watchers it signals), so the loop's
  // thread waits at most one send for it and the sending thread at most
  // one report's build. Every send on such a sender, from whichever thread,
  // is left out of the loop's trace ring (which only the loop's thread
  // writes; the message's receivers still record it) and carries the path
  // origins it is given (a RemoteOrigin's, SetOrigins) or none: it is not
  // counted as a callback's. Before the loop runs; aborts otherwise.
  void AllowSendsFromAnotherThread();

 protected:
  RawSender(EventLoop* event_loop, const Channel* channel);

  // Publishes the last `length` bytes of data(), from `origin` (null: a
  // local message). On success it must set monotonic_sent_time_,
  // realtime_sent_time_ and sent_queue_index_.
  // `path_origins` (null: none) are the origins the message carries.
  virtual Error DoSend(size_t length, const RemoteOrigin* origin,
                       const PathOrigins* path_origins) = 0;

  // For implementations over shared memory: damage a send met and got past
  // (aos.timing.Sender's refused_wakeups and impossible_sent_times), for
  // the timing report. Never allocates.
  void RecordSharedMemoryDamage(uint64_t refused_wakeups,
                                uint64_t impossible_sent_times) {
    timing_.refused_wakeups += refused_wakeups;
    timing_.impossible_sent_times += impossible_sent_times;
  }

  // The loop's lock for sends from another thread, held, if this sender
  // allows them; else an empty lock. For implementations' work on the
  // sender outside a send.
  std::unique_lock<PriorityInheritanceMutex> LockIfFromAnotherThread();

  monotonic_clock::time_point monotonic_sent_time_ = monotonic_clock::min_time;
  realtime_clock::time_point realtime_sent_time_ = realtime_clock::min_time;
  uint32_t sent_queue_index_ = Context::kInvalidQueueIndex;

 private:
  void CheckLength(size_t length);
  // Aborts naming the channel and `what` if this sender allows sends from
  // another thread: those may not build in data().
  void CheckBuildsInPlace(std::string_view what) const;
  Error CountedSend(size_t length, const RemoteOrigin* origin);

  // Hands a builder the end of data(), once at a time.
  class BuilderAllocator : public flatbuffers::Allocator {
   public:
    explicit BuilderAllocator(RawSender* sender) : sender_(sender) {}
    uint8_t* allocate(size_t size) override;
    void deallocate(uint8_t*, size_t) override { allocated_ = false; }
    uint8_t* reallocate_downward(uint8_t*, size_t, size_t new_size, size_t,
                                 size_t) override;

   private:
    RawSender* const sender_;
    bool allocated_ = false;
  };

  EventLoop* const event_loop_;
  const Channel* const channel_;
  timing::SenderTiming timing_;
  BuilderAllocator builder_allocator_{this};
  // SetOrigins() or SetOriginsAsSent(): the next send's origins, if set,
  // and whether they get a hop more.
  PathOrigins set_origins_;
  bool origins_set_ = false;
  bool origins_as_sent_ = false;
  // Where a send makes the origins it carries (no object per send).
  PathOrigins send_origins_;
  // AllowSendsFromAnotherThread().
  bool from_another_thread_ = false;
};

std::ostream& operator<<(std::ostream& stream, RawSender::Error error);

// Counts the failed sends of one sender (AOS's SendFailureCounter): give it
// every send's result.
class SendFailureCounter {
 public:
  void Count(RawSender::Error error) {
    just_failed_ = error != RawSender::Error::kOk;
    failures_ += just_failed_ ? 1 : 0;
  }
  // Sends that failed so far.
  size_t failures() const { return failures_; }
  // Whether the last send counted failed.
  bool just_failed() const { return just_failed_; }

 private:
  size_t failures_ = 0;
  bool just_failed_ = false;
};

// Reads one channel: the latest message, or every message in order. Made by
// EventLoop::MakeRawFetcher; usually wrapped in a Fetcher<T>.
class RawFetcher {
 public:
  virtual ~RawFetcher();

  // Makes the latest message current. Returns true if it is newer than the
  // current one. Never allocates.
  bool Fetch();
  // Makes the next message after the current one current (the oldest one
  // still kept, if the fetcher fell behind by more than the queue; the
  // skipped ones are counted as lost). Returns false, changing nothing, if
  // there is none. Never allocates.
  bool FetchNext();
  // Like Fetch() and FetchNext(), but only if `fn` returns true for the
  // message's context, which it gets without the message (data is null and
  // buffer_index -1, as in AOS); otherwise nothing changes and the message
  // stays next. Never allocates (`fn` is not copied).
  bool FetchIf(absl::FunctionRef<bool(const Context&)> fn);
  bool FetchNextIf(absl::FunctionRef<bool(const Context&)> fn);

  // The current message; context().data is null before the first fetch.
  const Context& context() const { return context_; }
  const Channel* channel() const { return channel_; }
  EventLoop* event_loop() { return event_loop_; }

  const timing::FetcherTiming& timing() const { return timing_; }

  // Ages of the data this fetcher gets over `deadline` (from any origin)
  // count as deadline overruns in its timing report; zero: no deadline.
  // EventLoop::SetPathDeadline sets it for a channel's every reader.
  void SetPathDeadline(monotonic_clock::duration deadline) {
    timing_.paths.set_deadline(deadline);
  }

 protected:
  RawFetcher(EventLoop* event_loop, const Channel* channel);

  // Implementations update context_ and return whether there was a new
  // message, and how many messages were skipped because they were gone.
  struct FetchResult {
    bool fetched = false;
    uint32_t lost = 0;
    // Origins the fetched message claimed that could not be true
    // (PathOrigins::FromRaw): dropped from context_.origins, counted here.
    uint32_t invalid_origins = 0;
  };
  virtual FetchResult DoFetch() = 0;
  virtual FetchResult DoFetchNext() = 0;
  // The same, taking the message only if `fn(context without data)`.
  virtual FetchResult DoFetchIf(absl::FunctionRef<bool(const Context&)> fn) = 0;
  virtual FetchResult DoFetchNextIf(
      absl::FunctionRef<bool(const Context&)> fn) = 0;

  Context context_;

 private:
  bool Record(FetchResult result);

  EventLoop* const event_loop_;
  const Channel* const channel_;
  timing::FetcherTiming timing_;
};

// A timer: calls its handler at scheduled times. Made by EventLoop::AddTimer.
class TimerHandler {
 public:
  TimerHandler(const TimerHandler&) = delete;
  TimerHandler& operator=(const TimerHandler&) = delete;
  virtual ~TimerHandler();

  // Calls the handler at `base`, then, if `period` is positive, every
  // `period` after it. Replaces any earlier schedule. A `base` in the past
  // calls the handler as soon as the loop gets to it (and that lateness is
  // its wakeup latency).
  //
  // When the loop is late for a repeating timer, the call serves the
  // earliest scheduled time that is due (latency is measured from it); when
  // the handler returns, every further scheduled time already passed is
  // skipped and counted in missed_cycles, and the timer continues at the
  // first scheduled time not yet passed. So a call 3.5 periods late has a
  // wakeup latency of 3.5 periods and 3 missed cycles.
  //
  // A `base` before the monotonic clock's epoch aborts naming the timer and
  // the time, as in AOS; so does a negative `period`.
  virtual void Schedule(
      monotonic_clock::time_point base,
      monotonic_clock::duration period = monotonic_clock::duration::zero()) = 0;
  // Stops calling the handler. Also valid inside the handler.
  virtual void Disable() = 0;
  // True when no call is scheduled.
  virtual bool IsDisabled() = 0;

  // Names the timer in timing reports (AOS users know "ping",
  // "timing_reports"). Set it before Run(): a long name may allocate.
  void set_name(std::string_view name) { timing_->name = name; }
  const std::string& name() const { return timing_->name; }

  // Its figures of the current report window. While a ShmEventLoop runs
  // timers due together, the samples of those that already ran are
  // recorded only after the last (deferred_samples.h): a handler that
  // reads another timer's recorders then does not see that timer's
  // samples of this wakeup yet, though its count already includes the
  // call.
  const timing::TimerTiming& timing() const { return *timing_; }

 protected:
  TimerHandler(EventLoop* event_loop, std::function<void()> fn);

  // The schedule is kept here, so every implementation follows the same
  // rules; implementations only wake the loop at the scheduled time (a
  // timerfd, a simulated event). They call SetSchedule() from Schedule(),
  // ClearSchedule() from Disable(), and RunDueCall() once the scheduled time
  // has come.
  void SetSchedule(monotonic_clock::time_point base,
                   monotonic_clock::duration period);
  void ClearSchedule();
  bool schedule_enabled() const { return enabled_; }
  monotonic_clock::time_point scheduled_time() const { return base_; }
  monotonic_clock::duration period() const { return period_; }

  struct DueCall {
    // The scheduled time the call served, and when its handler returned.
    monotonic_clock::time_point event_time;
    monotonic_clock::time_point end;
    // When to call next: for a repeating timer whose handler did not
    // reschedule or disable it, the first scheduled time not yet passed at
    // `end` (the ones skipped count as missed cycles). nullopt: leave the
    // waking as the handler left it.
    std::optional<monotonic_clock::time_point> next;
    // The handler called Schedule() or Disable(): the waking is already
    // set for its new schedule.
    bool rescheduled = false;
  };
  // Calls the handler for the scheduled time, measuring it, and works out
  // the next call. A one-shot timer is disabled before its handler runs
  // (which may schedule it again).
  DueCall RunDueCall();

  EventLoop* event_loop() { return event_loop_; }

 private:
  friend class PhasedLoopHandler;
  friend class EventLoop;

  // Calls the handler for the call scheduled at `event_time`, measuring it.
  // Returns the time the handler returned.
  monotonic_clock::time_point Call(monotonic_clock::time_point event_time);

  // For a repeating timer whose call for `event_time` ended at `end`: the
  // next scheduled time not yet passed, counting skipped ones as missed.
  monotonic_clock::time_point NextScheduledTime(
      monotonic_clock::time_point event_time, monotonic_clock::duration period,
      monotonic_clock::time_point end);

  // Every call reads or writes these fields, which with timing_'s pointer
  // and an implementation's own share a few cache lines: with many timers
  // each call's memory is cold (docs/benchmarks.md, "Timers at scale").
  EventLoop* const event_loop_;
  monotonic_clock::time_point base_ = monotonic_clock::min_time;
  monotonic_clock::duration period_ = monotonic_clock::duration::zero();
  // Bumped by every Schedule and Disable, to see whether a handler did.
  uint64_t generation_ = 0;
  bool enabled_ = false;
  // Its index in the flight recorder's ring.
  uint16_t trace_index_ = 0;
  std::function<void()> fn_;
  // How an allocation guard names it: "timer", or "phased loop" for the
  // timer behind one.
  std::string_view callback_kind_ = "timer";
  // Apart from the handler: its recorders' buckets (about 30 KB) would put
  // what an implementation adds to a handler (its schedule's entry) pages
  // away from the fields above, and a loop running many timers back to
  // back would miss the TLB on each.
  const std::unique_ptr<timing::TimerTiming> timing_;
};

// Calls its handler at the boundaries `offset + k * interval` of the
// monotonic clock with how many boundaries passed since the last call, with
// AOS's semantics (its PhasedLoopHandler over time::PhasedLoop, here
// PhasedSchedule):
// - the first call is at the first boundary strictly after the loop starts
//   running, with cycles_elapsed 1;
// - each call works out, when its handler starts, the first boundary after
//   that moment and the boundaries passed since the one it was scheduled
//   for (cycles_elapsed; all but one are counted as missed_cycles); the next
//   call is at that boundary, so a handler that runs past it is called again
//   at once, for it, counting the boundaries passed meanwhile.
// Made by EventLoop::AddPhasedLoop.
class PhasedLoopHandler {
 public:
  ~PhasedLoopHandler();

  // Names the phased loop in timing reports.
  void set_name(std::string_view name) { timer_->timing_->name = name; }
  const std::string& name() const { return timer_->timing_->name; }

  // Changes the grid, as AOS's does: the change takes effect when the
  // handler returns (if called from it) or at Reschedule(). Without
  // `monotonic_now`, the next call is at most one interval after the one
  // already planned; with it, the next call is at the first new boundary
  // after `monotonic_now`, counting 1 (PhasedSchedule::SetIntervalAndOffset).
  // 0 <= offset < interval, or it aborts.
  void set_interval_and_offset(
      monotonic_clock::duration interval, monotonic_clock::duration offset,
      std::optional<monotonic_clock::time_point> monotonic_now = std::nullopt);

  // Plans the next call at the first boundary after `monotonic_now`,
  // adding the boundaries passed to the next call's cycles_elapsed (AOS's
  // Reschedule): how set_interval_and_offset takes effect outside the
  // handler. From inside the handler the plan made when it returns wins.
  void Reschedule(monotonic_clock::time_point monotonic_now);

  // Its figures of the current report window; while a ShmEventLoop runs
  // timers due together, as TimerHandler::timing() says.
  const timing::TimerTiming& timing() const { return *timer_->timing_; }

 private:
  friend class EventLoop;

  PhasedLoopHandler(EventLoop* event_loop, std::function<void(int)> fn,
                    monotonic_clock::duration interval,
                    monotonic_clock::duration offset);

  void HandleTimer();
  void Start();

  EventLoop* const event_loop_;
  std::function<void(int)> fn_;
  PhasedSchedule schedule_;
  // Boundaries counted for the next call.
  int cycles_elapsed_ = 0;
  // A one-shot timer at each boundary; not listed among the loop's timers.
  TimerHandler* timer_ = nullptr;
};

// The per-watcher state an implementation keeps; the base measures calls.
class WatcherState {
 public:
  virtual ~WatcherState();

  const Channel* channel() const { return channel_; }
  const timing::WatcherTiming& timing() const { return timing_; }
  // As RawFetcher::SetPathDeadline.
  void SetPathDeadline(monotonic_clock::duration deadline) {
    timing_.paths.set_deadline(deadline);
  }

 protected:
  WatcherState(EventLoop* event_loop, const Channel* channel,
               std::function<void(const Context&, const void*)> fn);

  // Calls the handler on the message described by `context`, measuring it
  // (its path ages too). `invalid_origins`: origins the message claimed
  // that could not be true, dropped from context.origins.
  void Call(const Context& context, uint32_t invalid_origins = 0);
  // Counts messages the watcher never saw (and records them in the flight
  // recorder's ring and as an LTTng event).
  void AddLost(uint32_t lost);

 private:
  friend class EventLoop;

  EventLoop* const event_loop_;
  const Channel* const channel_;
  std::function<void(const Context&, const void*)> fn_;
  timing::WatcherTiming timing_;
  // Its index in the flight recorder's ring.
  uint16_t trace_index_ = 0;
  // False for a no-arg watcher: its handler sees no data (AOS's).
  bool with_data_ = true;
};

// Aborts: "using a <what> that was not made: <why_not>" (or that it was
// default-constructed), for Sender and Fetcher used while invalid. Never
// allocates (it can be a realtime callback's Sender::CheckOk).
[[noreturn]] void DieNotMade(std::string_view what, std::string_view why_not);

// Sends messages of type T on one channel.
template <typename T>
class Sender {
 public:
  // A FlatBufferBuilder that writes straight into the sender's buffer (zero
  // copy), and sends what it built. Fields equal to their default are
  // written too (ForceDefaults), as AOS does. Movable; one builder's
  // message may be under construction per sender at a time (RawSender::
  // builder_allocator()). A message that outgrows the channel's max_size
  // aborts with a message naming the channel, what it needed and max_size:
  // raise max_size in the config.
  class Builder {
   public:
    // Holds no message; assign one from Sender::MakeBuilder().
    Builder() = default;
    explicit Builder(RawSender* sender);
    Builder(Builder&&) = default;
    Builder& operator=(Builder&&) = default;

    flatbuffers::FlatBufferBuilder* fbb() { return &fbb_; }

    // Starts a table of type U (T itself, or a sub-table of it).
    template <typename U>
    typename U::Builder MakeBuilder() {
      return typename U::Builder(fbb_);
    }

    // Finishes the message rooted at `offset` and sends it. The builder is
    // empty afterwards (another may be made).
    RawSender::Error Send(flatbuffers::Offset<T> offset);

    // Finishes the message rooted at `offset` without sending it: the bytes
    // stay in the sender's buffer, for Sender::SendDetached(). No other
    // builder of this sender may allocate until the result is sent or
    // destroyed.
    FlatbufferDetachedBuffer<T> Detach(flatbuffers::Offset<T> offset);

    // RawSender::CheckOk: aborts with one line if `error` is not kOk;
    // never allocates.
    void CheckOk(RawSender::Error error) { sender_->CheckOk(error); }

   private:
    RawSender* sender_ = nullptr;
    flatbuffers::FlatBufferBuilder fbb_;
  };

  // An invalid sender (valid() is false), as TryMakeSender returns one.
  Sender() = default;
  explicit Sender(std::unique_ptr<RawSender> sender)
      : sender_(std::move(sender)) {}
  // An invalid sender that says why it could not be made when used.
  static Sender Invalid(std::string why_not) {
    Sender sender;
    sender.why_not_ = std::move(why_not);
    return sender;
  }

  // A builder for one message. Only one may be under construction at a
  // time per sender.
  Builder MakeBuilder() { return Builder(raw_or_die()); }

  // Copies a finished flatbuffer of T and sends it.
  RawSender::Error Send(const void* data, size_t size) {
    return raw_or_die()->Send(data, size);
  }
  RawSender::Error Send(const FlatbufferDetachedBuffer<T>& message) {
    return Send(message.span().data(), message.span().size());
  }
  // Sends a message a Builder of this sender Detach()ed (it is already in
  // the sender's buffer: no copy). A buffer from another sender aborts.
  RawSender::Error SendDetached(FlatbufferDetachedBuffer<T> detached);
  // Parses `json` with the channel's schema (embedded in the flattened
  // config) and sends it. InvalidArgument, naming the channel, the line and
  // column and the field, for malformed JSON, a field T lacks, or a message
  // larger than max_size; FailedPrecondition when the config has no schema
  // for the channel or the send failed (kMessagesSentTooFast...). Allocates:
  // for tools and tests, not realtime code.
  absl::Status SendJson(std::string_view json);

  // RawSender::CheckOk: aborts with one line if `error` is not kOk (or
  // this sender was not made); never allocates.
  void CheckOk(RawSender::Error error) { raw_or_die()->CheckOk(error); }

  // The path origins of the next message (RawSender::SetOrigins).
  void SetOrigins(const PathOrigins& read) { raw_or_die()->SetOrigins(read); }

  // Times and queue index of the last successful send.
  monotonic_clock::time_point monotonic_sent_time() const {
    return raw_or_die()->monotonic_sent_time();
  }
  realtime_clock::time_point realtime_sent_time() const {
    return raw_or_die()->realtime_sent_time();
  }
  uint32_t sent_queue_index() const { return raw_or_die()->sent_queue_index(); }

  const Channel* channel() const { return raw_or_die()->channel(); }
  RawSender* raw() { return sender_.get(); }
  // Whether this sender was made (AOS's valid()).
  bool valid() const { return sender_ != nullptr; }
  explicit operator bool() const { return valid(); }

 private:
  RawSender* raw_or_die() const {
    if (sender_ == nullptr) DieNotMade("Sender", why_not_);
    return sender_.get();
  }

  std::unique_ptr<RawSender> sender_;
  // Why TryMakeSender made no sender.
  std::string why_not_;
};

// Reads messages of type T from one channel.
template <typename T>
class Fetcher {
 public:
  // An invalid fetcher (valid() is false), as TryMakeFetcher returns one.
  Fetcher() = default;
  explicit Fetcher(std::unique_ptr<RawFetcher> fetcher)
      : fetcher_(std::move(fetcher)) {}
  // An invalid fetcher that says why it could not be made when used.
  static Fetcher Invalid(std::string why_not) {
    Fetcher fetcher;
    fetcher.why_not_ = std::move(why_not);
    return fetcher;
  }

  // See RawFetcher::Fetch, FetchNext, FetchIf and FetchNextIf.
  bool Fetch() { return raw_or_die()->Fetch(); }
  bool FetchNext() { return raw_or_die()->FetchNext(); }
  bool FetchIf(absl::FunctionRef<bool(const Context&)> fn) {
    return raw_or_die()->FetchIf(fn);
  }
  bool FetchNextIf(absl::FunctionRef<bool(const Context&)> fn) {
    return raw_or_die()->FetchNextIf(fn);
  }

  // A copy of the current message that outlives the fetcher's next fetch
  // (AOS's CopyFlatBuffer). Aborts if there is none. Allocates.
  FlatbufferDetachedBuffer<T> CopyFlatBuffer() const {
    const Context& current = raw_or_die()->context();
    CHECK(current.data != nullptr)
        << "CopyFlatBuffer() before a message was fetched";
    const auto* bytes = static_cast<const uint8_t*>(current.data);
    flatbuffers::FlatBufferBuilder fbb(current.size);
    fbb.PushBytes(bytes, current.size);
    return FlatbufferDetachedBuffer<T>(fbb.Release());
  }

  // The current message, or null before the first successful fetch.
  const T* get() const {
    const Context& current = raw_or_die()->context();
    return current.data == nullptr ? nullptr
                                   : flatbuffers::GetRoot<T>(current.data);
  }
  const T& operator*() const { return *get(); }
  const T* operator->() const { return get(); }

  const Context& context() const { return raw_or_die()->context(); }
  const Channel* channel() const { return raw_or_die()->channel(); }
  // Whether this fetcher was made (AOS's valid()).
  bool valid() const { return fetcher_ != nullptr; }
  explicit operator bool() const { return valid(); }

 private:
  RawFetcher* raw_or_die() const {
    if (fetcher_ == nullptr) DieNotMade("Fetcher", why_not_);
    return fetcher_.get();
  }

  std::unique_ptr<RawFetcher> fetcher_;
  // Why TryMakeFetcher made no fetcher.
  std::string why_not_;
};

namespace event_loop_internal {

// For Sender<T>::SendJson: `json` parsed with `channel`'s schema from the
// config into a finished flatbuffer no larger than its max_size, or why not
// (naming the channel).
absl::StatusOr<flatbuffers::DetachedBuffer> ChannelJsonToFlatbuffer(
    const Channel& channel, std::string_view json);
// OK for kOk; otherwise FailedPrecondition naming the channel and `error`.
absl::Status SentJson(const Channel& channel, RawSender::Error error);

// The message type a watcher callable takes: void(const T&).
template <typename F>
struct WatcherArgument
    : WatcherArgument<decltype(&std::remove_reference_t<F>::operator())> {};
template <typename C, typename R, typename A>
struct WatcherArgument<R (C::*)(A) const> {
  using type = std::remove_cvref_t<A>;
};
template <typename C, typename R, typename A>
struct WatcherArgument<R (C::*)(A)> {
  using type = std::remove_cvref_t<A>;
};
template <typename R, typename A>
struct WatcherArgument<R (*)(A)> {
  using type = std::remove_cvref_t<A>;
};

}  // namespace event_loop_internal

// What Run() returns: the status an ExitHandle gave, OK otherwise. Unlike
// absl::Status it may be ignored, as AOS code does (`loop.Run();`); it
// converts to absl::Status.
class RunStatus {
 public:
  RunStatus(absl::Status status) : status_(std::move(status)) {}
  operator const absl::Status&() const { return status_; }
  const absl::Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }

 private:
  absl::Status status_;
};

// Ends a Run() from any thread, with a status for Run() to return (AOS's
// ExitHandle; AOS's Result<void> is an absl::Status here). Made by
// ShmEventLoop::MakeExitHandle() and SimulatedEventLoopFactory::
// MakeExitHandle(); must not outlive what made it.
class ExitHandle {
 public:
  virtual ~ExitHandle() = default;
  // Run() returns once the current callback returns, with `status`. The
  // first status given wins: a later Exit() (or the loop's own Exit())
  // changes nothing.
  virtual void Exit(absl::Status status) = 0;
  void Exit() { Exit(absl::OkStatus()); }
};

class EventLoop {
 public:
  virtual ~EventLoop();

  // The loop's clocks. In simulation, simulated time; inside a handler,
  // the time the loop believes it is now.
  virtual monotonic_clock::time_point monotonic_now() const = 0;
  virtual realtime_clock::time_point realtime_now() const = 0;

  // The channel called `channel_name` of type T as this application sees it
  // (after maps), or null if the config has none (AOS's GetChannel: whether
  // this node may read or send it is not asked).
  template <typename T>
  const Channel* GetChannel(std::string_view channel_name) const {
    return configuration::GetChannel(
        *configuration_, channel_name, T::GetFullyQualifiedName(), name_, node_,
        nullptr, configuration::ChannelAccess::kExists);
  }
  // Whether the config has that channel (AOS's HasChannel).
  template <typename T>
  bool HasChannel(std::string_view channel_name) const {
    return GetChannel<T>(channel_name) != nullptr;
  }
  // The channel for reading (kRead) or sending (kSend) on this node, maps
  // and node rules applied. Ends the program (exit 1) if there is none,
  // naming the channel, type, application and node, saying why, and
  // listing the closest channels of the config: for channels named by
  // user input. `type` is the fully qualified type name.
  const Channel* FindChannel(std::string_view channel_name,
                             std::string_view type,
                             configuration::ChannelAccess access =
                                 configuration::ChannelAccess::kRead);

  // A sender for messages of type T on `channel_name`; in a multi-node
  // config this node must be the channel's source_node. A channel that is
  // missing or not sendable here ends the program naming it (FindChannel).
  // Before Run() only.
  template <typename T>
  Sender<T> MakeSender(std::string_view channel_name) {
    return Sender<T>(
        MakeRawSender(FindChannel(channel_name, T::GetFullyQualifiedName(),
                                  configuration::ChannelAccess::kSend)));
  }
  // A sender if the channel exists and this node may send on it, else an
  // invalid one (valid() false) that says why if used (AOS's
  // TryMakeSender). Before Run() only.
  template <typename T>
  Sender<T> TryMakeSender(std::string_view channel_name) {
    std::string why_not;
    const Channel* channel = configuration::GetChannel(
        *configuration_, channel_name, T::GetFullyQualifiedName(), name_, node_,
        &why_not, configuration::ChannelAccess::kSend);
    if (channel == nullptr) return Sender<T>::Invalid(std::move(why_not));
    return Sender<T>(MakeRawSender(channel));
  }
  // A fetcher for messages of type T on `channel_name`. A channel that is
  // missing or not readable here ends the program naming it. Before Run()
  // only.
  template <typename T>
  Fetcher<T> MakeFetcher(std::string_view channel_name) {
    return Fetcher<T>(
        MakeRawFetcher(FindChannel(channel_name, T::GetFullyQualifiedName())));
  }
  // A fetcher if the channel exists and is readable on this node, else an
  // invalid one (valid() false; AOS's TryMakeFetcher). Before Run() only.
  template <typename T>
  Fetcher<T> TryMakeFetcher(std::string_view channel_name) {
    std::string why_not;
    const Channel* channel = configuration::GetChannel(
        *configuration_, channel_name, T::GetFullyQualifiedName(), name_, node_,
        &why_not, configuration::ChannelAccess::kRead);
    if (channel == nullptr) return Fetcher<T>::Invalid(std::move(why_not));
    return Fetcher<T>(MakeRawFetcher(channel));
  }

  // Calls `watcher(const T&)` for every message sent on `channel_name` after
  // the loop starts running, once each, in order. Across channels, a loop
  // delivers waiting messages in the order they were sent (ties: the
  // watcher made first), in simulation and in production alike. The
  // message type T is taken from the callable's argument. Before Run() only.
  template <typename Watch>
  void MakeWatcher(std::string_view channel_name, Watch&& watcher) {
    using T = typename event_loop_internal::WatcherArgument<Watch>::type;
    MakeRawWatcher(FindChannel(channel_name, T::GetFullyQualifiedName()),
                   [watcher = std::forward<Watch>(watcher)](
                       const Context&, const void* message) mutable {
                     watcher(*flatbuffers::GetRoot<T>(message));
                   });
  }
  // Calls `watcher()` for every message of type T on `channel_name`, without
  // the message (for when only the event matters): as in AOS, context().data
  // is null in it (size is the message's), so a fetcher reads the message
  // if it is wanted after all.
  template <typename T>
  void MakeNoArgWatcher(std::string_view channel_name,
                        std::function<void()> watcher) {
    MakeRawNoArgWatcher(
        FindChannel(channel_name, T::GetFullyQualifiedName()),
        [watcher = std::move(watcher)](const Context&) { watcher(); });
  }

  // Untyped versions. `channel` must come from this loop's configuration
  // (a copy of one aborts naming it); a fetcher's or watcher's must be
  // readable on this loop's node (or it aborts naming the channel and the
  // node). A raw sender may be made on any channel of the config, as in AOS
  // (the message bridge re-sends forwarded channels with one).
  std::unique_ptr<RawSender> MakeRawSender(const Channel* channel);
  std::unique_ptr<RawFetcher> MakeRawFetcher(const Channel* channel);
  void MakeRawWatcher(
      const Channel* channel,
      std::function<void(const Context& context, const void* message)> watcher);
  // A watcher whose handler gets only the context (data null), as
  // MakeNoArgWatcher's (AOS's MakeRawNoArgWatcher).
  void MakeRawNoArgWatcher(const Channel* channel,
                           std::function<void(const Context& context)> watcher);

  // A timer calling `fn`; disabled until scheduled. Owned by the loop.
  // Before Run() only.
  TimerHandler* AddTimer(std::function<void()> fn);

  // A phased loop calling `fn(cycles_elapsed)` at every `offset + k *
  // interval`. 0 <= offset < interval. Owned by the loop. Before Run() only.
  // One added to a simulated loop between runs is first called at the first
  // boundary after it was added.
  PhasedLoopHandler* AddPhasedLoop(
      std::function<void(int cycles_elapsed)> fn,
      monotonic_clock::duration interval,
      monotonic_clock::duration offset = monotonic_clock::duration::zero());

  // Calls `fn` once when the loop starts running, before any other
  // callback; OnRun callbacks run in the order they were added. Before the
  // loop first runs: once it has started it aborts, as in AOS (the
  // callbacks have run, and would never run again).
  void OnRun(std::function<void()> fn);

  // Asks whatever runs the loop to return from its Run() once the current
  // callback returns.
  virtual void Exit() = 0;

  // True while the loop runs, OnRun callbacks included: a ShmEventLoop from
  // the start of Run() until it returns; a simulated loop during each run of
  // its factory (RunFor, RunUntil, Run), from the one it starts in on, and
  // not between them, as in AOS. Safe to read from any thread.
  bool is_running() const {
    return is_running_.load(std::memory_order_acquire);
  }

  // The application's name, as matched against the config's applications
  // and shown in timing reports.
  const std::string& name() const { return name_; }
  // The node this loop runs on; null in a single-node config.
  const Node* node() const { return node_; }
  const Configuration* configuration() const { return configuration_; }

  // Shown as "version" in timing reports. Before the loop first runs.
  void SetVersionString(std::string_view version);
  // The version string every event loop made from now on starts with (AOS's
  // SetDefaultVersionString): a program sets it once, early, e.g. to its
  // build's git hash. Thread-safe.
  static void SetDefaultVersionString(std::string_view version);
  const std::string& version_string() const { return version_; }

  // This loop publishes no timing reports (its figures are still kept).
  // Before the loop first runs.
  void SkipTimingReport();

  // Path latency (docs/timing_reports.md): ages of the data this loop's
  // watcher and fetchers of the channels named `channel_name` (any type)
  // get over `deadline` count as deadline overruns in its timing reports,
  // whatever the origin; fetchers and watchers made later too. The config
  // can say the same for an application (Application.path_deadlines),
  // which applies when the loop starts. Before Run(); a name no channel of
  // the configuration has aborts naming it.
  void SetPathDeadline(std::string_view channel_name,
                       monotonic_clock::duration deadline);

  // Run at SCHED_FIFO priority `priority` (1-99; 0 = normal scheduling)
  // once running. Before the loop first runs; priority outside 0..99
  // aborts. A loop at realtime priority runs its timer, phased loop and
  // watcher callbacks under an allocation guard (--die_on_malloc; OnRun
  // callbacks are not guarded), in every implementation.
  void SetRuntimeRealtimePriority(int priority);
  int runtime_realtime_priority() const { return priority_; }
  // Pin the loop's thread to `cpus` once running. Before the loop first
  // runs.
  void SetRuntimeAffinity(const cpu_set_t& cpus);
  // The CPUs the loop will run on: DefaultAffinity() unless
  // SetRuntimeAffinity() pinned it (AOS's).
  const cpu_set_t& runtime_affinity() const { return affinity_; }
  // Every CPU (all CPU_SETSIZE of them): a loop that is not pinned.
  static cpu_set_t DefaultAffinity();
  // Whether runtime_affinity() is not DefaultAffinity().
  bool pinned() const;

  // The limit on CPU wakeup latency (PM QoS) the loop holds while it runs,
  // in us, and the CPUs it applies to ("all", or a CPU list): shown in its
  // timing reports. -1 (and "") while it holds none; only ShmEventLoop
  // holds one (docs/event_loop.md).
  int32_t cpu_latency_limit_us() const { return cpu_latency_limit_us_; }
  const std::string& cpu_latency_limit_cpus() const {
    return cpu_latency_limit_cpus_;
  }
  // How the loop keeps its wakeups from waiting on a halted CPU, shown in
  // its timing reports: the busy-poll window after each wakeup, in us (0:
  // none), and the CPUs an idle poller keeps from halting ("": none). Only
  // ShmEventLoop does either (docs/event_loop.md).
  int32_t busy_poll_us() const { return busy_poll_us_; }
  const std::string& idle_poll_cpus() const { return idle_poll_cpus_; }

  // The context of the callback being run: the message for a watcher, the
  // scheduled time for a timer. Outside callbacks (before Run(), after each
  // callback returns, after Run()) it is empty, as in AOS: times min_time,
  // invalid queue indices, no data, and this loop's boot UUID.
  const Context& context() const {
    if (!context_ready_) ClearContext();
    return context_;
  }

  // Everything measured, for tests and tools.
  const std::vector<std::unique_ptr<TimerHandler>>& timers() const {
    return timers_;
  }
  const std::vector<std::unique_ptr<PhasedLoopHandler>>& phased_loops() const {
    return phased_loops_;
  }
  const std::vector<std::unique_ptr<WatcherState>>& watchers() const {
    return watchers_;
  }
  const std::vector<RawSender*>& senders() const { return senders_; }
  const std::vector<RawFetcher*>& fetchers() const { return fetchers_; }

  // The loop's lock for sends from another thread, held, if it has a
  // sender that allows them (RawSender::AllowSendsFromAnotherThread); else
  // an empty lock. For the loop's thread while it reads or resets the
  // figures (the timing report) or works on every sender (re-opening a
  // queue file).
  std::unique_lock<PriorityInheritanceMutex> HoldOtherThreadSends() {
    if (!has_senders_from_another_thread_) return {};
    return std::unique_lock<PriorityInheritanceMutex>(
        other_thread_sends_mutex_);
  }

  // The figures of every timer, phased loop, watcher, fetcher and sender,
  // for the timing reporter (which resets them after each report) and
  // tests. Timers added for phased loops are listed as phased loops.
  timing::LoopTimingEntries* timing_entries() { return &timing_entries_; }

  // The process id shown in timing reports.
  virtual int pid() const;

  // The flight recorder's ring this loop records its events into
  // (docs/tracing.md), or null if it has none (--trace_ring_events=0, or
  // not running yet): it is made, and its names table written, when the
  // loop starts running.
  const tracing::EventRing* trace_ring() const { return trace_ring_.get(); }

  // The boot of the node this loop runs on: every message it sends carries
  // it (Context::source_boot_uuid).
  virtual UUID boot_uuid() const = 0;

  // Allocations inside callbacks that a --die_on_malloc=false guard
  // counted instead of aborting (see GuardCallbacksAgainstAllocation).
  uint64_t realtime_allocations() const { return realtime_allocations_; }

 protected:
  EventLoop(std::string_view name, const Configuration* configuration,
            const Node* node);

  // A timer of the loop's own, not the application's: not in timing
  // reports, but in the flight recorder's ring under its name (set_name)
  // when it has one and is no phased loop's. Destroyed by DestroyHandlers().
  TimerHandler* AddInternalTimer(std::function<void()> fn);

  // What implementations provide.
  virtual std::unique_ptr<RawSender> DoMakeRawSender(
      const Channel* channel) = 0;
  virtual std::unique_ptr<RawFetcher> DoMakeRawFetcher(
      const Channel* channel) = 0;
  virtual std::unique_ptr<WatcherState> DoMakeWatcher(
      const Channel* channel,
      std::function<void(const Context&, const void*)> watcher) = 0;
  virtual std::unique_ptr<TimerHandler> DoMakeTimer(
      std::function<void()> fn) = 0;

  // Implementations call this when the loop starts running, once: it sets
  // up timing reports (unless skipped), starts phased loops, marks the loop
  // running and runs the OnRun callbacks, with the context of a timer event
  // at the time it started (SetTimerContext), as AOS does. A second call
  // aborts.
  void StartRunning();
  // Implementations call this when the loop stops running: for good
  // (ShmEventLoop), or until ResumeRunning() (a simulation between runs).
  void StopRunning() { is_running_.store(false, std::memory_order_release); }
  // Marks a loop that StartRunning() started, and StopRunning() stopped,
  // running again; runs no callback. Aborts if the loop never started.
  void ResumeRunning();

  // The context of a timer or phased-loop call for `monotonic_event_time`
  // (AOS's SetTimerContext): no message, realtime and remote times min_time,
  // invalid queue indices, this loop's boot.
  void SetTimerContext(monotonic_clock::time_point monotonic_event_time);
  // The context outside callbacks (AOS's ClearContext): as a timer's, with
  // monotonic_event_time min_time too.
  void ClearContext() const;

  void set_context(const Context& context) {
    context_ = context;
    context_ready_ = true;
    context_empty_but_time_ = false;
  }

  // Records the CPU latency limit the implementation holds, for reports.
  // Before StartRunning() (it may allocate).
  void set_cpu_latency_limit(int32_t limit_us, std::string_view cpus);
  // Records the busy-poll window and idle-polled CPUs, for reports. Before
  // StartRunning() (it may allocate).
  void set_wakeup_polling(int32_t busy_poll_us, std::string_view idle_cpus);

  // From StartRunning() on, runs every timer, phased loop and watcher
  // callback under an allocation guard with `policy` (allocation_guard.h).
  // Before StartRunning(); StartRunning() does it for a loop at realtime
  // priority, with --die_on_malloc's policy, unless it was done.
  void GuardCallbacksAgainstAllocation(AllocationPolicy policy);

  // Destroys the timing reporter, watchers, timers and phased loops.
  // Implementations must call it first thing in their destructor, while
  // what those handlers use of the implementation still exists.
  void DestroyHandlers();

  // The channel's index in the configuration.
  int ChannelIndex(const Channel* channel) const;

  // Gives the loop the ring it records its events into (null: none).
  // Before it runs.
  void SetTraceRing(std::unique_ptr<tracing::EventRing> ring);
  // Asks for the ring the --trace_* flags say: a ring file under
  // `shm_base`, or in memory if `shm_base` is empty (tracing/ring_flags.h).
  // It is made when the loop starts running: a loop that never runs leaves
  // no file, and a program whose shm base is unusable fails on its queues
  // first, in one line, not on its ring.
  void AskForTraceRing(std::string_view shm_base);

  // Where timer calls record their samples: at once, or, while an
  // implementation runs many timers in one wakeup (Begin() to End()), all
  // together after them (deferred_samples.h). An implementation that
  // begins reserves 2 samples per timer; the timing report records what is
  // pending before it reads the recorders.
  timing::DeferredSamples deferred_samples_;

 private:
  friend class RawSender;
  friend class RawFetcher;
  friend class TimerHandler;
  friend class WatcherState;
  friend class PhasedLoopHandler;

  // Abort, naming `what`, while the loop runs (makers) or once it has
  // started (settings read at the start, and OnRun).
  void CheckNotRunning(std::string_view what) const;
  void CheckNotStarted(std::string_view what) const;
  // Aborts naming `what` if one of this loop's callbacks is running.
  void CheckNotInCallback(std::string_view what) const;
  // Aborts unless `channel` is one of the configuration's (and, if
  // `readable`, readable on this node): for what MakeRaw* are given.
  void CheckChannelUsable(const Channel* channel, std::string_view what,
                          bool readable) const;
  // After an entry was added: makes room for it in the timing reporter, if
  // there is one already, so that running still never allocates.
  void ReserveReportEntries();

  // Runs `fn`, a callback of `kind` named `name` (`type` for watchers),
  // under the allocation guard if there is one; clears the context and
  // the callback's path origins after.
  template <typename F>
  void RunCallback(std::string_view kind, std::string_view name,
                   std::string_view type, F&& fn);

  // Path latency (docs/timing_reports.md), what a callback passes on:
  // a timer, phased loop or watcher callback starting at `start`, with
  // itself as an origin (id 0: not one, a watcher).
  void BeginCallbackPaths(monotonic_clock::time_point start,
                          const PathOrigin& self);
  // The running callback got a message with these origins (its watcher's,
  // or a fetch): what it sends carries them. Outside callbacks, nothing.
  void NoteOriginsRead(const PathOrigins& origins);
  // The origins a message sent now from the running callback carries (null:
  // none), made in *scratch if they need making, and in *dropped_here how
  // many this hop left out for want of room.
  const PathOrigins* OriginsToSend(PathOrigins* scratch,
                                   uint32_t* dropped_here) const;
  // When a path's age is taken: the running callback's start, or `now`
  // outside callbacks.
  monotonic_clock::time_point PathAgeTime(
      monotonic_clock::time_point now) const {
    return callback_start_ != monotonic_clock::min_time ? callback_start_ : now;
  }
  // PathOriginId of a timer or phased loop of this loop.
  uint32_t OriginIdOf(const TimerHandler& timer) const;
  // Gives every watcher and fetcher of this loop the deadline declared for
  // its channel's name, if any.
  void ApplyPathDeadlines();
  // Declares the config's path deadlines of this loop's application; a
  // channel name the config does not have is one line and exit 1.
  void DeclareConfiguredPathDeadlines();
  // After a counted callback allocated: counts it and warns once per
  // callback.
  void NoteAllocations(const GuardedCallback& callback);
  // Writes what each callback and channel index of the flight recorder's
  // ring names. Before running (it is no realtime path).
  void WriteTraceNames();
  // Makes the ring AskForTraceRing asked for, once (from StartRunning()).
  void MakeAskedTraceRing();
  // Adds the triggers the configuration's application entry of this loop
  // declares (trace_triggers) to the ring's, where no flag set them; a
  // threshold out of range ends the program naming the application.
  void ApplyConfiguredTraceTriggers();

  const std::string name_;
  const Configuration* const configuration_;
  const Node* const node_;
  std::string version_;
  std::atomic<bool> is_running_{false};
  // StartRunning() ran.
  bool started_ = false;
  bool skip_timing_report_ = false;
  int priority_ = 0;
  cpu_set_t affinity_ = DefaultAffinity();
  int32_t cpu_latency_limit_us_ = -1;
  std::string cpu_latency_limit_cpus_;
  int32_t busy_poll_us_ = 0;
  std::string idle_poll_cpus_;
  std::optional<AllocationPolicy> allocation_policy_;
  uint64_t realtime_allocations_ = 0;
  // Callbacks already warned about (counted mode only).
  std::vector<std::string> allocation_warned_;
  // Cleared on first use: the implementation's boot_uuid() is not
  // available while the base is constructed.
  mutable Context context_;
  mutable bool context_ready_ = false;
  // context_ is an empty one (ClearContext()) but for, perhaps, its
  // monotonic_event_time: clearing it needs only that.
  mutable bool context_empty_but_time_ = false;
  // How many of this loop's callbacks (OnRun included) are running now:
  // senders and fetchers may not be destroyed inside one.
  int running_callbacks_ = 0;
  // The running callback's path origins (BeginCallbackPaths): those of
  // the messages it got, itself if it is a timer or phased loop, how many
  // the merge left out, and when it started (min_time: none running).
  PathOrigins callback_origins_;
  PathOrigin callback_self_origin_{};
  uint32_t callback_origins_dropped_here_ = 0;
  monotonic_clock::time_point callback_start_ = monotonic_clock::min_time;
  // Path deadlines by channel name (SetPathDeadline, the config).
  std::vector<std::pair<std::string, monotonic_clock::duration>>
      path_deadlines_;
  // The timer behind timing reports, made at the first Run().
  TimerHandler* timing_report_timer_ = nullptr;

  std::vector<std::unique_ptr<TimerHandler>> timers_;
  // Timers behind phased loops; not reported as timers.
  std::vector<std::unique_ptr<TimerHandler>> internal_timers_;
  std::vector<std::unique_ptr<PhasedLoopHandler>> phased_loops_;
  std::vector<std::unique_ptr<WatcherState>> watchers_;
  std::vector<RawSender*> senders_;
  std::vector<RawFetcher*> fetchers_;
  std::vector<std::function<void()>> on_run_;
  PriorityInheritanceMutex other_thread_sends_mutex_;
  bool has_senders_from_another_thread_ = false;

  // Every timer's, phased loop's, watcher's, fetcher's and sender's
  // figures, for the reporter.
  timing::LoopTimingEntries timing_entries_;
  std::unique_ptr<TimingReporter> timing_reporter_;
  // The flight recorder (null: off), and the index the next timer or
  // watcher gets in it.
  std::unique_ptr<tracing::EventRing> trace_ring_;
  // Where StartRunning() makes the ring (AskForTraceRing), if asked.
  std::optional<std::string> trace_shm_base_;
  uint16_t next_trace_index_ = 0;
};

template <typename F>
void EventLoop::RunCallback(std::string_view kind, std::string_view name,
                            std::string_view type, F&& fn) {
  ++running_callbacks_;
  if (!allocation_policy_.has_value()) {
    fn();
  } else {
    GuardedCallback callback = {.loop = name_,
                                .kind = kind,
                                .name = name,
                                .type = type,
                                .policy = *allocation_policy_};
    {
      ScopedAllocationGuard guard(&callback);
      fn();
    }
    if (callback.allocations > 0) NoteAllocations(callback);
  }
  --running_callbacks_;
  ClearContext();
  callback_start_ = monotonic_clock::min_time;
  callback_self_origin_ = PathOrigin();
  callback_origins_dropped_here_ = 0;
  callback_origins_.Clear();
}

// Sender<T>::Builder.

// flatbuffers rounds its first allocation up to a multiple of 8; asking for
// max_size rounded down keeps it inside the buffer for any max_size.
template <typename T>
Sender<T>::Builder::Builder(RawSender* sender)
    : sender_(sender),
      fbb_(sender->size() & ~size_t{7}, sender->builder_allocator(), false) {
  fbb_.ForceDefaults(true);
}

template <typename T>
RawSender::Error Sender<T>::Builder::Send(flatbuffers::Offset<T> offset) {
  CHECK(sender_ != nullptr) << "Send() on an empty Sender::Builder";
  fbb_.Finish(offset);
  const size_t size = fbb_.GetSize();
  CHECK_EQ(static_cast<const void*>(fbb_.GetBufferPointer()),
           static_cast<const void*>(static_cast<uint8_t*>(sender_->data()) +
                                    sender_->size() - size))
      << "the builder's message is not at the end of the sender's buffer";
  const RawSender::Error error = sender_->Send(size);
  // Gives the buffer back: another builder may be made.
  fbb_ = flatbuffers::FlatBufferBuilder();
  return error;
}

template <typename T>
FlatbufferDetachedBuffer<T> Sender<T>::Builder::Detach(
    flatbuffers::Offset<T> offset) {
  CHECK(sender_ != nullptr) << "Detach() on an empty Sender::Builder";
  fbb_.Finish(offset);
  return FlatbufferDetachedBuffer<T>(fbb_.Release());
}

template <typename T>
RawSender::Error Sender<T>::SendDetached(FlatbufferDetachedBuffer<T> detached) {
  RawSender* const sender = raw_or_die();
  const std::span<const uint8_t> bytes = detached.span();
  const uint8_t* const end =
      static_cast<const uint8_t*>(sender->data()) + sender->size();
  if (bytes.data() + bytes.size() != end) {
    LOG(FATAL) << "SendDetached on " << sender->channel()->name()->string_view()
               << " (type " << sender->channel()->type()->string_view()
               << ") with a buffer another sender's Builder detached; send it "
                  "with that sender, or copy it with Send()";
  }
  // The bytes are in place; `detached` gives the buffer back when it goes.
  return sender->Send(bytes.size());
}

template <typename T>
absl::Status Sender<T>::SendJson(std::string_view json) {
  RawSender* const sender = raw_or_die();
  absl::StatusOr<flatbuffers::DetachedBuffer> message =
      event_loop_internal::ChannelJsonToFlatbuffer(*sender->channel(), json);
  if (!message.ok()) return message.status();
  return event_loop_internal::SentJson(
      *sender->channel(), sender->Send(message->data(), message->size()));
}

}  // namespace aos

#endif  // AOS_EVENTS_EVENT_LOOP_H_
