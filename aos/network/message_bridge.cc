#include "aos/network/message_bridge.h"

#include <string_view>

#include "aos/configuration_lookup.h"
#include "aos/flatbuffer_string_view.h"
#include "aos/network/bridge_peer_link.h"
#include "aos/network/bridge_receiver.h"
#include "aos/network/bridge_remote_timestamps.h"
#include "aos/network/bridge_sender.h"
#include "aos/network/bridge_statistics.h"
#include "aos/network/bridge_write_pack.h"
#include "glog/logging.h"

namespace aos::message_bridge {
namespace {

constexpr uint32_t kNoNode = 0xffffffff;

}  // namespace

// Wires the roles (docs/network.md, "Where each role lives"): the peer
// link, the statistics, remote timestamps, the sending and the receiving
// side, around one DDS participant and one WritePack, and serves them from
// the loop.
class MessageBridge::Impl {
 public:
  Impl(ShmEventLoop* loop, const Options& options)
      : loop_(loop), config_(*loop->configuration()), options_(options) {}

  // Cyclone's listeners point at Signals in the roles: the participant
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
  // Every role's DDS arrivals, in the loop's thread.
  void ServeDds();
  void PublishStatistics();

  ShmEventLoop* const loop_;
  const Configuration& config_;
  const Options options_;
  std::unique_ptr<PeerLink> link_;
  std::unique_ptr<BridgeStatistics> statistics_;
  std::unique_ptr<RemoteTimestamps> timestamps_;
  std::unique_ptr<WritePack> pack_;
  std::unique_ptr<BridgeSender> sender_;
  std::unique_ptr<BridgeReceiver> receiver_;
  std::unique_ptr<DdsParticipant> dds_;
  // The loop serves dds_'s wakeup fd.
  bool serving_fd_ = false;
};

absl::Status MessageBridge::Impl::Setup() {
  const Node* node = loop_->node();
  if (!configuration::MultiNode(config_) || node == nullptr) {
    return absl::InvalidArgumentError(
        "the message bridge needs a multi-node configuration (with \"nodes\") "
        "and the node it runs on (--node)");
  }
  uint32_t my_index = kNoNode;
  for (flatbuffers::uoffset_t i = 0; i < config_.nodes()->size(); ++i) {
    if (config_.nodes()->Get(i) == node) my_index = i;
  }
  CHECK_NE(my_index, kNoNode) << "the loop's node is not in its config";

  // What needs only the configuration first: a channel it lacks is the
  // error, whatever DDS would say.
  link_ = std::make_unique<PeerLink>(
      loop_, my_index,
      PeerLink::Options{.disconnect_timeout = options_.disconnect_timeout,
                        .clock_window = options_.clock_window});
  absl::StatusOr<std::unique_ptr<BridgeStatistics>> statistics =
      BridgeStatistics::Make(loop_, link_->StatisticsPeers());
  if (!statistics.ok()) return statistics.status();
  statistics_ = std::move(statistics).value();
  absl::StatusOr<std::unique_ptr<RemoteTimestamps>> timestamps =
      RemoteTimestamps::Make(loop_, link_.get(), statistics_.get());
  if (!timestamps.ok()) return timestamps.status();
  timestamps_ = std::move(timestamps).value();
  pack_ = std::make_unique<WritePack>(&statistics_->write_failures());

  // Every write is flushed by the end of the wakeup that made it
  // (WritePack): many samples a datagram when messages come faster than
  // the loop wakes up, and no sample left waiting for the next write.
  DdsParticipant::Options dds_options = options_.dds;
  dds_options.batch_writes = true;
  absl::StatusOr<std::unique_ptr<DdsParticipant>> dds =
      DdsParticipant::Make(dds_options);
  if (!dds.ok()) return dds.status();
  dds_ = std::move(dds).value();
  if (absl::Status status =
          link_->Open(dds_.get(), pack_.get(), statistics_.get());
      !status.ok()) {
    return status;
  }
  if (absl::Status status = timestamps_->Open(dds_.get()); !status.ok()) {
    return status;
  }

  sender_ = std::make_unique<BridgeSender>(loop_, dds_.get(), pack_.get(),
                                           link_.get(), statistics_.get());
  receiver_ = std::make_unique<BridgeReceiver>(
      loop_, dds_.get(), link_.get(), statistics_.get(), timestamps_.get());
  const std::string_view my_name = StringView(node->name());
  for (flatbuffers::uoffset_t i = 0; i < config_.channels()->size(); ++i) {
    const Channel* channel = config_.channels()->Get(i);
    if (channel->destination_nodes() == nullptr ||
        channel->destination_nodes()->size() == 0) {
      continue;
    }
    if (StringView(channel->source_node()) == my_name) {
      if (absl::Status status = sender_->AddChannel(channel, i); !status.ok()) {
        return status;
      }
      continue;
    }
    for (const Connection* connection : *channel->destination_nodes()) {
      if (StringView(connection->name()) == my_name) {
        if (absl::Status status = receiver_->AddChannel(channel);
            !status.ok()) {
          return status;
        }
      }
    }
  }

  loop_->OnReadable(dds_->wakeup_fd(), [this]() { ServeDds(); });
  serving_fd_ = true;
  pack_->Reserve(link_->peers().size() + sender_->writer_count());
  loop_->OnWakeupEnd([this]() { pack_->Flush(); });
  TimerHandler* probe_timer =
      loop_->AddTimer([this]() { link_->SendProbes(); });
  probe_timer->set_name("probe");
  TimerHandler* statistics_timer =
      loop_->AddTimer([this]() { PublishStatistics(); });
  statistics_timer->set_name("statistics");
  loop_->OnRun([this, probe_timer, statistics_timer]() {
    const monotonic_clock::time_point now = loop_->monotonic_now();
    probe_timer->Schedule(now, options_.probe_period);
    statistics_timer->Schedule(now + options_.statistics_period,
                               options_.statistics_period);
    sender_->OnRun();
    receiver_->OnRun();
    // No ServeDds() here: what DDS raised before Run() left the wakeup fd
    // readable, so epoll serves it right after the loop's first deliveries.
    // Those forward what was sent between the watchers' start and this
    // fetch first, so a match's re-send never goes ahead of them.
  });
  return absl::OkStatus();
}

void MessageBridge::Impl::ServeDds() {
  dds_->ClearWakeup();
  link_->Serve();
  timestamps_->Serve();
  receiver_->Serve();
  sender_->Serve();
}

void MessageBridge::Impl::PublishStatistics() {
  link_->FillLinkStates(statistics_.get());
  statistics_->Publish();
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
