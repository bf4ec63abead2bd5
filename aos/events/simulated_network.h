#ifndef AOS_EVENTS_SIMULATED_NETWORK_H_
#define AOS_EVENTS_SIMULATED_NETWORK_H_

// The network between the nodes of a simulated multi-node system: what the
// message bridge does in production (aos/network), on simulated time.
//
// A message sent on a channel's source node is re-sent on each of its
// destination_nodes after the send delay and the link's delay, with the
// remote fields filled
// as the bridge fills them: monotonic_remote_time and realtime_remote_time
// (when it was sent, on the source node's clocks), remote_queue_index (its
// queue index there) and source_boot_uuid (the source node's boot). On the
// destination it is a new local message: its monotonic_event_time is when it
// was re-sent there, on that node's clock, so a watcher's wakeup latency of
// a forwarded message measures the destination's own delivery, as in
// production (the network's part is the link's).
//
// The send delay (SimulatedEventLoopFactory::set_send_delay, 0 by default)
// is when the message leaves: the bridge is a reader on the source node, and
// sees it when that node's watchers do, as in AOS. Links (one per ordered
// pair of nodes) have a delay (default 100 us), a loss fraction and a
// connected state, set by tests:
// - Best-effort channels (time_to_live > 0) lose `loss` of their messages,
//   deterministically (error diffusion: a loss of 0.25 drops every fourth
//   message exactly), and drop messages older than time_to_live on arrival.
// - Reliable channels (time_to_live 0) lose nothing on the link: a message
//   the link loses is retransmitted and arrives two more delays later, and
//   the ones after it wait for it (in order, like a reliable DDS stream);
//   what arrives faster than the destination's channel takes it is paced
//   (below, paced_packets).
// - While a link is disconnected, messages sent over it are dropped; when it
//   reconnects, the latest message of each reliable channel is sent again
//   if it was dropped, as AOS's bridge does for a reconnecting client.
// Each link counts what it forwarded, delivered and dropped, and why.
//
// Memory: everything is allocated when the source channel is set up (in
// flight messages live in rings as long as the channel's queue); forwarding
// never allocates. A link with more messages in flight than that drops the
// newest and counts it (queue_full).
//
// What the bridge publishes, each node's NodeBridge publishes too, with the
// bridge's own code: aos.message_bridge.ServerStatistics and
// ClientStatistics on the node's /aos every second
// (message_bridge::BridgeStatistics, its peers in the bridge's order), and a
// RemoteMessage on /aos/remote_timestamps/<destination> for each message
// re-sent on a destination whose connection sends timestamps back
// (message_bridge::RemoteTimestampSenders). A node's NodeBridge is an
// application called "message_bridge" that the simulated event loop factory
// starts with the node on every boot, on nodes whose configuration has the
// two statistics channels (PublishesStatistics); its counts start over with
// each boot, as a restarted bridge's do. The counts are what the simulation
// does, in the bridge's definitions (docs/network.md, "Statistics"):
// - a peer is connected while its "probes" arrive: every 100 ms, each peer
//   whose NodeBridge runs and whose link to this node is connected probes
//   it, and the bridge's own PeerState (aos/network/peer_state.h) turns
//   that into state, connection_count, disconnects (a second without one)
//   and reboots (a probe of a new boot), exactly as the bridge does;
// - sent_packets and sent_bytes count every message of a channel forwarded
//   to the peer, dropped_packets the best-effort ones sent while the link to
//   it was disconnected, delivered_packets the re-sends on the peer whose
//   timestamps come back;
// - received_packets and received_bytes count re-sends here, lost_packets
//   the gaps in a channel's queue indices between consecutive ones of one
//   boot (lost, expired or sent while disconnected), dropped_send_failed
//   re-sends the local channel refused as too fast on best-effort channels,
//   paced_packets those of reliable channels, which wait (with the messages
//   after them) until the channel takes them, as the bridge paces them,
//   unless already later than the channel's storage duration (then dropped
//   and counted in dropped_send_failed, as the bridge does);
//   one_way_latency is exact (re-send here minus send there, in simulated
//   time);
// - monotonic_offset is the peer's clock minus ours, exactly, with
//   monotonic_offset_uncertainty 0, from the peer's first probe on; before
//   it, offset 0 and uncertainty -1 (no estimate), as the bridge says before
//   its first clock exchange.
// Remote timestamps are published on the source at the moment of the
// re-send (the bridge learns of it one trip later).

#include <map>
#include <memory>
#include <vector>

#include "aos/configuration_generated.h"
#include "aos/events/event_scheduler.h"
#include "aos/events/simulated_channel.h"
#include "aos/network/bridge_statistics.h"
#include "aos/network/peer_state.h"
#include "aos/network/remote_timestamp_senders.h"
#include "aos/util/uuid.h"

namespace aos {

class SimulatedNetwork {
 private:
  struct Link;
  class ChannelLink;

 public:
  // What a link has done; every forwarded message ends up in exactly one of
  // delivered and the dropped counts, once it arrived or was dropped.
  struct LinkStatistics {
    // Messages of forwarded channels sent on the source while connected.
    uint64_t forwarded = 0;
    // Re-sent on the destination.
    uint64_t delivered = 0;
    // Lost on a best-effort channel.
    uint64_t lost = 0;
    // Lost on a reliable channel, so delivered late.
    uint64_t retransmitted = 0;
    // Sent while the link was disconnected.
    uint64_t dropped_disconnected = 0;
    // Older than the channel's time_to_live on arrival.
    uint64_t dropped_expired = 0;
    // More in flight than the ring holds, or refused by the destination's
    // queue (sent too fast).
    uint64_t queue_full = 0;
  };

  // Node clocks: node time = scheduler time + offset.
  using NodeOffset = std::function<monotonic_clock::duration(const Node*)>;
  using RealtimeNow = std::function<realtime_clock::time_point(const Node*)>;
  // The channel `channel` on `node`, made if needed (setup only).
  using ChannelOn = std::function<SimulatedChannel*(const Channel* channel,
                                                    const Node* node)>;
  // The send delay now: how long after a send a message leaves its node.
  using SendDelay = std::function<monotonic_clock::duration()>;

  // What the message bridge on one node publishes (see the top of this
  // file): made on `loop` of its node, as an application of that node (the
  // factory starts one per boot where PublishesStatistics(node)), it
  // registers with `network` and counts what it forwards and receives until
  // it is destroyed. Allocates when made; never once running.
  class NodeBridge {
   public:
    NodeBridge(EventLoop* loop, SimulatedNetwork* network);
    ~NodeBridge();

    NodeBridge(const NodeBridge&) = delete;
    NodeBridge& operator=(const NodeBridge&) = delete;

   private:
    friend class SimulatedNetwork;
    friend class ChannelLink;

    // The statistics of `peer`, or null if it is no peer of this node.
    message_bridge::BridgeStatistics::Peer* PeerFor(size_t node_index);
    // Probes from each peer whose link here is up, as the bridge's do.
    void Probe();
    void PublishStatistics();

    EventLoop* const loop_;
    SimulatedNetwork* const network_;
    const size_t node_index_;
    std::unique_ptr<message_bridge::BridgeStatistics> statistics_;
    // Null where the configuration lacks a remote timestamps channel.
    std::unique_ptr<message_bridge::RemoteTimestampSenders> timestamps_;
    // By slot (statistics_'s peer order).
    std::vector<size_t> peer_node_indices_;
    std::vector<message_bridge::PeerState> states_;
    std::vector<message_bridge::UuidText> boot_texts_;
    // By node index: the peer's slot, or -1.
    std::vector<int> slot_by_node_;
  };

  SimulatedNetwork(const Configuration* configuration,
                   EventScheduler* scheduler, NodeOffset node_offset,
                   RealtimeNow realtime_now, ChannelOn channel_on,
                   SendDelay send_delay);
  ~SimulatedNetwork();

  // Sets up forwarding of `channel` from `source` (its source node), which
  // `source_channel` holds: links to every destination. Once per channel.
  void ForwardFrom(const Channel* channel, const Node* source,
                   SimulatedChannel* source_channel);

  void SetDelay(const Node* from, const Node* to,
                monotonic_clock::duration delay);
  // 0 (none) to 1 (everything), for best-effort channels.
  void SetLoss(const Node* from, const Node* to, double loss);
  void Disconnect(const Node* from, const Node* to);
  void Connect(const Node* from, const Node* to);
  LinkStatistics statistics(const Node* from, const Node* to) const;

  // A node's boot; a reboot gives it a new one.
  UUID boot_uuid(const Node* node);
  void Reboot(const Node* node);

  // Whether a NodeBridge on `node` has something to publish on: some channel
  // is forwarded to or from it, and its configuration has the bridge's
  // ServerStatistics and ClientStatistics channels on its /aos (as the
  // bridge's application "message_bridge" may send them). Without them the
  // simulation publishes nothing there, as before.
  bool PublishesStatistics(const Node* node) const;

 private:
  Link& GetLink(const Node* from, const Node* to);
  size_t NodeIndex(const Node* node) const;
  // The running NodeBridge of the node at `node_index`, or null.
  NodeBridge* BridgeOn(size_t node_index) const { return bridges_[node_index]; }
  void OnSend(const std::vector<ChannelLink*>& links,
              const SimulatedChannel::Slot& slot);

  const Configuration* const configuration_;
  EventScheduler* const scheduler_;
  NodeOffset node_offset_;
  RealtimeNow realtime_now_;
  ChannelOn channel_on_;
  SendDelay send_delay_;
  std::map<std::pair<const Node*, const Node*>, std::unique_ptr<Link>> links_;
  std::vector<std::unique_ptr<ChannelLink>> channel_links_;
  std::map<const Node*, UUID> boots_;
  // By node index: each node's running NodeBridge, or null.
  std::vector<NodeBridge*> bridges_;
};

}  // namespace aos

#endif  // AOS_EVENTS_SIMULATED_NETWORK_H_
