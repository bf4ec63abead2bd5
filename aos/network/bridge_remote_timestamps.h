#ifndef AOS_NETWORK_BRIDGE_REMOTE_TIMESTAMPS_H_
#define AOS_NETWORK_BRIDGE_REMOTE_TIMESTAMPS_H_

// Remote timestamps: a forwarded message's destination tells its source when
// it re-sent the message there, for channels whose connection has
// timestamp_logger REMOTE_LOGGER or LOCAL_AND_REMOTE_LOGGER, and the
// source's bridge publishes that as an aos.message_bridge.RemoteMessage on
// /aos/remote_timestamps/<destination> (mapped: /<node>/aos/...). Both
// ends of the bridges' delivery topics, aos_bridge_delivery_<source node
// index> (reliable):
//
// - on the destination, the receiving side (bridge_receiver.h) calls
//   Confirm() for each message it re-sent of such a channel: one delivery
//   written to the source's topic;
// - on the source, Serve() takes the deliveries that arrived on ours,
//   counts them (ServerStatistics delivered_packets) and publishes each.
//
//   auto timestamps = RemoteTimestamps::Make(&loop, &link, statistics);
//   (*timestamps)->Open(dds, &pack);
//   ... (*timestamps)->Serve();                 // the wakeup fd readable
//   ... (*timestamps)->Confirm(&pack, peer, message, *sender);  // re-sent
//
// The RemoteMessage senders and their publication are shared with the
// simulated network (remote_timestamp_senders.h). Runs in the loop's
// thread, but for Confirm(), which runs where the receiving side re-sends
// (Cyclone's receive thread, once the loop runs). Deliveries are untrusted
// like every DDS sample: one naming no peer or channel is counted
// (dropped_unknown_node), never published.

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/network/bridge_peer_link.h"
#include "aos/network/bridge_statistics.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/bridge_write_pack.h"
#include "aos/network/dds_participant.h"
#include "aos/network/remote_timestamp_senders.h"

namespace aos::message_bridge {

class RemoteTimestamps {
 public:
  // Whether the destination of `connection` tells the source when it
  // re-sent a message (REMOTE_LOGGER or LOCAL_AND_REMOTE_LOGGER).
  static bool TimestampsGoBack(const Connection& connection) {
    return RemoteTimestampSenders::TimestampsGoBack(connection);
  }

  // Makes a RemoteMessage sender on /aos/remote_timestamps/<peer> for each
  // peer a channel of ours is forwarded to with timestamps going back;
  // fails as MakeBridgeSender does when the configuration lacks one. Before
  // the loop runs; `loop`, `link` and `statistics` must outlive it.
  static absl::StatusOr<std::unique_ptr<RemoteTimestamps>> Make(
      EventLoop* loop, const PeerLink* link, BridgeStatistics* statistics);

  RemoteTimestamps(const RemoteTimestamps&) = delete;
  RemoteTimestamps& operator=(const RemoteTimestamps&) = delete;

  // Makes the delivery reader on our topic and a writer to each source
  // peer's. `dds` must be deleted before this object (its listener raises
  // a Signal in it).
  absl::Status Open(DdsParticipant* dds);
  // Delivery writers Open() made: one per source peer.
  size_t writer_count() const;

  // In the loop, when the participant's wakeup fd is readable: publishes
  // the deliveries that arrived since.
  void Serve();

  // Tells `source` that `message`, of a channel whose timestamps go back to
  // it, was re-sent here by `sender` (its sent times and queue index): one
  // delivery written through `pack`, the calling thread's. Any thread;
  // reads only what Open() left.
  void Confirm(WritePack* pack, const PeerLink::Peer& source,
               const aos_bridge_Message& message, const RawSender& sender);

 private:
  RemoteTimestamps(EventLoop* loop, const PeerLink* link,
                   BridgeStatistics* statistics);
  void TakeDeliveries();

  EventLoop* const loop_;
  const UUID boot_uuid_;
  const PeerLink* const link_;
  BridgeStatistics* const statistics_;
  // /aos/remote_timestamps/<peer>, where the configuration needs them.
  std::unique_ptr<RemoteTimestampSenders> senders_;
  // To each peer's delivery topic, if it is a source; by peer slot.
  std::vector<dds_entity_t> delivery_writers_;
  dds_entity_t delivery_reader_ = 0;
  DdsParticipant::Signal delivery_arrived_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_BRIDGE_REMOTE_TIMESTAMPS_H_
