#ifndef AOS_IPC_LIB_LOCKLESS_QUEUE_H_
#define AOS_IPC_LIB_LOCKLESS_QUEUE_H_

// One channel's message queue in shared memory, shared by processes.
//
//   QueueLayout layout = QueueLayout::ForChannel(config, *channel);
//   auto memory = QueueMemory::Open("/dev/shm/aos/test/aos.examples.Ping.v1",
//                                   layout, 0600, "/test aos.examples.Ping");
//   auto sender = QueueSender::Make(memory->get());      // claims a slot
//   ... build the message in the last n bytes of sender->Data() ...
//   MessageInfo sent;
//   sender->Send(n, monotonic_clock::min_time, realtime_clock::min_time,
//                kNoRemoteQueueIndex, &sent);
//   QueueWakeUpper(memory->get()).Wakeup();               // signal watchers
//
//   QueueReader reader(memory->get());
//   reader.Read(index, &info, buffer);                   // copy out, never
//   torn
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
//   ring entry is reported (kCorrupt, logged once per reader or sender) and
//   skipped. Message payloads are not checksummed: damaged data inside a
//   message's bounds is returned as it is.

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"
#include "aos/time/time.h"

namespace aos::ipc_lib {

// Bumped whenever the shared memory layout changes meaning. 2: slot owners
// are robust futex words (robust_slots.h), watcher slots carry a check.
inline constexpr uint32_t kLayoutVersion = 2;

// remote_queue_index for a message that was not forwarded.
inline constexpr uint32_t kNoRemoteQueueIndex = 0xffffffff;

// The sizes a channel's queue is built for.
struct QueueLayout {
  // Largest message, bytes (the channel's max_size; a multiple of 8).
  uint32_t message_data_size = 0;
  // Messages kept: ceil(frequency * channel_storage_duration), at least 1.
  uint32_t queue_size = 0;
  uint32_t num_senders = 0;
  uint32_t num_watchers = 0;
  uint32_t num_readers = 0;
  // For kMessagesSentTooFast: at most queue_size messages inside this.
  int64_t channel_storage_duration_ns = 0;

  static QueueLayout ForChannel(const Configuration& config,
                                const Channel& channel);

  // Bytes of shared memory this layout needs (header included).
  size_t MemorySize() const;
  // A hash of every field and kLayoutVersion, recorded in the file.
  uint64_t Hash() const;
  // "max_size 64, queue 2000, senders 10, watchers 10, readers 10, storage
  // 2000000000 ns, layout version 1"
  std::string ToString() const;

  bool operator==(const QueueLayout&) const = default;
};

// The mapped shared memory of one channel's queue.
class QueueMemory {
 public:
  // Opens the file at `path`, creating it (and missing directories) with
  // mode `permissions` if absent, and sizes and initialises it for `layout`
  // exactly once even when several processes race to create it. Fails,
  // changing nothing in the file, when it exists but is not an aos queue,
  // is truncated, or was built for another layout; the message names
  // `channel_description`, the file, both layouts, and says to delete the
  // file (after stopping every process using it). Permission errors name the
  // file and the mode.
  // The mapping has an inaccessible page on each side, so that a read out of
  // its bounds faults at once instead of reading a neighbour.
  static absl::StatusOr<std::unique_ptr<QueueMemory>> Open(
      std::string_view path, const QueueLayout& layout, mode_t permissions,
      std::string_view channel_description);

  // Unmaps, first freeing every slot this process still holds in it
  // (senders and watchers should be destroyed first). The file stays.
  ~QueueMemory();

  QueueMemory(const QueueMemory&) = delete;
  QueueMemory& operator=(const QueueMemory&) = delete;

  const QueueLayout& layout() const { return layout_; }
  const std::string& path() const { return path_; }
  // The channel_description given to Open, for messages.
  const std::string& channel() const { return channel_; }
  // The mapping (for the queue classes): layout().MemorySize() bytes.
  void* base() const { return base_; }

 private:
  QueueMemory(std::string path, std::string channel, QueueLayout layout,
              void* reservation, size_t reservation_size, void* base);

  std::string path_;
  std::string channel_;
  QueueLayout layout_;
  // The guard pages and the mapping between them.
  void* reservation_;
  size_t reservation_size_;
  void* base_;
};

// What is known about one message.
struct MessageInfo {
  monotonic_clock::time_point monotonic_sent_time = monotonic_clock::min_time;
  realtime_clock::time_point realtime_sent_time = realtime_clock::min_time;
  // Times and index on the node it was first sent on; equal to the local
  // ones for a message that was not forwarded.
  monotonic_clock::time_point monotonic_remote_time = monotonic_clock::min_time;
  realtime_clock::time_point realtime_remote_time = realtime_clock::min_time;
  uint32_t remote_queue_index = kNoRemoteQueueIndex;
  // Low 32 bits of the message's queue index.
  uint32_t queue_index = 0xffffffff;
  // Bytes of message data.
  uint32_t size = 0;
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

  enum class Result {
    kGood,
    kMessagesSentTooFast,
    kInvalidRedzone,
    // The ring entry to be replaced is damaged (it names no message, or this
    // sender's own); nothing is sent. Logged once per sender.
    kCorrupt,
  };

  // Publishes the last `length` (<= size()) bytes of Data() as the next
  // message. The send time is read from the clocks inside, so sent times
  // never go backwards along queue indices. Pass min_time and
  // kNoRemoteQueueIndex for a local message (the remote fields then copy
  // the local ones). kMessagesSentTooFast: the message queue_size messages
  // ago was sent less than channel_storage_duration ago; nothing is sent.
  // kInvalidRedzone: something wrote outside Data(); nothing is sent (the
  // redzones are restored). On kGood, `*sent` describes the message.
  // Lock-free and wait-free for this sender except for retries when other
  // senders publish concurrently; never allocates (except the one log line
  // of a first kCorrupt); never blocks.
  Result Send(size_t length, monotonic_clock::time_point monotonic_remote_time,
              realtime_clock::time_point realtime_remote_time,
              uint32_t remote_queue_index, MessageInfo* sent);

 private:
  QueueSender(QueueMemory* memory, uint32_t slot, uint64_t owner,
              uint32_t scratch);
  Result Corrupt(const char* what, uint64_t index, uint64_t value);

  QueueMemory* const memory_;
  const uint32_t slot_;
  // The slot's owner word (it names this process).
  const uint64_t owner_;
  // The message Data() points into. Kept here, not read back from the slot:
  // only this sender changes it, and memory others can write is never
  // trusted for an address.
  uint32_t scratch_;
  bool reported_corruption_ = false;
};

// Reads one queue. Needs no slot; any number may exist.
class QueueReader {
 public:
  explicit QueueReader(QueueMemory* memory);

  // The index the next message will get: messages [0, NextIndex()) were
  // sent (the oldest NextIndex() - queue_size of them are gone).
  uint64_t NextIndex() const;

  enum class Result {
    kGood,
    // Not sent yet.
    kNothingNewYet,
    // Overwritten (before or while being copied); read a newer one.
    kTooOld,
    // The shared memory says something impossible about this index (its
    // ring entry names no message, or its message disagrees with the entry
    // while the entry stays put): the memory is damaged. Skip the index and
    // count it as lost; reading it again gives the same answer.
    kCorrupt,
  };

  // Copies message `index` into `data` (at least message_data_size bytes;
  // the message goes to its start) and describes it in `*info`. Never
  // returns torn data. Never blocks, never allocates (except the one
  // LOG(ERROR) naming the channel, file and index of the first kCorrupt this
  // reader sees). Reads nothing outside the mapping, whatever it holds, and
  // loads the ring entry at most twice.
  Result Read(uint64_t index, MessageInfo* info, void* data) const;

 private:
  Result Corrupt(uint64_t index, const char* what, uint64_t value) const;

  QueueMemory* const memory_;
  mutable bool reported_corruption_ = false;
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

// Wakes a queue's watchers.
class QueueWakeUpper {
 public:
  explicit QueueWakeUpper(QueueMemory* memory);

  // Sends WakeupSignal() to every registered watcher thread, highest
  // priority first (ties: lowest slot first), and returns how many were
  // signalled. Slots whose thread no longer exists are released. Never
  // allocates.
  int Wakeup();

 private:
  QueueMemory* const memory_;
};

}  // namespace aos::ipc_lib

#endif  // AOS_IPC_LIB_LOCKLESS_QUEUE_H_
