#include "aos/network/remote_timestamp_senders.h"

#include "aos/flatbuffer_string_view.h"
#include "aos/network/remote_message_generated.h"
#include "aos/util/str_cat.h"

namespace aos::message_bridge {

bool RemoteTimestampSenders::TimestampsGoBack(const Connection& connection) {
  return connection.timestamp_logger() == LoggerConfig::REMOTE_LOGGER ||
         connection.timestamp_logger() == LoggerConfig::LOCAL_AND_REMOTE_LOGGER;
}

absl::StatusOr<std::unique_ptr<RemoteTimestampSenders>>
RemoteTimestampSenders::Make(
    EventLoop* loop, const std::vector<BridgeStatistics::PeerSpec>& peers) {
  std::unique_ptr<RemoteTimestampSenders> senders(
      new RemoteTimestampSenders(peers.size()));
  const Configuration& config = *loop->configuration();
  const std::string_view my_name = StringView(loop->node()->name());
  for (size_t slot = 0; slot < peers.size(); ++slot) {
    const BridgeStatistics::PeerSpec& peer = peers[slot];
    if (!peer.is_destination) continue;
    // Needed only if some channel we forward to it sends timestamps back.
    bool needed = false;
    for (const Channel* channel : *config.channels()) {
      if (StringView(channel->source_node()) != my_name ||
          channel->destination_nodes() == nullptr) {
        continue;
      }
      for (const Connection* connection : *channel->destination_nodes()) {
        if (StringView(connection->name()) == peer.name &&
            TimestampsGoBack(*connection)) {
          needed = true;
        }
      }
    }
    if (!needed) continue;
    absl::StatusOr<std::unique_ptr<RawSender>> sender =
        MakeBridgeSender(loop, StrCat("/aos/remote_timestamps/", peer.name),
                         RemoteMessage::GetFullyQualifiedName());
    if (!sender.ok()) return sender.status();
    senders->senders_[slot] = std::move(sender).value();
  }
  return senders;
}

void RemoteTimestampSenders::Publish(size_t slot, const Arrival& arrival) {
  if (!publishes_to(slot)) return;
  Sender<RemoteMessage>::Builder builder(senders_[slot].get());
  flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
  const UuidText boot(arrival.boot_uuid);
  const auto boot_offset = fbb->CreateString(boot.view());
  RemoteMessage::Builder message(*fbb);
  message.add_channel_index(static_cast<int32_t>(arrival.channel_index));
  message.add_monotonic_sent_time(arrival.monotonic_sent_ns);
  message.add_realtime_sent_time(arrival.realtime_sent_ns);
  message.add_queue_index(arrival.queue_index);
  message.add_monotonic_remote_time(arrival.monotonic_remote_ns);
  message.add_realtime_remote_time(arrival.realtime_remote_ns);
  message.add_remote_queue_index(arrival.remote_queue_index);
  message.add_boot_uuid(boot_offset);
  // Sent too fast is counted in the sender's timing report.
  (void)builder.Send(message.Finish());
}

}  // namespace aos::message_bridge
