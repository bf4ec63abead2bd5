#include "aos/events/shm_event_loop.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>

#include "aos/events/allocation_guard.h"
#include "aos/events/queue_layout_for_channel.h"
#include "aos/events/stop_signals.h"
#include "aos/events/timer_anticipation.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/node_resolution.h"
#include "aos/util/cpu_latency_limit.h"
#include "aos/util/idle_poller.h"
#include "aos/util/keep_freed_heap.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "glog/logging.h"

DECLARE_int32(timing_report_ms);

DEFINE_string(application_name, "",
              "The name an event loop made without one (ShmEventLoop(config), "
              "as AOS makes them) runs under; empty: the program's name.");
DEFINE_string(boot_id_file, "/proc/sys/kernel/random/boot_id",
              "Where this machine's boot UUID is read: a node's boot, which "
              "remote timestamps and the message bridge carry. Another file "
              "plays another boot (a container, a test rebooting a node).");
DEFINE_string(shm_base, "/dev/shm/aos",
              "Directory of the shared memory files, one per channel. Give "
              "each independent system its own.");
DEFINE_string(permissions, "0600",
              "Octal mode of the shared memory files this process creates; "
              "e.g. 0660 to share them with a group.");
DEFINE_bool(die_on_rt_failure, false,
            "Abort instead of running on when the OS refuses realtime "
            "priority, affinity, memory locking or the CPU wakeup latency "
            "limit.");
DEFINE_int32(cpu_dma_latency_us, 0,
             "While the loop runs, keep CPUs out of idle states that take "
             "longer than this to leave (a PM QoS request, as cyclictest "
             "holds): 0 keeps idle CPUs polling. Held by loops at realtime "
             "priority; a normal-priority loop holds it only when this flag "
             "is given. -1: never.");
DEFINE_string(cpu_dma_latency_scope, "auto",
              "Which CPUs --cpu_dma_latency_us limits: 'all' "
              "(/dev/cpu_dma_latency), 'cpus' (only the CPUs the loop may run "
              "on, through their pm_qos_resume_latency_us), or 'auto' "
              "('cpus' for a loop pinned to some of the CPUs where the kernel "
              "offers per-CPU limits, 'all' otherwise).");
DEFINE_int32(busy_poll_us, 0,
             "After each wakeup, check for new events without sleeping for "
             "this long (us) before blocking: an event that comes within it "
             "is served without waking a sleeping CPU. Costs the CPU time "
             "spent checking (busy_poll_time in the timing reports). 0: "
             "block at once. At most 1000000.");
DEFINE_bool(idle_poll, false,
            "While the loop runs, keep the CPUs it may run on from halting "
            "when idle: a SCHED_IDLE thread per CPU spins whenever nothing "
            "else runs there (what booting with idle=poll does). Where idle "
            "CPUs halt (cpuidle driver 'none', as on many VMs) this makes "
            "cross-CPU wakeups several times faster; each polled CPU is 100 "
            "% busy. Pin the loop to limit it to its own CPUs.");
DEFINE_string(timer_anticipation_us, "auto",
              "Arm the kernel timer this many us before each timer's time and "
              "spin on the clock until the time comes, so handlers start on "
              "time where the kernel wakes late (Xenomai's gravity). 'auto' "
              "(the default) follows the kernel's lateness (its 75th "
              "percentile, at most 200 us) in loops running at SCHED_FIFO, "
              "none in others; a number applies to every loop; 0: never. Costs "
              "the CPU spent spinning (timer_anticipation_time "
              "in the timing reports). At most 1000.");

namespace {

// Bad values stop the program at flag parsing with one line.
bool ValidateCpuDmaLatency(const char* flag, int32_t value) {
  if (value == -1 ||
      (value >= 0 && value <= aos::CpuLatencyLimit::kMaxLimitUs)) {
    return true;
  }
  std::cerr << gflags::ProgramInvocationShortName() << ": --" << flag << "="
            << value << " is not a wakeup latency: give 0 to "
            << aos::CpuLatencyLimit::kMaxLimitUs
            << " microseconds, or -1 for no limit\n";
  exit(1);
}
DEFINE_validator(cpu_dma_latency_us, &ValidateCpuDmaLatency);

bool ValidateCpuDmaLatencyScope(const char* flag, const std::string& value) {
  if (value == "auto" || value == "all" || value == "cpus") return true;
  std::cerr << gflags::ProgramInvocationShortName() << ": --" << flag << "="
            << value << " is not a scope: give auto, all or cpus\n";
  exit(1);
}
DEFINE_validator(cpu_dma_latency_scope, &ValidateCpuDmaLatencyScope);

bool ValidateBusyPoll(const char* flag, int32_t value) {
  if (value >= 0 && value <= 1000000) return true;
  std::cerr << gflags::ProgramInvocationShortName() << ": --" << flag << "="
            << value
            << " is not a busy-poll window: give 0 (none) to 1000000 "
               "microseconds\n";
  exit(1);
}
DEFINE_validator(busy_poll_us, &ValidateBusyPoll);

// "auto" (-1), or a whole number of us from 0 to the fixed lead's bound.
std::optional<int64_t> ParseAnticipationUs(const std::string& value) {
  if (value == "auto") return -1;
  if (value.empty() || value.size() > 7 ||
      value.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const int64_t us = std::stoll(value);
  if (us * 1000 > aos::TimerAnticipation::kMaxFixedLeadNs) return std::nullopt;
  return us;
}

// What is wrong with --timer_anticipation_us=`value`, in one line.
std::string BadAnticipationMessage(const std::string& value) {
  return aos::StrCat(
      "--timer_anticipation_us=", value,
      " is not a timer anticipation: give auto, or 0 (none) "
      "to ",
      std::to_string(aos::TimerAnticipation::kMaxFixedLeadNs / 1000),
      " microseconds");
}

bool ValidateTimerAnticipation(const char*, const std::string& value) {
  if (ParseAnticipationUs(value).has_value()) return true;
  std::cerr << gflags::ProgramInvocationShortName() << ": "
            << BadAnticipationMessage(value) << "\n";
  exit(1);
}
DEFINE_validator(timer_anticipation_us, &ValidateTimerAnticipation);

}  // namespace

namespace aos {

UUID ReadBootUuid() {
  gflags::CommandLineFlagInfo info;
  if (gflags::GetCommandLineFlagInfo("boot_id_file", &info) &&
      FLAGS_boot_id_file == info.default_value) {
    return UUID::BootUuid();
  }
  absl::StatusOr<UUID> boot = UUID::BootUuidFrom(FLAGS_boot_id_file);
  if (!boot.ok()) {
    ExitForUserError(StrCat("--boot_id_file: ", boot.status().message()));
  }
  return *boot;
}

std::string ShmBase() {
  gflags::CommandLineFlagInfo info;
  const bool found = gflags::GetCommandLineFlagInfo("shm_base", &info);
  const char* inherited = getenv("AOS_SHM_BASE");
  if (found && info.is_default && FLAGS_shm_base == info.default_value &&
      inherited != nullptr && inherited[0] != '\0') {
    return inherited;
  }
  return FLAGS_shm_base;
}

}  // namespace aos

namespace aos {
namespace {

using ipc_lib::MessageInfo;
using ipc_lib::QueueMemory;

pid_t GetTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

mode_t ParsePermissions() {
  const std::string& text = FLAGS_permissions;
  char* end = nullptr;
  const long mode = strtol(text.c_str(), &end, 8);
  if (text.empty() || *end != '\0' || mode < 0 || mode > 0777) {
    ExitForUserError(StrCat("--permissions=", text,
                            " is not an octal file mode like 0600 or 0660"));
  }
  return static_cast<mode_t>(mode);
}

std::string DefaultApplicationName() {
  if (!FLAGS_application_name.empty()) return FLAGS_application_name;
  return gflags::ProgramInvocationShortName();
}

const Node* NodeOfThisMachine(const Configuration* configuration) {
  absl::StatusOr<const Node*> node =
      ResolveNode(*configuration, "", ThisHostname());
  if (!node.ok()) ExitForUserError(std::string(node.status().message()));
  return *node;
}

// The signal the loop reads through its signalfd: senders' wakeups.
sigset_t WakeupSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, ipc_lib::WakeupSignal());
  return signals;
}

// The CPUs the calling thread may run on (its affinity, once applied).
cpu_set_t ThisThreadsCpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  PCHECK(sched_getaffinity(0, sizeof(cpus), &cpus) == 0);
  return cpus;
}

// The oldest queue index still kept when `next` is the next one to be sent.
uint64_t OldestKept(uint64_t next, uint64_t queue_size) {
  return next > queue_size ? next - queue_size : 0;
}

// Fills *context with a message read from shared memory, in place (a
// Context is a few hundred bytes). Its path origins are data, not truth:
// impossible ones (PathOrigins::FromRaw) are left out and counted in
// *invalid_origins (if not null).
void FillContextFromMessage(const MessageInfo& info,
                            const PathOrigins::Raw& origins, const void* data,
                            Context* context,
                            uint32_t* invalid_origins = nullptr) {
  PathOrigins::FromRaw(origins,
                       info.monotonic_sent_time.time_since_epoch().count(),
                       invalid_origins, &context->origins);
  context->source_boot_uuid = info.source_boot_uuid;
  context->monotonic_event_time = info.monotonic_sent_time;
  context->realtime_event_time = info.realtime_sent_time;
  context->monotonic_remote_time = info.monotonic_remote_time;
  context->realtime_remote_time = info.realtime_remote_time;
  context->queue_index = info.queue_index;
  context->remote_queue_index = info.remote_queue_index;
  context->size = info.size;
  context->data = data;
  context->monotonic_remote_transmit_time = monotonic_clock::min_time;
  context->buffer_index = -1;
}

Context ContextFromMessage(const MessageInfo& info,
                           const PathOrigins::Raw& origins, const void* data,
                           uint32_t* invalid_origins = nullptr) {
  Context context;
  FillContextFromMessage(info, origins, data, &context, invalid_origins);
  return context;
}

}  // namespace

class ShmSender : public RawSender {
 public:
  ShmSender(ShmEventLoop* event_loop, const Channel* channel,
            QueueMemory* memory)
      : RawSender(event_loop, channel),
        loop_(event_loop),
        boot_uuid_(event_loop->boot_uuid()) {
    Attach(memory);
    loop_->shm_senders_.push_back(this);
  }

  ~ShmSender() override { std::erase(loop_->shm_senders_, this); }

  void* data() override { return sender_->Data(); }
  size_t size() override { return sender_->size(); }

  // Refuses watchers whose process does not map the channel's file
  // (QueueWakeUpper::AuditRegistrations). Off the send path, and between
  // sends from another thread.
  void AuditWatchers() {
    const std::unique_lock<PriorityInheritanceMutex> between_sends =
        LockIfFromAnotherThread();
    wake_upper_->AuditRegistrations();
  }

  // Sends into `memory` from now on (the channel's file was re-opened):
  // frees this sender's slot in the old file and claims one in the new.
  // Allocates.
  void Attach(QueueMemory* memory) {
    wake_upper_.reset();
    sender_.reset();
    auto sender = ipc_lib::QueueSender::Make(memory);
    if (!sender.ok()) {
      ExitForUserError(StrCat("event loop ", loop_->name(), ": sender on ",
                              channel()->name()->string_view(), " (",
                              channel()->type()->string_view(),
                              "): ", sender.status().message()));
    }
    sender_ = std::move(sender).value();
    wake_upper_ = std::make_unique<ipc_lib::QueueWakeUpper>(memory);
    refused_wakeups_seen_ = 0;
    impossible_sent_times_seen_ = 0;
  }

 protected:
  Error DoSend(size_t length, const RemoteOrigin* remote,
               const PathOrigins* path_origins) override {
    ipc_lib::MessageOrigin origin;
    origin.path_origins = path_origins;
    if (remote != nullptr) {
      origin.monotonic_remote_time = remote->monotonic_remote_time;
      origin.realtime_remote_time = remote->realtime_remote_time;
      origin.remote_queue_index = remote->remote_queue_index;
      origin.source_boot_uuid = remote->source_boot_uuid;
    } else {
      origin.source_boot_uuid = boot_uuid_;
    }
    MessageInfo sent;
    const ipc_lib::QueueSender::Result result =
        sender_->Send(length, origin, &sent);
    if (result == ipc_lib::QueueSender::Result::kGood) {
      monotonic_sent_time_ = sent.monotonic_sent_time;
      realtime_sent_time_ = sent.realtime_sent_time;
      sent_queue_index_ = sent.queue_index;
      wake_upper_->Wakeup();
    }
    RecordDamage();
    switch (result) {
      case ipc_lib::QueueSender::Result::kGood:
        return Error::kOk;
      case ipc_lib::QueueSender::Result::kMessagesSentTooFast:
        return Error::kMessagesSentTooFast;
      case ipc_lib::QueueSender::Result::kInvalidRedzone:
      case ipc_lib::QueueSender::Result::kCorrupt:  // Said by the queue.
        return Error::kInvalidRedzone;
    }
    return Error::kInvalidRedzone;
  }

 private:
  // Adds what the queue counted since the last send to the timing report.
  void RecordDamage() {
    const uint64_t refused = wake_upper_->refused_wakeups();
    const uint64_t impossible = sender_->impossible_sent_times();
    if (refused == refused_wakeups_seen_ &&
        impossible == impossible_sent_times_seen_) {
      return;
    }
    RecordSharedMemoryDamage(refused - refused_wakeups_seen_,
                             impossible - impossible_sent_times_seen_);
    refused_wakeups_seen_ = refused;
    impossible_sent_times_seen_ = impossible;
  }

  ShmEventLoop* const loop_;
  const UUID boot_uuid_;
  std::unique_ptr<ipc_lib::QueueSender> sender_;
  std::unique_ptr<ipc_lib::QueueWakeUpper> wake_upper_;
  // The queue's cumulative counts already recorded.
  uint64_t refused_wakeups_seen_ = 0;
  uint64_t impossible_sent_times_seen_ = 0;
};

class ShmFetcher : public RawFetcher {
 public:
  ShmFetcher(ShmEventLoop* event_loop, const Channel* channel,
             QueueMemory* memory)
      : RawFetcher(event_loop, channel),
        loop_(event_loop),
        reader_(std::in_place, memory),
        queue_size_(memory->layout().queue_size),
        buffer_(configuration::MessageBufferSize(*channel)),
        next_(reader_->NextIndex()) {
    loop_->shm_fetchers_.push_back(this);
  }

  ~ShmFetcher() override { std::erase(loop_->shm_fetchers_, this); }

  // Reads `memory` from now on (the channel's file was re-opened): the
  // current message stays, and FetchNext() continues with the oldest
  // message of the new file.
  void Attach(QueueMemory* memory) {
    reader_.emplace(memory);
    has_current_ = false;
    next_ = 0;
  }

 protected:
  FetchResult DoFetch() override {
    while (true) {
      const uint64_t next = reader_->NextIndex();
      if (next == 0) return {};
      const uint64_t latest = next - 1;
      if (has_current_ && current_ == latest) return {};
      const ipc_lib::QueueReader::Result result = Take(latest);
      if (result == ipc_lib::QueueReader::Result::kGood) {
        return {.fetched = true,
                .lost = 0,
                .invalid_origins = taken_invalid_origins_};
      }
      if (result == ipc_lib::QueueReader::Result::kCorrupt) {
        return {.fetched = false, .lost = 1};
      }
      // Overwritten while copying: the channel moved on; try the newest.
    }
  }

  FetchResult DoFetchNext() override {
    uint32_t lost = 0;
    while (true) {
      const uint64_t next = reader_->NextIndex();
      const uint64_t oldest = OldestKept(next, queue_size_);
      uint64_t wanted = next_;
      if (wanted >= next) return {.fetched = false, .lost = lost};
      if (wanted < oldest) {
        lost += static_cast<uint32_t>(oldest - wanted);
        wanted = oldest;
        // Skip past the lost ones even if this read fails too.
        next_ = oldest;
      }
      const ipc_lib::QueueReader::Result result = Take(wanted);
      if (result == ipc_lib::QueueReader::Result::kGood) {
        return {.fetched = true,
                .lost = lost,
                .invalid_origins = taken_invalid_origins_};
      }
      lost += result == ipc_lib::QueueReader::Result::kCorrupt;
    }
  }

  FetchResult DoFetchIf(absl::FunctionRef<bool(const Context&)> fn) override {
    const uint64_t next = reader_->NextIndex();
    if (next == 0) return {};
    const uint64_t latest = next - 1;
    if (has_current_ && current_ == latest) return {};
    return TakeIf(latest, fn, 0);
  }

  FetchResult DoFetchNextIf(
      absl::FunctionRef<bool(const Context&)> fn) override {
    const uint64_t next = reader_->NextIndex();
    const uint64_t oldest = OldestKept(next, queue_size_);
    uint64_t wanted = next_;
    if (wanted >= next) return {};
    uint32_t lost = 0;
    if (wanted < oldest) {
      lost = static_cast<uint32_t>(oldest - wanted);
      wanted = oldest;
      next_ = oldest;
    }
    return TakeIf(wanted, fn, lost);
  }

 private:
  // Shows `fn` message `index` without its data (a peek: nothing is
  // copied) and takes it if `fn` says so. `lost` were skipped on the way.
  FetchResult TakeIf(uint64_t index, absl::FunctionRef<bool(const Context&)> fn,
                     uint32_t lost) {
    MessageInfo info;
    switch (reader_->Read(index, &info, nullptr, &raw_origins_)) {
      case ipc_lib::QueueReader::Result::kGood:
        break;
      case ipc_lib::QueueReader::Result::kCorrupt:
        (void)Take(index);  // Skipped: becomes current, counted as lost.
        return {.fetched = false, .lost = lost + 1};
      default:
        return {.fetched = false, .lost = lost};
    }
    if (!fn(ContextFromMessage(info, raw_origins_, nullptr))) {
      return {.fetched = false, .lost = lost};
    }
    const ipc_lib::QueueReader::Result result = Take(index);
    if (result == ipc_lib::QueueReader::Result::kGood) {
      return {.fetched = true,
              .lost = lost,
              .invalid_origins = taken_invalid_origins_};
    }
    // Overwritten (or found damaged) since the peek: gone.
    return {.fetched = false, .lost = lost + 1};
  }

  // A damaged message (kCorrupt, said by the reader) is skipped: it
  // becomes current without changing context_, to be counted as lost.
  ipc_lib::QueueReader::Result Take(uint64_t index) {
    MessageInfo info;
    const ipc_lib::QueueReader::Result result =
        reader_->Read(index, &info, buffer_.data(), &raw_origins_);
    if (result != ipc_lib::QueueReader::Result::kGood &&
        result != ipc_lib::QueueReader::Result::kCorrupt) {
      return result;
    }
    current_ = index;
    has_current_ = true;
    next_ = index + 1;
    if (result == ipc_lib::QueueReader::Result::kGood) {
      taken_invalid_origins_ = 0;
      FillContextFromMessage(info, raw_origins_, buffer_.data(), &context_,
                             &taken_invalid_origins_);
    }
    return result;
  }

  ShmEventLoop* const loop_;
  // Always set; re-made when the channel's file is re-opened.
  std::optional<ipc_lib::QueueReader> reader_;
  const uint64_t queue_size_;
  std::vector<uint8_t> buffer_;
  uint64_t current_ = 0;
  bool has_current_ = false;
  // What FetchNext() reads next: from the fetcher's creation on (as in AOS),
  // or after the last message fetched.
  uint64_t next_ = 0;
  // Impossible origins of the message Take() took last.
  uint32_t taken_invalid_origins_ = 0;
  // The origins of the message read last, as the queue holds them.
  PathOrigins::Raw raw_origins_;
};

class ShmWatcher : public WatcherState {
 public:
  ShmWatcher(ShmEventLoop* event_loop, const Channel* channel,
             QueueMemory* memory,
             std::function<void(const Context&, const void*)> fn)
      : WatcherState(event_loop, channel, std::move(fn)),
        loop_(event_loop),
        memory_(memory),
        reader_(std::in_place, memory),
        queue_size_(memory->layout().queue_size),
        buffer_(configuration::MessageBufferSize(*channel)) {
    loop_->shm_watchers_.push_back(this);
  }

  ~ShmWatcher() override { std::erase(loop_->shm_watchers_, this); }

  // Registers for wakeups and starts after the messages already sent (at
  // every Run(), as AOS's watchers do).
  void Start(int priority) {
    registration_.reset();
    pending_ = false;
    auto registration =
        ipc_lib::QueueWatcher::Make(memory_, getpid(), GetTid(), priority);
    if (!registration.ok()) {
      ExitForUserError(StrCat("event loop ", loop_->name(), ": watcher on ",
                              channel()->name()->string_view(), " (",
                              channel()->type()->string_view(),
                              "): ", registration.status().message()));
    }
    registration_ = std::move(registration).value();
    priority_ = priority;
    next_ = reader_->NextIndex();
  }

  // Watches `memory` from now on (the channel's file was re-opened): the
  // registration moves to the new file, and every message in it is
  // delivered (they were all sent after the old file went away). A message
  // already read from the old file is still delivered.
  void Attach(QueueMemory* memory) {
    const bool started = registration_ != nullptr;
    registration_.reset();
    memory_ = memory;
    reader_.emplace(memory);
    if (started) {
      Start(priority_);
      next_ = 0;
    }
  }

  // Whether a message is waiting to be delivered: the one read earlier, or
  // the next one in the queue, read now into the buffer (counting messages
  // lost on the way). Never allocates.
  bool Peek() {
    while (!pending_) {
      const uint64_t end = reader_->NextIndex();
      if (next_ >= end) return false;
      const uint64_t oldest = OldestKept(end, queue_size_);
      if (next_ < oldest) {
        AddLost(static_cast<uint32_t>(oldest - next_));
        next_ = oldest;
      }
      const ipc_lib::QueueReader::Result result = reader_->Read(
          next_, &pending_info_, buffer_.data(), &pending_origins_);
      if (result == ipc_lib::QueueReader::Result::kCorrupt) {
        AddLost(1);  // Damaged (logged by the reader): skipped.
        ++next_;
        continue;
      }
      if (result != ipc_lib::QueueReader::Result::kGood) {
        continue;  // Overwritten meanwhile: counted as lost next time round.
      }
      ++next_;
      pending_ = true;
    }
    return true;
  }

  // When the peeked message was sent.
  monotonic_clock::time_point pending_sent_time() const {
    return pending_info_.monotonic_sent_time;
  }

  // Calls the handler on the peeked message.
  void DeliverPending() {
    pending_ = false;
    uint32_t invalid_origins = 0;
    FillContextFromMessage(pending_info_, pending_origins_, buffer_.data(),
                           &delivered_, &invalid_origins);
    Call(delivered_, invalid_origins);
  }

 private:
  ShmEventLoop* const loop_;
  QueueMemory* memory_;
  // Always set; re-made when the channel's file is re-opened.
  std::optional<ipc_lib::QueueReader> reader_;
  const uint64_t queue_size_;
  std::vector<uint8_t> buffer_;
  std::unique_ptr<ipc_lib::QueueWatcher> registration_;
  int priority_ = 0;
  uint64_t next_ = 0;
  // A message read into buffer_ and not delivered yet.
  bool pending_ = false;
  MessageInfo pending_info_;
  PathOrigins::Raw pending_origins_;
  // The context of the message delivered last, filled in place.
  Context delivered_;
};

// A timer or phased loop: an entry of the loop's TimerSchedule. Invariant:
// it is in the schedule, at scheduled_time(), exactly while
// schedule_enabled(); every change of the schedule keeps the loop's timerfd
// armed for the earliest entries (ShmEventLoop::ArmTimerFds).
class ShmTimer : public TimerHandler, public TimerSchedule::Entry {
 public:
  ShmTimer(ShmEventLoop* event_loop, std::function<void()> fn)
      : TimerHandler(event_loop, std::move(fn)), loop_(event_loop) {
    // Timers are made before Run() only: the allocations they cost.
    loop_->timer_schedule_.Reserve();
    // Its wakeup latency and handler time, deferred (HandleTimers).
    loop_->deferred_samples_.Reserve(2);
  }

  ~ShmTimer() override {
    loop_->timer_schedule_.Deschedule(this);
    loop_->timer_schedule_.Unreserve();
    loop_->ArmTimerFds();
  }

  void Schedule(monotonic_clock::time_point base,
                monotonic_clock::duration period) override {
    SetSchedule(base, period);
    loop_->timer_schedule_.Schedule(this, base);
    loop_->ArmTimerFds();
  }

  void Disable() override {
    ClearSchedule();
    loop_->timer_schedule_.Deschedule(this);
    loop_->ArmTimerFds();
  }

  bool IsDisabled() override { return !schedule_enabled(); }

  // Starts loading the memory a call of this timer touches first: the
  // timer itself (its counters are one pointer away, PrefetchCounters();
  // its recorders HandleTimers fills after the wakeup). After an idle CPU
  // halted, or with many timers taking turns, it misses the caches
  // (several us on a VM).
  void PrefetchForCall() const {
    for (int line = 0; line < 3; ++line) {
      __builtin_prefetch(reinterpret_cast<const char*>(this) + 64 * line, 1);
    }
  }
  // Starts loading its counters (call count, origin id, name), one pointer
  // away: reads that pointer, so call it once the timer itself is cached
  // (PrefetchForCall() a call earlier).
  void PrefetchCounters() const { __builtin_prefetch(&timing(), 1); }

 private:
  friend class ShmEventLoop;

  // Calls the handler for the scheduled time, which has come, and moves
  // the entry to the next call. Never allocates.
  void RunDue() {
    const DueCall call = RunDueCall();
    if (call.next.has_value()) {
      // Behind timers already scheduled for the same time.
      loop_->timer_schedule_.Schedule(this, *call.next);
    } else if (!call.rescheduled) {
      loop_->timer_schedule_.Deschedule(this);  // A one-shot call.
    }
    // Rescheduled or disabled by the handler: Schedule() or Disable() moved
    // the entry already.
  }

  ShmEventLoop* const loop_;
};

ShmEventLoop::ShmEventLoop(const Configuration* configuration,
                           std::string_view name, const Node* node)
    : EventLoop(name, configuration, node),
      shm_base_(ShmBase()),
      permissions_(ParsePermissions()) {
  // Reads the wakeup signal once Run() blocks it in the loop's thread.
  const sigset_t signals = WakeupSignals();
  signal_fd_.reset(signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC));
  PCHECK(signal_fd_.valid()) << "signalfd";
  epoll_.OnReadable(signal_fd_.get(), [this]() { HandleSignals(); });
  for (int i = 0; i < 2; ++i) {
    ScopedFd& timer_fd = timer_fds_[i];
    timer_fd.reset(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    PCHECK(timer_fd.valid()) << "timerfd_create";
    epoll_.OnReadable(timer_fd.get(), [this, i]() { HandleTimers(i); });
  }
  AskForTraceRing(shm_base_);
}

ShmEventLoop::ShmEventLoop(const Configuration* configuration)
    : ShmEventLoop(configuration, DefaultApplicationName(),
                   NodeOfThisMachine(configuration)) {}

ShmEventLoop::~ShmEventLoop() {
  shared_memory_check_ = nullptr;
  DestroyHandlers();
  for (int fd : readable_fds_) epoll_.Remove(fd);
  epoll_.Remove(signal_fd_.get());
  signal_fd_.reset();
  for (ScopedFd& timer_fd : timer_fds_) {
    epoll_.Remove(timer_fd.get());
    timer_fd.reset();
  }
}

void ShmEventLoop::OnReadable(int fd, std::function<void()> fn) {
  CHECK(!ran_) << "event loop " << name() << ": OnReadable after Run() started";
  epoll_.OnReadable(fd, std::move(fn));
  readable_fds_.push_back(fd);
}

void ShmEventLoop::StopReadable(int fd) {
  CHECK(!in_run_) << "event loop " << name() << ": StopReadable inside Run()";
  CHECK(std::erase(readable_fds_, fd) == 1)
      << "event loop " << name() << ": fd " << fd
      << " was not given to OnReadable";
  epoll_.Remove(fd);
}

void ShmEventLoop::OnWakeupEnd(std::function<void()> fn) {
  CHECK(!ran_) << "event loop " << name()
               << ": OnWakeupEnd after Run() started";
  CHECK(!on_wakeup_end_) << "event loop " << name()
                         << ": OnWakeupEnd called twice";
  CHECK(fn) << "event loop " << name() << ": OnWakeupEnd without a function";
  on_wakeup_end_ = std::move(fn);
  epoll_.AfterEachWakeup([this]() { on_wakeup_end_(); });
}

void ShmEventLoop::StopWakeupEnd() {
  CHECK(!in_run_) << "event loop " << name() << ": StopWakeupEnd inside Run()";
  epoll_.AfterEachWakeup(nullptr);
  on_wakeup_end_ = nullptr;
}

std::string ShmEventLoop::ShmPath(const Channel* channel) {
  return ShmPath(ShmBase(), channel);
}

std::string ShmEventLoop::ShmPath(std::string_view shm_base,
                                  const Channel* channel) {
  return StrCat(shm_base, channel->name()->string_view(), "/",
                channel->type()->string_view(), ".v", ipc_lib::kLayoutVersion);
}

std::unique_ptr<ipc_lib::QueueMemory> ShmEventLoop::OpenQueueMemory(
    const Channel* channel) {
  const std::string description = StrCat(channel->name()->string_view(), " (",
                                         channel->type()->string_view(), ")");
  auto memory = ipc_lib::QueueMemory::Open(
      ShmPath(shm_base_, channel),
      QueueLayoutForChannel(*configuration(), *channel), permissions_,
      description);
  if (!memory.ok()) {
    std::string message =
        StrCat("event loop ", name(), ": ", memory.status().message());
    if (absl::IsPermissionDenied(memory.status())) {
      StrAppend(&message,
                "; if another user's program made it, run every program of "
                "this system with --permissions=0660 and a shared group");
    }
    ExitForUserError(message);
  }
  return std::move(memory).value();
}

ipc_lib::QueueMemory* ShmEventLoop::GetQueueMemory(const Channel* channel) {
  for (const auto& [known, memory] : queues_) {
    if (known == channel) return memory.get();
  }
  queues_.emplace_back(channel, OpenQueueMemory(channel));
  return queues_.back().second.get();
}

void ShmEventLoop::CheckQueueFiles() {
  for (auto& [channel, memory] : queues_) {
    const ipc_lib::QueueMemory::FileState state = memory->CheckFile();
    if (state == ipc_lib::QueueMemory::FileState::kInPlace) continue;
    // The rest allocates (opening and mapping a file, new slots): it only
    // happens when something outside aos changed the shm directory.
    GuardedCallback reopening = {.loop = name(),
                                 .kind = "re-opening of",
                                 .name = channel->name()->string_view(),
                                 .type = channel->type()->string_view(),
                                 .policy = AllocationPolicy::kCount};
    ScopedAllocationGuard allow(&reopening);
    LOG(WARNING) << "event loop " << name() << ": " << memory->channel()
                 << ": its shared memory file " << memory->path()
                 << (state == ipc_lib::QueueMemory::FileState::kRemoved
                         ? " was deleted"
                         : " was replaced by another file")
                 << " while in use; re-opening it (messages sent through the "
                    "old file since then are lost to this loop)";
    std::unique_ptr<ipc_lib::QueueMemory> fresh = OpenQueueMemory(channel);
    // A sender another thread sends on is not between sends while its
    // queue, and the old mapping, change under it.
    const std::unique_lock<PriorityInheritanceMutex> other_thread_sends =
        HoldOtherThreadSends();
    for (ShmSender* sender : shm_senders_) {
      if (sender->channel() == channel) sender->Attach(fresh.get());
    }
    for (ShmFetcher* fetcher : shm_fetchers_) {
      if (fetcher->channel() == channel) fetcher->Attach(fresh.get());
    }
    for (ShmWatcher* watcher : shm_watchers_) {
      if (watcher->channel() == channel) watcher->Attach(fresh.get());
    }
    // Nothing points into the old mapping any more.
    memory = std::move(fresh);
    ++timing_entries()->reopened_queue_files;
  }
}

std::unique_ptr<RawSender> ShmEventLoop::DoMakeRawSender(
    const Channel* channel) {
  return std::make_unique<ShmSender>(this, channel, GetQueueMemory(channel));
}

std::unique_ptr<RawFetcher> ShmEventLoop::DoMakeRawFetcher(
    const Channel* channel) {
  return std::make_unique<ShmFetcher>(this, channel, GetQueueMemory(channel));
}

std::unique_ptr<WatcherState> ShmEventLoop::DoMakeWatcher(
    const Channel* channel,
    std::function<void(const Context&, const void*)> watcher) {
  return std::make_unique<ShmWatcher>(this, channel, GetQueueMemory(channel),
                                      std::move(watcher));
}

std::unique_ptr<TimerHandler> ShmEventLoop::DoMakeTimer(
    std::function<void()> fn) {
  return std::make_unique<ShmTimer>(this, std::move(fn));
}

void ShmEventLoop::HandleSignals() {
  // The queues, not the signals, say what is new: deliver before reading the
  // signalfd, so the handlers do not wait for that syscall (about a third of
  // the receiving side's work between epoll_wait and the handler).
  DeliverMessagesAndEarlierTimers();
  // Drain in batches: a short read means nothing else was pending, which
  // saves the read that would return EAGAIN.
  constexpr size_t kBatch = 16;
  struct signalfd_siginfo infos[kBatch];
  bool wakeup = false;
  while (true) {
    const ssize_t bytes = read(signal_fd_.get(), infos, sizeof(infos));
    if (bytes <= 0) {
      PCHECK(bytes == 0 || errno == EAGAIN) << "read signalfd";
      break;
    }
    wakeup = true;
    if (static_cast<size_t>(bytes) / sizeof(infos[0]) < kBatch) break;
  }
  // A message sent after the first pass, whose signal was just read, would
  // otherwise wait for the next wakeup.
  if (wakeup) DeliverMessagesAndEarlierTimers();
}

void ShmEventLoop::HandleStopSignal() {
  const int signal = stop_signals_->Take();
  if (signal == 0) return;
  // A stop signal ends Run() after everything sent before it was read (a
  // handler's Exit() stops at once).
  DeliverMessages();
  LOG(INFO) << "event loop " << name() << ": " << strsignal(signal)
            << ", exiting";
  Exit();
}

void ShmEventLoop::DeliverRemainingMessages() {
  CHECK(returned_) << "event loop " << name()
                   << ": DeliverRemainingMessages() before Run() returned";
  DeliverMessagesSentBy(monotonic_clock::now());
}

ShmWatcher* ShmEventLoop::EarliestPending(monotonic_clock::time_point sent_by) {
  // In the order they were sent, across channels (ties: the watcher made
  // first), as AOS does: each round looks at every watcher again, so a
  // message a handler sends is ordered among the rest.
  ShmWatcher* earliest = nullptr;
  for (ShmWatcher* watcher : shm_watchers_) {
    if (watcher->Peek() && watcher->pending_sent_time() <= sent_by &&
        (earliest == nullptr ||
         watcher->pending_sent_time() < earliest->pending_sent_time())) {
      earliest = watcher;
    }
  }
  return earliest;
}

void ShmEventLoop::HandleTimers(int fd_index) {
  // Runs the handlers first and only then touches the timerfd: a syscall
  // between the wakeup and the handlers would count in every call's wakeup
  // latency (reading a timerfd costs about 0.6 us on a VM, more than the
  // rest of the loop's path together).
  monotonic_clock::time_point now = monotonic_now();
  // Armed early (--timer_anticipation_us): wait here for the earliest
  // timer's time, so its handler starts on time. An event of this timerfd
  // left from before it was re-armed (both fired in one epoll_wait, and the
  // first wakeup re-armed both) is no wakeup: nothing waits for it.
  const std::optional<monotonic_clock::time_point> kernel_time =
      kernel_armed_for_[fd_index];
  if (kernel_time.has_value() && now >= *kernel_time) {
    timer_anticipation_.Woke(*kernel_time, now);
    const TimerSchedule::Entry* earliest = timer_schedule_.Earliest();
    // armed_for_ is set with kernel_armed_for_ (SetTimerFd).
    if (earliest != nullptr &&
        timer_anticipation_.ShouldWait(
            now, earliest->time(),
            (*armed_for_[fd_index] - *kernel_time).count())) {
      // Before the wait, what the handler's call touches first: the
      // watchers' queues (which the loop looks at again before the
      // handler), the timer's context, schedule and counters. After an
      // idle CPU halted these miss the caches (several us on a VM); before
      // the wait that costs the handler nothing.
      EarliestPending(earliest->time());
      SetTimerContext(earliest->time());
      const auto* timer = static_cast<const ShmTimer*>(earliest);
      timer->PrefetchForCall();
      timer->PrefetchCounters();
      now = timer_anticipation_.WaitUntil(earliest->time());
    }
  }
  // A handler that schedules a timer at a time already passed (itself,
  // say) makes it due at once, but for the next wakeup: a wakeup runs only
  // what was scheduled when it began, so it ends.
  const uint64_t scheduled_before = timer_schedule_.next_sequence();
  running_timers_ = true;
  // The next wait counts from here (re-armed below, in TimersDone()): when
  // the first timer of this wakeup was due, but never before an earlier
  // wakeup's, so that a timer scheduled for a time long past does not
  // stretch the budget.
  if (const TimerSchedule::Entry* first = timer_schedule_.Earliest()) {
    last_timer_wakeup_due_ =
        std::max(last_timer_wakeup_due_, std::min(first->time(), now));
    timer_wakeup_due_ = last_timer_wakeup_due_;
  }
  // Each call's samples wait until the last call: a later timer of this
  // wakeup does not wait for the earlier ones' cold recorders.
  deferred_samples_.Begin();
  while (!epoll_.quitting()) {
    TimerSchedule::Entry* earliest = timer_schedule_.Earliest();
    if (earliest == nullptr || earliest->time() > now ||
        earliest->sequence() >= scheduled_before) {
      break;
    }
    // What waited longest goes first, as when each timer had its own fd and
    // epoll reported them in the order they became ready: a message sent
    // by this timer's time (same time: the message) before it. Its handler
    // may change the schedule, so look again after each.
    if (ShmWatcher* watcher = EarliestPending(earliest->time())) {
      watcher->DeliverPending();
      continue;
    }
    // The timer likely due next (timers due together run back to back):
    // its memory, cold when a loop has many timers, loads while this one
    // runs instead of after it; this one's counters, now that the timer
    // itself came in that way.
    auto* timer = static_cast<ShmTimer*>(earliest);
    timer->PrefetchCounters();
    if (const TimerSchedule::Entry* next = timer_schedule_.SecondEarliest()) {
      static_cast<const ShmTimer*>(next)->PrefetchForCall();
    }
    timer->RunDue();
  }
  deferred_samples_.End();
  // Exit() came during a wait: no handler ran in the context set for it.
  if (epoll_.quitting()) ClearContext();
  TimersDone();
  timer_wakeup_due_.reset();
}

void ShmEventLoop::DeliverMessagesAndEarlierTimers() {
  bool ran_timers = false;
  // As in HandleTimers(): only timers scheduled before this began.
  const uint64_t scheduled_before = timer_schedule_.next_sequence();
  while (!epoll_.quitting()) {
    ShmWatcher* watcher = EarliestPending(monotonic_clock::max_time);
    if (watcher == nullptr) break;
    // A timer scheduled before the message was sent waited longer (and is
    // due: the message was sent in the past). The timerfd may not have
    // told epoll yet: HandleTimers() arms it only when its handlers return.
    TimerSchedule::Entry* timer = timer_schedule_.Earliest();
    if (timer != nullptr && timer->time() < watcher->pending_sent_time() &&
        timer->sequence() < scheduled_before) {
      running_timers_ = true;
      ran_timers = true;
      static_cast<ShmTimer*>(timer)->RunDue();
      continue;
    }
    watcher->DeliverPending();
  }
  if (ran_timers) TimersDone();
}

std::optional<monotonic_clock::time_point> ShmEventLoop::EarliestTimerTime()
    const {
  const TimerSchedule::Entry* earliest = timer_schedule_.Earliest();
  if (earliest == nullptr) return std::nullopt;
  return earliest->time();
}

void ShmEventLoop::TimersDone() {
  running_timers_ = false;
  // A timerfd that expired (or is about to) is re-armed, which consumes the
  // expiration with no read(2). A time already passed (timers left by
  // Exit(), or come due while the handlers ran) fires again at once.
  ArmTimerFds(/*consume_expired=*/true);
}

void ShmEventLoop::ArmTimerFds(bool consume_expired) {
  if (running_timers_) return;
  std::optional<monotonic_clock::time_point> wanted[2] = {EarliestTimerTime(),
                                                          std::nullopt};
  if (const std::optional<monotonic_clock::time_point> second =
          timer_schedule_.SecondEarliestTime();
      second.has_value() && second != wanted[0]) {
    wanted[1] = second;
  }
  const monotonic_clock::time_point now =
      consume_expired ? monotonic_now() : monotonic_clock::min_time;
  bool expired[2], kept[2] = {false, false}, taken[2] = {false, false};
  for (int i = 0; i < 2; ++i) {
    expired[i] =
        consume_expired && armed_for_[i].has_value() && *armed_for_[i] <= now;
    if (expired[i] || !armed_for_[i].has_value()) continue;
    for (int j = 0; j < 2; ++j) {
      if (!taken[j] && wanted[j] == armed_for_[i]) {
        kept[i] = taken[j] = true;
        break;
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (kept[i]) continue;
    std::optional<monotonic_clock::time_point> when;
    for (int j = 0; j < 2; ++j) {
      if (!taken[j] && wanted[j].has_value()) {
        when = wanted[j];
        taken[j] = true;
        break;
      }
    }
    if (when != armed_for_[i] || expired[i]) SetTimerFd(i, when);
  }
}

void ShmEventLoop::SetTimerFd(int i,
                              std::optional<monotonic_clock::time_point> when) {
  struct itimerspec spec = {};
  std::optional<monotonic_clock::time_point> kernel_time = when;
  if (when.has_value() && timer_anticipation_.lead_ns() > 0) {
    kernel_time = timer_anticipation_.KernelTime(
        *when, timer_wakeup_due_.value_or(monotonic_now()));
  }
  if (kernel_time.has_value()) {
    // it_value 0 would disarm: the earliest time is 1 ns.
    spec.it_value = ToTimespec(
        std::max(std::chrono::nanoseconds(1), kernel_time->time_since_epoch()));
  }
  PCHECK(timerfd_settime(timer_fds_[i].get(), TFD_TIMER_ABSTIME, &spec,
                         nullptr) == 0)
      << "event loop " << name() << ": timerfd_settime";
  armed_for_[i] = when;
  kernel_armed_for_[i] = kernel_time;
}

void ShmEventLoop::DeliverMessages() {
  // Exit() ends Run() once the current callback returns: a handler that
  // calls it gets no further messages in this wakeup.
  while (!epoll_.quitting()) {
    ShmWatcher* earliest = EarliestPending(monotonic_clock::max_time);
    if (earliest == nullptr) return;
    earliest->DeliverPending();
  }
}

void ShmEventLoop::DeliverMessagesSentBy(monotonic_clock::time_point sent_by) {
  while (ShmWatcher* earliest = EarliestPending(sent_by)) {
    earliest->DeliverPending();
  }
}

void ShmEventLoop::ApplyRealtimeSettings() {
  auto refused = [&](std::string_view what, std::string_view fix) {
    const std::string message = StrCat("event loop ", name(), ": ", what, ": ",
                                       strerror(errno), "; ", fix);
    if (FLAGS_die_on_rt_failure) {
      ExitForUserError(StrCat(message, " (--die_on_rt_failure)"));
    }
    LOG(WARNING) << message
                 << " (continuing without it; --die_on_rt_failure aborts)";
  };
  if (pinned()) {
    if (sched_setaffinity(0, sizeof(cpu_set_t), &runtime_affinity()) != 0) {
      refused("could not set CPU affinity",
              "check that the CPUs exist and are allowed (taskset -p $$)");
    }
  }
  const int priority = runtime_realtime_priority();
  if (priority > 0) {
    struct sched_param param = {};
    param.sched_priority = priority;
    if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
      refused(StrCat("could not run at SCHED_FIFO priority ", priority),
              "allow it with a line like '* - rtprio 99' in "
              "/etc/security/limits.conf (then log in again), or run as root");
    } else {
      // As AOS does before it locks memory: what the process frees stays
      // mapped and locked, so allocating it again takes no page fault.
      KeepFreedHeap();
      if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
        refused("could not lock memory (mlockall)",
                "allow it with '* - memlock unlimited' in "
                "/etc/security/limits.conf, or run as root");
      }
    }
  }
  HoldCpuLatencyLimit();
  StartWakeupPolling();
}

void ShmEventLoop::StartWakeupPolling() {
  epoll_.SetBusyPoll(std::chrono::microseconds(FLAGS_busy_poll_us),
                     &timing_entries()->busy_poll);
  if (FLAGS_idle_poll) {
    absl::StatusOr<std::unique_ptr<IdlePoller>> poller =
        IdlePoller::Start(ThisThreadsCpus());
    if (poller.ok()) {
      idle_poller_ = std::move(poller).value();
    } else {
      const std::string message = StrCat(
          "event loop ", name(), ": --idle_poll: ", poller.status().message());
      if (FLAGS_die_on_rt_failure) {
        ExitForUserError(StrCat(message, " (--die_on_rt_failure)"));
      }
      LOG(WARNING) << message
                   << " (continuing without it; --die_on_rt_failure aborts)";
    }
  }
  set_wakeup_polling(FLAGS_busy_poll_us,
                     idle_poller_ ? idle_poller_->cpus() : std::string());
  // Timer anticipation: automatic by default for a loop that runs at
  // realtime priority (not one whose priority the OS refused).
  const std::optional<int64_t> parsed =
      ParseAnticipationUs(FLAGS_timer_anticipation_us);
  if (!parsed.has_value()) {
    ExitForUserError(BadAnticipationMessage(FLAGS_timer_anticipation_us));
  }
  const int64_t anticipation_us = *parsed;
  TimerAnticipationCounters* counters = &timing_entries()->timer_anticipation;
  if (anticipation_us > 0) {
    timer_anticipation_ =
        TimerAnticipation(false, anticipation_us * 1000, counters);
  } else if (anticipation_us < 0 && runtime_realtime_priority() > 0 &&
             (sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO) {
    timer_anticipation_ = TimerAnticipation(true, 0, counters);
  } else {
    timer_anticipation_ = TimerAnticipation();
    *counters = TimerAnticipationCounters();
  }
}

void ShmEventLoop::HoldCpuLatencyLimit() {
  const bool asked =
      !gflags::GetCommandLineFlagInfoOrDie("cpu_dma_latency_us").is_default;
  if (FLAGS_cpu_dma_latency_us < 0 ||
      (runtime_realtime_priority() == 0 && !asked)) {
    return;
  }
  // The CPUs the loop may run on, now that its affinity is applied.
  const cpu_set_t loop_cpus = ThisThreadsCpus();
  bool per_cpu = FLAGS_cpu_dma_latency_scope == "cpus";
  if (FLAGS_cpu_dma_latency_scope == "auto") {
    per_cpu = pinned() &&
              CPU_COUNT(&loop_cpus) < sysconf(_SC_NPROCESSORS_ONLN) &&
              CpuLatencyLimit::PerCpuAvailable(loop_cpus);
  }
  auto limit =
      per_cpu
          ? CpuLatencyLimit::HoldForCpus(FLAGS_cpu_dma_latency_us, loop_cpus)
          : CpuLatencyLimit::HoldForAllCpus(FLAGS_cpu_dma_latency_us);
  if (!limit.ok()) {
    const std::string message =
        StrCat("event loop ", name(), ": ", limit.status().message(),
               "; idle CPUs may sleep deeply and every wakeup pays for it");
    if (FLAGS_die_on_rt_failure) {
      ExitForUserError(StrCat(message, " (--die_on_rt_failure)"));
    }
    LOG(WARNING) << message
                 << " (continuing; --cpu_dma_latency_us=-1 stops asking, "
                    "--die_on_rt_failure aborts)";
    return;
  }
  cpu_latency_limit_ = std::move(limit).value();
  set_cpu_latency_limit(cpu_latency_limit_->limit_us(),
                        cpu_latency_limit_->cpus());
}

RunStatus ShmEventLoop::Run() {
  CHECK(!is_running()) << "event loop " << name()
                       << ": Run() called while it runs";
  ran_ = true;
  returned_ = false;
  ApplyRealtimeSettings();
  // Senders signal this thread once its watchers register: the signal is
  // read through the signalfd, and stays blocked after Run() returns (a
  // sender may still signal a registration until it is destroyed).
  const sigset_t wakeup = WakeupSignals();
  PCHECK(pthread_sigmask(SIG_BLOCK, &wakeup, nullptr) == 0);
  // SIGINT, SIGHUP and SIGTERM end every running loop of the process.
  stop_signals_ = internal::StopSignals::WhileRunning();
  epoll_.OnReadable(stop_signals_->fd(), [this]() { HandleStopSignal(); });
  for (ShmWatcher* watcher : shm_watchers_) {
    watcher->Start(runtime_realtime_priority());
  }
  // Once per report window: is every queue file still the one we map, and
  // do the watchers our senders signal map it?
  if (shared_memory_check_ == nullptr) {
    shared_memory_check_ = AddInternalTimer([this]() {
      CheckQueueFiles();
      for (ShmSender* sender : shm_senders_) sender->AuditWatchers();
    });
    shared_memory_check_->set_name("shared_memory_check");
  }
  const auto check_period =
      std::chrono::milliseconds(std::max(1, FLAGS_timing_report_ms));
  shared_memory_check_->Schedule(monotonic_now() + check_period, check_period);
  StartRunning();
  // Messages may have arrived while OnRun callbacks ran.
  DeliverMessages();
  if (on_wakeup_end_) on_wakeup_end_();
  in_run_ = true;
  epoll_.Run();
  in_run_ = false;
  returned_ = true;
  StopRunning();
  epoll_.Remove(stop_signals_->fd());
  stop_signals_.reset();
  cpu_latency_limit_.reset();
  idle_poller_.reset();
  if (runtime_realtime_priority() > 0) {
    struct sched_param param = {};
    sched_setscheduler(0, SCHED_OTHER, &param);
  }
  std::lock_guard<std::mutex> lock(exit_mutex_);
  absl::Status status = exit_state_.load() == kExitWithStatus
                            ? std::move(exit_status_)
                            : absl::OkStatus();
  exit_status_ = absl::OkStatus();
  exit_state_.store(kNoExit);
  return status;
}

void ShmEventLoop::Exit() {
  int none = kNoExit;
  exit_state_.compare_exchange_strong(none, kExitOk);
  epoll_.Quit();
}

void ShmEventLoop::ExitWithStatus(absl::Status status) {
  {
    std::lock_guard<std::mutex> lock(exit_mutex_);
    int none = kNoExit;
    if (exit_state_.compare_exchange_strong(none, kExitWithStatus)) {
      exit_status_ = std::move(status);
    }
  }
  epoll_.Quit();
}

class ShmExitHandle : public ExitHandle {
 public:
  explicit ShmExitHandle(ShmEventLoop* loop) : loop_(loop) {}
  void Exit(absl::Status status) override {
    loop_->ExitWithStatus(std::move(status));
  }

 private:
  ShmEventLoop* const loop_;
};

std::unique_ptr<ExitHandle> ShmEventLoop::MakeExitHandle() {
  return std::make_unique<ShmExitHandle>(this);
}

}  // namespace aos
