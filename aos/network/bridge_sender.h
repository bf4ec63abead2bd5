#ifndef AOS_NETWORK_BRIDGE_SENDER_H_
#define AOS_NETWORK_BRIDGE_SENDER_H_

// The message bridge's sending side: for every channel whose source_node is
// this node and that has destination_nodes, it watches the channel and
// writes each message to the channel's DDS topic (bridge_topics.h) through
// the bridge's WritePack (bridge_write_pack.h), with the source's send
// times, queue index, boot and path origins (forwarding is not a hop), and
// counts it for each destination (ServerStatistics).
//
// Reliable channels' latest message is written again when a peer's reader
// newly matches the writer (the peer started or came back): the last one
// forwarded, or before any, the newest when the loop started; newer ones
// the watcher has not reached yet go to the new reader through the watcher,
// in order (match_resend.h).
//
//   BridgeSender sender(&loop, dds, &pack, &link, statistics);
//   sender.AddChannel(channel, channel_index);   // each, before Run()
//   loop.OnRun([&]() { sender.OnRun(); });
//   ... sender.Serve();                          // the wakeup fd readable
//
// Runs in the loop's thread. Forwarding allocates nothing of its own
// (Cyclone allocates as it serialises, dds_participant.h).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/network/bridge_peer_link.h"
#include "aos/network/bridge_statistics.h"
#include "aos/network/bridge_write_pack.h"
#include "aos/network/dds_participant.h"
#include "aos/network/match_resend.h"
#include "aos/util/uuid.h"

namespace aos::message_bridge {

class BridgeSender {
 public:
  // Forwards from `loop`'s node to the peers of `link`, counting in
  // `statistics`. All must outlive it; `dds` must be deleted before it
  // (its listeners raise Signals in it).
  BridgeSender(EventLoop* loop, DdsParticipant* dds, WritePack* pack,
               const PeerLink* link, BridgeStatistics* statistics);

  BridgeSender(const BridgeSender&) = delete;
  BridgeSender& operator=(const BridgeSender&) = delete;

  // Forwards `channel`, at `channel_index` of the configuration, whose
  // source_node is this node, to its destination_nodes: its writer and its
  // watcher (and, if reliable, a fetcher of its latest message). Before the
  // loop runs.
  absl::Status AddChannel(const Channel* channel, uint32_t channel_index);
  // Writers AddChannel made: one per channel.
  size_t writer_count() const { return outgoing_.size(); }

  // From the loop's OnRun: a peer already running gets our latest reliable
  // messages once its reader matches ours, and the newest sent before Run()
  // is one.
  void OnRun();

  // In the loop, when the participant's wakeup fd is readable: re-sends the
  // latest message of each reliable channel a new reader matched.
  void Serve();

 private:
  // A local channel forwarded to peers.
  struct Outgoing {
    const Channel* channel;
    uint32_t index;
    bool reliable;
    // Its destinations, and what is counted for each.
    std::vector<const PeerLink::Peer*> destinations;
    std::vector<BridgeStatistics::SentCounts*> counts;
    dds_entity_t writer = 0;
    DdsParticipant::Signal matched;
    std::unique_ptr<RawFetcher> latest;
    // Which of `latest`'s messages a newly matched reader gets again.
    MatchResend resend;
  };

  void Forward(Outgoing* outgoing, const Context& context);

  EventLoop* const loop_;
  DdsParticipant* const dds_;
  WritePack* const pack_;
  const PeerLink* const link_;
  BridgeStatistics* const statistics_;
  const UUID boot_uuid_;
  std::vector<std::unique_ptr<Outgoing>> outgoing_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_BRIDGE_SENDER_H_
