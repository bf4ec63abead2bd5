#ifndef AOS_NETWORK_BRIDGE_STATISTICS_H_
#define AOS_NETWORK_BRIDGE_STATISTICS_H_

// What a node's message bridge counts, and its publication: one
// aos.message_bridge.ServerStatistics (what it forwards to each peer) and
// one ClientStatistics (what each peer forwarded here) on the node's /aos,
// each time Publish() is called. docs/network.md, "Statistics", says what
// every field means.
//
// Nothing here knows how messages travel: whoever forwards (the bridge's
// roles over DDS, message_bridge.h; or a simulated network) counts into
// the peers' SentCounts and ReceivedCounts as it goes, and says what each
// link is (LinkState) before it publishes:
//
//   auto statistics = BridgeStatistics::Make(
//       &loop, {{.name = "pi2", .is_destination = true, .is_source = true}});
//   BridgeStatistics::Peer& pi2 = (*statistics)->peer(0);
//   ++pi2.sent.sent_packets;                  // as messages go
//   pi2.received.AddOneWayLatency(latency_ns);
//   pi2.link = {.connected = true, ...};      // before each Publish
//   (*statistics)->Publish();                 // from a timer
//
// Memory: Make allocates; Publish, the counts and the latency summaries
// never do (the tables are built in the senders' own buffers).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/events/event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/server_statistics_generated.h"
#include "aos/time/time.h"
#include "aos/util/priority_inheritance_mutex.h"
#include "aos/util/uuid.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::message_bridge {

// A sender on `name` of `type` for the bridge running on `loop`, as its
// application may send there after the maps of its node. Fails with the one
// line the bridge exits with when the configuration has no such channel
// ("the message bridge on node pi1 needs channel /aos of type ... in the
// configuration: ...").
absl::StatusOr<std::unique_ptr<RawSender>> MakeBridgeSender(
    EventLoop* loop, std::string_view name, std::string_view type);

// A UUID as text, as UUID::ToString() writes it ("" for a default one),
// held in place: making and reading one never allocates, so a boot can be
// published from the realtime path.
class UuidText {
 public:
  UuidText() = default;
  explicit UuidText(const UUID& uuid);
  std::string_view view() const { return std::string_view(chars_, size_); }

 private:
  char chars_[36] = {};
  size_t size_ = 0;
};

class BridgeStatistics {
 public:
  // One peer node, as Make is told of it.
  struct PeerSpec {
    std::string_view name;
    // Something is forwarded to it (a ServerStatistics connection).
    bool is_destination = false;
    // It forwards something here (a ClientStatistics connection).
    bool is_source = false;
  };

  // What the link to a peer is: the fields both tables share. Its owner
  // fills it in before each Publish().
  struct LinkState {
    bool connected = false;
    uint32_t connection_count = 0;
    uint32_t disconnects = 0;
    // Boot changes believed, and refused (ClientStatistics only).
    uint32_t reboots = 0;
    uint64_t refused_reboots = 0;
    // min_time while disconnected.
    monotonic_clock::time_point connected_since = monotonic_clock::min_time;
    // The peer's boot UUID as text, "" while none is known. Read by
    // Publish() only: it must stay valid until Publish returns.
    std::string_view boot_uuid;
    // Peer clock minus ours, and the bound on its error (-1: no estimate).
    int64_t monotonic_offset_ns = 0;
    int64_t monotonic_offset_uncertainty_ns = -1;
  };

  // What was forwarded to a peer (ServerConnection).
  struct SentCounts {
    uint64_t sent_packets = 0;
    // Of best-effort channels, while the peer was disconnected.
    uint64_t dropped_packets = 0;
    // Confirmed by the peer (channels whose timestamps come back).
    uint64_t delivered_packets = 0;
    uint64_t sent_bytes = 0;
  };

  // What a peer forwarded here (ClientConnection).
  struct ReceivedCounts {
    // Re-sent into local channels.
    uint64_t received_packets = 0;
    uint64_t received_bytes = 0;
    uint64_t duplicate_packets = 0;
    // Queue indices skipped between consecutive received messages of a
    // channel (same boot): sent there, never arrived here.
    uint64_t lost_packets = 0;
    uint64_t dropped_unknown_channel = 0;
    uint64_t dropped_oversize = 0;
    uint64_t dropped_invalid = 0;
    uint64_t dropped_send_failed = 0;
    // Reliable channels' re-sends that waited for the channel's rate.
    uint64_t paced_packets = 0;
    // Path origins of received messages dropped: impossible ones, and ones
    // that came before a clock offset estimate to translate them with
    // (forwarded_origins.h).
    uint64_t invalid_origins = 0;
    uint64_t origins_without_offset = 0;
    // Re-send here minus (send there minus offset), since the start.
    timing::RunningStatistic one_way_latency;
    timing::LatencyHistogram one_way_latency_histogram;

    // Adds one message's one-way latency to both summaries.
    void AddOneWayLatency(int64_t latency_ns) {
      one_way_latency.Add(static_cast<double>(latency_ns) * 1e-9);
      one_way_latency_histogram.Record(latency_ns);
    }
  };

  struct Peer {
    std::string name;
    bool is_destination = false;
    bool is_source = false;
    LinkState link;
    SentCounts sent;
    ReceivedCounts received;
  };

  // The peers of `node` in `config`: every other node a channel is
  // forwarded to from `node` (a destination) or from which one is forwarded
  // to it (a source), each once, in the order the channels first name them.
  // The one definition of a node's peers: the bridge's peer link
  // (bridge_peer_link.h) and the simulated network find theirs with it, so
  // their peers are the statistics' peers, in the same order. The names
  // point into `config`.
  static std::vector<PeerSpec> PeersOf(const Configuration& config,
                                       const Node& node);

  // Statistics of the node `loop` runs on, with `peers` in this order
  // (peer(i) is peers[i]); makes the two senders on /aos
  // (MakeBridgeSender), failing as it does. Before the loop runs.
  static absl::StatusOr<std::unique_ptr<BridgeStatistics>> Make(
      EventLoop* loop, const std::vector<PeerSpec>& peers);

  BridgeStatistics(const BridgeStatistics&) = delete;
  BridgeStatistics& operator=(const BridgeStatistics&) = delete;

  size_t peer_count() const { return peers_.size(); }
  Peer& peer(size_t i) { return peers_[i]; }
  const Peer& peer(size_t i) const { return peers_[i]; }

  // DDS writes (or whatever carries messages) that failed, over all peers
  // (ServerStatistics). Any thread.
  std::atomic<uint64_t>& write_failures() { return write_failures_; }
  // What arrived naming no node of the configuration (ClientStatistics).
  // Any thread.
  std::atomic<uint64_t>& dropped_unknown_node() {
    return dropped_unknown_node_;
  }

  // Held by whoever counts into the peers' ReceivedCounts off the loop's
  // thread (the bridge's receiving side, in Cyclone's), and by
  // Publish() while it reads them. The loop's own counts need not take it.
  PriorityInheritanceMutex& received_mutex() { return received_mutex_; }

  // Sends a ServerStatistics with a connection per destination peer and a
  // ClientStatistics with one per source peer, in peer order, from the
  // counts and the links as they are now. A ClientConnection's latency
  // histogram is left out where it would not fit in the channel's max_size
  // beside the connections before it. A send the channel refuses (too
  // fast) is counted in the sender's timing report, as for any sender.
  void Publish();

 private:
  BridgeStatistics(std::vector<Peer> peers,
                   std::unique_ptr<RawSender> server_statistics,
                   std::unique_ptr<RawSender> client_statistics);

  void PublishServerStatistics();
  void PublishClientStatistics();

  std::vector<Peer> peers_;
  std::unique_ptr<RawSender> server_statistics_;
  std::unique_ptr<RawSender> client_statistics_;
  std::atomic<uint64_t> write_failures_ = 0;
  std::atomic<uint64_t> dropped_unknown_node_ = 0;
  PriorityInheritanceMutex received_mutex_;
  // The connections while a table is built: room for every peer, reserved
  // by Make.
  std::vector<flatbuffers::Offset<ServerConnection>> server_connections_;
  std::vector<flatbuffers::Offset<ClientConnection>> client_connections_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_BRIDGE_STATISTICS_H_
