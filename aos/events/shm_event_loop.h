#ifndef AOS_EVENTS_SHM_EVENT_LOOP_H_
#define AOS_EVENTS_SHM_EVENT_LOOP_H_

// The production event loop: channels in shared memory between processes.
//
//   aos::ShmEventLoop loop(&config.message(), "ping");
//   loop.SetRuntimeRealtimePriority(5);
//   ... set up senders, watchers, timers ...
//   loop.Run();  // until Exit(), SIGINT or SIGTERM
//
// One thread: epoll over two timerfds for all the loop's timers and phased
// loops, a signalfd for SIGINT, SIGTERM and the wakeup signal senders use
// (aos/ipc_lib/lockless_queue.h), and an eventfd for Exit(). Each channel is a
// file under --shm_base
// ("<shm_base>/<channel name>/<type>.v<layout version>"), created by the
// first process that needs it with --permissions.
//
// Realtime: when Run() starts, SetRuntimeRealtimePriority() becomes
// SCHED_FIFO, SetRuntimeAffinity() pins the thread, and a realtime loop locks
// its memory (mlockall; first, as AOS does, KeepFreedHeap(): from then on
// the whole process keeps its peak heap, aos/util/keep_freed_heap.h) and,
// until Run() returns, holds a PM QoS limit on
// how long idle CPUs take to wake up (--cpu_dma_latency_us, default 0 us;
// --cpu_dma_latency_scope says which CPUs; aos/util/cpu_latency_limit.h),
// as cyclictest does: otherwise every wakeup would include the CPU's exit
// from a deep idle state. Its timing reports say which limit it held. If the
// OS refuses any of these, the loop prints one message saying what to change
// and runs on without it, unless --die_on_rt_failure. A realtime loop also
// forbids heap allocation inside its timer, phased loop and watcher
// callbacks: one that allocates aborts with a message naming the callback
// (--die_on_malloc; false only counts them, realtime_allocations()).
//
// Timers: the timers and phased loops wait in a user-space schedule
// (aos/events/timer_schedule.h), and two timerfds are armed for the two
// earliest due times (so re-arming one after it fired never makes it the
// CPU's earliest kernel timer). A wakeup runs every timer that was due, and
// scheduled, when it began, earliest scheduled time first (the same time: in
// the order they were scheduled), each measured against its own scheduled time;
// one a handler schedules in the past runs at once, in the next wakeup. So 100
// timers due at one instant cost one epoll event and one timerfd_settime, not
// 100 of each. What waits together is served in the order it began waiting,
// whichever fd epoll reports first: a message sent by a due timer's scheduled
// time is delivered before it (a tie: the message first), and a due timer
// scheduled before a waiting message was sent runs before that message.
// The schedule's room is reserved as each timer is made (before Run()
// only), so running allocates nothing.
//
// Delivery: messages are delivered in the order they were sent
// (monotonic_sent_time), across channels too, as in simulation and AOS;
// messages sent at the same nanosecond go in the order the watchers were
// made.
//
// Signals, as in AOS: while any ShmEventLoop of the process runs, SIGINT,
// SIGHUP and SIGTERM make every running loop's Run() return (once the
// watchers had what was sent before the signal); destructors then run
// normally. A second one while a handler is stuck finds the default action
// and ends the process (SA_RESETHAND). Before Run() and after it returns
// they do what they did before (stop_signals.h); nothing blocks them.
// Run() blocks the senders' wakeup signal in its thread and leaves it
// blocked: a sender may signal a watcher registration until the loop is
// destroyed, and that signal's default action kills.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "aos/events/epoll.h"
#include "aos/events/event_loop.h"
#include "aos/events/timer_anticipation.h"
#include "aos/events/timer_schedule.h"
#include "aos/util/scoped_fd.h"
#include "gflags/gflags.h"

DECLARE_string(application_name);
DECLARE_string(shm_base);
DECLARE_string(permissions);
DECLARE_bool(die_on_rt_failure);
DECLARE_string(boot_id_file);

namespace aos {

// The directory of the shared memory files: --shm_base when it was given
// (on the command line, or set in the program), else $AOS_SHM_BASE when it
// is set and not empty, else --shm_base's default (/dev/shm/aos). A starter
// sets AOS_SHM_BASE for the applications it runs, so that they share its
// --shm_base without each being told.
std::string ShmBase();

// This machine's boot as the loops see it: /proc/sys/kernel/random/boot_id,
// or the file --boot_id_file names (a container's, or a test's that plays a
// node rebooting). A --boot_id_file that cannot be read ends the program in
// one line naming it.
UUID ReadBootUuid();

}  // namespace aos
DECLARE_bool(die_on_malloc);
DECLARE_int32(cpu_dma_latency_us);
DECLARE_string(cpu_dma_latency_scope);

namespace aos {

class CpuLatencyLimit;
class IdlePoller;
namespace internal {
class StopSignals;
}  // namespace internal

namespace ipc_lib {
class QueueMemory;
}  // namespace ipc_lib

class ShmEventLoop : public EventLoop {
 public:
  // An event loop called `name` on `node` (null in a single-node config).
  // `configuration` must outlive it.
  ShmEventLoop(const Configuration* configuration, std::string_view name,
               const Node* node = nullptr);
  // As AOS makes one: called --application_name (default: the program's
  // name), on the node of `configuration` whose hostname is this machine's
  // (none in a single-node config). A multi-node config without such a node
  // ends the program in one line listing the nodes.
  explicit ShmEventLoop(const Configuration* configuration);
  ~ShmEventLoop() override;

  // Runs the loop in the calling thread until Exit(), an ExitHandle,
  // SIGINT, SIGHUP or SIGTERM. Returns the status an ExitHandle gave (OK
  // otherwise). Once it returned it may be called again, as AOS's: timers
  // keep their schedules, the OnRun callbacks run again, and watchers get
  // what is sent from the new start on (not what was sent in between).
  RunStatus Run();

  // Makes Run() return once the current callback returns (called when no
  // Run() runs, the next Run() returns at once). Thread-safe, and
  // async-signal-safe (an atomic and an eventfd write), so a signal handler
  // may call it, as with AOS's.
  void Exit() override;

  // A handle that ends Run() from any thread with a status Run() returns
  // (AOS's MakeExitHandle). Must not outlive the loop.
  std::unique_ptr<ExitHandle> MakeExitHandle();

  // After Run() returned, in the thread that ran it: delivers to the
  // watchers every message sent before this call that they have not had
  // yet, in send order as Run() does. Run() returns without them (Exit()
  // ends the wakeup it was called in; a signal, once what was sent before
  // it was delivered); a program that must not lose what was published
  // before it stopped (the logger) calls this before it closes. Messages
  // sent during the call are left; Exit() does not cut it short. Never
  // allocates.
  void DeliverRemainingMessages();

  monotonic_clock::time_point monotonic_now() const override {
    return monotonic_clock::now();
  }
  realtime_clock::time_point realtime_now() const override {
    return realtime_clock::now();
  }

  // This machine's boot (/proc/sys/kernel/random/boot_id).
  UUID boot_uuid() const override { return boot_uuid_; }

  // Calls `fn` in the loop's thread whenever `fd` is readable (level
  // triggered): how a loop serves a file descriptor another library owns,
  // e.g. an eventfd that the message bridge's DDS listener writes. Before
  // Run() only; `fd` stays the caller's and must stay open until the loop
  // is destroyed or StopReadable(fd) is called. Such callbacks are neither
  // timed in timing reports nor guarded against allocation.
  void OnReadable(int fd, std::function<void()> fn);
  // Forgets an fd given to OnReadable (before the caller closes it). Before
  // Run() or after it returned, not from inside it.
  void StopReadable(int fd);

  // Calls `fn` in the loop's thread at the end of every wakeup, once the
  // callbacks it woke for have returned: all the watchers' deliveries,
  // timers and OnReadable callbacks of one epoll_wait, and once after the
  // OnRun callbacks and the deliveries right after them. No watcher, timer
  // or OnReadable callback runs between the last one of a wakeup and `fn`,
  // so work those callbacks batch up (the message bridge's DDS writes) can
  // be finished there. A wakeup that finds messages arriving as fast as
  // they are delivered does not end until they stop: bound such batches
  // yourself. Before Run() only; one per loop. Like OnReadable callbacks,
  // `fn` is neither timed nor guarded against allocation.
  void OnWakeupEnd(std::function<void()> fn);
  // Forgets the OnWakeupEnd function (before what it points at goes away).
  // Before Run() or after it returned, not from inside it.
  void StopWakeupEnd();

  // The file a channel's queue lives in, under `shm_base` (by default
  // ShmBase() now).
  static std::string ShmPath(const Channel* channel);
  static std::string ShmPath(std::string_view shm_base, const Channel* channel);
  // The --shm_base this loop was made with: as in AOS, read once, when the
  // loop is made, for every channel it opens.
  const std::string& shm_base() const { return shm_base_; }

 protected:
  std::unique_ptr<RawSender> DoMakeRawSender(const Channel* channel) override;
  std::unique_ptr<RawFetcher> DoMakeRawFetcher(const Channel* channel) override;
  std::unique_ptr<WatcherState> DoMakeWatcher(
      const Channel* channel,
      std::function<void(const Context&, const void*)> watcher) override;
  std::unique_ptr<TimerHandler> DoMakeTimer(std::function<void()> fn) override;

 private:
  friend class ShmTimer;
  friend class ShmExitHandle;
  friend class ShmSender;
  friend class ShmFetcher;
  friend class ShmWatcher;

  // The shared memory of `channel`, opened (or created) on first use. Ends
  // the program with the queue's message (layout mismatch, permissions,
  // no space) if it cannot be used.
  ipc_lib::QueueMemory* GetQueueMemory(const Channel* channel);
  std::unique_ptr<ipc_lib::QueueMemory> OpenQueueMemory(const Channel* channel);
  // For every queue file this loop maps that was deleted or replaced:
  // says so, re-opens it, moves its senders, fetchers and watchers over,
  // and counts it in the timing report. One stat(2) per file otherwise.
  void CheckQueueFiles();

  void ApplyRealtimeSettings();
  // Holds --cpu_dma_latency_us, if this loop should (see above).
  void HoldCpuLatencyLimit();
  // Sets the epoll loop's busy-poll window (--busy_poll_us) and starts the
  // idle poller (--idle_poll), for Run(); records both for reports.
  void StartWakeupPolling();
  // Reads the senders' wakeup signals and delivers.
  void HandleSignals();
  // SIGINT, SIGHUP or SIGTERM arrived: delivers what was sent, then exits.
  void HandleStopSignal();
  // Exit(), recording `status` for Run() unless one was recorded already.
  void ExitWithStatus(absl::Status status);
  // Delivers the watchers' messages in send order: in Run(), until a
  // handler calls Exit().
  void DeliverMessages();
  // Delivers, in send order, the watchers' messages sent up to `sent_by`,
  // whatever Exit() said.
  void DeliverMessagesSentBy(monotonic_clock::time_point sent_by);
  // The watcher whose message is next in send order, among those sent up
  // to `sent_by`; null if none.
  class ShmWatcher* EarliestPending(monotonic_clock::time_point sent_by);

  // Timerfd `fd_index` fired: with timer anticipation, waits for the
  // earliest timer's time if it came early; then runs the timers due in
  // schedule order, with the messages sent by each one's scheduled time
  // before it, until
  // they are done or a handler calls Exit(); then arms the timerfd for what
  // is left (which also consumes the expiration: no read(2)). Timers that
  // come due meanwhile wait for the next wakeup, so other file descriptors
  // are served between.
  void HandleTimers(int fd_index);
  // DeliverMessages(), but a timer scheduled before the next message was
  // sent runs before it: the order they began waiting in, as HandleTimers()
  // keeps too, whichever of the two epoll reports first. Only due timers
  // run (the message was sent in the past), and only those that precede a
  // message; the rest wait for the timerfd.
  void DeliverMessagesAndEarlierTimers();
  // After timers ran (running_timers_): re-arms the timerfds (ArmTimerFds),
  // consuming the expirations they hold.
  void TimersDone();
  // When the earliest scheduled timer is due; nullopt if none is scheduled.
  std::optional<monotonic_clock::time_point> EarliestTimerTime() const;
  // Arms the two timerfds for the two earliest distinct due times of the
  // schedule (one disarmed when there is only one), keeping whichever is
  // armed for one of them already: a syscall only for a timerfd whose time
  // changes, or, with `consume_expired`, one that has expired. Not while
  // HandleTimers() runs handlers: it arms once, when they are done.
  void ArmTimerFds(bool consume_expired = false);
  // timerfd_settime of timerfd `i` for `when` (nullopt: disarmed), or
  // earlier by the timer anticipation's lead; clears an expiration not yet
  // handled.
  void SetTimerFd(int i, std::optional<monotonic_clock::time_point> when);

  // --shm_base and --permissions when the loop was made.
  const std::string shm_base_;
  const mode_t permissions_;
  internal::EPoll epoll_;
  ScopedFd signal_fd_;
  // Every ShmTimer (timers, phased loops, the loop's own), by when it is
  // due; each reserves its room when made.
  TimerSchedule timer_schedule_;
  // Two kernel timers, whatever the number of timers: armed for the two
  // earliest distinct due times of timer_schedule_ (armed_for_; nullopt
  // when disarmed). When one fires, the other already holds the next time,
  // so re-arming the first for a later time never makes it the CPU's
  // earliest kernel timer (which would reprogram the clock device, dear on
  // a VM: docs/benchmarks.md, "Timers at scale"). While HandleTimers() runs
  // handlers they are left as they are, and set once they return.
  ScopedFd timer_fds_[2];
  std::optional<monotonic_clock::time_point> armed_for_[2];
  // What each was given to the kernel: armed_for_, or earlier by the lead.
  std::optional<monotonic_clock::time_point> kernel_armed_for_[2];
  // --timer_anticipation_us, from the start of Run().
  TimerAnticipation timer_anticipation_;
  bool running_timers_ = false;
  // While HandleTimers() re-arms the timerfds: the time the anticipation
  // measures the next wait from (TimerAnticipation::KernelTime), when the
  // earliest timer was due as the wakeup began (or the clock then, if
  // earlier), never before last_timer_wakeup_due_; nullopt elsewhere (the
  // clock then).
  std::optional<monotonic_clock::time_point> timer_wakeup_due_;
  // The latest such time of any timer wakeup so far.
  monotonic_clock::time_point last_timer_wakeup_due_ =
      monotonic_clock::min_time;
  // While Run() runs: SIGINT, SIGHUP and SIGTERM end it.
  std::unique_ptr<internal::StopSignals> stop_signals_;
  // Which Exit came first: none, Exit() (OK: nothing to keep, so no lock),
  // or ExitWithStatus(), whose status is kept under the mutex for Run().
  enum ExitState : int { kNoExit, kExitOk, kExitWithStatus };
  std::atomic<int> exit_state_{kNoExit};
  std::mutex exit_mutex_;
  absl::Status exit_status_;
  // Registered with OnReadable.
  std::vector<int> readable_fds_;
  // Given to OnWakeupEnd, if any.
  std::function<void()> on_wakeup_end_;
  std::vector<std::pair<const Channel*, std::unique_ptr<ipc_lib::QueueMemory>>>
      queues_;
  std::vector<class ShmSender*> shm_senders_;
  std::vector<class ShmFetcher*> shm_fetchers_;
  std::vector<class ShmWatcher*> shm_watchers_;
  // Once per --timing_report_ms while Run() runs: CheckQueueFiles() and
  // each sender's audit of the watchers it signals.
  // Made by AddInternalTimer (its own index in the flight recorder's ring).
  TimerHandler* shared_memory_check_ = nullptr;
  // Held from the start of Run() until it returns.
  std::unique_ptr<CpuLatencyLimit> cpu_latency_limit_;
  // --idle_poll's pollers, from the start of Run() until it returns.
  std::unique_ptr<IdlePoller> idle_poller_;
  // Run() was called (at least once).
  bool ran_ = false;
  // True while Run() dispatches events (StopReadable must wait).
  bool in_run_ = false;
  // Run() returned.
  bool returned_ = false;
  const UUID boot_uuid_ = ReadBootUuid();
};

}  // namespace aos

#endif  // AOS_EVENTS_SHM_EVENT_LOOP_H_
