#include "aos/network/bridge_remote_timestamps.h"

#include <cstring>
#include <string>

#include "aos/flatbuffer_string_view.h"
#include "aos/network/remote_message_generated.h"
#include "aos/util/str_cat.h"

namespace aos::message_bridge {
namespace {

int64_t Ns(monotonic_clock::time_point t) {
  return t.time_since_epoch().count();
}
int64_t Ns(realtime_clock::time_point t) {
  return t.time_since_epoch().count();
}

std::string DeliveryTopic(uint32_t source_node) {
  return StrCat("aos_bridge_delivery_", source_node);
}

const DdsParticipant::Qos kDeliveryQos{
    .reliable = true, .depth = 1000, .lifespan_ns = 0};

}  // namespace

bool RemoteTimestamps::TimestampsGoBack(const Connection& connection) {
  return connection.timestamp_logger() == LoggerConfig::REMOTE_LOGGER ||
         connection.timestamp_logger() == LoggerConfig::LOCAL_AND_REMOTE_LOGGER;
}

RemoteTimestamps::RemoteTimestamps(EventLoop* loop, const PeerLink* link,
                                   BridgeStatistics* statistics)
    : loop_(loop),
      boot_uuid_(loop->boot_uuid()),
      link_(link),
      statistics_(statistics),
      peers_(link->peers().size()) {}

absl::StatusOr<std::unique_ptr<RemoteTimestamps>> RemoteTimestamps::Make(
    EventLoop* loop, const PeerLink* link, BridgeStatistics* statistics) {
  std::unique_ptr<RemoteTimestamps> timestamps(
      new RemoteTimestamps(loop, link, statistics));
  const Configuration& config = *loop->configuration();
  const std::string_view my_name = StringView(loop->node()->name());
  for (const std::unique_ptr<PeerLink::Peer>& peer : link->peers()) {
    if (!peer->is_destination()) continue;
    // Needed only if some channel we forward to it sends timestamps back.
    bool needed = false;
    for (const Channel* channel : *config.channels()) {
      if (StringView(channel->source_node()) != my_name ||
          channel->destination_nodes() == nullptr) {
        continue;
      }
      for (const Connection* connection : *channel->destination_nodes()) {
        if (StringView(connection->name()) == peer->name() &&
            TimestampsGoBack(*connection)) {
          needed = true;
        }
      }
    }
    if (!needed) continue;
    absl::StatusOr<std::unique_ptr<RawSender>> sender =
        MakeBridgeSender(loop, StrCat("/aos/remote_timestamps/", peer->name()),
                         RemoteMessage::GetFullyQualifiedName());
    if (!sender.ok()) return sender.status();
    timestamps->peers_[peer->slot()].remote_timestamps =
        std::move(sender).value();
  }
  return timestamps;
}

absl::Status RemoteTimestamps::Open(DdsParticipant* dds, WritePack* pack) {
  pack_ = pack;
  // Each source node reads its own topic.
  absl::StatusOr<dds_entity_t> reader = dds->MakeReader(
      &aos_bridge_Delivery_desc, DeliveryTopic(link_->my_index()), kDeliveryQos,
      &delivery_arrived_);
  if (!reader.ok()) return reader.status();
  delivery_reader_ = *reader;
  for (const std::unique_ptr<PeerLink::Peer>& peer : link_->peers()) {
    if (!peer->is_source()) continue;
    absl::StatusOr<dds_entity_t> writer = dds->MakeWriter(
        &aos_bridge_Delivery_desc, DeliveryTopic(peer->index()), kDeliveryQos);
    if (!writer.ok()) return writer.status();
    peers_[peer->slot()].delivery_writer = *writer;
  }
  return absl::OkStatus();
}

size_t RemoteTimestamps::writer_count() const {
  size_t count = 0;
  for (const PeerTimestamps& peer : peers_) {
    if (peer.delivery_writer > 0) ++count;
  }
  return count;
}

void RemoteTimestamps::Serve() {
  if (delivery_arrived_.Take()) TakeDeliveries();
}

void RemoteTimestamps::TakeDeliveries() {
  aos_bridge_Delivery delivery;
  void* samples[1] = {&delivery};
  dds_sample_info_t info;
  while (dds_take(delivery_reader_, samples, &info, 1, 1) > 0) {
    if (!info.valid_data) continue;
    const PeerLink::Peer* peer = link_->PeerAt(delivery.destination_node);
    if (peer == nullptr ||
        delivery.channel_index >= loop_->configuration()->channels()->size()) {
      ++statistics_->dropped_unknown_node();
      continue;
    }
    ++statistics_->peer(peer->slot()).sent.delivered_packets;
    RawSender* remote_timestamps = peers_[peer->slot()].remote_timestamps.get();
    if (remote_timestamps == nullptr) continue;
    Sender<RemoteMessage>::Builder builder(remote_timestamps);
    flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
    const auto boot = fbb->CreateString(
        UUID::FromBytes(delivery.destination_boot_uuid).ToString());
    RemoteMessage::Builder message(*fbb);
    message.add_channel_index(static_cast<int32_t>(delivery.channel_index));
    message.add_monotonic_sent_time(delivery.monotonic_sent_ns);
    message.add_realtime_sent_time(delivery.realtime_sent_ns);
    message.add_queue_index(delivery.queue_index);
    message.add_monotonic_remote_time(delivery.monotonic_remote_ns);
    message.add_realtime_remote_time(delivery.realtime_remote_ns);
    message.add_remote_queue_index(delivery.remote_queue_index);
    message.add_boot_uuid(boot);
    // Sent too fast is counted in the sender's timing report.
    (void)builder.Send(message.Finish());
  }
}

void RemoteTimestamps::Confirm(const PeerLink::Peer& source,
                               const aos_bridge_Message& message,
                               const RawSender& sender) {
  const dds_entity_t writer = peers_[source.slot()].delivery_writer;
  if (writer <= 0) return;
  aos_bridge_Delivery delivery = {};
  delivery.channel_index = message.channel_index;
  delivery.destination_node = link_->my_index();
  memcpy(delivery.destination_boot_uuid, boot_uuid_.bytes().data(), 16);
  delivery.remote_queue_index = message.queue_index;
  delivery.monotonic_remote_ns = message.monotonic_sent_ns;
  delivery.realtime_remote_ns = message.realtime_sent_ns;
  delivery.queue_index = sender.sent_queue_index();
  delivery.monotonic_sent_ns = Ns(sender.monotonic_sent_time());
  delivery.realtime_sent_ns = Ns(sender.realtime_sent_time());
  pack_->Write(writer, &delivery);
}

}  // namespace aos::message_bridge
