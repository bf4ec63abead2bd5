#ifndef AOS_NETWORK_REMOTE_TIMESTAMP_SENDERS_H_
#define AOS_NETWORK_REMOTE_TIMESTAMP_SENDERS_H_

// The source's end of remote timestamps: on a message's source node, one
// aos.message_bridge.RemoteMessage sender on /aos/remote_timestamps/<peer>
// (mapped: /<node>/aos/remote_timestamps/<peer>) for each peer that some
// channel of this node is forwarded to with timestamps going back
// (timestamp_logger REMOTE_LOGGER or LOCAL_AND_REMOTE_LOGGER), and the
// publication of one arrival there. Shared by whatever learns of arrivals:
// the DDS bridge's deliveries (bridge_remote_timestamps.h) and the
// simulated network (aos/events/simulated_network.h), so both publish the
// same message on the same channels.
//
//   auto senders = RemoteTimestampSenders::Make(&loop, peers);
//   ... (*senders)->Publish(slot, arrival);   // a message arrived at a peer
//
// Memory: Make allocates; Publish never does (it builds in the sender's
// buffer, the boot as text included).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop.h"
#include "aos/network/bridge_statistics.h"
#include "aos/util/uuid.h"

namespace aos::message_bridge {

class RemoteTimestampSenders {
 public:
  // Whether the destination of `connection` tells the source when it
  // re-sent a message (REMOTE_LOGGER or LOCAL_AND_REMOTE_LOGGER).
  static bool TimestampsGoBack(const Connection& connection);

  // The senders of the node `loop` runs on, for `peers` in their slot order
  // (BridgeStatistics'): one for each destination peer a channel of ours is
  // forwarded to with timestamps going back. Fails as MakeBridgeSender does
  // when the configuration lacks one. Before the loop runs; `loop` must
  // outlive it.
  static absl::StatusOr<std::unique_ptr<RemoteTimestampSenders>> Make(
      EventLoop* loop, const std::vector<BridgeStatistics::PeerSpec>& peers);

  RemoteTimestampSenders(const RemoteTimestampSenders&) = delete;
  RemoteTimestampSenders& operator=(const RemoteTimestampSenders&) = delete;

  // One message's arrival at a peer: the fields of RemoteMessage.
  struct Arrival {
    uint32_t channel_index = 0;
    // When and as which queue index it was re-sent on the peer (its clocks).
    int64_t monotonic_sent_ns = 0;
    int64_t realtime_sent_ns = 0;
    uint32_t queue_index = 0;
    // When and as which queue index it was sent here.
    int64_t monotonic_remote_ns = 0;
    int64_t realtime_remote_ns = 0;
    uint32_t remote_queue_index = 0;
    // The peer's boot.
    UUID boot_uuid;
  };

  // Whether the peer at `slot` has a sender (timestamps come back from it).
  bool publishes_to(size_t slot) const {
    return slot < senders_.size() && senders_[slot] != nullptr;
  }
  // Publishes `arrival` on the peer at `slot`'s channel; nothing if it has
  // none. A send the channel refuses (too fast) is counted in the sender's
  // timing report, as for any sender.
  void Publish(size_t slot, const Arrival& arrival);

 private:
  explicit RemoteTimestampSenders(size_t peer_count) : senders_(peer_count) {}

  // By peer slot; null where no timestamps come back.
  std::vector<std::unique_ptr<RawSender>> senders_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_REMOTE_TIMESTAMP_SENDERS_H_
