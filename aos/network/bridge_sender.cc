#include "aos/network/bridge_sender.h"

#include <cstring>

#include "aos/flatbuffer_string_view.h"
#include "aos/network/bridge_topics.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/forwarded_origins.h"

namespace aos::message_bridge {
namespace {

int64_t Ns(monotonic_clock::time_point t) {
  return t.time_since_epoch().count();
}
int64_t Ns(realtime_clock::time_point t) {
  return t.time_since_epoch().count();
}

}  // namespace

BridgeSender::BridgeSender(EventLoop* loop, DdsParticipant* dds,
                           WritePack* pack, const PeerLink* link,
                           BridgeStatistics* statistics)
    : loop_(loop),
      dds_(dds),
      pack_(pack),
      link_(link),
      statistics_(statistics),
      boot_uuid_(loop->boot_uuid()) {}

absl::Status BridgeSender::AddChannel(const Channel* channel,
                                      uint32_t channel_index) {
  const ForwardedTopic topic =
      ForwardedChannelTopic(*loop_->configuration(), *channel, channel_index);
  auto outgoing = std::make_unique<Outgoing>();
  outgoing->channel = channel;
  outgoing->index = channel_index;
  outgoing->reliable = topic.qos.reliable;
  for (const Connection* connection : *channel->destination_nodes()) {
    for (const std::unique_ptr<PeerLink::Peer>& peer : link_->peers()) {
      if (peer->name() == StringView(connection->name())) {
        outgoing->destinations.push_back(peer.get());
        outgoing->counts.push_back(&statistics_->peer(peer->slot()).sent);
      }
    }
  }
  absl::StatusOr<dds_entity_t> writer =
      dds_->MakeWriter(&aos_bridge_Message_desc, topic.name, topic.qos,
                       outgoing->reliable ? &outgoing->matched : nullptr);
  if (!writer.ok()) return writer.status();
  outgoing->writer = *writer;
  if (outgoing->reliable) outgoing->latest = loop_->MakeRawFetcher(channel);
  Outgoing* raw = outgoing.get();
  loop_->MakeRawWatcher(channel,
                        [this, raw](const Context& context, const void*) {
                          Forward(raw, context);
                          if (raw->reliable) {
                            raw->resend.MadeAvailable(context.queue_index);
                          }
                        });
  outgoing_.push_back(std::move(outgoing));
  return absl::OkStatus();
}

void BridgeSender::OnRun() {
  for (const std::unique_ptr<Outgoing>& outgoing : outgoing_) {
    if (outgoing->reliable && outgoing->latest->Fetch()) {
      outgoing->resend.MadeAvailable(outgoing->latest->context().queue_index);
    }
  }
}

void BridgeSender::Forward(Outgoing* outgoing, const Context& context) {
  aos_bridge_Message message = {};
  message.channel_index = outgoing->index;
  message.source_node = link_->my_index();
  message.queue_index = context.queue_index;
  message.monotonic_sent_ns = Ns(context.monotonic_event_time);
  message.realtime_sent_ns = Ns(context.realtime_event_time);
  memcpy(message.boot_uuid, boot_uuid_.bytes().data(), 16);
  OriginsToWire(context.origins, &message);
  message.data._maximum = static_cast<uint32_t>(context.size);
  message.data._length = static_cast<uint32_t>(context.size);
  message.data._buffer = static_cast<uint8_t*>(const_cast<void*>(context.data));
  message.data._release = false;
  if (!pack_->Write(outgoing->writer, &message)) return;
  for (size_t i = 0; i < outgoing->destinations.size(); ++i) {
    BridgeStatistics::SentCounts* counts = outgoing->counts[i];
    ++counts->sent_packets;
    counts->sent_bytes += context.size;
    if (!outgoing->reliable && !outgoing->destinations[i]->connected()) {
      ++counts->dropped_packets;
    }
  }
}

void BridgeSender::Serve() {
  for (const std::unique_ptr<Outgoing>& outgoing : outgoing_) {
    if (!outgoing->matched.Take()) continue;
    // Newer messages the watcher has not reached yet go to the new reader
    // through the watcher, in order; the fetcher's current message (newest
    // in the queue) is re-sent only if it is the one last forwarded.
    outgoing->latest->Fetch();
    const Context& newest = outgoing->latest->context();
    if (newest.data != nullptr &&
        outgoing->resend.ShouldResend(newest.queue_index)) {
      Forward(outgoing.get(), newest);
    }
  }
}

}  // namespace aos::message_bridge
