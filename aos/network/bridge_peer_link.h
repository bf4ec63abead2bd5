#ifndef AOS_NETWORK_BRIDGE_PEER_LINK_H_
#define AOS_NETWORK_BRIDGE_PEER_LINK_H_

// The message bridge's link to each peer node: which nodes are peers, and
// for each whether it is there, which boot of it, and how far its clock is
// from ours.
//
// - Discovery (the constructor): a peer is every other node that a channel
//   is forwarded to from this node (a destination) or from which one is
//   forwarded here (a source), in the order the channels first name them;
//   BridgeStatistics::PeersOf says which, for the statistics and the
//   simulated network alike.
// - Probes: SendProbes() (the loop's `probe` timer) writes each peer a
//   probe on its topic, aos_bridge_probe_<its node index>: our boot and
//   send time, and an echo of the last probe it sent us. The peer's probes
//   to us arrive on our topic; they are taken in Cyclone's listener thread,
//   each stamped there with when it was taken, so that a clock exchange's
//   receive time leaves out the loop's wakeup, and handed to the loop
//   (StampedInbox), which handles them in Serve().
// - Connection and boot: a peer is connected while its probes arrive,
//   disconnected after disconnect_timeout without one; its boot changes are
//   believed at a bounded rate (peer_state.h), beyond which they are
//   refused and an episode of refusals is said on stderr in one line when
//   it starts and one when it ends.
// - Clock: NTP-style exchanges from the probes and their echoes give the
//   peer's clock offset and its uncertainty (clock_offset_estimator.h),
//   forgotten when the peer reboots.
//
//   PeerLink link(&loop, my_index, options);               // discovery
//   link.Open(dds, &pack, statistics);                    // DDS entities
//   loop.OnReadable(dds->wakeup_fd(), [&]() { ... link.Serve(); ... });
//   probe_timer: link.SendProbes();
//   statistics_timer: link.FillLinkStates(statistics); statistics->Publish();
//
// What the other roles read of a peer: PeerAt(node index), connected(),
// boot_uuid() and clock_offset(); from Cyclone's thread, view() (the
// receiving side re-sends there). Everything but the listener function
// and view() runs in the loop's thread; nothing allocates once the loop
// runs, but for a boot's text when the peer reboots and the lines a
// refusal episode says.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/network/bridge_statistics.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/bridge_write_pack.h"
#include "aos/network/clock_offset_estimator.h"
#include "aos/network/dds_participant.h"
#include "aos/network/peer_state.h"
#include "aos/network/stamped_inbox.h"
#include "aos/util/priority_inheritance_mutex.h"
#include "aos/util/uuid.h"

namespace aos::message_bridge {

class PeerLink {
 public:
  struct Options {
    // A peer whose probes stop is disconnected after this.
    std::chrono::nanoseconds disconnect_timeout = std::chrono::seconds(1);
    // The clock offset estimate uses the probes of this last window.
    std::chrono::nanoseconds clock_window = std::chrono::seconds(10);
  };

  // One peer node. Read-only outside PeerLink.
  class Peer {
   public:
    Peer(const Node* node, uint32_t index, size_t slot, const Options& options);

    const Node* node() const { return node_; }
    // Its index in the configuration's nodes (what the wire names it by).
    uint32_t index() const { return index_; }
    // Its place in PeerLink::peers() and in BridgeStatistics.
    size_t slot() const { return slot_; }
    std::string_view name() const { return name_; }
    // We forward to it / it forwards to us.
    bool is_destination() const { return is_destination_; }
    bool is_source() const { return is_source_; }

    // Whether its probes arrive (PeerState).
    bool connected() const { return state_.connected(); }
    // Its boot as believed (zero before its first probe): the clock offset
    // estimate is of this boot.
    const UUID& boot_uuid() const { return state_.boot_uuid(); }
    // Its clock minus ours, and the bound on the error.
    ClockOffsetEstimator::Estimate clock_offset() const {
      return clock_.estimate();
    }

    // boot_uuid() and clock_offset() together, as the last probe the loop
    // handled left them.
    struct View {
      UUID boot_uuid;
      ClockOffsetEstimator::Estimate clock_offset;
    };
    // What the receiving side reads from Cyclone's thread. Any thread.
    View view() const {
      std::lock_guard<PriorityInheritanceMutex> lock(view_mutex_);
      return view_;
    }

   private:
    friend class PeerLink;

    // view() as the peer is now. In the loop's thread.
    void UpdateView() {
      std::lock_guard<PriorityInheritanceMutex> lock(view_mutex_);
      view_ = {state_.boot_uuid(), clock_.estimate()};
    }

    const Node* const node_;
    const uint32_t index_;
    const size_t slot_;
    const std::string name_;
    bool is_destination_ = false;
    bool is_source_ = false;
    PeerState state_;
    ClockOffsetEstimator clock_;
    // boot_uuid() as text once a probe was believed, "" before.
    std::string boot_string_;
    // Its last probe to us: sent (its clock), received (ours).
    int64_t echo_sent_ns_ = 0;
    int64_t echo_received_ns_ = 0;
    dds_entity_t probe_writer_ = 0;
    mutable PriorityInheritanceMutex view_mutex_;
    View view_;
  };

  // The peers of the node `loop` runs on, the node at `my_index` of its
  // configuration. Before the loop runs; `loop` must outlive it.
  PeerLink(EventLoop* loop, uint32_t my_index, const Options& options);

  PeerLink(const PeerLink&) = delete;
  PeerLink& operator=(const PeerLink&) = delete;

  // The peers, each once, in discovery order (Peer::slot()).
  const std::vector<std::unique_ptr<Peer>>& peers() const { return peers_; }
  // What BridgeStatistics::Make is to be given: the peers in that order.
  std::vector<BridgeStatistics::PeerSpec> StatisticsPeers() const;
  // The peer at `node_index` of the configuration; nullptr if that is no
  // peer (not a node, or ourselves, or a node nothing is forwarded with).
  Peer* PeerAt(uint32_t node_index) const {
    return node_index < peers_by_index_.size() ? peers_by_index_[node_index]
                                               : nullptr;
  }
  uint32_t my_index() const { return my_index_; }

  // Makes the probe reader on our topic and a probe writer per peer, whose
  // writes go through `pack`; probes naming no peer are counted in
  // `statistics` (dropped_unknown_node). `dds` must be deleted before this
  // PeerLink (its listener calls into it); `pack` and `statistics` must
  // outlive it.
  absl::Status Open(DdsParticipant* dds, WritePack* pack,
                    BridgeStatistics* statistics);

  // In the loop, when the participant's wakeup fd is readable: the probes
  // that arrived since, for the peers' states and clocks.
  void Serve();

  // Checks each peer for a disconnect and the end of a refusal episode, and
  // writes each its probe. From the loop's probe timer.
  void SendProbes();

  // Each peer's LinkState in `statistics` (made with StatisticsPeers()), as
  // the link is now; the boot texts stay valid until the next probe is
  // handled.
  void FillLinkStates(BridgeStatistics* statistics) const;

 private:
  // In Cyclone's listener thread: takes the probes that arrived on `reader`
  // into probe_inbox_, each stamped with when it was taken there.
  void TakeProbesInListener(dds_entity_t reader);
  // In the loop: what probe_inbox_ holds.
  void HandleProbes();
  // One line on stderr: "<program>: <node>: <line>". Only for what is rare
  // by construction (a refusal episode's start and end).
  void Say(std::string_view line) const;

  EventLoop* const loop_;
  const uint32_t my_index_;
  const UUID boot_uuid_;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::vector<Peer*> peers_by_index_;
  WritePack* pack_ = nullptr;
  BridgeStatistics* statistics_ = nullptr;
  // Probes taken in Cyclone's thread, for the loop; 10 a second per peer,
  // so a full inbox means the loop stalled, and dropping probes then is
  // harmless (they are heartbeats and clock samples).
  static constexpr size_t kProbeInboxSize = 64;
  StampedInbox<aos_bridge_Probe, kProbeInboxSize> probe_inbox_;
  std::array<StampedInbox<aos_bridge_Probe, kProbeInboxSize>::Entry,
             kProbeInboxSize>
      probe_entries_;
  DdsParticipant::Signal probe_arrived_{[this](dds_entity_t reader) {
    TakeProbesInListener(reader);
    return true;
  }};
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_BRIDGE_PEER_LINK_H_
