#include "aos/network/bridge_peer_link.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>

#include "aos/flatbuffer_string_view.h"
#include "aos/util/str_cat.h"

namespace aos::message_bridge {
namespace {

int64_t Ns(monotonic_clock::time_point t) {
  return t.time_since_epoch().count();
}

std::string ProbeTopic(uint32_t to_node) {
  return StrCat("aos_bridge_probe_", to_node);
}

}  // namespace

PeerLink::Peer::Peer(const Node* node, uint32_t index, size_t slot,
                     const Options& options)
    : node_(node),
      index_(index),
      slot_(slot),
      name_(StringView(node->name())),
      state_(options.disconnect_timeout),
      clock_(options.clock_window) {}

PeerLink::PeerLink(EventLoop* loop, uint32_t my_index, const Options& options)
    : loop_(loop), my_index_(my_index), boot_uuid_(loop->boot_uuid()) {
  const Configuration& config = *loop->configuration();
  const uint32_t nodes = config.nodes()->size();
  peers_by_index_.assign(nodes, nullptr);
  // The peers the statistics name, in their order: slot i here is peer(i)
  // there, by construction.
  for (const BridgeStatistics::PeerSpec& spec :
       BridgeStatistics::PeersOf(config, *loop->node())) {
    for (uint32_t i = 0; i < nodes; ++i) {
      const Node* node = config.nodes()->Get(i);
      if (StringView(node->name()) != spec.name) continue;
      auto peer = std::make_unique<Peer>(node, i, peers_.size(), options);
      peer->is_destination_ = spec.is_destination;
      peer->is_source_ = spec.is_source;
      peers_by_index_[i] = peer.get();
      peers_.push_back(std::move(peer));
      break;
    }
  }
}

std::vector<BridgeStatistics::PeerSpec> PeerLink::StatisticsPeers() const {
  std::vector<BridgeStatistics::PeerSpec> specs;
  for (const std::unique_ptr<Peer>& peer : peers_) {
    specs.push_back({.name = peer->name(),
                     .is_destination = peer->is_destination(),
                     .is_source = peer->is_source()});
  }
  return specs;
}

absl::Status PeerLink::Open(DdsParticipant* dds, WritePack* pack,
                            BridgeStatistics* statistics) {
  pack_ = pack;
  statistics_ = statistics;
  // Each peer reads its own topic.
  const DdsParticipant::Qos probe_qos{
      .reliable = false, .depth = 4, .lifespan_ns = 0};
  // Its samples are taken by probe_arrived_'s listener function.
  absl::StatusOr<dds_entity_t> reader =
      dds->MakeReader(&aos_bridge_Probe_desc, ProbeTopic(my_index_), probe_qos,
                      &probe_arrived_);
  if (!reader.ok()) return reader.status();
  for (const std::unique_ptr<Peer>& peer : peers_) {
    absl::StatusOr<dds_entity_t> writer = dds->MakeWriter(
        &aos_bridge_Probe_desc, ProbeTopic(peer->index_), probe_qos);
    if (!writer.ok()) return writer.status();
    peer->probe_writer_ = *writer;
  }
  return absl::OkStatus();
}

void PeerLink::Serve() {
  if (probe_arrived_.Take()) HandleProbes();
}

void PeerLink::TakeProbesInListener(dds_entity_t reader) {
  aos_bridge_Probe probe;
  void* samples[1] = {&probe};
  dds_sample_info_t info;
  while (dds_take(reader, samples, &info, 1, 1) > 0) {
    // Taken, so arrived: no later than now.
    const int64_t received_ns = Ns(monotonic_clock::now());
    if (info.valid_data) probe_inbox_.Push(probe, received_ns);
  }
}

void PeerLink::HandleProbes() {
  const size_t count = probe_inbox_.Drain(&probe_entries_);
  for (size_t i = 0; i < count; ++i) {
    const aos_bridge_Probe& probe = probe_entries_[i].value;
    const int64_t received_ns = probe_entries_[i].stamp_ns;
    if (probe.to_node != my_index_) continue;
    Peer* peer = PeerAt(probe.from_node);
    if (peer == nullptr) {
      ++statistics_->dropped_unknown_node();
      continue;
    }
    const monotonic_clock::time_point now = loop_->monotonic_now();
    const UUID boot = UUID::FromBytes(probe.boot_uuid);
    switch (peer->state_.OnProbe(now, boot)) {
      case PeerState::ProbeResult::kRebooted:
        peer->clock_.Reset();
        peer->boot_string_ = boot.ToString();
        break;
      case PeerState::ProbeResult::kConnected:
        peer->boot_string_ = boot.ToString();
        break;
      case PeerState::ProbeResult::kSame:
        break;
      case PeerState::ProbeResult::kRefused:
        if (peer->state_.episode_refusals() == 1) {
          // Back to the boot of before the storm: forget what the clock
          // learnt from the boots believed since, and their echo.
          peer->clock_.Reset();
          peer->boot_string_ = peer->state_.boot_uuid().ToString();
          peer->echo_sent_ns_ = 0;
          peer->echo_received_ns_ = 0;
          Say(StrCat("peer ", peer->name_, " changed its boot more than ",
                     peer->state_.limit().max_reboots, " times within ",
                     std::chrono::duration<double>(peer->state_.limit().window)
                         .count(),
                     " s (", peer->state_.reboots(),
                     " reboots believed so far): boot ", boot.ToString(),
                     " and further changes not believed, boot ",
                     peer->boot_string_,
                     " kept (forged probes? counted in ClientStatistics "
                     "refused_reboots)"));
          peer->UpdateView();
        }
        // Neither a heartbeat nor a clock sample.
        continue;
    }
    if (probe.echo_sent_ns != 0) {
      peer->clock_.Add(probe.echo_sent_ns, probe.echo_received_ns,
                       probe.monotonic_sent_ns, received_ns);
    }
    peer->echo_sent_ns_ = probe.monotonic_sent_ns;
    peer->echo_received_ns_ = received_ns;
    peer->UpdateView();
  }
}

void PeerLink::SendProbes() {
  const monotonic_clock::time_point now = loop_->monotonic_now();
  for (const std::unique_ptr<Peer>& peer : peers_) {
    peer->state_.Check(now);
    if (const std::optional<uint64_t> refused = peer->state_.EndRefusals(now)) {
      Say(StrCat(
          "peer ", peer->name_, ": ", *refused,
          " boot changes not believed, none in the last ",
          std::chrono::duration<double>(peer->state_.limit().window).count(),
          " s: its reboots are believed again (boot ", peer->boot_string_,
          ")"));
    }
    aos_bridge_Probe probe = {};
    probe.from_node = my_index_;
    probe.to_node = peer->index_;
    memcpy(probe.boot_uuid, boot_uuid_.bytes().data(), 16);
    probe.monotonic_sent_ns = Ns(now);
    probe.echo_sent_ns = peer->echo_sent_ns_;
    probe.echo_received_ns = peer->echo_received_ns_;
    pack_->Write(peer->probe_writer_, &probe);
  }
}

void PeerLink::FillLinkStates(BridgeStatistics* statistics) const {
  for (const std::unique_ptr<Peer>& peer : peers_) {
    const PeerState& state = peer->state_;
    const ClockOffsetEstimator::Estimate offset = peer->clock_.estimate();
    statistics->peer(peer->slot_).link = {
        .connected = state.connected(),
        .connection_count = state.connection_count(),
        .disconnects = state.disconnects(),
        .reboots = state.reboots(),
        .refused_reboots = state.refused_reboots(),
        .connected_since = state.connected_since(),
        .boot_uuid = peer->boot_string_,
        .monotonic_offset_ns = offset.offset_ns,
        .monotonic_offset_uncertainty_ns = offset.uncertainty_ns,
    };
  }
}

void PeerLink::Say(std::string_view line) const {
  const std::string text =
      StrCat(program_invocation_short_name, ": ",
             StringView(loop_->node()->name()), ": ", line, "\n");
  // One write: other threads' lines do not cut into it.
  [[maybe_unused]] ssize_t written =
      write(STDERR_FILENO, text.data(), text.size());
}

}  // namespace aos::message_bridge
