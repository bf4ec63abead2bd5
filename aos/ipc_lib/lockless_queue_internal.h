#ifndef AOS_IPC_LIB_LOCKLESS_QUEUE_INTERNAL_H_
#define AOS_IPC_LIB_LOCKLESS_QUEUE_INTERNAL_H_

// Pieces of lockless_queue.cc exposed for its tests. Not for other users.

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "aos/ipc_lib/internal_only.h"
#include "aos/ipc_lib/lockless_queue.h"

namespace aos::ipc_lib::internal {

// One registered watcher, as Wakeup() sees it.
struct WatcherTarget {
  uint32_t slot;
  pid_t pid;
  pid_t tid;
  int priority;
  // The slot's owner word when it was read.
  uint64_t owner;
};

// Sorts `targets` in place into the order Wakeup() signals them: highest
// priority first, ties by lowest slot. Never allocates.
void OrderWatchersByPriority(WatcherTarget* targets, size_t count);

// Places where the queue code SIGKILLs its own process when asked, so tests
// can stop a sender at each step of the protocol deterministically.
enum class CrashPoint : int {
  kNone = 0,
  // QueueSender::Make, after the slot's pid CAS, before repairing the slot.
  kSenderAfterClaim,
  // Send, after the slot records the pending publish, before the entry CAS.
  kSendBeforePublish,
  // Send, after the entry CAS, before the slot's scratch swaps.
  kSendAfterPublish,
  // Send, after the scratch swap, before the next index advances.
  kSendBeforeAdvance,
  // QueueWatcher::Make, after the claim, before the registration is filled
  // in.
  kWatcherAfterClaim,
};

// Process-wide; for forked test children.
void SetCrashPointForTesting(CrashPoint point);

namespace crash_internal {
extern std::atomic<int> crash_point;
}  // namespace crash_internal

inline void MaybeCrash(CrashPoint point) {
  if (__builtin_expect(
          crash_internal::crash_point.load(std::memory_order_relaxed) ==
              static_cast<int>(point),
          0)) {
    raise(SIGKILL);
  }
}

// Checks, with nothing running on the queue, that every message is in
// exactly one place (a ring position or one sender slot's scratch), that
// ring positions hold the expected indices, and that no sender slot has a
// publish pending. Slots of dead processes (as the kernel marked them) are
// judged as Make() would repair them. Returns "" or a description of what is
// wrong. Allocates.
std::string CheckQueueInvariants(const QueueMemory& memory);

}  // namespace aos::ipc_lib::internal

#endif  // AOS_IPC_LIB_LOCKLESS_QUEUE_INTERNAL_H_
