#include "aos/network/peer_state.h"

#include <algorithm>

namespace aos::message_bridge {

PeerState::PeerState(std::chrono::nanoseconds timeout, RebootLimit limit)
    : timeout_(timeout),
      limit_{.max_reboots =
                 std::clamp<uint32_t>(limit.max_reboots, 1, kMaxRebootLimit),
             .window = limit.window} {}

uint32_t PeerState::ChangesWithin(monotonic_clock::time_point now) const {
  uint32_t within = 0;
  for (uint32_t i = 0; i < change_count_; ++i) {
    if (now - changes_[i].time < limit_.window) ++within;
  }
  return within;
}

PeerState::ProbeResult PeerState::Refuse(monotonic_clock::time_point now) {
  ++refused_reboots_;
  last_refusal_ = now;
  if (episode_refusals_++ == 0) {
    // The storm's first refusal: back to the boot before the oldest change
    // of the window, the peer's boot before the storm began (the ring is
    // full, and every change in it within the window, or we would not
    // refuse).
    const UUID& before = changes_[next_change_].previous;
    if (!before.IsZero()) boot_uuid_ = before;
  }
  return ProbeResult::kRefused;
}

PeerState::ProbeResult PeerState::OnProbe(monotonic_clock::time_point now,
                                          const UUID& boot) {
  if (!boot_uuid_.IsZero() && boot != boot_uuid_) {
    if (ChangesWithin(now) >= limit_.max_reboots) return Refuse(now);
    changes_[next_change_] = {.time = now, .previous = boot_uuid_};
    next_change_ = (next_change_ + 1) % limit_.max_reboots;
    change_count_ = std::min(change_count_ + 1, limit_.max_reboots);
    last_probe_ = now;
    ++reboots_;
    if (connected_) ++disconnects_;
    boot_uuid_ = boot;
    connected_ = true;
    connected_since_ = now;
    ++connection_count_;
    return ProbeResult::kRebooted;
  }
  last_probe_ = now;
  boot_uuid_ = boot;
  if (connected_) return ProbeResult::kSame;
  connected_ = true;
  connected_since_ = now;
  ++connection_count_;
  return ProbeResult::kConnected;
}

bool PeerState::Check(monotonic_clock::time_point now) {
  if (!connected_ || now - last_probe_ <= timeout_) return false;
  connected_ = false;
  ++disconnects_;
  return true;
}

std::optional<uint64_t> PeerState::EndRefusals(
    monotonic_clock::time_point now) {
  if (episode_refusals_ == 0 || now - last_refusal_ < limit_.window) {
    return std::nullopt;
  }
  const uint64_t refused = episode_refusals_;
  episode_refusals_ = 0;
  return refused;
}

}  // namespace aos::message_bridge
