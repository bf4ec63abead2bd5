#include "aos/ipc_lib/robust_slots.h"

#include "absl/status/status.h"
#include "aos/util/str_cat.h"

namespace aos::ipc_lib::internal {

absl::StatusOr<RobustSlots::Claimed> RobustSlots::Claim(
    uint32_t extra, bool registering) const {
  const absl::StatusOr<uint32_t> id = RobustListId();
  if (!id.ok()) return id.status();
  const uint64_t mine = OwnerWord(*id, extra, registering);
  for (uint32_t slot = 0; slot < count_; ++slot) {
    uint64_t current = owner(slot).load(std::memory_order_acquire);
    // The CAS fails if someone else claimed (or the owner released) the
    // slot since we looked; then it is theirs.
    if (Claimable(current) && ClaimListed(&owner(slot), current, mine)) {
      return Claimed{slot, mine};
    }
  }
  if (ListedWords() >= kMaxOwnedWords) {
    return absl::ResourceExhaustedError(
        aos::StrCat("this process already owns ", kMaxOwnedWords,
                    " slots, as many as the kernel can mark when it dies"));
  }
  return absl::ResourceExhaustedError(
      aos::StrCat("all ", count_, " slots are held by live processes"));
}

bool RobustSlots::Release(uint32_t slot, uint64_t mine) const {
  return ReleaseListed(&owner(slot), mine);
}

bool RobustSlots::Evict(uint32_t slot, uint64_t theirs) const {
  return owner(slot).compare_exchange_strong(
      theirs, 0, std::memory_order_acq_rel, std::memory_order_relaxed);
}

}  // namespace aos::ipc_lib::internal
