#include "aos/ipc_lib/robust_slots.h"

#include <errno.h>
#include <signal.h>

namespace aos::ipc_lib::internal {

bool ProcessExists(pid_t pid) {
  if (pid <= 0) return false;
  // EPERM: it exists but belongs to someone else.
  return kill(pid, 0) == 0 || errno != ESRCH;
}

std::optional<uint32_t> RobustSlots::Claim(uint64_t me) const {
  // Free slots first: no syscalls.
  for (uint32_t slot = 0; slot < count_; ++slot) {
    uint64_t expected = 0;
    if (owner(slot).load(std::memory_order_relaxed) == 0 &&
        owner(slot).compare_exchange_strong(expected, me,
                                            std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
      return slot;
    }
  }
  // Then slots of dead processes. The CAS from the dead owner fails if
  // someone else reclaimed (or the owner released) the slot since we looked.
  for (uint32_t slot = 0; slot < count_; ++slot) {
    uint64_t current = owner(slot).load(std::memory_order_acquire);
    if (current != 0 && ProcessExists(SlotOwnerPid(current))) continue;
    if (owner(slot).compare_exchange_strong(current, me,
                                            std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
      return slot;
    }
  }
  return std::nullopt;
}

bool RobustSlots::Release(uint32_t slot, uint64_t me) const {
  uint64_t expected = me;
  return owner(slot).compare_exchange_strong(
      expected, 0, std::memory_order_acq_rel, std::memory_order_relaxed);
}

}  // namespace aos::ipc_lib::internal
