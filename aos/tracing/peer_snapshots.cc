#include "aos/tracing/peer_snapshots.h"

#include "aos/configuration_lookup.h"
#include "aos/util/str_cat.h"
#include "flatbuffers/flatbuffers.h"
#include "glog/logging.h"

namespace aos::tracing {
namespace {

constexpr int64_t kHourNs = int64_t{3600} * 1'000'000'000;

// What is wrong with `request`, or "" if nothing.
std::string Problem(const SnapshotRequest& request) {
  if (request.node() == nullptr || request.node()->size() == 0) {
    return "no node";
  }
  if (request.trigger_monotonic_ns() <= 0) {
    return StrCat("trigger_monotonic_ns ", request.trigger_monotonic_ns(),
                  " is no time");
  }
  for (const auto& [field, value] :
       {std::pair<std::string_view, int64_t>{"before_ns", request.before_ns()},
        {"after_ns", request.after_ns()}}) {
    if (value < 0 || value > kHourNs) {
      return StrCat(field, " ", value, " is not 0 to an hour");
    }
  }
  return "";
}

}  // namespace

PeerSnapshots::PeerSnapshots(EventLoop* loop,
                             std::function<void(const PeerAsk&)> on_ask)
    : loop_(loop),
      on_ask_(std::move(on_ask)),
      sender_(loop->TryMakeSender<SnapshotRequest>("/aos")),
      client_statistics_(
          loop->TryMakeFetcher<message_bridge::ClientStatistics>("/aos")) {
  const Configuration& config = *loop->configuration();
  if (config.channels() == nullptr) return;
  for (const Channel* channel : *config.channels()) {
    if (channel->type()->string_view() !=
            SnapshotRequest::GetFullyQualifiedName() ||
        !configuration::ChannelIsForwardedTo(*channel, loop->node())) {
      continue;
    }
    watched_.push_back(channel->name()->str());
    loop->MakeRawWatcher(
        channel, [this, channel](const Context& context, const void* message) {
          Receive(channel, context, message);
        });
  }
}

bool PeerSnapshots::Ask(int64_t trigger_ns, int64_t before_ns, int64_t after_ns,
                        std::string_view reason) {
  if (!sender_.valid()) return false;
  auto builder = sender_.MakeBuilder();
  flatbuffers::FlatBufferBuilder* fbb = builder.fbb();
  const auto node = fbb->CreateString(
      loop_->node() != nullptr ? loop_->node()->name()->string_view() : "");
  const auto why = fbb->CreateString(reason);
  SnapshotRequest::Builder request = builder.MakeBuilder<SnapshotRequest>();
  request.add_node(node);
  request.add_trigger_monotonic_ns(trigger_ns);
  request.add_before_ns(before_ns);
  request.add_after_ns(after_ns);
  request.add_reason(why);
  return builder.Send(request.Finish()) == RawSender::Error::kOk;
}

std::pair<int64_t, int64_t> PeerSnapshots::BridgeOffset(std::string_view node) {
  if (!client_statistics_.valid()) return {0, -1};
  // The latest, new or not (Fetch() is false when nothing newer came).
  client_statistics_.Fetch();
  if (client_statistics_.get() == nullptr ||
      client_statistics_->connections() == nullptr) {
    return {0, -1};
  }
  for (const message_bridge::ClientConnection* connection :
       *client_statistics_->connections()) {
    if (connection->node() != nullptr &&
        connection->node()->string_view() == node &&
        connection->monotonic_offset_uncertainty() >= 0) {
      return {connection->monotonic_offset(),
              connection->monotonic_offset_uncertainty()};
    }
  }
  return {0, -1};
}

void PeerSnapshots::Receive(const Channel* channel, const Context& context,
                            const void* message) {
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(message),
                                 context.size);
  std::string problem;
  const SnapshotRequest* request = nullptr;
  if (!verifier.VerifyBuffer<SnapshotRequest>(nullptr)) {
    problem = "not a valid aos.tracing.SnapshotRequest";
  } else {
    request = flatbuffers::GetRoot<SnapshotRequest>(message);
    problem = Problem(*request);
  }
  // Its trigger, on its clock, must be near when it sent the request (its
  // clock too): a time far off would hold this recorder's schedule forever.
  const int64_t sent_there =
      context.monotonic_remote_time != monotonic_clock::min_time
          ? context.monotonic_remote_time.time_since_epoch().count()
          : context.monotonic_event_time.time_since_epoch().count();
  if (problem.empty() &&
      (request->trigger_monotonic_ns() > sent_there + kHourNs ||
       request->trigger_monotonic_ns() < sent_there - kHourNs)) {
    problem = StrCat("trigger_monotonic_ns ", request->trigger_monotonic_ns(),
                     " is not within an hour of the request's send time ",
                     sent_there);
  }
  if (!problem.empty()) {
    LOG_IF(WARNING, refused_ == 0)
        << "aos_trace: refused a snapshot request on "
        << channel->name()->string_view() << ": " << problem
        << " (the next ones are only counted)";
    ++refused_;
    return;
  }
  PeerAsk ask;
  ask.node = request->node()->str();
  ask.reason = request->reason() != nullptr ? request->reason()->str() : "";
  ask.requester_trigger_ns = request->trigger_monotonic_ns();
  ask.before_ns = request->before_ns();
  ask.after_ns = request->after_ns();
  const auto [offset, uncertainty] = BridgeOffset(ask.node);
  if (uncertainty >= 0) {
    ask.clock_offset_ns = offset;
    ask.clock_offset_uncertainty_ns = uncertainty;
  } else {
    // Sent at monotonic_remote_time on its clock, here at
    // monotonic_event_time on ours: their difference is the offset plus
    // nothing better known than the one-way latency.
    ask.clock_offset_ns =
        (context.monotonic_remote_time - context.monotonic_event_time).count();
    ask.clock_offset_uncertainty_ns = -1;
  }
  // Its clock = ours + offset. An offset the bridge got wrong by more than
  // an hour would put the window nowhere near now: refused.
  if (ask.clock_offset_ns > kHourNs || ask.clock_offset_ns < -kHourNs) {
    LOG_IF(WARNING, refused_ == 0)
        << "aos_trace: refused a snapshot request on "
        << channel->name()->string_view() << ": clock offset "
        << ask.clock_offset_ns << " ns to " << ask.node
        << " is more than an hour";
    ++refused_;
    return;
  }
  ask.trigger_ns = ask.requester_trigger_ns - ask.clock_offset_ns;
  on_ask_(ask);
}

}  // namespace aos::tracing
