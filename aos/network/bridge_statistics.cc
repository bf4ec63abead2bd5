#include "aos/network/bridge_statistics.h"

#include <utility>

#include "aos/configuration_lookup.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/util/str_cat.h"

namespace aos::message_bridge {
namespace {

int64_t Ns(monotonic_clock::time_point t) {
  return t.time_since_epoch().count();
}

// What a connection says of the link, on both sides: its node, state,
// connections, boot and clock offset (ServerConnection and ClientConnection
// name these fields alike).
template <typename ConnectionBuilder>
void AddLinkFields(const BridgeStatistics::LinkState& link,
                   flatbuffers::Offset<flatbuffers::String> node,
                   flatbuffers::Offset<flatbuffers::String> boot,
                   ConnectionBuilder* connection) {
  connection->add_node(node);
  connection->add_state(link.connected ? State::CONNECTED
                                       : State::DISCONNECTED);
  connection->add_connection_count(link.connection_count);
  connection->add_disconnects(link.disconnects);
  connection->add_boot_uuid(boot);
  connection->add_connected_since_time(Ns(link.connected_since));
  connection->add_monotonic_offset(link.monotonic_offset_ns);
  connection->add_monotonic_offset_uncertainty(
      link.monotonic_offset_uncertainty_ns);
}

}  // namespace

UuidText::UuidText(const UUID& uuid) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::array<uint8_t, 16>& bytes = uuid.bytes();
  for (size_t i = 0; i < bytes.size(); ++i) {
    // Dashes after bytes 4, 6, 8 and 10: 8-4-4-4-12 digits.
    if (i == 4 || i == 6 || i == 8 || i == 10) chars_[size_++] = '-';
    chars_[size_++] = kHex[bytes[i] >> 4];
    chars_[size_++] = kHex[bytes[i] & 0xf];
  }
}

std::vector<BridgeStatistics::PeerSpec> BridgeStatistics::PeersOf(
    const Configuration& config, const Node& node) {
  std::vector<PeerSpec> peers;
  const std::string_view my_name = StringView(node.name());
  auto peer_named = [&](std::string_view name) -> PeerSpec* {
    if (name == my_name || configuration::GetNode(config, name) == nullptr) {
      return nullptr;
    }
    for (PeerSpec& peer : peers) {
      if (peer.name == name) return &peer;
    }
    const Node* other = configuration::GetNode(config, name);
    peers.push_back({.name = StringView(other->name())});
    return &peers.back();
  };
  if (config.channels() == nullptr) return peers;
  for (const Channel* channel : *config.channels()) {
    if (channel->destination_nodes() == nullptr) continue;
    const std::string_view source = StringView(channel->source_node());
    for (const Connection* connection : *channel->destination_nodes()) {
      const std::string_view destination = StringView(connection->name());
      if (source == my_name) {
        if (PeerSpec* peer = peer_named(destination)) {
          peer->is_destination = true;
        }
      } else if (destination == my_name) {
        if (PeerSpec* peer = peer_named(source)) peer->is_source = true;
      }
    }
  }
  return peers;
}

absl::StatusOr<std::unique_ptr<RawSender>> MakeBridgeSender(
    EventLoop* loop, std::string_view name, std::string_view type) {
  const Node* node = loop->node();
  std::string why_not;
  const Channel* channel = configuration::GetChannel(
      *loop->configuration(), name, type, loop->name(), node, &why_not,
      configuration::ChannelAccess::kSend);
  if (channel == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("the message bridge on node ", StringView(node->name()),
               " needs channel ", name, " of type ", type,
               " in the configuration: ", why_not));
  }
  return loop->MakeRawSender(channel);
}

absl::StatusOr<std::unique_ptr<BridgeStatistics>> BridgeStatistics::Make(
    EventLoop* loop, const std::vector<PeerSpec>& peers) {
  absl::StatusOr<std::unique_ptr<RawSender>> server_statistics =
      MakeBridgeSender(loop, "/aos", ServerStatistics::GetFullyQualifiedName());
  if (!server_statistics.ok()) return server_statistics.status();
  absl::StatusOr<std::unique_ptr<RawSender>> client_statistics =
      MakeBridgeSender(loop, "/aos", ClientStatistics::GetFullyQualifiedName());
  if (!client_statistics.ok()) return client_statistics.status();
  std::vector<Peer> peer_list(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) {
    peer_list[i].name = std::string(peers[i].name);
    peer_list[i].is_destination = peers[i].is_destination;
    peer_list[i].is_source = peers[i].is_source;
  }
  return std::unique_ptr<BridgeStatistics>(new BridgeStatistics(
      std::move(peer_list), std::move(server_statistics).value(),
      std::move(client_statistics).value()));
}

BridgeStatistics::BridgeStatistics(std::vector<Peer> peers,
                                   std::unique_ptr<RawSender> server_statistics,
                                   std::unique_ptr<RawSender> client_statistics)
    : peers_(std::move(peers)),
      server_statistics_(std::move(server_statistics)),
      client_statistics_(std::move(client_statistics)) {
  server_connections_.reserve(peers_.size());
  client_connections_.reserve(peers_.size());
}

void BridgeStatistics::Publish() {
  PublishServerStatistics();
  std::lock_guard<PriorityInheritanceMutex> lock(received_mutex_);
  PublishClientStatistics();
}

void BridgeStatistics::PublishServerStatistics() {
  Sender<ServerStatistics>::Builder builder(server_statistics_.get());
  flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
  server_connections_.clear();
  for (const Peer& peer : peers_) {
    if (!peer.is_destination) continue;
    const auto node = fbb->CreateString(peer.name);
    const auto boot = fbb->CreateString(peer.link.boot_uuid);
    ServerConnection::Builder connection(*fbb);
    AddLinkFields(peer.link, node, boot, &connection);
    connection.add_sent_packets(peer.sent.sent_packets);
    connection.add_dropped_packets(peer.sent.dropped_packets);
    connection.add_delivered_packets(peer.sent.delivered_packets);
    connection.add_sent_bytes(peer.sent.sent_bytes);
    server_connections_.push_back(connection.Finish());
  }
  const auto vector = fbb->CreateVector(server_connections_);
  ServerStatistics::Builder statistics(*fbb);
  statistics.add_connections(vector);
  statistics.add_write_failures(
      write_failures_.load(std::memory_order_relaxed));
  (void)builder.Send(statistics.Finish());
}

void BridgeStatistics::PublishClientStatistics() {
  Sender<ClientStatistics>::Builder builder(client_statistics_.get());
  flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
  client_connections_.clear();
  // What a connection needs without its histogram, generously.
  constexpr size_t kConnectionBytes = 512;
  size_t budget = static_cast<size_t>(client_statistics_->size());
  for (const Peer& peer : peers_) {
    if (!peer.is_source) continue;
    budget = budget > kConnectionBytes ? budget - kConnectionBytes : 0;
  }
  for (const Peer& peer : peers_) {
    if (!peer.is_source) continue;
    const auto node = fbb->CreateString(peer.name);
    const auto boot = fbb->CreateString(peer.link.boot_uuid);
    const auto latency = peer.received.one_way_latency.Encode(fbb);
    // Histograms only while they fit in max_size.
    flatbuffers::Offset<timing::Histogram> histogram;
    const size_t histogram_bytes =
        64 + 8 * peer.received.one_way_latency_histogram.non_empty_buckets();
    if (histogram_bytes <= budget) {
      budget -= histogram_bytes;
      histogram = peer.received.one_way_latency_histogram.Encode(fbb);
    }
    ClientConnection::Builder connection(*fbb);
    AddLinkFields(peer.link, node, boot, &connection);
    connection.add_received_packets(peer.received.received_packets);
    connection.add_duplicate_packets(peer.received.duplicate_packets);
    connection.add_lost_packets(peer.received.lost_packets);
    connection.add_dropped_unknown_channel(
        peer.received.dropped_unknown_channel);
    connection.add_dropped_oversize(peer.received.dropped_oversize);
    connection.add_dropped_invalid(peer.received.dropped_invalid);
    connection.add_dropped_send_failed(peer.received.dropped_send_failed);
    connection.add_paced_packets(peer.received.paced_packets);
    connection.add_reboots(peer.link.reboots);
    connection.add_refused_reboots(peer.link.refused_reboots);
    connection.add_invalid_origins(peer.received.invalid_origins);
    connection.add_origins_without_offset(peer.received.origins_without_offset);
    connection.add_received_bytes(peer.received.received_bytes);
    connection.add_one_way_latency(latency);
    if (!histogram.IsNull()) {
      connection.add_one_way_latency_histogram(histogram);
    }
    client_connections_.push_back(connection.Finish());
  }
  const auto vector = fbb->CreateVector(client_connections_);
  ClientStatistics::Builder statistics(*fbb);
  statistics.add_connections(vector);
  statistics.add_dropped_unknown_node(
      dropped_unknown_node_.load(std::memory_order_relaxed));
  (void)builder.Send(statistics.Finish());
}

}  // namespace aos::message_bridge
