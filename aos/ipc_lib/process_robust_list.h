#ifndef AOS_IPC_LIB_PROCESS_ROBUST_LIST_H_
#define AOS_IPC_LIB_PROCESS_ROBUST_LIST_H_

// Words in shared memory that the kernel marks when this process dies.
//
// clang-format off
//   const uint32_t id = *RobustListId();
//   uint64_t expected = 0;
//   if (ClaimListed(&slot.owner, expected, OwnerWord(id, extra))) {
//     ...                   // if this process dies now, however it dies, the
//                           // kernel turns the low half of slot.owner into
//                           // kOwnerDied before its pid can be reused
//     ReleaseListed(&slot.owner, OwnerWord(id, extra));
//   }
// clang-format on
//
// Linux keeps, per thread, one "robust futex list" (set_robust_list(2)): when
// the thread exits, for any reason, the kernel walks the list and, in every
// listed 32-bit word that still holds the thread's tid, replaces the tid with
// FUTEX_OWNER_DIED. That is exactly "did the owner die?", decided by the
// kernel at the moment of death, so a reused pid can never make a dead owner
// look alive, and no syscall is needed to ask.
//
// Coexisting with glibc: glibc registers its own list in every thread for
// robust pthread mutexes, and a thread can have only one. So this process's
// list belongs to a thread of its own, the owner thread: started on first
// use (and again in a forked child), it registers the list and then sleeps,
// with every signal blocked, until the process dies. Its tid is the id that
// goes into owner words, so ownership is per process, not per thread (a
// sender made by a thread that has exited stays owned), and no other
// thread's list is touched. The list's entries are the slots' `robust_next`
// words (shared_memory_layout.h), kRobustEntryOffset bytes after each owner
// word; this process writes them from its own bookkeeping and never reads
// them back, so damaged shared memory can only mislead the kernel's walk at
// death, which is bounded and fault-safe.
//
// Limits: the kernel walks at most 2048 entries (ROBUST_LIST_LIMIT), so a
// process owns at most kMaxOwnedWords words at once. Every process sharing a
// queue must be in the same pid namespace (the kernel compares tids as the
// dying thread sees them).

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "aos/ipc_lib/internal_only.h"

namespace aos::ipc_lib::internal {

// Where a claimed word's robust list link lives: this many bytes after it.
inline constexpr size_t kRobustEntryOffset = 8;

// What the kernel leaves in the low half of a dead owner's word
// (FUTEX_OWNER_DIED; we never set FUTEX_WAITERS).
inline constexpr uint32_t kOwnerDied = 0x40000000;

// At most this many words owned by one process at once: the kernel's robust
// list walk stops after 2048 entries.
inline constexpr size_t kMaxOwnedWords = 2048;

// This process's id for owner words: the owner thread's tid (non-zero,
// below 2^30), starting the thread and registering the list on first use in
// this process (and in each forked child). Costs a thread creation the first
// time; a mutex after that. Fails, saying why, when the thread cannot be
// started or the kernel has no robust futexes. Thread-safe, as is
// everything below.
absl::StatusOr<uint32_t> RobustListId();

// If `*word` holds `expected`, replaces it with `desired` (whose low half
// must be RobustListId()) and lists the word, atomically with respect to
// this process's death: killed at any instruction, the word is either
// unchanged or listed. Returns false if the word held something else
// (`expected` is updated, like compare_exchange), if kMaxOwnedWords are
// already listed (check ListedWords()), or if RobustListId() was not called
// in this process. The word must be followed, kRobustEntryOffset bytes
// later, by its link word, and both must stay mapped until it is released.
// Takes a process-local mutex; never waits for other processes.
[[nodiscard]] bool ClaimListed(std::atomic<uint64_t>* word, uint64_t& expected,
                               uint64_t desired);

// If `*word` holds `owner` (what ClaimListed stored, or a later change of the
// high half), frees it (0), and stops listing it unless it still holds our id
// (another object of this process claimed it again after someone else freed
// it). Does nothing in a process that did not claim it (a forked child).
// Returns whether it freed the word.
bool ReleaseListed(std::atomic<uint64_t>* word, uint64_t owner);

// Frees every word this process owns in [begin, end) and stops listing them:
// that memory is about to be unmapped, after which the kernel could not mark
// those words anyway. For QueueMemory's destructor.
void ReleaseAllListedIn(const void* begin, const void* end);

// How many words this process lists now.
size_t ListedWords();

}  // namespace aos::ipc_lib::internal

#endif  // AOS_IPC_LIB_PROCESS_ROBUST_LIST_H_
