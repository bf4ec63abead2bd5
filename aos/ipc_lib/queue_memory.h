#ifndef AOS_IPC_LIB_QUEUE_MEMORY_H_
#define AOS_IPC_LIB_QUEUE_MEMORY_H_

// The shared memory of one channel's queue: how big it is for a channel
// (QueueLayout), and the file every process maps (QueueMemory). The queue
// that lives in it is in lockless_queue.h.
//
// clang-format off
//   QueueLayout layout;  // aos::QueueLayoutForChannel fills one from a config
//   layout.message_data_size = 64;
//   layout.queue_size = 2000;
//   layout.num_senders = 10;
//   layout.num_watchers = 10;
//   layout.channel_storage_duration_ns = 2000000000;
//   absl::StatusOr<std::unique_ptr<QueueMemory>> memory = QueueMemory::Open(
//       "/dev/shm/aos/test/aos.examples.Ping.v4", layout, 0600,
//       "/test aos.examples.Ping");
//   if (!memory.ok()) LOG(FATAL) << memory.status();  // says what to delete
//   QueueReader reader(memory->get());
// clang-format on
//
// Nothing here is on the realtime path: opening creates files, maps memory
// and allocates.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace aos::ipc_lib {

// Bumped whenever the shared memory layout changes meaning. 2: slot owners
// are robust futex words (robust_slots.h), watcher slots carry a check.
// 3: message headers carry the source node's boot UUID. 4: and the
// message's path origins.
// Programs put it in the file's name (".v4"), so that programs of different
// versions do not normally meet.
inline constexpr uint32_t kLayoutVersion = 4;

// The sizes a channel's queue is built for, as plain values: the queue knows
// nothing of configurations. aos::QueueLayoutForChannel
// (aos/events/queue_layout_for_channel.h) computes them for a channel.
struct QueueLayout {
  // Largest message, bytes (the channel's max_size; a multiple of 8).
  uint32_t message_data_size = 0;
  // Messages kept: ceil(frequency * channel_storage_duration), at least 1.
  uint32_t queue_size = 0;
  uint32_t num_senders = 0;
  uint32_t num_watchers = 0;
  // For kMessagesSentTooFast: at most queue_size messages inside this.
  int64_t channel_storage_duration_ns = 0;

  // Bytes of shared memory this layout needs (header included).
  size_t MemorySize() const;
  // A hash of every field and kLayoutVersion, recorded in the file.
  uint64_t Hash() const;
  // "max_size 64, queue 2000, senders 10, watchers 10, storage 2000000000
  // ns, layout version 2"
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
  // Space: the creator reserves the whole file (posix_fallocate) before
  // mapping it; where the filesystem has no room, Open fails
  // (ResourceExhausted) naming the file, the bytes needed and the bytes
  // free, and removes the file. So a full disk is an error, never a SIGBUS
  // later.
  // Abandoned files: a creator holds an exclusive flock(2) on the file until
  // it is initialised. A file found unfinished whose lock nobody holds was
  // left by a creator that died (or by an older build); Open removes it
  // (one LOG(WARNING) line naming it) and creates it again. One whose
  // creator still holds the lock is waited for up to 1 s, then refused.
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

  // Whether path() still names the file this maps. A file removed (rm,
  // or a cleanup of --shm_base) or replaced by another while processes use
  // it splits them: whoever opens the path from now on gets another queue.
  enum class FileState {
    kInPlace,
    // Nothing is at path() any more.
    kRemoved,
    // path() names another file now.
    kReplaced,
  };
  // One stat(2) of path(); never allocates. Errors other than "no such
  // file" (e.g. a directory this process may no longer search) count as
  // kInPlace: they say nothing about the file.
  FileState CheckFile() const;

  // The mapped file's device and inode, as opened.
  struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
  };
  const FileIdentity& identity() const { return identity_; }

  const QueueLayout& layout() const { return layout_; }
  const std::string& path() const { return path_; }
  // The channel_description given to Open, for messages.
  const std::string& channel() const { return channel_; }
  // The mapping (for the queue classes): layout().MemorySize() bytes.
  void* base() const { return base_; }

 private:
  QueueMemory(std::string path, std::string channel, QueueLayout layout,
              FileIdentity identity, void* reservation, size_t reservation_size,
              void* base);

  std::string path_;
  std::string channel_;
  QueueLayout layout_;
  FileIdentity identity_;
  // The guard pages and the mapping between them.
  void* reservation_;
  size_t reservation_size_;
  void* base_;
};

}  // namespace aos::ipc_lib

#endif  // AOS_IPC_LIB_QUEUE_MEMORY_H_
