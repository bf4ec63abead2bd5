#ifndef AOS_IPC_LIB_WATCHER_PROOF_H_
#define AOS_IPC_LIB_WATCHER_PROOF_H_

// Proving that a watcher registration read from shared memory names a real
// watcher of the queue before a sender signals it. Internal to ipc_lib.
//
// clang-format off
//   WatcherProof proof = ProveWatcher(pid, tid, OwnerId(owner),
//                                     WakeupSignal());
//   switch (proof.verdict) {
//     case WatcherProof::Verdict::kProven:  // signal it, through proof.pidfd
//     case WatcherProof::Verdict::kGone:    // thread gone: free the slot
//     case WatcherProof::Verdict::kRefused: // forged or stale: never signal
//   }
//   ...
//   // Later, off the send path:
//   if (ProcessMapsFile(pid, file) == MapsAnswer::kDoesNotMap) ... refuse
// clang-format on
//
// Why: anyone who can write a queue file can fill a watcher slot with any
// pid and tid (and a matching check word). Signalling it blindly lets them
// make every sender on the channel send the wakeup signal, whose default
// action kills, to any process the sender may signal (often as root).
//
// The proof, which the writer of the file cannot forge because it is about
// the kernel's view of the named process, not about the file:
//   1. The thread exists and is a thread of the process (its /proc status
//      says Tgid: pid). A pidfd is opened on the thread first (PIDFD_THREAD,
//      Linux 6.9+) and checked alive after the checks below, so everything
//      read was about that very thread, and signals sent later through the
//      pidfd can never reach another thread that got its tid.
//   2. The thread blocks the wakeup signal (its SigBlk), as every waiting
//      watcher does (it reads the signal through signalfd): so the signal
//      cannot kill it or run a handler of its.
//   3. The owner word's robust-list id names a thread of the process called
//      "aos_robust_list" (process_robust_list.h): it is an aos process that
//      holds slots. Only the process itself (or its user) can name its
//      threads, so a forger can point only at aos processes or its own.
// That is ProveWatcher: a few small /proc reads (about 35 us on the 2-vCPU
// VM), once per registration per sender, never allocating.
//
// ProcessMapsFile adds: 4. the process maps this queue's file (its /proc
// maps show the file's device and inode). Reading a process's maps costs
// about 1 us per mapping (100 us for an aos process with a few hundred), so
// senders do it off the send path (QueueWakeUpper::AuditRegistrations).
// Where the maps may not be read (another user's process while not root,
// or a process that is not dumpable) it says so, and 1-3 stand.
//
// Limits: on kernels without thread pidfds (before 6.9) pidfd is -1 and the
// caller signals with tgkill: a watcher process that dies after the proof
// and whose tid the kernel gives to an unrelated thread before the next
// send is not noticed (a legitimate registration is: the kernel marks its
// owner word dead first). Every process sharing a queue must share the pid
// namespace and /proc (as robust_slots.h already requires).

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "aos/ipc_lib/internal_only.h"
#include "aos/util/scoped_fd.h"

namespace aos::ipc_lib::internal {

struct WatcherProof {
  enum class Verdict {
    // Signal it (through `pidfd` if it is not -1, else tgkill).
    kProven,
    // The thread does not exist: the slot may be freed.
    kGone,
    // Not shown to be a watcher of this queue: never signal it.
    kRefused,
  };
  Verdict verdict = Verdict::kRefused;
  // A pidfd for the thread (kProven only; -1 where the kernel has no thread
  // pidfds or no fd was free).
  ScopedFd pidfd;
  // For kRefused: a static description of what failed, e.g. "does not map
  // the queue's file".
  const char* why = "";
};

// The device and inode of a queue's file.
struct FileId {
  dev_t device;
  ino_t inode;
};

// Checks 1-3 above for the registration of thread `tid` of process `pid`,
// whose owner word names robust-list thread `robust_id`, woken with
// `signal`. Never allocates.
WatcherProof ProveWatcher(pid_t pid, pid_t tid, uint32_t robust_id, int signal);

enum class MapsAnswer { kMaps, kDoesNotMap, kUnreadable };

// Check 4: whether process `pid` maps `file`. kUnreadable when its maps may
// not be read. Never allocates; reads all of /proc/<pid>/maps.
MapsAnswer ProcessMapsFile(pid_t pid, const FileId& file);

// Sends `signal` to a proven watcher: through `pidfd` when it is not -1,
// else with tgkill(pid, tid). Returns 0 or an errno value (ESRCH: the thread
// is gone; EAGAIN: its signal queue is full).
int SignalWatcher(int pidfd, pid_t pid, pid_t tid, int signal);

// Writes `process`'s name (/proc/<pid>/comm) into `out` (`size` bytes,
// NUL-terminated) with every byte that is not printable ASCII as \xNN; "?"
// if it cannot be read. For messages about refused registrations.
void ProcessName(pid_t process, char* out, size_t size);

// For tests: makes ProcessMapsFile answer kUnreadable for every process,
// or stop doing so.
void SetMapsUnreadableForTesting(bool unreadable);

}  // namespace aos::ipc_lib::internal

#endif  // AOS_IPC_LIB_WATCHER_PROOF_H_
