#ifndef AOS_IPC_LIB_ROBUST_SLOTS_H_
#define AOS_IPC_LIB_ROBUST_SLOTS_H_

// Slots in shared memory owned by processes, robust to owners that die, even
// when the kernel has since given their pid to another process.
//
// clang-format off
//   RobustSlots slots(&view.sender(0).owner, sizeof(SenderSlot), num_senders);
//   absl::StatusOr<Claimed> claimed = slots.Claim(getpid());
//   ...
//   slots.Release(claimed->slot, claimed->owner);
// clang-format on
//
// Each slot starts with a 64-bit owner word (and, after it, the link word
// process_robust_list.h needs). The word is an OwnerWord:
//   bits 0-31   the owning process's ProcessRobustList id; 0 = free. When
//               the owner dies, however it dies, the kernel replaces these
//               bits with kOwnerDied before the owner's pid can be reused.
//   bits 32-62  the claimer's "extra" (a sender: its pid; a watcher: the
//               thread to signal), so a release can never free a slot that
//               changed hands.
//   bit 63      kRegistering: claimed, but the caller has not finished
//               filling in the slot.
// Claiming is one CAS from a free or dead word to ours, done so that being
// killed at any instruction leaves the slot either as it was or ours (and so
// marked dead when we are); releasing is one CAS from our word to 0. Nothing
// is ever left half claimed, and no syscall is needed to judge an owner.
// What the slot's other fields mean after a reclaim is the caller's business
// (QueueSender::Make repairs a half-done send).

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "aos/ipc_lib/internal_only.h"
#include "aos/ipc_lib/process_robust_list.h"

namespace aos::ipc_lib::internal {

inline constexpr uint64_t kRegistering = uint64_t{1} << 63;

constexpr uint64_t OwnerWord(uint32_t id, uint32_t extra,
                             bool registering = false) {
  return id | (static_cast<uint64_t>(extra & 0x7fffffff) << 32) |
         (registering ? kRegistering : 0);
}
constexpr uint32_t OwnerId(uint64_t owner) {
  return static_cast<uint32_t>(owner);
}
constexpr uint32_t OwnerExtra(uint64_t owner) {
  return static_cast<uint32_t>(owner >> 32) & 0x7fffffff;
}
// Whether the owner died (or the word says so: any word may be damaged).
constexpr bool OwnerDied(uint64_t owner) {
  return (OwnerId(owner) & kOwnerDied) != 0;
}
constexpr bool OwnerRegistering(uint64_t owner) {
  return (owner & kRegistering) != 0;
}
// Free, or held by a process that no longer exists.
constexpr bool Claimable(uint64_t owner) {
  return owner == 0 || OwnerDied(owner);
}

class RobustSlots {
 public:
  // Slot k's owner word is at `first_owner` + k * `stride` bytes.
  RobustSlots(std::atomic<uint64_t>* first_owner, size_t stride, uint32_t count)
      : first_owner_(reinterpret_cast<char*>(first_owner)),
        stride_(stride),
        count_(count) {}

  struct Claimed {
    uint32_t slot;
    // The word now in the slot: what Release wants.
    uint64_t owner;
  };

  // Claims the lowest slot that is free or whose owner died, for this
  // process, with `extra` in the owner word (and kRegistering if asked).
  // ResourceExhausted when every slot is held by a live process; other
  // errors when this process cannot set up its ProcessRobustList (the
  // message says why). Lock-free with respect to other processes; no
  // syscall except the first time in a process. Not for realtime paths.
  absl::StatusOr<Claimed> Claim(uint32_t extra, bool registering = false) const;

  // Frees `slot` if its owner word is still `owner` (and this is the process
  // that claimed it: a forked child frees nothing); returns whether it did.
  bool Release(uint32_t slot, uint64_t owner) const;

  // Frees `slot` for an owner that is not us (its thread is gone) if the
  // word is still `owner`. One CAS; never allocates: for Wakeup.
  bool Evict(uint32_t slot, uint64_t owner) const;

  std::atomic<uint64_t>& owner(uint32_t slot) const {
    return *reinterpret_cast<std::atomic<uint64_t>*>(first_owner_ +
                                                     stride_ * slot);
  }
  uint32_t count() const { return count_; }

 private:
  char* const first_owner_;
  const size_t stride_;
  const uint32_t count_;
};

}  // namespace aos::ipc_lib::internal

#endif  // AOS_IPC_LIB_ROBUST_SLOTS_H_
