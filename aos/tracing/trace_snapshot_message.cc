#include "aos/tracing/trace_snapshot_message.h"

#include <algorithm>
#include <unordered_map>

namespace aos::tracing {
namespace {

// Bytes a message needs besides its events: its fields and each ring's
// names, with room for flatbuffers' offsets, vtables and padding.
size_t FixedBytes(const std::vector<RingCopy>& rings) {
  size_t bytes = 1024;
  for (size_t r = 0; r < rings.size() && r < kMaxTraceSnapshotRings; ++r) {
    const RingCopy& ring = rings[r];
    bytes += 128 + ring.node.size() + ring.application.size();
    for (const TrackName& name : ring.names) bytes += 48 + name.name.size();
  }
  return bytes;
}

}  // namespace

flatbuffers::DetachedBuffer TraceSnapshotMessage(
    const std::vector<RingCopy>& rings, const TraceWindow& window,
    const SnapshotInfo& info, size_t max_size) {
  const size_t fixed = FixedBytes(rings);
  size_t events =
      max_size > fixed ? (max_size - fixed) / sizeof(TraceSnapshotEvent) : 0;
  while (true) {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.ForceDefaults(false);
    fbb.Finish(BuildTraceSnapshot(&fbb, rings, window, info, events));
    if (fbb.GetSize() <= max_size) return fbb.Release();
    // Our estimate of the names was short: fewer events.
    if (events == 0) return flatbuffers::DetachedBuffer();
    events = events * 3 / 4;
  }
}

flatbuffers::Offset<TraceSnapshot> BuildTraceSnapshot(
    flatbuffers::FlatBufferBuilder* fbb, const std::vector<RingCopy>& rings,
    const TraceWindow& window, const SnapshotInfo& info, size_t max_events) {
  std::vector<TraceSnapshotEvent> events;
  uint64_t left_out = 0;
  std::vector<flatbuffers::Offset<TraceSnapshotRing>> ring_offsets;
  for (size_t r = 0; r < rings.size(); ++r) {
    const RingCopy& ring = rings[r];
    // A handler run that started before the window and ended in it is in
    // the snapshot (chrome_trace.h): its start goes in too.
    std::unordered_map<uint16_t, const Event*> started;
    // And the remote receive that followed such a start.
    std::unordered_map<uint16_t, const Event*> remote;
    for (const Event& event : ring.events) {
      const bool start = event.kind == EventKind::kTimerStart ||
                         event.kind == EventKind::kWatcherStart;
      const bool end = event.kind == EventKind::kTimerEnd ||
                       event.kind == EventKind::kWatcherEnd;
      if (start) {
        started[event.index] = &event;
        remote.erase(event.index);
      }
      if (event.kind == EventKind::kRemoteReceive) remote[event.index] = &event;
      if (event.monotonic_ns > window.end_ns) {
        // A run that started by the window's end and ends after it is in
        // the snapshot too: its remote receive and end go in.
        const auto run = started.find(event.index);
        const bool straddles =
            (end || event.kind == EventKind::kRemoteReceive) &&
            run != started.end() && run->second->monotonic_ns <= window.end_ns;
        if (!straddles) continue;
      }
      if (event.monotonic_ns < window.begin_ns) {
        if (end) started.erase(event.index);
        continue;
      }
      if (end && r < kMaxTraceSnapshotRings) {
        const auto before = started.find(event.index);
        if (before != started.end() &&
            before->second->monotonic_ns < window.begin_ns) {
          for (const Event* first : {before->second, remote[event.index]}) {
            if (first == nullptr || first->monotonic_ns >= window.begin_ns) {
              continue;
            }
            events.emplace_back(first->monotonic_ns, first->aux_ns,
                                first->queue_index, first->index,
                                static_cast<uint8_t>(first->kind),
                                static_cast<uint8_t>(r));
          }
        }
      }
      if (end) started.erase(event.index);
      if (r >= kMaxTraceSnapshotRings) {
        ++left_out;
        continue;
      }
      events.emplace_back(event.monotonic_ns, event.aux_ns, event.queue_index,
                          event.index, static_cast<uint8_t>(event.kind),
                          static_cast<uint8_t>(r));
    }
    if (r >= kMaxTraceSnapshotRings) continue;
    std::vector<flatbuffers::Offset<TraceSnapshotName>> names;
    for (const TrackName& name : ring.names) {
      names.push_back(CreateTraceSnapshotName(
          *fbb, static_cast<uint8_t>(name.kind), name.index, name.channel,
          fbb->CreateString(name.name)));
    }
    ring_offsets.push_back(CreateTraceSnapshotRing(
        *fbb, fbb->CreateString(ring.node), fbb->CreateString(ring.application),
        ring.pid, fbb->CreateVector(names), ring.torn));
  }
  // The newest kept: ordered by time across rings, the oldest cut.
  std::stable_sort(
      events.begin(), events.end(),
      [](const TraceSnapshotEvent& a, const TraceSnapshotEvent& b) {
        return a.monotonic_ns() < b.monotonic_ns();
      });
  if (events.size() > max_events) {
    left_out += events.size() - max_events;
    events.erase(events.begin(),
                 events.begin() +
                     static_cast<std::ptrdiff_t>(events.size() - max_events));
  }
  const auto node = fbb->CreateString(info.node);
  const auto reason = fbb->CreateString(info.reason);
  const auto requested_by = fbb->CreateString(info.requested_by);
  const auto ring_vector = fbb->CreateVector(ring_offsets);
  const auto event_vector = fbb->CreateVectorOfStructs(events);
  TraceSnapshotBuilder snapshot(*fbb);
  snapshot.add_node(node);
  snapshot.add_reason(reason);
  snapshot.add_trigger_ns(info.trigger_ns);
  snapshot.add_window_begin_ns(window.begin_ns);
  snapshot.add_window_end_ns(window.end_ns);
  snapshot.add_suppressed_snapshots(info.suppressed);
  snapshot.add_rings(ring_vector);
  snapshot.add_events(event_vector);
  snapshot.add_events_left_out(left_out);
  if (!info.requested_by.empty()) {
    snapshot.add_requested_by(requested_by);
    snapshot.add_clock_offset_ns(info.clock_offset_ns);
  }
  return snapshot.Finish();
}

}  // namespace aos::tracing
