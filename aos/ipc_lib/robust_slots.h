#ifndef AOS_IPC_LIB_ROBUST_SLOTS_H_
#define AOS_IPC_LIB_ROBUST_SLOTS_H_

// Slots in shared memory owned by processes, robust to owners that die.
//
//   RobustSlots slots(&view.sender(0).owner, sizeof(SenderSlot), num_senders);
//   const uint64_t me = SlotOwner(getpid());
//   std::optional<uint32_t> slot = slots.Claim(me);
//   ...
//   slots.Release(*slot, me);
//
// Each slot has an atomic 64-bit owner word: 0 means free; otherwise the low
// 32 bits are the owner's pid and the high 32 bits are the caller's (a
// watcher's thread id). Claiming is one CAS, from 0 or from the word of a
// process that no longer exists, to the claimer's word; releasing is one CAS
// from the owner's word to 0. So a process killed at any instruction leaves
// each slot either as it was or owned by its own pid, which is dead and
// therefore reclaimable: nothing is ever wedged. What the slot's other
// fields mean after a reclaim is the caller's business (QueueSender::Make
// repairs a half-done send).
//
// A pid that the kernel has reused for a new process makes its old slots
// look alive until that process exits too. Zombies count as alive: parents
// must reap their children.

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace aos::ipc_lib::internal {

// False only when `pid` names no process (kill(pid, 0) fails with ESRCH).
// One syscall; never allocates.
bool ProcessExists(pid_t pid);

constexpr uint64_t SlotOwner(pid_t pid, uint32_t extra = 0) {
  return static_cast<uint32_t>(pid) | (static_cast<uint64_t>(extra) << 32);
}
constexpr pid_t SlotOwnerPid(uint64_t owner) {
  return static_cast<pid_t>(static_cast<uint32_t>(owner));
}
constexpr uint32_t SlotOwnerExtra(uint64_t owner) {
  return static_cast<uint32_t>(owner >> 32);
}

class RobustSlots {
 public:
  // Slot k's owner word is at `first_owner` + k * `stride` bytes.
  RobustSlots(std::atomic<uint64_t>* first_owner, size_t stride, uint32_t count)
      : first_owner_(reinterpret_cast<char*>(first_owner)),
        stride_(stride),
        count_(count) {}

  // Claims a free slot for `owner` (non-zero pid), lowest first, or failing
  // that one whose owner process is dead. nullopt when every slot is held by
  // a live process. Lock-free; costs one kill(2) per occupied slot, and only
  // when no slot is free.
  std::optional<uint32_t> Claim(uint64_t owner) const;

  // Frees `slot` if its owner word is still `owner`; returns whether it did.
  bool Release(uint32_t slot, uint64_t owner) const;

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
