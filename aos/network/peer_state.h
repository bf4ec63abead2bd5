#ifndef AOS_NETWORK_PEER_STATE_H_
#define AOS_NETWORK_PEER_STATE_H_

// Whether a peer node's bridge is there, and which boot of it: what the
// bridge statistics' state, connection_count, disconnects, reboots,
// refused_reboots, boot_uuid and connected_since_time say.
//
// A peer is connected while its probes arrive: from the first probe until
// `timeout` passes without one. A probe carrying another boot UUID than the
// last one is a reboot: the connection starts over (counted as a new
// connection, and as a reboot), so the new boot's messages are new ones.
//
// Reboots are believed at a bounded rate. Without DDS Security anyone on
// the network can send probes in a peer's name (docs/network.md), and a
// stream of probes with ever new boot UUIDs would otherwise start the
// connection over, and the clock estimate with it, on every one. So a boot
// change is believed only while fewer than `limit.max_reboots` were believed
// within the last `limit.window`; beyond that it is refused: counted in
// refused_reboots(), not a heartbeat, no reboot. The first refusal of an
// episode also goes back to the boot the peer had before the believed
// changes of that window, where there was one: a storm of forged boots that
// began while the real peer was steady leaves the real peer connected, and
// its probes, heartbeats again, keep it so. An episode ends once a whole
// window passes without a refusal (EndRefusals).
//
//   PeerState peer(std::chrono::seconds(1));
//   switch (peer.OnProbe(now, boot)) { ... }   // on every probe
//   peer.Check(now);                            // from a periodic timer
//   if (auto refused = peer.EndRefusals(now)) { ... say *refused ... }
//
// Never allocates.

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

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
    // Another boot, beyond the limit: not believed, nothing changed but the
    // counts (and, on an episode's first refusal, boot_uuid(): back to the
    // boot of before the storm).
    kRefused,
  };

  struct RebootLimit {
    // At most this many boot changes believed within `window`; 1 to
    // kMaxRebootLimit.
    uint32_t max_reboots = 3;
    std::chrono::nanoseconds window = std::chrono::seconds(60);
  };
  static constexpr uint32_t kMaxRebootLimit = 16;

  explicit PeerState(std::chrono::nanoseconds timeout)
      : PeerState(timeout, RebootLimit()) {}
  PeerState(std::chrono::nanoseconds timeout, RebootLimit limit);

  // `now` must not go back from call to call.
  ProbeResult OnProbe(monotonic_clock::time_point now, const UUID& boot);
  // Disconnects if no probe arrived in the last `timeout`. Returns true if
  // that happened now.
  bool Check(monotonic_clock::time_point now);
  // Ends a refusal episode once a whole window passed since its last
  // refusal: returns how many boot changes it refused (once), else nothing.
  std::optional<uint64_t> EndRefusals(monotonic_clock::time_point now);

  bool connected() const { return connected_; }
  // The last boot believed (zero before the first probe).
  const UUID& boot_uuid() const { return boot_uuid_; }
  // When the current connection began (min_time while disconnected).
  monotonic_clock::time_point connected_since() const {
    return connected_ ? connected_since_ : monotonic_clock::min_time;
  }
  uint32_t connection_count() const { return connection_count_; }
  uint32_t disconnects() const { return disconnects_; }
  // Boot changes believed.
  uint32_t reboots() const { return reboots_; }
  // Boot changes refused (over the limit), all episodes.
  uint64_t refused_reboots() const { return refused_reboots_; }
  // Refusals in the current episode (0 when none is going on).
  uint64_t episode_refusals() const { return episode_refusals_; }
  const RebootLimit& limit() const { return limit_; }

 private:
  // A believed boot change: when, and the boot before it.
  struct Change {
    monotonic_clock::time_point time;
    UUID previous;
  };

  // Believed changes within the window ending at `now`.
  uint32_t ChangesWithin(monotonic_clock::time_point now) const;
  ProbeResult Refuse(monotonic_clock::time_point now);

  const std::chrono::nanoseconds timeout_;
  const RebootLimit limit_;
  bool connected_ = false;
  UUID boot_uuid_;
  monotonic_clock::time_point last_probe_ = monotonic_clock::min_time;
  monotonic_clock::time_point connected_since_ = monotonic_clock::min_time;
  uint32_t connection_count_ = 0;
  uint32_t disconnects_ = 0;
  uint32_t reboots_ = 0;
  // The last limit_.max_reboots believed changes, a ring; next_change_ is
  // the oldest once it is full.
  std::array<Change, kMaxRebootLimit> changes_{};
  uint32_t change_count_ = 0;
  uint32_t next_change_ = 0;
  uint64_t refused_reboots_ = 0;
  uint64_t episode_refusals_ = 0;
  monotonic_clock::time_point last_refusal_ = monotonic_clock::min_time;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_PEER_STATE_H_
