#include "aos/network/bridge_remote_timestamps.h"

#include <cstring>
#include <string>

#include "aos/flatbuffer_string_view.h"
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

RemoteTimestamps::RemoteTimestamps(EventLoop* loop, const PeerLink* link,
                                   BridgeStatistics* statistics)
    : loop_(loop),
      boot_uuid_(loop->boot_uuid()),
      link_(link),
      statistics_(statistics),
      delivery_writers_(link->peers().size(), 0) {}

absl::StatusOr<std::unique_ptr<RemoteTimestamps>> RemoteTimestamps::Make(
    EventLoop* loop, const PeerLink* link, BridgeStatistics* statistics) {
  std::unique_ptr<RemoteTimestamps> timestamps(
      new RemoteTimestamps(loop, link, statistics));
  absl::StatusOr<std::unique_ptr<RemoteTimestampSenders>> senders =
      RemoteTimestampSenders::Make(loop, link->StatisticsPeers());
  if (!senders.ok()) return senders.status();
  timestamps->senders_ = std::move(senders).value();
  return timestamps;
}

absl::Status RemoteTimestamps::Open(DdsParticipant* dds) {
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
    delivery_writers_[peer->slot()] = *writer;
  }
  return absl::OkStatus();
}

size_t RemoteTimestamps::writer_count() const {
  size_t count = 0;
  for (const dds_entity_t writer : delivery_writers_) {
    if (writer > 0) ++count;
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
    senders_->Publish(
        peer->slot(),
        {.channel_index = delivery.channel_index,
         .monotonic_sent_ns = delivery.monotonic_sent_ns,
         .realtime_sent_ns = delivery.realtime_sent_ns,
         .queue_index = delivery.queue_index,
         .monotonic_remote_ns = delivery.monotonic_remote_ns,
         .realtime_remote_ns = delivery.realtime_remote_ns,
         .remote_queue_index = delivery.remote_queue_index,
         .boot_uuid = UUID::FromBytes(delivery.destination_boot_uuid)});
  }
}

void RemoteTimestamps::Confirm(WritePack* pack, const PeerLink::Peer& source,
                               const aos_bridge_Message& message,
                               const RawSender& sender) {
  const dds_entity_t writer = delivery_writers_[source.slot()];
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
  pack->Write(writer, &delivery);
}

}  // namespace aos::message_bridge
