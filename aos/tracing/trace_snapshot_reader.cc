#include "aos/tracing/trace_snapshot_reader.h"

#include "aos/tracing/trace_snapshot_generated.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::tracing {
namespace {

std::string Str(const flatbuffers::String* text) {
  return text == nullptr ? std::string() : text->str();
}

}  // namespace

absl::StatusOr<LoggedSnapshot> ReadTraceSnapshot(
    std::span<const uint8_t> message) {
  flatbuffers::Verifier verifier(message.data(), message.size());
  if (!verifier.VerifyBuffer<TraceSnapshot>(nullptr)) {
    return absl::InvalidArgumentError("not a valid aos.tracing.TraceSnapshot");
  }
  const TraceSnapshot& snapshot =
      *flatbuffers::GetRoot<TraceSnapshot>(message.data());
  LoggedSnapshot logged;
  logged.window =
      TraceWindow{snapshot.window_begin_ns(), snapshot.window_end_ns()};
  SnapshotInfo& info = logged.info;
  info.node = Str(snapshot.node());
  info.reason = Str(snapshot.reason());
  info.trigger_ns = snapshot.trigger_ns();
  info.suppressed = snapshot.suppressed_snapshots();
  info.requested_by = Str(snapshot.requested_by());
  info.clock_offset_ns = snapshot.clock_offset_ns();
  logged.left_out = snapshot.events_left_out();
  if (snapshot.rings() != nullptr) {
    for (const TraceSnapshotRing* ring : *snapshot.rings()) {
      RingCopy copy;
      copy.node = Str(ring->node());
      copy.application = Str(ring->application());
      copy.pid = ring->pid();
      copy.torn = ring->torn();
      if (ring->names() != nullptr) {
        for (const TraceSnapshotName* name : *ring->names()) {
          copy.names.push_back(TrackName{static_cast<TrackKind>(name->kind()),
                                         name->index(), name->channel(),
                                         Str(name->name())});
        }
      }
      logged.rings.push_back(std::move(copy));
    }
  }
  if (snapshot.events() != nullptr) {
    for (const TraceSnapshotEvent* event : *snapshot.events()) {
      if (event->ring() >= logged.rings.size() || event->kind() == 0 ||
          event->kind() > static_cast<uint8_t>(EventKind::kRemoteReceive)) {
        ++logged.unplaced;
        continue;
      }
      RingCopy& ring = logged.rings[event->ring()];
      Event copy;
      copy.sequence = ring.events.size();
      copy.kind = static_cast<EventKind>(event->kind());
      copy.index = event->index();
      copy.queue_index = event->queue_index();
      copy.monotonic_ns = event->monotonic_ns();
      copy.aux_ns = event->aux_ns();
      ring.events.push_back(copy);
    }
  }
  return logged;
}

}  // namespace aos::tracing
