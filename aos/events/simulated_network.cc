#include "aos/events/simulated_network.h"

#include <algorithm>
#include <cstring>

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/server_statistics_generated.h"
#include "glog/logging.h"

namespace aos {
namespace {

using message_bridge::BridgeStatistics;

// The bridge's periods and timeout (message_bridge.h, its Options).
constexpr std::chrono::milliseconds kProbePeriod(100);
constexpr std::chrono::seconds kDisconnectTimeout(1);
constexpr std::chrono::seconds kStatisticsPeriod(1);
// The bridge's application name, as the config's maps see it.
constexpr std::string_view kBridgeName = "message_bridge";

int64_t Ns(monotonic_clock::time_point t) {
  return t.time_since_epoch().count();
}
int64_t Ns(realtime_clock::time_point t) {
  return t.time_since_epoch().count();
}

}  // namespace

struct SimulatedNetwork::Link {
  monotonic_clock::duration delay = std::chrono::microseconds(100);
  double loss = 0;
  // Error diffusion: a message is lost when this reaches 1.
  double loss_debt = 0;
  bool connected = true;
  LinkStatistics statistics;
  // The channels over this link, to resend on reconnect.
  std::vector<ChannelLink*> channels;
};

// One forwarded channel over one link: the messages in flight, delivered in
// order by one scheduler event at the time the first one arrives.
class SimulatedNetwork::ChannelLink : public EventScheduler::Event {
 public:
  ChannelLink(SimulatedNetwork* network, Link* link, const Channel* channel,
              uint32_t channel_index, const Node* from, const Node* to,
              const Connection& connection, size_t capacity,
              SimulatedChannel* destination)
      : network_(network),
        link_(link),
        channel_index_(channel_index),
        from_(from),
        to_(to),
        from_index_(network->NodeIndex(from)),
        to_index_(network->NodeIndex(to)),
        time_to_live_(std::chrono::nanoseconds(connection.time_to_live())),
        timestamps_go_back_(
            message_bridge::RemoteTimestampSenders::TimestampsGoBack(
                connection)),
        destination_(destination),
        ring_(capacity) {
    for (InFlight& slot : ring_)
      slot.data.resize(configuration::MessageBufferSize(*channel));
    last_.data.resize(configuration::MessageBufferSize(*channel));
    network_->scheduler_->Reserve(1);
  }
  ~ChannelLink() override { network_->scheduler_->Deschedule(this); }

  bool reliable() const { return time_to_live_.count() == 0; }
  const Node* to() const { return to_; }

  // The destination rebooted: its bridge knows no message of this channel.
  void ForgetReceived() { has_received_ = false; }

  // A message sent on the source node.
  void Forward(const SimulatedChannel::Slot& slot) {
    Link* const link = link_;
    const monotonic_clock::time_point sent_scheduler =
        slot.context.monotonic_event_time - network_->node_offset_(from_);
    Remember(slot, &last_);
    last_dropped_ = false;
    BridgeStatistics::Peer* sent_to = nullptr;
    if (NodeBridge* bridge = network_->BridgeOn(from_index_)) {
      sent_to = bridge->PeerFor(to_index_);
    }
    if (sent_to != nullptr) {
      ++sent_to->sent.sent_packets;
      sent_to->sent.sent_bytes += slot.context.size;
    }
    if (!link->connected) {
      if (sent_to != nullptr && !reliable()) ++sent_to->sent.dropped_packets;
      ++link->statistics.dropped_disconnected;
      last_dropped_ = true;
      return;
    }
    ++link->statistics.forwarded;
    monotonic_clock::time_point arrival =
        sent_scheduler + network_->send_delay_() + link->delay;
    if (link->loss > 0) {
      link->loss_debt += link->loss;
      if (link->loss_debt >= 1) {
        link->loss_debt -= 1;
        if (!reliable()) {
          ++link->statistics.lost;
          return;
        }
        // Retransmitted after the receiver's negative acknowledgement.
        ++link->statistics.retransmitted;
        arrival += 2 * link->delay;
      }
    }
    Enqueue(last_, arrival, link);
  }

  // The link came back: the latest message again, if it never went out.
  void Reconnected() {
    Link* const link = link_;
    if (!reliable() || !last_dropped_) return;
    last_dropped_ = false;
    ++link->statistics.forwarded;
    Enqueue(last_, network_->scheduler_->now() + link->delay, link);
  }

  void Handle() override {
    const monotonic_clock::time_point now = network_->scheduler_->now();
    while (count_ > 0 && ring_[head_].arrival <= now) {
      // Held (paced): it and those after it wait for its new arrival.
      if (!Deliver(&ring_[head_], link_)) break;
      head_ = (head_ + 1) % ring_.size();
      --count_;
    }
    if (count_ > 0) network_->scheduler_->Schedule(this, ring_[head_].arrival);
  }

 private:
  struct InFlight {
    monotonic_clock::time_point arrival;
    SimulatedChannel::Origin origin;
    // In the source node's clock.
    PathOrigins path_origins;
    size_t size = 0;
    std::vector<uint8_t> data;
    // The destination refused it as too fast once, and it waits.
    bool paced = false;
  };

  void Remember(const SimulatedChannel::Slot& slot, InFlight* into) const {
    into->origin.monotonic_remote_time = slot.context.monotonic_remote_time;
    into->origin.realtime_remote_time = slot.context.realtime_remote_time;
    into->origin.remote_queue_index = slot.context.remote_queue_index;
    into->origin.source_boot_uuid = slot.context.source_boot_uuid;
    into->path_origins = slot.context.origins;
    into->size = slot.context.size;
    memcpy(into->data.data(), slot.context.data, slot.context.size);
  }

  void Enqueue(const InFlight& message, monotonic_clock::time_point arrival,
               Link* link) {
    if (count_ == ring_.size()) {
      ++link->statistics.queue_full;
      return;
    }
    InFlight& slot = ring_[(head_ + count_) % ring_.size()];
    slot.origin = message.origin;
    slot.path_origins = message.path_origins;
    slot.size = message.size;
    memcpy(slot.data.data(), message.data.data(), message.size);
    slot.paced = false;
    // In order: nothing overtakes a message still waiting to arrive.
    const monotonic_clock::time_point previous =
        count_ == 0 ? monotonic_clock::min_time
                    : ring_[(head_ + count_ - 1) % ring_.size()].arrival;
    slot.arrival = std::max(arrival, previous);
    ++count_;
    if (count_ == 1) network_->scheduler_->Schedule(this, slot.arrival);
  }

  // Re-sends `*in_flight` on the destination, or drops it; false when a
  // reliable channel's destination refused it as too fast: it is held, its
  // arrival moved to when the destination takes it (as the bridge paces
  // such a re-send, bridge_receiver.h).
  bool Deliver(InFlight* in_flight, Link* link) {
    const InFlight& message = *in_flight;
    const monotonic_clock::time_point local_now =
        network_->scheduler_->now() + network_->node_offset_(to_);
    if (!reliable()) {
      // time_to_live counts from the send on the source's clock; the
      // delay is the link's whole trip.
      const monotonic_clock::duration trip =
          (network_->scheduler_->now() + network_->node_offset_(from_)) -
          message.origin.monotonic_remote_time;
      if (trip > time_to_live_) {
        ++link->statistics.dropped_expired;
        return true;
      }
    }
    // The origins in the destination's clock: exact here (the simulation
    // knows both clocks), so with no uncertainty.
    const PathOrigins translated = message.path_origins.Translated(
        (network_->node_offset_(to_) - network_->node_offset_(from_)).count(),
        0);
    BridgeStatistics::Peer* received_from = nullptr;
    if (NodeBridge* const receiver = network_->BridgeOn(to_index_)) {
      received_from = receiver->PeerFor(from_index_);
    }
    uint32_t queue_index;
    const realtime_clock::time_point realtime_now =
        network_->realtime_now_(to_);
    const RawSender::Error error = destination_->Send(
        message.data.data(), message.size, local_now, realtime_now,
        message.origin, &translated, &queue_index);
    // Held while it is no later than the channel's storage duration, as
    // the bridge holds it (ResendPacer::WorthHolding).
    if (error == RawSender::Error::kMessagesSentTooFast && reliable() &&
        Late(message) <= destination_->storage_duration()) {
      if (!in_flight->paced && received_from != nullptr) {
        ++received_from->received.paced_packets;
      }
      in_flight->paced = true;
      in_flight->arrival =
          destination_->SendAllowedAt() - network_->node_offset_(to_);
      return false;
    }
    if (error != RawSender::Error::kOk) {
      ++link->statistics.queue_full;
      if (received_from != nullptr) {
        ++received_from->received.dropped_send_failed;
      }
      return true;
    }
    ++link->statistics.delivered;
    CountReceived(message, received_from);
    if (timestamps_go_back_) {
      ConfirmDelivery(message, local_now, realtime_now, queue_index,
                      network_->boot_uuid(to_));
    }
    return true;
  }

  // How late `message` is now: its one-way latency so far, exact.
  monotonic_clock::duration Late(const InFlight& message) const {
    return network_->scheduler_->now() - (message.origin.monotonic_remote_time -
                                          network_->node_offset_(from_));
  }

  // What the destination's bridge counts of a re-sent message, as the
  // bridge's receiving side counts it (bridge_receiver.h).
  void CountReceived(const InFlight& message,
                     BridgeStatistics::Peer* received_from) {
    const UUID& boot = message.origin.source_boot_uuid;
    const uint32_t queue_index = message.origin.remote_queue_index;
    if (received_from != nullptr) {
      BridgeStatistics::ReceivedCounts& counts = received_from->received;
      if (has_received_ && boot == last_boot_) {
        const int32_t ahead =
            static_cast<int32_t>(queue_index - last_queue_index_);
        if (ahead > 1) counts.lost_packets += static_cast<uint64_t>(ahead - 1);
      }
      ++counts.received_packets;
      counts.received_bytes += message.size;
      // Re-send here minus send there, both in simulated time: exact.
      counts.AddOneWayLatency(Late(message).count());
    }
    has_received_ = true;
    last_boot_ = boot;
    last_queue_index_ = queue_index;
  }

  // The source's bridge learns that the destination re-sent `message`.
  void ConfirmDelivery(const InFlight& message,
                       monotonic_clock::time_point monotonic_sent,
                       realtime_clock::time_point realtime_sent,
                       uint32_t queue_index, const UUID& destination_boot) {
    NodeBridge* const source = network_->BridgeOn(from_index_);
    if (source == nullptr) return;
    BridgeStatistics::Peer* peer = source->PeerFor(to_index_);
    if (peer == nullptr) return;
    ++peer->sent.delivered_packets;
    if (source->timestamps_ == nullptr) return;
    source->timestamps_->Publish(
        static_cast<size_t>(source->slot_by_node_[to_index_]),
        {.channel_index = channel_index_,
         .monotonic_sent_ns = Ns(monotonic_sent),
         .realtime_sent_ns = Ns(realtime_sent),
         .queue_index = queue_index,
         .monotonic_remote_ns = Ns(message.origin.monotonic_remote_time),
         .realtime_remote_ns = Ns(message.origin.realtime_remote_time),
         .remote_queue_index = message.origin.remote_queue_index,
         .boot_uuid = destination_boot});
  }

  SimulatedNetwork* const network_;
  Link* const link_;
  const uint32_t channel_index_;
  const Node* const from_;
  const Node* const to_;
  const size_t from_index_;
  const size_t to_index_;
  const monotonic_clock::duration time_to_live_;
  const bool timestamps_go_back_;
  SimulatedChannel* const destination_;
  // The last message re-sent on the destination: its source boot and queue
  // index there, for the gaps (lost_packets).
  bool has_received_ = false;
  UUID last_boot_;
  uint32_t last_queue_index_ = 0;
  std::vector<InFlight> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
  // The latest message sent, and whether the link dropped it.
  InFlight last_;
  bool last_dropped_ = false;
};

SimulatedNetwork::SimulatedNetwork(const Configuration* configuration,
                                   EventScheduler* scheduler,
                                   NodeOffset node_offset,
                                   RealtimeNow realtime_now,
                                   ChannelOn channel_on, SendDelay send_delay)
    : configuration_(configuration),
      scheduler_(scheduler),
      node_offset_(std::move(node_offset)),
      realtime_now_(std::move(realtime_now)),
      channel_on_(std::move(channel_on)),
      send_delay_(std::move(send_delay)),
      bridges_(configuration->nodes() == nullptr
                   ? 0
                   : configuration->nodes()->size(),
               nullptr) {}

SimulatedNetwork::~SimulatedNetwork() = default;

SimulatedNetwork::Link& SimulatedNetwork::GetLink(const Node* from,
                                                  const Node* to) {
  std::unique_ptr<Link>& link = links_[{from, to}];
  if (link == nullptr) link = std::make_unique<Link>();
  return *link;
}

void SimulatedNetwork::ForwardFrom(const Channel* channel, const Node* source,
                                   SimulatedChannel* source_channel) {
  if (channel->destination_nodes() == nullptr) return;
  uint32_t channel_index = 0;
  while (configuration_->channels()->Get(channel_index) != channel) {
    ++channel_index;
  }
  std::vector<ChannelLink*> links;
  for (const Connection* connection : *channel->destination_nodes()) {
    const Node* destination = configuration::GetNode(
        *configuration_, connection->name()->string_view());
    CHECK(destination != nullptr && destination != source)
        << "the config was validated: destinations are other nodes";
    Link& link = GetLink(source, destination);
    channel_links_.push_back(std::make_unique<ChannelLink>(
        this, &link, channel, channel_index, source, destination, *connection,
        source_channel->queue_size(), channel_on_(channel, destination)));
    links.push_back(channel_links_.back().get());
    link.channels.push_back(links.back());
  }
  source_channel->set_send_hook(
      [this, links](const SimulatedChannel::Slot& slot) {
        OnSend(links, slot);
      });
}

void SimulatedNetwork::OnSend(const std::vector<ChannelLink*>& links,
                              const SimulatedChannel::Slot& slot) {
  for (ChannelLink* link : links) link->Forward(slot);
}

void SimulatedNetwork::SetDelay(const Node* from, const Node* to,
                                monotonic_clock::duration delay) {
  CHECK_GE(delay.count(), 0) << "a link's delay cannot be negative";
  GetLink(from, to).delay = delay;
}

void SimulatedNetwork::SetLoss(const Node* from, const Node* to, double loss) {
  CHECK(loss >= 0 && loss <= 1) << "loss " << loss << " is not in [0, 1]";
  GetLink(from, to).loss = loss;
}

void SimulatedNetwork::Disconnect(const Node* from, const Node* to) {
  GetLink(from, to).connected = false;
}

void SimulatedNetwork::Connect(const Node* from, const Node* to) {
  Link& link = GetLink(from, to);
  if (link.connected) return;
  link.connected = true;
  for (ChannelLink* channel : link.channels) channel->Reconnected();
}

SimulatedNetwork::LinkStatistics SimulatedNetwork::statistics(
    const Node* from, const Node* to) const {
  auto it = links_.find({from, to});
  return it == links_.end() ? LinkStatistics() : it->second->statistics;
}

UUID SimulatedNetwork::boot_uuid(const Node* node) {
  auto [it, inserted] = boots_.try_emplace(node);
  if (inserted) it->second = UUID::Random();
  return it->second;
}

void SimulatedNetwork::Reboot(const Node* node) {
  boots_[node] = UUID::Random();
  for (const std::unique_ptr<ChannelLink>& channel : channel_links_) {
    if (channel->to() == node) channel->ForgetReceived();
  }
}

size_t SimulatedNetwork::NodeIndex(const Node* node) const {
  size_t i = 0;
  while (i < configuration_->nodes()->size() &&
         configuration_->nodes()->Get(i) != node) {
    ++i;
  }
  CHECK_LT(i, configuration_->nodes()->size())
      << "node " << node->name()->string_view()
      << " is not from the network's configuration";
  return i;
}

bool SimulatedNetwork::PublishesStatistics(const Node* node) const {
  if (node == nullptr || configuration_->nodes() == nullptr) return false;
  if (BridgeStatistics::PeersOf(*configuration_, *node).empty()) return false;
  for (std::string_view type :
       {message_bridge::ServerStatistics::GetFullyQualifiedName(),
        message_bridge::ClientStatistics::GetFullyQualifiedName()}) {
    if (configuration::GetChannel(
            *configuration_, "/aos", type, kBridgeName, node, nullptr,
            configuration::ChannelAccess::kSend) == nullptr) {
      return false;
    }
  }
  return true;
}

// NodeBridge.

SimulatedNetwork::NodeBridge::NodeBridge(EventLoop* loop,
                                         SimulatedNetwork* network)
    : loop_(loop),
      network_(network),
      node_index_(network->NodeIndex(loop->node())) {
  const std::vector<BridgeStatistics::PeerSpec> peers =
      BridgeStatistics::PeersOf(*loop->configuration(), *loop->node());
  absl::StatusOr<std::unique_ptr<BridgeStatistics>> statistics =
      BridgeStatistics::Make(loop, peers);
  CHECK(statistics.ok()) << statistics.status().message()
                         << " (start a NodeBridge only where "
                            "SimulatedNetwork::PublishesStatistics)";
  statistics_ = std::move(statistics).value();
  // Without the remote timestamps channels the bridge would not start; the
  // simulation publishes the rest.
  absl::StatusOr<std::unique_ptr<message_bridge::RemoteTimestampSenders>>
      timestamps = message_bridge::RemoteTimestampSenders::Make(loop, peers);
  if (timestamps.ok()) timestamps_ = std::move(timestamps).value();
  slot_by_node_.assign(network_->bridges_.size(), -1);
  for (size_t slot = 0; slot < peers.size(); ++slot) {
    const size_t index = network_->NodeIndex(
        configuration::GetNode(*loop->configuration(), peers[slot].name));
    peer_node_indices_.push_back(index);
    slot_by_node_[index] = static_cast<int>(slot);
    states_.emplace_back(kDisconnectTimeout);
  }
  boot_texts_.resize(peers.size());
  CHECK(network_->bridges_[node_index_] == nullptr)
      << "a second NodeBridge on node " << loop->node()->name()->string_view();
  network_->bridges_[node_index_] = this;

  TimerHandler* probe = loop_->AddTimer([this]() { Probe(); });
  probe->set_name("probe");
  TimerHandler* publish = loop_->AddTimer([this]() { PublishStatistics(); });
  publish->set_name("statistics");
  loop_->OnRun([this, probe, publish]() {
    const monotonic_clock::time_point now = loop_->monotonic_now();
    probe->Schedule(now, kProbePeriod);
    publish->Schedule(now + kStatisticsPeriod, kStatisticsPeriod);
  });
}

SimulatedNetwork::NodeBridge::~NodeBridge() {
  network_->bridges_[node_index_] = nullptr;
}

BridgeStatistics::Peer* SimulatedNetwork::NodeBridge::PeerFor(
    size_t node_index) {
  const int slot = slot_by_node_[node_index];
  return slot < 0 ? nullptr : &statistics_->peer(static_cast<size_t>(slot));
}

void SimulatedNetwork::NodeBridge::Probe() {
  const monotonic_clock::time_point now = loop_->monotonic_now();
  const Configuration& config = *loop_->configuration();
  for (size_t slot = 0; slot < states_.size(); ++slot) {
    const size_t peer_index = peer_node_indices_[slot];
    const Node* peer = config.nodes()->Get(peer_index);
    message_bridge::PeerState& state = states_[slot];
    // The peer's bridge probes us if it runs and its link here is up.
    NodeBridge* const peer_bridge = network_->BridgeOn(peer_index);
    auto link = network_->links_.find({peer, loop_->node()});
    const bool link_up =
        link == network_->links_.end() || link->second->connected;
    if (peer_bridge != nullptr && link_up) {
      const UUID boot = peer_bridge->loop_->boot_uuid();
      state.OnProbe(now, boot);
      if (state.boot_uuid() == boot) {
        boot_texts_[slot] = message_bridge::UuidText(boot);
      }
    }
    state.Check(now);
  }
}

void SimulatedNetwork::NodeBridge::PublishStatistics() {
  const Configuration& config = *loop_->configuration();
  for (size_t slot = 0; slot < states_.size(); ++slot) {
    const message_bridge::PeerState& state = states_[slot];
    const Node* peer = config.nodes()->Get(peer_node_indices_[slot]);
    // Known exactly once the peer was heard from: the two clocks' offsets.
    const bool heard = !state.boot_uuid().IsZero();
    statistics_->peer(slot).link = {
        .connected = state.connected(),
        .connection_count = state.connection_count(),
        .disconnects = state.disconnects(),
        .reboots = state.reboots(),
        .refused_reboots = state.refused_reboots(),
        .connected_since = state.connected_since(),
        .boot_uuid = boot_texts_[slot].view(),
        .monotonic_offset_ns = heard ? (network_->node_offset_(peer) -
                                        network_->node_offset_(loop_->node()))
                                           .count()
                                     : 0,
        .monotonic_offset_uncertainty_ns = heard ? 0 : -1,
    };
  }
  statistics_->Publish();
}

}  // namespace aos
