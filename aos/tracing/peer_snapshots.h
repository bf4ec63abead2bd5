#ifndef AOS_TRACING_PEER_SNAPSHOTS_H_
#define AOS_TRACING_PEER_SNAPSHOTS_H_

// Snapshots across nodes (docs/tracing.md, "Across nodes"). A node's
// recorder that writes a snapshot for a trigger of its own asks the
// recorders of the other nodes for the same window: a SnapshotRequest on
// its /aos, which the message bridge forwards where the configuration says.
// A recorder that receives one translates the window to its own clock with
// its bridge's estimate of the asking node's clock offset (ClientStatistics'
// monotonic_offset), or, before the bridge has one, with the request's own
// send and arrival times (which add the one-way latency).
//
//   PeerSnapshots peers(&loop, [&](const PeerAsk& ask) { ... });
//   peers.Ask(trigger_ns, before_ns, after_ns, "ping: wakeup latency");
//
// A request that is no valid SnapshotRequest, or asks for a window that
// makes no sense, is refused: counted, and the first one logged naming the
// channel and what is wrong. Not for realtime code: allocates.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "aos/events/event_loop.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/tracing/snapshot_request_generated.h"

namespace aos::tracing {

// What another node's recorder asked for, on this node's clock.
struct PeerAsk {
  // The asking node, and why it snapshots.
  std::string node;
  std::string reason;
  // Its trigger on its clock, and on this node's.
  int64_t requester_trigger_ns = 0;
  int64_t trigger_ns = 0;
  int64_t before_ns = 0;
  int64_t after_ns = 0;
  // The asking node's clock minus this node's, and how far the truth may be
  // from it (-1: from the request's own times, one-way latency included).
  int64_t clock_offset_ns = 0;
  int64_t clock_offset_uncertainty_ns = -1;
};

class PeerSnapshots {
 public:
  // Makes the sender of this node's requests (if its config has a
  // SnapshotRequest channel on /aos) and a watcher on every such channel
  // forwarded to this node; `on_ask` gets each valid request. Before Run().
  PeerSnapshots(EventLoop* loop, std::function<void(const PeerAsk&)> on_ask);

  // Whether this node can ask (a SnapshotRequest channel on its /aos).
  bool can_ask() const { return sender_.valid(); }
  // The channels of other nodes' requests this node watches.
  const std::vector<std::string>& watched() const { return watched_; }
  // Requests refused (damaged, or a window that makes no sense).
  uint64_t refused() const { return refused_; }

  // Asks the other nodes for their snapshot of [trigger - before, trigger +
  // after] (this node's clock). False if this node cannot ask or the send
  // failed.
  bool Ask(int64_t trigger_ns, int64_t before_ns, int64_t after_ns,
           std::string_view reason);

 private:
  void Receive(const Channel* channel, const Context& context,
               const void* message);
  // The asking node's clock minus this node's, from the bridge, and its
  // uncertainty; nullopt-like (uncertainty -1) when the bridge has none.
  std::pair<int64_t, int64_t> BridgeOffset(std::string_view node);

  EventLoop* const loop_;
  const std::function<void(const PeerAsk&)> on_ask_;
  Sender<SnapshotRequest> sender_;
  Fetcher<message_bridge::ClientStatistics> client_statistics_;
  std::vector<std::string> watched_;
  uint64_t refused_ = 0;
};

}  // namespace aos::tracing

#endif  // AOS_TRACING_PEER_SNAPSHOTS_H_
