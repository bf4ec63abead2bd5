#include "aos/network/peer_state.h"

namespace aos::message_bridge {

PeerState::ProbeResult PeerState::OnProbe(monotonic_clock::time_point now,
                                          const UUID& boot) {
  last_probe_ = now;
  if (!boot_uuid_.IsZero() && boot != boot_uuid_) {
    ++reboots_;
    if (connected_) ++disconnects_;
    boot_uuid_ = boot;
    connected_ = true;
    connected_since_ = now;
    ++connection_count_;
    return ProbeResult::kRebooted;
  }
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

}  // namespace aos::message_bridge
