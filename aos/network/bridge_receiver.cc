#include "aos/network/bridge_receiver.h"

#include <algorithm>

#include "aos/configuration_lookup.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/network/bridge_topics.h"
#include "aos/network/clock_offset_estimator.h"
#include "aos/network/forwarded_origins.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"

namespace aos::message_bridge {
namespace {

int64_t Ns(monotonic_clock::time_point t) {
  return t.time_since_epoch().count();
}

}  // namespace

BridgeReceiver::BridgeReceiver(EventLoop* loop, DdsParticipant* dds,
                               const PeerLink* link,
                               BridgeStatistics* statistics,
                               RemoteTimestamps* timestamps)
    : loop_(loop),
      dds_(dds),
      link_(link),
      statistics_(statistics),
      timestamps_(timestamps),
      confirm_pack_(&statistics->write_failures()) {
  confirm_pack_.Reserve(timestamps->writer_count());
}

absl::Status BridgeReceiver::AddChannel(const Channel* channel) {
  const Configuration& config = *loop_->configuration();
  absl::StatusOr<ForwardedMessageCheck> check =
      ForwardedMessageCheck::Make(config, *channel, *loop_->node());
  if (!check.ok()) return check.status();
  auto incoming = std::make_unique<Incoming>(*check, this);
  incoming->channel = channel;
  incoming->depth = QueueDepth(config, *channel);
  for (const Connection* connection : *channel->destination_nodes()) {
    if (StringView(connection->name()) == StringView(loop_->node()->name())) {
      incoming->timestamps_go_back =
          RemoteTimestamps::TimestampsGoBack(*connection);
    }
  }
  // A buffer one byte larger than max_size: a larger message is refused
  // without Cyclone reallocating ours away (it then allocates its own,
  // which RestoreBuffer frees).
  incoming->buffer_size = static_cast<uint32_t>(channel->max_size()) + 1;
  incoming->buffer = std::make_unique<uint8_t[]>(incoming->buffer_size);
  RestoreBuffer(incoming.get());
  const ForwardedTopic topic =
      ForwardedChannelTopic(config, *channel, incoming->check.channel_index());
  absl::StatusOr<dds_entity_t> reader = dds_->MakeReader(
      &aos_bridge_Message_desc, topic.name, topic.qos, &incoming->arrived);
  if (!reader.ok()) return reader.status();
  incoming->reader = *reader;
  if (topic.qos.reliable) {
    incoming->pacer = std::make_unique<ResendPacer>(
        configuration::ChannelQueueSize(config, *channel),
        std::chrono::nanoseconds(
            configuration::ChannelStorageDurationNs(config, *channel)));
    Incoming* const raw = incoming.get();
    incoming->retry =
        loop_->AddTimer([this, raw]() { TakeMessages(raw, true); });
    incoming->retry->set_name(StrCat("pace ", StringView(channel->name()), " ",
                                     StringView(channel->type())));
  }
  incoming->sender = loop_->MakeRawSender(channel);
  incoming->sender->AllowSendsFromAnotherThread();
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

void BridgeReceiver::Serve() {
  for (const std::unique_ptr<Incoming>& incoming : incoming_) {
    if (incoming->arrived.Take()) TakeMessages(incoming.get(), true);
  }
}

bool BridgeReceiver::OnArrival(Incoming* incoming) {
  // Not yet, or no longer (Run() returned): the loop takes it when it runs.
  if (!resend_where_arrived_.load(std::memory_order_acquire) ||
      !loop_->is_running()) {
    return true;
  }
  return TakeMessages(incoming, false);
}

void BridgeReceiver::RestoreBuffer(Incoming* incoming) {
  dds_sequence_octet& data = incoming->sample.data;
  if (data._buffer != incoming->buffer.get()) {
    if (data._buffer != nullptr && data._release) dds_free(data._buffer);
    data._buffer = incoming->buffer.get();
  }
  data._maximum = incoming->buffer_size;
  data._release = false;
}

bool BridgeReceiver::TakeMessages(Incoming* incoming, bool in_loop) {
  std::lock_guard<PriorityInheritanceMutex> lock(mutex_);
  const monotonic_clock::time_point now = monotonic_clock::now();
  if (incoming->held) {
    if (!in_loop) {
      incoming->arrived_while_held = true;
    } else if (incoming->arrived_while_held) {
      // Arrivals retry it (a flood goes on), and will again: the loop only
      // backs them up, for when they stop.
      incoming->arrived_while_held = false;
      incoming->retry->Schedule(std::max(now, incoming->retry_at) +
                                kRetryBackstop);
      return false;
    }
    if (now < incoming->retry_at) {
      // Not due. In Cyclone's thread, the loop has it in hand: its timer
      // is scheduled, or the wakeup that schedules it was raised.
      if (in_loop) incoming->retry->Schedule(incoming->retry_at);
      return false;
    }
    // A held sample passed the checks, so its node is a peer.
    const PeerLink::Peer* peer = link_->PeerAt(incoming->sample.source_node);
    CHECK(peer != nullptr) << "a held sample names no peer";
    Receive(incoming, *peer);
    if (incoming->held) {
      confirm_pack_.Flush();
      if (in_loop) incoming->retry->Schedule(incoming->retry_at);
      return false;
    }
    RestoreBuffer(incoming);
  }
  void* samples[1] = {&incoming->sample};
  dds_sample_info_t info;
  int taken_here = 0;
  bool more = false;
  while (true) {
    // The loop takes a bounded batch at a time where it has a timer to
    // take the rest (reliable channels): Cyclone's thread waits for the
    // lock meanwhile, and a long wait there is datagrams dropped.
    if (in_loop && incoming->retry != nullptr && taken_here == kLoopTakeLimit) {
      more = true;
      break;
    }
    const dds_return_t taken = dds_take(incoming->reader, samples, &info, 1, 1);
    if (taken <= 0) break;
    ++taken_here;
    if (info.valid_data) {
      const PeerLink::Peer* peer = link_->PeerAt(incoming->sample.source_node);
      if (peer == nullptr) {
        statistics_->dropped_unknown_node().fetch_add(
            1, std::memory_order_relaxed);
      } else {
        Receive(incoming, *peer);
      }
    }
    // A held sample stays in our buffer, and nothing after it is taken.
    if (incoming->held) break;
    RestoreBuffer(incoming);
  }
  confirm_pack_.Flush();
  if (incoming->held) {
    if (!in_loop) return true;
    incoming->retry->Schedule(incoming->retry_at);
  } else if (more) {
    // The rest in the retry timer's next call, after Cyclone's turn.
    incoming->retry->Schedule(now);
  }
  return false;
}

bool BridgeReceiver::IsNew(const Incoming& incoming, const UUID& boot,
                           uint32_t queue_index) const {
  if (!incoming.has_last || boot != incoming.last_boot) return true;
  const int32_t ahead =
      static_cast<int32_t>(queue_index - incoming.last_queue_index);
  // Not newer, but further back than any resend could be: the source's
  // channel started over (its shared memory was removed) within one boot.
  return ahead > 0 || -static_cast<int64_t>(ahead) >= incoming.depth;
}

void BridgeReceiver::Receive(Incoming* incoming, const PeerLink::Peer& peer) {
  BridgeStatistics::ReceivedCounts& counts =
      statistics_->peer(peer.slot()).received;
  // Publish() reads the counts in the loop's thread: each change under the
  // statistics' lock, held for no send (a re-send never waits for a
  // publication being built).
  auto count = [this](auto change) {
    std::lock_guard<PriorityInheritanceMutex> lock(
        statistics_->received_mutex());
    change();
  };
  // Whether this message was held already (a retry): counted as paced once.
  const bool was_held = incoming->held;
  incoming->held = false;
  const aos_bridge_Message& message = incoming->sample;
  const uint8_t* data = message.data._buffer;
  const size_t size = message.data._length;
  switch (incoming->check.Check(message.channel_index, message.source_node,
                                data, size)) {
    case ForwardedVerdict::kOk:
      break;
    case ForwardedVerdict::kUnknownChannel:
      count([&]() { ++counts.dropped_unknown_channel; });
      return;
    case ForwardedVerdict::kOversize:
      count([&]() { ++counts.dropped_oversize; });
      return;
    case ForwardedVerdict::kInvalid:
      count([&]() { ++counts.dropped_invalid; });
      return;
  }
  const UUID boot = UUID::FromBytes(message.boot_uuid);
  if (!IsNew(*incoming, boot, message.queue_index)) {
    count([&]() { ++counts.duplicate_packets; });
    return;
  }
  // The estimate is of the peer's current boot: a message of another boot
  // has a clock we know nothing of.
  const PeerLink::Peer::View view = peer.view();
  ClockOffsetEstimator::Estimate offset = view.clock_offset;
  if (boot != view.boot_uuid) offset.valid = false;
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
  // The message's one-way latency at `t` on our clock (with a valid offset).
  const auto since_sent = [&](monotonic_clock::time_point t) {
    return Ns(t) - message.monotonic_sent_ns + offset.offset_ns;
  };
  RawSender* sender = incoming->sender.get();
  const RawSender::Error error = sender->Send(data, size, origin);
  if (error == RawSender::Error::kMessagesSentTooFast &&
      incoming->pacer != nullptr) {
    const monotonic_clock::time_point now = monotonic_clock::now();
    // How late it is already (its one-way latency so far): unknown without
    // a clock estimate, and then it is held.
    const std::chrono::nanoseconds late(offset.valid ? since_sent(now) : 0);
    if (incoming->pacer->WorthHolding(late)) {
      if (!was_held) {
        count([&]() { ++counts.paced_packets; });
        // A new hold: no arrival has come for it yet.
        incoming->arrived_while_held = false;
      }
      incoming->held = true;
      incoming->retry_at = incoming->pacer->Refused(now);
      return;
    }
  }
  if (error != RawSender::Error::kOk) {
    count([&]() { ++counts.dropped_send_failed; });
    return;
  }
  if (incoming->pacer != nullptr) {
    incoming->pacer->Sent(sender->monotonic_sent_time());
  }
  uint64_t lost = 0;
  if (incoming->has_last && boot == incoming->last_boot) {
    // IsNew made it newer, so the difference is positive when no restart of
    // the source's channel came between.
    const int32_t ahead =
        static_cast<int32_t>(message.queue_index - incoming->last_queue_index);
    if (ahead > 1) lost = static_cast<uint64_t>(ahead - 1);
  }
  incoming->has_last = true;
  incoming->last_boot = boot;
  incoming->last_queue_index = message.queue_index;
  count([&]() {
    counts.lost_packets += lost;
    ++counts.received_packets;
    counts.received_bytes += size;
    counts.invalid_origins += origins.invalid;
    counts.origins_without_offset += origins.without_offset;
    if (offset.valid) {
      counts.AddOneWayLatency(since_sent(sender->monotonic_sent_time()));
    }
  });
  if (incoming->timestamps_go_back) {
    timestamps_->Confirm(&confirm_pack_, peer, message, *sender);
  }
}

}  // namespace aos::message_bridge
