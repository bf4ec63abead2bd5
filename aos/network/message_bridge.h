#ifndef AOS_NETWORK_MESSAGE_BRIDGE_H_
#define AOS_NETWORK_MESSAGE_BRIDGE_H_

// Forwards channels between nodes as the configuration says, over Cyclone
// DDS: one bridge per node, an ordinary ShmEventLoop application, so its
// watchers and timers are in its timing reports. docs/network.md explains
// the protocol and every statistic.
//
//   aos::ShmEventLoop loop(&config.message(), "message_bridge", node);
//   auto bridge = aos::message_bridge::MessageBridge::Make(&loop, options);
//   if (!bridge.ok()) ExitForUserError(bridge.status().message());
//   loop.Run();
//
// What it does on node N:
// - Watches every channel whose source_node is N and that has
//   destination_nodes, and writes each message to the channel's DDS topic
//   (reliable for channels forwarded with time_to_live 0, best effort with
//   that lifespan otherwise). When a peer's reader appears (its bridge
//   started or came back), the latest message of each reliable channel is
//   written again; the peer drops it if it has it. Writes are packed, many
//   samples a datagram, and sent at the end of the loop's wakeup that made
//   them (ShmEventLoop::OnWakeupEnd), or after 64 writes when messages keep
//   the wakeup going: no sample waits for a later one.
// - Writes each message's path origins with it, as the source's loop had
//   them (forwarding is not a hop).
// - Reads the topic of every channel forwarded to N and re-sends each
//   message into N's shared memory with RawSender::Send(RemoteOrigin): the
//   source's send times, queue index and boot, and its path origins in N's
//   clock, translated with the clock offset estimate of the source; origins
//   that cannot be true, or that came before an estimate, are dropped and
//   counted (forwarded_origins.h). A message that names another
//   channel or node, is larger than max_size, or fails the flatbuffer
//   Verifier for the channel's schema is dropped and counted; one already
//   re-sent (same boot, queue index not newer) is counted as a duplicate.
// - Probes each peer every probe_period: heartbeats (connected while they
//   arrive, disconnect_timeout) and NTP-style clock probes
//   (clock_offset_estimator.h), so received messages' one-way latency is
//   measured with the clock offset applied. A peer's boot changes are
//   believed at a bounded rate (peer_state.h): beyond it they are refused,
//   counted (refused_reboots), and an episode of refusals is said on
//   stderr in one line when it starts and one when it ends.
// - With options.dds.security, its DDS participant authenticates with
//   those files and hears only participants the same CAs admitted
//   (dds_security.h); without, anyone on the network is heard
//   (docs/network.md, "Who can send what").
// - Tells a message's source node when it was re-sent, for channels whose
//   connection has timestamp_logger REMOTE_LOGGER or
//   LOCAL_AND_REMOTE_LOGGER; the source's bridge publishes that as an
//   aos.message_bridge.RemoteMessage on /aos/remote_timestamps/<peer>
//   (mapped: /<node>/aos/remote_timestamps/<peer>).
// - Publishes aos.message_bridge.ServerStatistics and ClientStatistics on
//   /aos (mapped to the node's) every statistics_period.
//
// This class wires the roles, each a class of its own
// (docs/network.md, "Where each role lives"): the sending side
// (bridge_sender.h, its writes packed by bridge_write_pack.h), the
// receiving side (bridge_receiver.h), remote timestamps
// (bridge_remote_timestamps.h), the peer link: probes, connection, boot
// and clock offset (bridge_peer_link.h), and the statistics
// (bridge_statistics.h), around one DDS participant served from the loop.

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "aos/events/shm_event_loop.h"
#include "aos/network/dds_participant.h"

namespace aos::message_bridge {

class MessageBridge {
 public:
  struct Options {
    DdsParticipant::Options dds;
    std::chrono::nanoseconds probe_period = std::chrono::milliseconds(100);
    std::chrono::nanoseconds disconnect_timeout = std::chrono::seconds(1);
    std::chrono::nanoseconds statistics_period = std::chrono::seconds(1);
    // The clock offset estimate uses the probes of this last window.
    std::chrono::nanoseconds clock_window = std::chrono::seconds(10);
  };

  // Sets the bridge up on `loop` (before Run()). Fails with one line naming
  // the culprit when the configuration is not multi-node or the loop has no
  // node, a channel the bridge needs is missing (/aos ServerStatistics and
  // ClientStatistics; /aos/remote_timestamps/<peer> where a forwarded
  // channel's timestamps go back), a forwarded channel has no schema, or
  // Cyclone DDS refuses the domain or interface.
  static absl::StatusOr<std::unique_ptr<MessageBridge>> Make(
      ShmEventLoop* loop, const Options& options);
  ~MessageBridge();

  MessageBridge(const MessageBridge&) = delete;
  MessageBridge& operator=(const MessageBridge&) = delete;

  // What its DDS Security files say (options.dds.security), if it has
  // security: for the line that says so.
  const std::optional<DdsSecurityInfo>& security() const;

 private:
  class Impl;
  explicit MessageBridge(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace aos::message_bridge

#endif  // AOS_NETWORK_MESSAGE_BRIDGE_H_
