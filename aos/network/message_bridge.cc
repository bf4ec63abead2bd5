#include "aos/network/message_bridge.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "aos/configuration_lookup.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/clock_offset_estimator.h"
#include "aos/network/forwarded_message_check.h"
#include "aos/network/forwarded_origins.h"
#include "aos/network/match_resend.h"
#include "aos/network/peer_state.h"
#include "aos/network/remote_message_generated.h"
#include "aos/network/server_statistics_generated.h"
#include "aos/network/stamped_inbox.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::message_bridge {
namespace {

constexpr uint32_t kNoNode = 0xffffffff;

// Writes packed and not yet sent, across writers, after which the bridge
// sends them without waiting for the end of the wakeup: a wakeup lasts as
// long as messages keep arriving, and a sample of a quiet channel must not
// wait for a flood on another to stop. A full pack (about 100 small
// samples) goes out by itself.
constexpr uint32_t kMaxUnflushedWrites = 64;

int64_t Ns(monotonic_clock::time_point t) {
  return t.time_since_epoch().count();
}
int64_t Ns(realtime_clock::time_point t) {
  return t.time_since_epoch().count();
}

bool TimestampsGoBack(const Connection& connection) {
  return connection.timestamp_logger() == LoggerConfig::REMOTE_LOGGER ||
         connection.timestamp_logger() == LoggerConfig::LOCAL_AND_REMOTE_LOGGER;
}

// Messages of `channel` kept in its queue.
int32_t QueueDepth(const Configuration& config, const Channel& channel) {
  const int64_t storage_ns =
      configuration::ChannelStorageDurationNs(config, channel);
  const int64_t depth =
      static_cast<int64_t>(channel.frequency()) * storage_ns / 1000000000;
  return static_cast<int32_t>(std::clamp<int64_t>(depth, 1, 10000));
}

std::string ProbeTopic(uint32_t to_node) {
  return StrCat("aos_bridge_probe_", to_node);
}
std::string DeliveryTopic(uint32_t source_node) {
  return StrCat("aos_bridge_delivery_", source_node);
}

}  // namespace

class MessageBridge::Impl {
 public:
  Impl(ShmEventLoop* loop, const Options& options)
      : loop_(loop),
        config_(*loop->configuration()),
        options_(options),
        boot_uuid_(loop->boot_uuid()) {}

  // Cyclone's listeners point at Signals in this object: the participant
  // goes first.
  ~Impl() {
    if (dds_ != nullptr) {
      if (serving_fd_) {
        loop_->StopReadable(dds_->wakeup_fd());
        loop_->StopWakeupEnd();
      }
      dds_.reset();
    }
  }

  absl::Status Setup();

  const std::optional<DdsSecurityInfo>& security() const {
    return dds_->security();
  }

 private:
  // Everything about one peer node.
  struct Peer {
    Peer(const Node* node, uint32_t index, const Options& options)
        : node(node),
          index(index),
          name(StringView(node->name())),
          state(options.disconnect_timeout),
          clock(options.clock_window) {}

    const Node* node;
    uint32_t index;
    std::string name;
    // We forward to it / it forwards to us.
    bool is_destination = false;
    bool is_source = false;
    PeerState state;
    ClockOffsetEstimator clock;
    std::string boot_string;
    // Its last probe to us: sent (its clock), received (ours).
    int64_t echo_sent_ns = 0;
    int64_t echo_received_ns = 0;
    dds_entity_t probe_writer = 0;
    dds_entity_t delivery_writer = 0;
    // /aos/remote_timestamps/<peer>, if the configuration has it.
    std::unique_ptr<RawSender> remote_timestamps;

    // What we forwarded to it.
    uint64_t sent_packets = 0;
    uint64_t dropped_packets = 0;
    uint64_t delivered_packets = 0;
    uint64_t sent_bytes = 0;
    // What it forwarded to us.
    uint64_t received_packets = 0;
    uint64_t duplicate_packets = 0;
    // Queue indices skipped between consecutive received messages of a
    // channel (same boot): sent there, never arrived here.
    uint64_t lost_packets = 0;
    uint64_t dropped_unknown_channel = 0;
    uint64_t dropped_oversize = 0;
    uint64_t dropped_invalid = 0;
    uint64_t dropped_send_failed = 0;
    uint64_t received_bytes = 0;
    // Path origins of received messages dropped: impossible ones, and ones
    // that came before a clock offset estimate to translate them with
    // (forwarded_origins.h).
    uint64_t invalid_origins = 0;
    uint64_t origins_without_offset = 0;
    timing::RunningStatistic one_way_latency;
    timing::LatencyHistogram one_way_latency_histogram;
  };

  // A local channel forwarded to peers.
  struct Outgoing {
    const Channel* channel;
    uint32_t index;
    bool reliable;
    std::vector<Peer*> destinations;
    dds_entity_t writer = 0;
    DdsParticipant::Signal matched;
    std::unique_ptr<RawFetcher> latest;
    // Which of `latest`'s messages a newly matched reader gets again.
    MatchResend resend;
  };

  // A channel forwarded to this node.
  struct Incoming {
    explicit Incoming(ForwardedMessageCheck check) : check(check) {}
    ForwardedMessageCheck check;
    const Channel* channel = nullptr;
    bool timestamps_go_back = false;
    int32_t depth = 1;
    dds_entity_t reader = 0;
    DdsParticipant::Signal arrived;
    std::unique_ptr<RawSender> sender;
    // The sample Cyclone deserialises into, with our buffer.
    aos_bridge_Message sample = {};
    std::unique_ptr<uint8_t[]> buffer;
    uint32_t buffer_size = 0;
    // The last message re-sent: its source boot and queue index there.
    bool has_last = false;
    UUID last_boot;
    uint32_t last_queue_index = 0;
  };

  absl::Status SetupPeers();
  absl::Status SetupStatistics();
  absl::Status SetupOutgoing(const Channel* channel, uint32_t index);
  absl::Status SetupIncoming(const Channel* channel);
  Peer* PeerAt(uint32_t node_index) {
    return node_index < peers_by_index_.size() ? peers_by_index_[node_index]
                                               : nullptr;
  }

  void Forward(Outgoing* outgoing, const Context& context);
  void ServeDds();
  // In Cyclone's listener thread: takes the probes that arrived on `reader`
  // into probe_inbox_, each stamped with when it was taken there, so that a
  // clock exchange's receive time leaves out the loop's wakeup.
  void TakeProbesInListener(dds_entity_t reader);
  // In the loop: what probe_inbox_ holds, for the peers' states and clocks.
  void HandleProbes();
  void TakeDeliveries();
  void TakeMessages(Incoming* incoming);
  void Receive(Incoming* incoming, Peer* peer);
  void SendProbes();
  void PublishStatistics();
  // One line on stderr: "<program>: <node>: <line>". Only for what is rare
  // by construction (a refusal episode's start and end).
  void Say(std::string_view line) const;
  // dds_write; false (and counted in write_failures_) if it failed. The
  // sample waits in the writer's pack until FlushWrites().
  bool Write(dds_entity_t writer, const void* sample);
  // Sends every pack written since the last flush. At the end of each of
  // the loop's wakeups, and after kMaxUnflushedWrites writes.
  void FlushWrites();
  // Whether a message (boot, queue index) is newer than the last re-sent.
  bool IsNew(const Incoming& incoming, const UUID& boot,
             uint32_t queue_index) const;
  // Puts our buffer back if Cyclone replaced it (a message larger than it).
  void RestoreBuffer(Incoming* incoming);

  ShmEventLoop* const loop_;
  const Configuration& config_;
  const Options options_;
  const UUID boot_uuid_;
  uint32_t my_index_ = kNoNode;
  std::unique_ptr<DdsParticipant> dds_;
  // The loop serves dds_'s wakeup fd.
  bool serving_fd_ = false;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::vector<Peer*> peers_by_index_;
  std::vector<std::unique_ptr<Outgoing>> outgoing_;
  std::vector<std::unique_ptr<Incoming>> incoming_;
  // Probes taken in Cyclone's thread, for the loop; 10 a second per peer,
  // so a full inbox means the loop stalled, and dropping probes then is
  // harmless (they are heartbeats and clock samples).
  static constexpr size_t kProbeInboxSize = 64;
  StampedInbox<aos_bridge_Probe, kProbeInboxSize> probe_inbox_;
  std::array<StampedInbox<aos_bridge_Probe, kProbeInboxSize>::Entry,
             kProbeInboxSize>
      probe_entries_;
  DdsParticipant::Signal probe_arrived_{
      [this](dds_entity_t reader) { TakeProbesInListener(reader); }};
  dds_entity_t delivery_reader_ = 0;
  DdsParticipant::Signal delivery_arrived_;
  std::unique_ptr<RawSender> server_statistics_;
  std::unique_ptr<RawSender> client_statistics_;
  uint64_t write_failures_ = 0;
  uint64_t dropped_unknown_node_ = 0;
  // Writers written to since the last FlushWrites(), each once; its
  // capacity is every writer's, reserved before Run().
  std::vector<dds_entity_t> unflushed_writers_;
  uint32_t unflushed_writes_ = 0;
};

absl::Status MessageBridge::Impl::Setup() {
  const Node* node = loop_->node();
  if (!configuration::MultiNode(config_) || node == nullptr) {
    return absl::InvalidArgumentError(
        "the message bridge needs a multi-node configuration (with \"nodes\") "
        "and the node it runs on (--node)");
  }
  for (flatbuffers::uoffset_t i = 0; i < config_.nodes()->size(); ++i) {
    if (config_.nodes()->Get(i) == node) my_index_ = i;
  }
  CHECK_NE(my_index_, kNoNode) << "the loop's node is not in its config";

  if (absl::Status status = SetupPeers(); !status.ok()) return status;
  if (absl::Status status = SetupStatistics(); !status.ok()) return status;

  // Every write is flushed by the end of the wakeup that made it
  // (FlushWrites): many samples a datagram when messages come faster than
  // the loop wakes up, and no sample left waiting for the next write.
  DdsParticipant::Options dds_options = options_.dds;
  dds_options.batch_writes = true;
  absl::StatusOr<std::unique_ptr<DdsParticipant>> dds =
      DdsParticipant::Make(dds_options);
  if (!dds.ok()) return dds.status();
  dds_ = std::move(dds).value();

  // Probes: each peer reads its own topic. Deliveries: each source node
  // reads its own.
  const DdsParticipant::Qos probe_qos{
      .reliable = false, .depth = 4, .lifespan_ns = 0};
  const DdsParticipant::Qos delivery_qos{
      .reliable = true, .depth = 1000, .lifespan_ns = 0};
  absl::StatusOr<dds_entity_t> reader =
      dds_->MakeReader(&aos_bridge_Probe_desc, ProbeTopic(my_index_), probe_qos,
                       &probe_arrived_);
  // Its samples are taken by probe_arrived_'s listener function.
  if (!reader.ok()) return reader.status();
  reader = dds_->MakeReader(&aos_bridge_Delivery_desc, DeliveryTopic(my_index_),
                            delivery_qos, &delivery_arrived_);
  if (!reader.ok()) return reader.status();
  delivery_reader_ = *reader;
  for (const std::unique_ptr<Peer>& peer : peers_) {
    absl::StatusOr<dds_entity_t> writer = dds_->MakeWriter(
        &aos_bridge_Probe_desc, ProbeTopic(peer->index), probe_qos);
    if (!writer.ok()) return writer.status();
    peer->probe_writer = *writer;
    if (peer->is_source) {
      writer = dds_->MakeWriter(&aos_bridge_Delivery_desc,
                                DeliveryTopic(peer->index), delivery_qos);
      if (!writer.ok()) return writer.status();
      peer->delivery_writer = *writer;
    }
  }

  const std::string_view my_name = StringView(node->name());
  for (flatbuffers::uoffset_t i = 0; i < config_.channels()->size(); ++i) {
    const Channel* channel = config_.channels()->Get(i);
    if (channel->destination_nodes() == nullptr ||
        channel->destination_nodes()->size() == 0) {
      continue;
    }
    if (StringView(channel->source_node()) == my_name) {
      if (absl::Status status = SetupOutgoing(channel, i); !status.ok()) {
        return status;
      }
      continue;
    }
    for (const Connection* connection : *channel->destination_nodes()) {
      if (StringView(connection->name()) == my_name) {
        if (absl::Status status = SetupIncoming(channel); !status.ok()) {
          return status;
        }
      }
    }
  }

  loop_->OnReadable(dds_->wakeup_fd(), [this]() { ServeDds(); });
  serving_fd_ = true;
  // A probe and a delivery writer per peer, one writer per outgoing channel.
  unflushed_writers_.reserve(2 * peers_.size() + outgoing_.size());
  loop_->OnWakeupEnd([this]() { FlushWrites(); });
  TimerHandler* probe_timer = loop_->AddTimer([this]() { SendProbes(); });
  probe_timer->set_name("probe");
  TimerHandler* statistics_timer =
      loop_->AddTimer([this]() { PublishStatistics(); });
  statistics_timer->set_name("statistics");
  loop_->OnRun([this, probe_timer, statistics_timer]() {
    const monotonic_clock::time_point now = loop_->monotonic_now();
    probe_timer->Schedule(now, options_.probe_period);
    statistics_timer->Schedule(now + options_.statistics_period,
                               options_.statistics_period);
    // A peer already running gets our latest reliable messages once its
    // reader matches ours: the newest sent before Run() is one.
    for (const std::unique_ptr<Outgoing>& outgoing : outgoing_) {
      if (outgoing->reliable && outgoing->latest->Fetch()) {
        outgoing->resend.MadeAvailable(outgoing->latest->context().queue_index);
      }
    }
    // No ServeDds() here: what DDS raised before Run() left the wakeup fd
    // readable, so epoll serves it right after the loop's first deliveries.
    // Those forward what was sent between the watchers' start and this
    // fetch first, so a match's re-send never goes ahead of them.
  });
  return absl::OkStatus();
}

absl::Status MessageBridge::Impl::SetupPeers() {
  const uint32_t nodes = config_.nodes()->size();
  peers_by_index_.assign(nodes, nullptr);
  const std::string_view my_name = StringView(loop_->node()->name());
  auto peer_named = [&](std::string_view name) -> Peer* {
    for (uint32_t i = 0; i < nodes; ++i) {
      const Node* node = config_.nodes()->Get(i);
      if (StringView(node->name()) != name || i == my_index_) continue;
      if (peers_by_index_[i] == nullptr) {
        peers_.push_back(std::make_unique<Peer>(node, i, options_));
        peers_by_index_[i] = peers_.back().get();
      }
      return peers_by_index_[i];
    }
    return nullptr;
  };
  for (const Channel* channel : *config_.channels()) {
    if (channel->destination_nodes() == nullptr) continue;
    const std::string_view source = StringView(channel->source_node());
    for (const Connection* connection : *channel->destination_nodes()) {
      const std::string_view destination = StringView(connection->name());
      if (source == my_name) {
        if (Peer* peer = peer_named(destination)) peer->is_destination = true;
      } else if (destination == my_name) {
        if (Peer* peer = peer_named(source)) peer->is_source = true;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status MessageBridge::Impl::SetupStatistics() {
  const Node* node = loop_->node();
  auto sender_for = [&](std::string_view name, std::string_view type,
                        std::unique_ptr<RawSender>* sender) -> absl::Status {
    std::string why_not;
    const Channel* channel = configuration::GetChannel(
        config_, name, type, loop_->name(), node, &why_not,
        configuration::ChannelAccess::kSend);
    if (channel == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("the message bridge on node ", StringView(node->name()),
                 " needs channel ", name, " of type ", type,
                 " in the configuration: ", why_not));
    }
    *sender = loop_->MakeRawSender(channel);
    return absl::OkStatus();
  };
  if (absl::Status status =
          sender_for("/aos", ServerStatistics::GetFullyQualifiedName(),
                     &server_statistics_);
      !status.ok()) {
    return status;
  }
  if (absl::Status status =
          sender_for("/aos", ClientStatistics::GetFullyQualifiedName(),
                     &client_statistics_);
      !status.ok()) {
    return status;
  }
  for (const std::unique_ptr<Peer>& peer : peers_) {
    if (!peer->is_destination) continue;
    // Needed only if some channel we forward to it sends timestamps back.
    bool needed = false;
    for (const Channel* channel : *config_.channels()) {
      if (StringView(channel->source_node()) != StringView(node->name()) ||
          channel->destination_nodes() == nullptr) {
        continue;
      }
      for (const Connection* connection : *channel->destination_nodes()) {
        if (StringView(connection->name()) == peer->name &&
            TimestampsGoBack(*connection)) {
          needed = true;
        }
      }
    }
    if (!needed) continue;
    if (absl::Status status = sender_for(
            StrCat("/aos/remote_timestamps/", peer->name),
            RemoteMessage::GetFullyQualifiedName(), &peer->remote_timestamps);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status MessageBridge::Impl::SetupOutgoing(const Channel* channel,
                                                uint32_t index) {
  auto outgoing = std::make_unique<Outgoing>();
  outgoing->channel = channel;
  outgoing->index = index;
  outgoing->reliable = false;
  int64_t lifespan_ns = 0;
  for (const Connection* connection : *channel->destination_nodes()) {
    if (connection->time_to_live() == 0) outgoing->reliable = true;
    lifespan_ns = std::max<int64_t>(lifespan_ns, connection->time_to_live());
    for (const std::unique_ptr<Peer>& peer : peers_) {
      if (peer->name == StringView(connection->name())) {
        outgoing->destinations.push_back(peer.get());
      }
    }
  }
  const DdsParticipant::Qos qos{
      .reliable = outgoing->reliable,
      .depth = QueueDepth(config_, *channel),
      .lifespan_ns = outgoing->reliable ? 0 : lifespan_ns};
  absl::StatusOr<dds_entity_t> writer = dds_->MakeWriter(
      &aos_bridge_Message_desc,
      DdsParticipant::TopicName(index, StringView(channel->name()),
                                StringView(channel->type())),
      qos, outgoing->reliable ? &outgoing->matched : nullptr);
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

absl::Status MessageBridge::Impl::SetupIncoming(const Channel* channel) {
  absl::StatusOr<ForwardedMessageCheck> check =
      ForwardedMessageCheck::Make(config_, *channel, *loop_->node());
  if (!check.ok()) return check.status();
  auto incoming = std::make_unique<Incoming>(*check);
  incoming->channel = channel;
  incoming->depth = QueueDepth(config_, *channel);
  bool reliable = false;
  int64_t lifespan_ns = 0;
  for (const Connection* connection : *channel->destination_nodes()) {
    if (connection->time_to_live() == 0) reliable = true;
    lifespan_ns = std::max<int64_t>(lifespan_ns, connection->time_to_live());
    if (StringView(connection->name()) == StringView(loop_->node()->name())) {
      incoming->timestamps_go_back = TimestampsGoBack(*connection);
    }
  }
  // A buffer one byte larger than max_size: a larger message is refused
  // without Cyclone reallocating ours away (it then allocates its own,
  // which RestoreBuffer frees).
  incoming->buffer_size = static_cast<uint32_t>(channel->max_size()) + 1;
  incoming->buffer = std::make_unique<uint8_t[]>(incoming->buffer_size);
  RestoreBuffer(incoming.get());
  absl::StatusOr<dds_entity_t> reader = dds_->MakeReader(
      &aos_bridge_Message_desc,
      DdsParticipant::TopicName(incoming->check.channel_index(),
                                StringView(channel->name()),
                                StringView(channel->type())),
      DdsParticipant::Qos{.reliable = reliable,
                          .depth = incoming->depth,
                          .lifespan_ns = reliable ? 0 : lifespan_ns},
      &incoming->arrived);
  if (!reader.ok()) return reader.status();
  incoming->reader = *reader;
  incoming->sender = loop_->MakeRawSender(channel);
  // What was re-sent before (a restarted bridge): not again.
  std::unique_ptr<RawFetcher> fetcher = loop_->MakeRawFetcher(channel);
  if (fetcher->Fetch()) {
    incoming->has_last = true;
    incoming->last_boot = fetcher->context().source_boot_uuid;
    incoming->last_queue_index = fetcher->context().remote_queue_index;
  }
  incoming_.push_back(std::move(incoming));
  return absl::OkStatus();
}

void MessageBridge::Impl::Forward(Outgoing* outgoing, const Context& context) {
  aos_bridge_Message message = {};
  message.channel_index = outgoing->index;
  message.source_node = my_index_;
  message.queue_index = context.queue_index;
  message.monotonic_sent_ns = Ns(context.monotonic_event_time);
  message.realtime_sent_ns = Ns(context.realtime_event_time);
  memcpy(message.boot_uuid, boot_uuid_.bytes().data(), 16);
  OriginsToWire(context.origins, &message);
  message.data._maximum = static_cast<uint32_t>(context.size);
  message.data._length = static_cast<uint32_t>(context.size);
  message.data._buffer = static_cast<uint8_t*>(const_cast<void*>(context.data));
  message.data._release = false;
  if (!Write(outgoing->writer, &message)) return;
  for (Peer* peer : outgoing->destinations) {
    ++peer->sent_packets;
    peer->sent_bytes += context.size;
    if (!outgoing->reliable && !peer->state.connected()) {
      ++peer->dropped_packets;
    }
  }
}

void MessageBridge::Impl::ServeDds() {
  dds_->ClearWakeup();
  if (probe_arrived_.Take()) HandleProbes();
  if (delivery_arrived_.Take()) TakeDeliveries();
  for (const std::unique_ptr<Incoming>& incoming : incoming_) {
    if (incoming->arrived.Take()) TakeMessages(incoming.get());
  }
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

void MessageBridge::Impl::TakeProbesInListener(dds_entity_t reader) {
  aos_bridge_Probe probe;
  void* samples[1] = {&probe};
  dds_sample_info_t info;
  while (dds_take(reader, samples, &info, 1, 1) > 0) {
    // Taken, so arrived: no later than now.
    const int64_t received_ns = Ns(monotonic_clock::now());
    if (info.valid_data) probe_inbox_.Push(probe, received_ns);
  }
}

void MessageBridge::Impl::HandleProbes() {
  const size_t count = probe_inbox_.Drain(&probe_entries_);
  for (size_t i = 0; i < count; ++i) {
    const aos_bridge_Probe& probe = probe_entries_[i].value;
    const int64_t received_ns = probe_entries_[i].stamp_ns;
    if (probe.to_node != my_index_) continue;
    Peer* peer = PeerAt(probe.from_node);
    if (peer == nullptr) {
      ++dropped_unknown_node_;
      continue;
    }
    const monotonic_clock::time_point now = loop_->monotonic_now();
    const UUID boot = UUID::FromBytes(probe.boot_uuid);
    switch (peer->state.OnProbe(now, boot)) {
      case PeerState::ProbeResult::kRebooted:
        peer->clock.Reset();
        peer->boot_string = boot.ToString();
        break;
      case PeerState::ProbeResult::kConnected:
        peer->boot_string = boot.ToString();
        break;
      case PeerState::ProbeResult::kSame:
        break;
      case PeerState::ProbeResult::kRefused:
        if (peer->state.episode_refusals() == 1) {
          // Back to the boot of before the storm: forget what the clock
          // learnt from the boots believed since, and their echo.
          peer->clock.Reset();
          peer->boot_string = peer->state.boot_uuid().ToString();
          peer->echo_sent_ns = 0;
          peer->echo_received_ns = 0;
          Say(StrCat(
              "peer ", peer->name, " changed its boot more than ",
              peer->state.limit().max_reboots, " times within ",
              std::chrono::duration<double>(peer->state.limit().window).count(),
              " s (", peer->state.reboots(), " reboots believed so far): boot ",
              boot.ToString(), " and further changes not believed, boot ",
              peer->boot_string,
              " kept (forged probes? counted in ClientStatistics "
              "refused_reboots)"));
        }
        // Neither a heartbeat nor a clock sample.
        continue;
    }
    if (probe.echo_sent_ns != 0) {
      peer->clock.Add(probe.echo_sent_ns, probe.echo_received_ns,
                      probe.monotonic_sent_ns, received_ns);
    }
    peer->echo_sent_ns = probe.monotonic_sent_ns;
    peer->echo_received_ns = received_ns;
  }
}

void MessageBridge::Impl::TakeDeliveries() {
  aos_bridge_Delivery delivery;
  void* samples[1] = {&delivery};
  dds_sample_info_t info;
  while (dds_take(delivery_reader_, samples, &info, 1, 1) > 0) {
    if (!info.valid_data) continue;
    Peer* peer = PeerAt(delivery.destination_node);
    if (peer == nullptr ||
        delivery.channel_index >= config_.channels()->size()) {
      ++dropped_unknown_node_;
      continue;
    }
    ++peer->delivered_packets;
    if (peer->remote_timestamps == nullptr) continue;
    Sender<RemoteMessage>::Builder builder(peer->remote_timestamps.get());
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

void MessageBridge::Impl::RestoreBuffer(Incoming* incoming) {
  dds_sequence_octet& data = incoming->sample.data;
  if (data._buffer != incoming->buffer.get()) {
    if (data._buffer != nullptr && data._release) dds_free(data._buffer);
    data._buffer = incoming->buffer.get();
  }
  data._maximum = incoming->buffer_size;
  data._release = false;
}

void MessageBridge::Impl::TakeMessages(Incoming* incoming) {
  void* samples[1] = {&incoming->sample};
  dds_sample_info_t info;
  while (true) {
    const dds_return_t taken = dds_take(incoming->reader, samples, &info, 1, 1);
    if (taken <= 0) break;
    if (info.valid_data) {
      Peer* peer = PeerAt(incoming->sample.source_node);
      if (peer == nullptr) {
        ++dropped_unknown_node_;
      } else {
        Receive(incoming, peer);
      }
    }
    RestoreBuffer(incoming);
  }
}

bool MessageBridge::Impl::IsNew(const Incoming& incoming, const UUID& boot,
                                uint32_t queue_index) const {
  if (!incoming.has_last || boot != incoming.last_boot) return true;
  const int32_t ahead =
      static_cast<int32_t>(queue_index - incoming.last_queue_index);
  // Not newer, but further back than any resend could be: the source's
  // channel started over (its shared memory was removed) within one boot.
  return ahead > 0 || -static_cast<int64_t>(ahead) >= incoming.depth;
}

void MessageBridge::Impl::Receive(Incoming* incoming, Peer* peer) {
  const aos_bridge_Message& message = incoming->sample;
  const uint8_t* data = message.data._buffer;
  const size_t size = message.data._length;
  switch (incoming->check.Check(message.channel_index, message.source_node,
                                data, size)) {
    case ForwardedVerdict::kOk:
      break;
    case ForwardedVerdict::kUnknownChannel:
      ++peer->dropped_unknown_channel;
      return;
    case ForwardedVerdict::kOversize:
      ++peer->dropped_oversize;
      return;
    case ForwardedVerdict::kInvalid:
      ++peer->dropped_invalid;
      return;
  }
  const UUID boot = UUID::FromBytes(message.boot_uuid);
  if (!IsNew(*incoming, boot, message.queue_index)) {
    ++peer->duplicate_packets;
    return;
  }
  // The estimate is of the peer's current boot: a message of another boot
  // has a clock we know nothing of.
  ClockOffsetEstimator::Estimate offset = peer->clock.estimate();
  if (boot != peer->state.boot_uuid()) offset.valid = false;
  const ReceivedOrigins origins = ReceiveOrigins(
      OriginsFromWire(message), offset, Ns(monotonic_clock::now()));
  RemoteOrigin origin;
  origin.monotonic_remote_time = monotonic_clock::time_point(
      std::chrono::nanoseconds(message.monotonic_sent_ns));
  origin.realtime_remote_time = realtime_clock::time_point(
      std::chrono::nanoseconds(message.realtime_sent_ns));
  origin.remote_queue_index = message.queue_index;
  origin.source_boot_uuid = boot;
  origin.origins = &origins.origins;
  RawSender* sender = incoming->sender.get();
  if (sender->Send(data, size, origin) != RawSender::Error::kOk) {
    ++peer->dropped_send_failed;
    return;
  }
  if (incoming->has_last && boot == incoming->last_boot) {
    // IsNew made it newer, so the difference is positive when no restart of
    // the source's channel came between.
    const int32_t ahead =
        static_cast<int32_t>(message.queue_index - incoming->last_queue_index);
    if (ahead > 1) peer->lost_packets += static_cast<uint64_t>(ahead - 1);
  }
  incoming->has_last = true;
  incoming->last_boot = boot;
  incoming->last_queue_index = message.queue_index;
  ++peer->received_packets;
  peer->received_bytes += size;
  peer->invalid_origins += origins.invalid;
  peer->origins_without_offset += origins.without_offset;
  if (offset.valid) {
    const int64_t latency_ns = Ns(sender->monotonic_sent_time()) -
                               message.monotonic_sent_ns + offset.offset_ns;
    peer->one_way_latency.Add(static_cast<double>(latency_ns) * 1e-9);
    peer->one_way_latency_histogram.Record(latency_ns);
  }
  if (incoming->timestamps_go_back && peer->delivery_writer > 0) {
    aos_bridge_Delivery delivery = {};
    delivery.channel_index = message.channel_index;
    delivery.destination_node = my_index_;
    memcpy(delivery.destination_boot_uuid, boot_uuid_.bytes().data(), 16);
    delivery.remote_queue_index = message.queue_index;
    delivery.monotonic_remote_ns = message.monotonic_sent_ns;
    delivery.realtime_remote_ns = message.realtime_sent_ns;
    delivery.queue_index = sender->sent_queue_index();
    delivery.monotonic_sent_ns = Ns(sender->monotonic_sent_time());
    delivery.realtime_sent_ns = Ns(sender->realtime_sent_time());
    Write(peer->delivery_writer, &delivery);
  }
}

void MessageBridge::Impl::SendProbes() {
  const monotonic_clock::time_point now = loop_->monotonic_now();
  for (const std::unique_ptr<Peer>& peer : peers_) {
    peer->state.Check(now);
    if (const std::optional<uint64_t> refused = peer->state.EndRefusals(now)) {
      Say(StrCat(
          "peer ", peer->name, ": ", *refused,
          " boot changes not believed, none in the last ",
          std::chrono::duration<double>(peer->state.limit().window).count(),
          " s: its reboots are believed again (boot ", peer->boot_string, ")"));
    }
    aos_bridge_Probe probe = {};
    probe.from_node = my_index_;
    probe.to_node = peer->index;
    memcpy(probe.boot_uuid, boot_uuid_.bytes().data(), 16);
    probe.monotonic_sent_ns = Ns(now);
    probe.echo_sent_ns = peer->echo_sent_ns;
    probe.echo_received_ns = peer->echo_received_ns;
    Write(peer->probe_writer, &probe);
  }
}

void MessageBridge::Impl::Say(std::string_view line) const {
  const std::string text =
      StrCat(program_invocation_short_name, ": ",
             StringView(loop_->node()->name()), ": ", line, "\n");
  // One write: other threads' lines do not cut into it.
  [[maybe_unused]] ssize_t written =
      write(STDERR_FILENO, text.data(), text.size());
}

bool MessageBridge::Impl::Write(dds_entity_t writer, const void* sample) {
  if (dds_write(writer, sample) < 0) {
    ++write_failures_;
    return false;
  }
  if (std::find(unflushed_writers_.begin(), unflushed_writers_.end(), writer) ==
      unflushed_writers_.end()) {
    unflushed_writers_.push_back(writer);
  }
  if (++unflushed_writes_ >= kMaxUnflushedWrites) FlushWrites();
  return true;
}

void MessageBridge::Impl::FlushWrites() {
  for (dds_entity_t writer : unflushed_writers_) DdsParticipant::Flush(writer);
  unflushed_writers_.clear();
  unflushed_writes_ = 0;
}

void MessageBridge::Impl::PublishStatistics() {
  {
    Sender<ServerStatistics>::Builder builder(server_statistics_.get());
    flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
    std::vector<flatbuffers::Offset<ServerConnection>> connections;
    for (const std::unique_ptr<Peer>& peer : peers_) {
      if (!peer->is_destination) continue;
      const auto node = fbb->CreateString(peer->name);
      const auto boot = fbb->CreateString(peer->boot_string);
      const ClockOffsetEstimator::Estimate offset = peer->clock.estimate();
      ServerConnection::Builder connection(*fbb);
      connection.add_node(node);
      connection.add_state(peer->state.connected() ? State::CONNECTED
                                                   : State::DISCONNECTED);
      connection.add_sent_packets(peer->sent_packets);
      connection.add_dropped_packets(peer->dropped_packets);
      connection.add_delivered_packets(peer->delivered_packets);
      connection.add_connection_count(peer->state.connection_count());
      connection.add_disconnects(peer->state.disconnects());
      connection.add_boot_uuid(boot);
      connection.add_connected_since_time(Ns(peer->state.connected_since()));
      connection.add_monotonic_offset(offset.offset_ns);
      connection.add_monotonic_offset_uncertainty(offset.uncertainty_ns);
      connection.add_sent_bytes(peer->sent_bytes);
      connections.push_back(connection.Finish());
    }
    const auto vector = fbb->CreateVector(connections);
    ServerStatistics::Builder statistics(*fbb);
    statistics.add_connections(vector);
    statistics.add_write_failures(write_failures_);
    (void)builder.Send(statistics.Finish());
  }
  Sender<ClientStatistics>::Builder builder(client_statistics_.get());
  flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
  std::vector<flatbuffers::Offset<ClientConnection>> connections;
  // What a connection needs without its histogram, generously.
  constexpr size_t kConnectionBytes = 512;
  size_t budget = static_cast<size_t>(client_statistics_->size());
  for (const std::unique_ptr<Peer>& peer : peers_) {
    if (!peer->is_source) continue;
    budget = budget > kConnectionBytes ? budget - kConnectionBytes : 0;
  }
  for (const std::unique_ptr<Peer>& peer : peers_) {
    if (!peer->is_source) continue;
    const auto node = fbb->CreateString(peer->name);
    const auto boot = fbb->CreateString(peer->boot_string);
    const auto latency = peer->one_way_latency.Encode(fbb);
    // Histograms only while they fit in max_size.
    flatbuffers::Offset<timing::Histogram> histogram;
    const size_t histogram_bytes =
        64 + 8 * peer->one_way_latency_histogram.non_empty_buckets();
    if (histogram_bytes <= budget) {
      budget -= histogram_bytes;
      histogram = peer->one_way_latency_histogram.Encode(fbb);
    }
    const ClockOffsetEstimator::Estimate offset = peer->clock.estimate();
    ClientConnection::Builder connection(*fbb);
    connection.add_node(node);
    connection.add_state(peer->state.connected() ? State::CONNECTED
                                                 : State::DISCONNECTED);
    connection.add_received_packets(peer->received_packets);
    connection.add_duplicate_packets(peer->duplicate_packets);
    connection.add_lost_packets(peer->lost_packets);
    connection.add_dropped_unknown_channel(peer->dropped_unknown_channel);
    connection.add_dropped_oversize(peer->dropped_oversize);
    connection.add_dropped_invalid(peer->dropped_invalid);
    connection.add_dropped_send_failed(peer->dropped_send_failed);
    connection.add_connection_count(peer->state.connection_count());
    connection.add_disconnects(peer->state.disconnects());
    connection.add_reboots(peer->state.reboots());
    connection.add_refused_reboots(peer->state.refused_reboots());
    connection.add_invalid_origins(peer->invalid_origins);
    connection.add_origins_without_offset(peer->origins_without_offset);
    connection.add_boot_uuid(boot);
    connection.add_connected_since_time(Ns(peer->state.connected_since()));
    connection.add_monotonic_offset(offset.offset_ns);
    connection.add_monotonic_offset_uncertainty(offset.uncertainty_ns);
    connection.add_received_bytes(peer->received_bytes);
    connection.add_one_way_latency(latency);
    if (!histogram.IsNull())
      connection.add_one_way_latency_histogram(histogram);
    connections.push_back(connection.Finish());
  }
  const auto vector = fbb->CreateVector(connections);
  ClientStatistics::Builder statistics(*fbb);
  statistics.add_connections(vector);
  statistics.add_dropped_unknown_node(dropped_unknown_node_);
  (void)builder.Send(statistics.Finish());
}

absl::StatusOr<std::unique_ptr<MessageBridge>> MessageBridge::Make(
    ShmEventLoop* loop, const Options& options) {
  auto impl = std::make_unique<Impl>(loop, options);
  if (absl::Status status = impl->Setup(); !status.ok()) return status;
  return std::unique_ptr<MessageBridge>(new MessageBridge(std::move(impl)));
}

MessageBridge::MessageBridge(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

MessageBridge::~MessageBridge() = default;

const std::optional<DdsSecurityInfo>& MessageBridge::security() const {
  return impl_->security();
}

}  // namespace aos::message_bridge
