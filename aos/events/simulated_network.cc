#include "aos/events/simulated_network.h"

#include <algorithm>
#include <cstring>

#include "aos/configuration.h"
#include "glog/logging.h"

namespace aos {

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
              const Node* from, const Node* to, const Connection& connection,
              size_t capacity, SimulatedChannel* destination)
      : network_(network),
        link_(link),
        from_(from),
        to_(to),
        time_to_live_(std::chrono::nanoseconds(connection.time_to_live())),
        destination_(destination),
        ring_(capacity) {
    for (InFlight& slot : ring_)
      slot.data.resize(configuration::MessageBufferSize(*channel));
    last_.data.resize(configuration::MessageBufferSize(*channel));
    network_->scheduler_->Reserve(1);
  }
  ~ChannelLink() override { network_->scheduler_->Deschedule(this); }

  bool reliable() const { return time_to_live_.count() == 0; }

  // A message sent on the source node.
  void Forward(const SimulatedChannel::Slot& slot) {
    Link* const link = link_;
    const monotonic_clock::time_point sent_scheduler =
        slot.context.monotonic_event_time - network_->node_offset_(from_);
    Remember(slot, &last_);
    last_dropped_ = false;
    if (!link->connected) {
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
      Deliver(ring_[head_], link_);
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
    // In order: nothing overtakes a message still waiting to arrive.
    const monotonic_clock::time_point previous =
        count_ == 0 ? monotonic_clock::min_time
                    : ring_[(head_ + count_ - 1) % ring_.size()].arrival;
    slot.arrival = std::max(arrival, previous);
    ++count_;
    if (count_ == 1) network_->scheduler_->Schedule(this, slot.arrival);
  }

  void Deliver(const InFlight& message, Link* link) {
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
        return;
      }
    }
    // The origins in the destination's clock: exact here (the simulation
    // knows both clocks), so with no uncertainty.
    const PathOrigins translated = message.path_origins.Translated(
        (network_->node_offset_(to_) - network_->node_offset_(from_)).count(),
        0);
    uint32_t queue_index;
    if (destination_->Send(message.data.data(), message.size, local_now,
                           network_->realtime_now_(to_), message.origin,
                           &translated,
                           &queue_index) != RawSender::Error::kOk) {
      ++link->statistics.queue_full;
      return;
    }
    ++link->statistics.delivered;
  }

  SimulatedNetwork* const network_;
  Link* const link_;
  const Node* const from_;
  const Node* const to_;
  const monotonic_clock::duration time_to_live_;
  SimulatedChannel* const destination_;
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
      send_delay_(std::move(send_delay)) {}

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
  std::vector<ChannelLink*> links;
  for (const Connection* connection : *channel->destination_nodes()) {
    const Node* destination = configuration::GetNode(
        *configuration_, connection->name()->string_view());
    CHECK(destination != nullptr && destination != source)
        << "the config was validated: destinations are other nodes";
    Link& link = GetLink(source, destination);
    channel_links_.push_back(std::make_unique<ChannelLink>(
        this, &link, channel, source, destination, *connection,
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
}

}  // namespace aos
