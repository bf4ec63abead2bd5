#ifndef AOS_IPC_LIB_WATCHER_PROOF_H_
#define AOS_IPC_LIB_WATCHER_PROOF_H_

// Proving that a watcher registration read from shared memory names a real
// watcher of the queue before a sender signals it. Internal to ipc_lib.
//
// clang-format off
//   WatcherProof proof = ProveWatcher(pid, tid, OwnerId(owner), identity,
//                                     WakeupSignal());
//   switch (proof.verdict) {
//     case WatcherProof::Verdict::kProven:  // signal it, through proof.pidfd
//     case WatcherProof::Verdict::kGone:    // thread gone: free the slot
//     case WatcherProof::Verdict::kRefused: // forged or stale: never signal
//   }
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
//   3. The process maps this queue's file (its /proc maps show the file's
//      device and inode). Where its maps may not be read (another user's
//      process, or one that is not dumpable), instead: its thread named by
//      the owner word's robust-list id is a thread of the process called
//      "aos_robust_list", i.e. the process is an aos process holding slots.
//
// Cost: a few /proc reads (tens to a few hundred microseconds, more for a
// process with very many mappings): once per registration per sender, not
// per send. Never allocates: stack buffers and raw syscalls only.
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
  // pidfds or no fd was free). The caller owns it.
  int pidfd = -1;
  // For kRefused: a static description of what failed, e.g. "does not map
  // the queue's file".
  const char* why = "";
};

// The device and inode of a queue's file.
struct FileId {
  dev_t device;
  ino_t inode;
};

// Checks the registration of thread `tid` of process `pid`, whose owner word
// names robust-list thread `robust_id`, as a watcher of the queue in file
// `file` that will be woken with `signal` (see above).
WatcherProof ProveWatcher(pid_t pid, pid_t tid, uint32_t robust_id,
                          const FileId& file, int signal);

// Sends `signal` to a proven watcher: through `pidfd` when it is not -1,
// else with tgkill(pid, tid). Returns 0 or an errno value (ESRCH: the thread
// is gone; EAGAIN: its signal queue is full).
int SignalWatcher(int pidfd, pid_t pid, pid_t tid, int signal);

// Writes `process`'s name (/proc/<pid>/comm) into `out` (`size` bytes,
// NUL-terminated) with every byte that is not printable ASCII as \xNN; "?"
// if it cannot be read. For messages about refused registrations.
void ProcessName(pid_t process, char* out, size_t size);

// For tests: makes ProveWatcher behave as if no process's maps could be
// read (so the robust-list proof is used), or back.
void SetMapsUnreadableForTesting(bool unreadable);

}  // namespace aos::ipc_lib::internal

#endif  // AOS_IPC_LIB_WATCHER_PROOF_H_
