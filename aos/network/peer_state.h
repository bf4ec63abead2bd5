#ifndef AOS_NETWORK_PEER_STATE_H_
#define AOS_NETWORK_PEER_STATE_H_

// Whether a peer node's bridge is there, and which boot of it: what the
// bridge statistics' state, connection_count, disconnects, reboots,
// boot_uuid and connected_since_time say.
//
// A peer is connected while its probes arrive: from the first probe until
// `timeout` passes without one. A probe carrying another boot UUID than the
// last one is a reboot: the connection starts over (counted as a new
// connection, and as a reboot), so the new boot's messages are new ones.
//
//   PeerState peer(std::chrono::seconds(1));
//   switch (peer.OnProbe(now, boot)) { ... }   // on every probe
//   peer.Check(now);                            // from a periodic timer
//
// Never allocates.

#include <chrono>
#include <cstdint>

#include "aos/time/time.h"
#include "aos/util/uuid.h"

namespace aos::message_bridge {

class PeerState {
 public:
  enum class ProbeResult {
    // Connected already, same boot.
    kSame,
    // Was disconnected (or never connected): now connected.
    kConnected,
    // Another boot than the last one seen: connected anew.
    kRebooted,
  };

  explicit PeerState(std::chrono::nanoseconds timeout) : timeout_(timeout) {}

  ProbeResult OnProbe(monotonic_clock::time_point now, const UUID& boot);
  // Disconnects if no probe arrived in the last `timeout`. Returns true if
  // that happened now.
  bool Check(monotonic_clock::time_point now);

  bool connected() const { return connected_; }
  // The last boot seen (zero before the first probe).
  const UUID& boot_uuid() const { return boot_uuid_; }
  // When the current connection began (min_time while disconnected).
  monotonic_clock::time_point connected_since() const {
    return connected_ ? connected_since_ : monotonic_clock::min_time;
  }
  uint32_t connection_count() const { return connection_count_; }
  uint32_t disconnects() const { return disconnects_; }
  uint32_t reboots() const { return reboots_; }

 private:
  const std::chrono::nanoseconds timeout_;
  bool connected_ = false;
  UUID boot_uuid_;
  monotonic_clock::time_point last_probe_ = monotonic_clock::min_time;
  monotonic_clock::time_point connected_since_ = monotonic_clock::min_time;
  uint32_t connection_count_ = 0;
  uint32_t disconnects_ = 0;
  uint32_t reboots_ = 0;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_PEER_STATE_H_
