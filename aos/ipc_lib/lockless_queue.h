#ifndef AOS_IPC_LIB_LOCKLESS_QUEUE_H_
#define AOS_IPC_LIB_LOCKLESS_QUEUE_H_

// One channel's message queue in shared memory, shared by processes: any
// number of readers, up to num_senders senders, and up to num_watchers
// watching threads, which senders signal after each message. The memory is
// a QueueMemory (queue_memory.h).
//
// clang-format off
//   QueueMemory* memory = ...;  // QueueMemory::Open(path, layout, ...)
//
//   // Sending: claim a sender slot once, then for each message of n bytes:
//   std::unique_ptr<QueueSender> sender =
//       std::move(QueueSender::Make(memory)).value();  // or report the error
//   ... write the message into the last n bytes of sender->Data() ...
//   MessageInfo sent;
//   if (sender->Send(n, MessageOrigin(), &sent) ==
//       QueueSender::Result::kGood) {
//     QueueWakeUpper(memory).Wakeup();  // signal the watchers
//   }                                   // else nothing was sent: say why
//
//   // Reading needs no slot. A read copies a whole message out, or says
//   // why it cannot; it never returns a torn one.
//   QueueReader reader(memory);
//   std::vector<char> buffer(memory->layout().message_data_size);
//   MessageInfo info;
//   switch (reader.Read(index, &info, buffer.data())) {
//     case QueueReader::Result::kGood:          // info.size bytes in buffer
//     case QueueReader::Result::kNothingNewYet: // wait for a wakeup
//     case QueueReader::Result::kTooOld:        // overwritten: lost
//     case QueueReader::Result::kCorrupt:       // damaged: lost, skip it
//   }
//
//   // Watching: the thread that waits for WakeupSignal() registers.
//   auto watcher = QueueWatcher::Make(memory, getpid(), gettid(), priority);
// clang-format on
//
// Guarantees (docs/ipc.md explains how they are kept):
// - Senders never wait for readers or for each other; readers never block
//   senders. No operation takes a lock; none allocates.
// - A message becomes visible whole or not at all; a reader never returns a
//   torn message (it detects being overwritten while copying: kTooOld).
// - Queue indices increase by one per message, and sent times never go
//   backwards along them.
// - A process killed at any instruction (SIGKILL mid-send, mid-read, while
//   claiming or releasing a slot) leaves the queue consistent: every message
//   already published stays readable until it is overwritten in the normal
//   course, the killed send is either fully published or not at all, nobody
//   is blocked, and its sender or watcher slot is reclaimed when another
//   process needs one. The kernel marks a dead process's slots at its death
//   (robust_slots.h), so a reused pid never makes them look alive.
//   lockless_queue_kill_point_test kills each operation before every one of
//   its stores to shared memory and checks all of this.
// - A file made for another layout is never written to.
// - Whatever bytes the file holds (damaged, or written by a bad program), no
//   operation reads or writes outside the mapping, loops forever or crashes:
//   opening fails naming the channel and the file, and a damaged message or
//   ring entry is reported (kCorrupt, said once per reader or sender) and
//   skipped. Sent times in the future are damage too, never a reason to
//   refuse sends. A sender signals only watcher registrations it has proven
//   (QueueWakeUpper), so a forged one cannot make it signal any other
//   process. Message payloads are not checksummed: damaged data inside a
//   message's bounds is returned as it is.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "aos/events/path_origins.h"
#include "aos/ipc_lib/queue_memory.h"
#include "aos/time/time.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/uuid.h"

namespace aos::ipc_lib {

// remote_queue_index for a message that was not forwarded.
inline constexpr uint32_t kNoRemoteQueueIndex = 0xffffffff;

// Sent times come from shared memory, which anyone who can write the file
// can change: one later than this machine's monotonic clock by more than
// this is impossible (every process on the machine reads the same clock),
// and is treated as damage.
inline constexpr std::chrono::nanoseconds kSentTimeSlack =
    std::chrono::milliseconds(1);

// What is known about one message.
struct MessageInfo {
  monotonic_clock::time_point monotonic_sent_time = monotonic_clock::min_time;
  realtime_clock::time_point realtime_sent_time = realtime_clock::min_time;
  // Times and index on the node it was first sent on; equal to the local
  // ones for a message that was not forwarded.
  monotonic_clock::time_point monotonic_remote_time = monotonic_clock::min_time;
  realtime_clock::time_point realtime_remote_time = realtime_clock::min_time;
  uint32_t remote_queue_index = kNoRemoteQueueIndex;
  // The boot of the node it was first sent on, as its sender gave it.
  UUID source_boot_uuid;
  // Low 32 bits of the message's queue index.
  uint32_t queue_index = 0xffffffff;
  // Bytes of message data.
  uint32_t size = 0;
};

// Where a message was first sent. The default is a local message: the
// remote fields then copy the local ones when it is sent. The message bridge
// fills them for a message forwarded from another node.
struct MessageOrigin {
  monotonic_clock::time_point monotonic_remote_time = monotonic_clock::min_time;
  realtime_clock::time_point realtime_remote_time = realtime_clock::min_time;
  uint32_t remote_queue_index = kNoRemoteQueueIndex;
  // Stored as given (a local sender gives its own boot).
  UUID source_boot_uuid;
  // The origins the message carries (null: none).
  const PathOrigins* path_origins = nullptr;
};

// Sends on one queue. Holds one of the layout's sender slots while alive.
class QueueSender {
 public:
  // Claims a sender slot, reclaiming slots whose process is gone. Fails
  // (ResourceExhausted) naming the file and num_senders when every slot is
  // held by a live process, and (FailedPrecondition) naming the channel and
  // the file when the slot it got is damaged.
  static absl::StatusOr<std::unique_ptr<QueueSender>> Make(QueueMemory* memory);
  // Releases the slot (only in the process that made it: a forked child
  // destroying an inherited sender changes nothing).
  ~QueueSender();

  // The sender's buffer: message_data_size bytes, with redzones on both
  // sides. A message of n bytes is its last n bytes.
  void* Data();
  size_t size() const;

  // Anything but kGood means nothing was sent, so no caller may ignore it.
  // (clang-format 14 mangles an enum with an attribute.)
  // clang-format off
  enum class [[nodiscard]] Result {
    kGood,
    kMessagesSentTooFast,
    kInvalidRedzone,
    // The ring entry to be replaced is damaged (it names no message, or this
    // sender's own); nothing is sent. Logged once per sender.
    kCorrupt,
  };
  // clang-format on

  // Publishes the last `length` (<= size()) bytes of Data() as the next
  // message from `origin`. The send time is read from the clocks inside, so
  // sent times never go backwards along queue indices. kMessagesSentTooFast:
  // the message queue_size messages ago was sent less than
  // channel_storage_duration ago; nothing is sent. A sent time more than
  // kSentTimeSlack in the future (damaged or forged memory, which would
  // otherwise refuse every later send as too fast) is not believed: the
  // message is replaced, impossible_sent_times() counts it, and the first
  // one is named on stderr. kInvalidRedzone: something wrote outside
  // Data(); nothing is sent (the redzones are restored). On kGood, `*sent`
  // describes the message. Lock-free and wait-free for this sender except
  // for retries when other senders publish concurrently; never allocates
  // (the lines about damage are written from a stack buffer); never blocks.
  Result Send(size_t length, const MessageOrigin& origin, MessageInfo* sent);

  // Messages replaced since construction whose sent time was impossible.
  uint64_t impossible_sent_times() const { return impossible_sent_times_; }

 private:
  QueueSender(QueueMemory* memory, uint32_t slot, uint64_t owner,
              uint32_t scratch);
  Result Corrupt(const char* what, uint64_t index, uint64_t value);
  void NoteImpossibleSentTime(uint64_t replaced_index, int64_t sent_ns,
                              int64_t now_ns);

  QueueMemory* const memory_;
  const uint32_t slot_;
  // The slot's owner word (it names this process).
  const uint64_t owner_;
  // The message Data() points into. Kept here, not read back from the slot:
  // only this sender changes it, and memory others can write is never
  // trusted for an address.
  uint32_t scratch_;
  bool reported_corruption_ = false;
  uint64_t impossible_sent_times_ = 0;
  bool reported_impossible_time_ = false;
};

// Reads one queue. Needs no slot; any number may exist.
class QueueReader {
 public:
  explicit QueueReader(QueueMemory* memory);

  // The index the next message will get: messages [0, NextIndex()) were
  // sent (the oldest NextIndex() - queue_size of them are gone).
  uint64_t NextIndex() const;

  // Anything but kGood means `data` holds no message (perhaps part of one)
  // and *info is unchanged, so no caller may ignore it.
  // clang-format off
  enum class [[nodiscard]] Result {
    kGood,
    // Not sent yet.
    kNothingNewYet,
    // Overwritten (before or while being copied); read a newer one.
    kTooOld,
    // The shared memory says something impossible about this index (its
    // ring entry names no message, its message disagrees with the entry
    // while the entry stays put, or its sent time is more than
    // kSentTimeSlack in this machine's future): the memory is damaged. Skip
    // the index and count it as lost; reading it again gives the same
    // answer.
    kCorrupt,
  };
  // clang-format on

  // Copies message `index` into `data` (at least message_data_size bytes;
  // the message goes to its start; null: copy nothing, only describe it, a
  // peek) and describes it in `*info`. Never
  // returns torn data. Never blocks, never allocates (the first kCorrupt
  // this reader sees is named on stderr, channel, file and index, from a
  // stack buffer). Reads nothing outside the mapping, whatever it holds, and
  // loads the ring entry at most twice. One thread at a time per reader.
  // With `origins` (not null), also the message's path origins as its
  // sender wrote them (or damage; PathOrigins::FromRaw decides what to
  // believe): their counts and the first min(count, kMaxPathOrigins)
  // origins, the rest of *origins left as it was. Meaningful only when
  // kGood.
  Result Read(uint64_t index, MessageInfo* info, void* data,
              PathOrigins::Raw* origins = nullptr) const;

 private:
  Result Corrupt(uint64_t index, const char* what, uint64_t value) const;

  QueueMemory* const memory_;
  mutable bool reported_corruption_ = false;
  // The latest monotonic clock reading Read() took, to judge sent times.
  mutable monotonic_clock::time_point latest_now_ = monotonic_clock::min_time;
};

// The realtime signal senders use to wake watchers: SIGRTMIN + 2. A process
// with watchers blocks it in every thread and reads it through signalfd.
int WakeupSignal();

// Registers a watching thread: senders signal it after each send. Holds one
// of the layout's watcher slots while alive.
class QueueWatcher {
 public:
  // Claims a watcher slot for thread `tid` of this process (`pid` must be
  // getpid(): the slot belongs to the calling process) with scheduling
  // priority `priority` (0 = not realtime), reclaiming slots of dead
  // processes. Wakeup() ignores the slot until the registration is
  // complete. Fails (ResourceExhausted) naming the file and num_watchers
  // when every slot is held by a live process.
  static absl::StatusOr<std::unique_ptr<QueueWatcher>> Make(QueueMemory* memory,
                                                            pid_t pid,
                                                            pid_t tid,
                                                            int priority);
  // Releases the slot (only in the process that made it).
  ~QueueWatcher();

 private:
  QueueWatcher(QueueMemory* memory, uint32_t slot, uint64_t owner);
  QueueMemory* const memory_;
  const uint32_t slot_;
  // The registration's owner word (it names the thread), so the destructor
  // never frees a slot that Wakeup() released (thread gone) and someone else
  // has claimed since.
  const uint64_t owner_;
};

// Wakes a queue's watchers: one per sender (it remembers which watcher
// registrations it has proven).
class QueueWakeUpper {
 public:
  // Allocates its memory of registrations (num_watchers entries), so that
  // Wakeup() never does.
  explicit QueueWakeUpper(QueueMemory* memory);
  // Closes the pidfds it holds (they are ScopedFds).
  ~QueueWakeUpper() = default;

  QueueWakeUpper(const QueueWakeUpper&) = delete;
  QueueWakeUpper& operator=(const QueueWakeUpper&) = delete;

  // Sends WakeupSignal() to every registered watcher thread, highest
  // priority first (ties: lowest slot first), and returns how many were
  // signalled. Slots whose thread no longer exists are released.
  //
  // A registration is read from shared memory, which anyone who can write
  // the file can forge. One whose check word does not match its fields is
  // damaged and never signalled; the others are signalled only once proven
  // (watcher_proof.h): its thread belongs to its process and blocks the
  // wakeup signal, and the process is an aos process. The proof runs once
  // per registration (a few /proc reads, about 35 us), on the first Wakeup
  // that meets it; later Wakeups signal it through a pidfd held for that
  // very thread, which no other thread can inherit. A registration that
  // fails the proof (or the audit below), or is damaged, is never
  // signalled: each Wakeup that skips it adds one to refused_wakeups(), and the
  // first one is named on stderr (channel, file, slot, pid, tid, process name,
  // why). Never allocates (the message is written with write(2) from a stack
  // buffer).
  int Wakeup();

  // Off the send path (ShmEventLoop calls it once per report window): checks
  // that the process of every proven registration not checked yet maps this
  // queue's file (its /proc maps: about 100 us for a process with a few
  // hundred mappings, once per registration); one that does not is refused
  // from now on, as above. Where a process's maps may not be read, the proof
  // stands. Never allocates.
  void AuditRegistrations();

  // Signals not sent, since construction, to registrations that failed the
  // proof.
  uint64_t refused_wakeups() const { return refused_wakeups_; }

 private:
  // What this sender knows of one watcher slot's registration.
  struct KnownRegistration {
    // The slot's words when it was proven (or refused); owner 0: nothing
    // known.
    uint64_t owner = 0;
    int32_t pid = 0;
    int32_t priority = 0;
    bool proven = false;
    // Proven, and its process was found to map the file (or its maps may
    // not be read).
    bool audited = false;
    // Proven: the thread's pidfd, or none (tgkill).
    ScopedFd pidfd;
  };

  // The registration in `slot` with these words, proven or refused now if
  // it is new to us. Null if its thread is gone (the slot was evicted).
  const KnownRegistration* Know(uint32_t slot, uint64_t owner, int32_t pid,
                                int32_t priority);
  void Forget(KnownRegistration* known);
  void SayRefused(uint32_t slot, int32_t pid, int32_t tid, const char* why);

  QueueMemory* const memory_;
  std::unique_ptr<KnownRegistration[]> known_;
  uint64_t refused_wakeups_ = 0;
  bool said_refused_ = false;
};

}  // namespace aos::ipc_lib

#endif  // AOS_IPC_LIB_LOCKLESS_QUEUE_H_
