#ifndef AOS_TRACING_TRACE_SNAPSHOT_MESSAGE_H_
#define AOS_TRACING_TRACE_SNAPSHOT_MESSAGE_H_

// A snapshot as an aos.tracing.TraceSnapshot message (trace_snapshot.fbs),
// for the channel a logger keeps: the rings' events in the window, their
// names tables, and what the snapshot says about itself.
//
//   flatbuffers::DetachedBuffer message =
//       TraceSnapshotMessage(rings, window, info, channel_max_size);
//   if (message.size() > 0) sender.Send(message.data(), message.size());
//
// Not for realtime code.

#include <cstddef>
#include <vector>

#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/ring_reader.h"
#include "aos/tracing/trace_snapshot_generated.h"
#include "flatbuffers/flatbuffers.h"

namespace aos::tracing {

// Rings past this many are left out of a message (their events counted as
// left out): an event names its ring in one byte.
inline constexpr size_t kMaxTraceSnapshotRings = 255;

// Builds the message of `rings` in `window` with `info`, keeping at most
// `max_events` events (the newest; the rest counted in events_left_out).
flatbuffers::Offset<TraceSnapshot> BuildTraceSnapshot(
    flatbuffers::FlatBufferBuilder* fbb, const std::vector<RingCopy>& rings,
    const TraceWindow& window, const SnapshotInfo& info, size_t max_events);

// The finished message, at most `max_size` bytes: as many of the newest
// events as fit. Empty if not even the rings' names fit.
flatbuffers::DetachedBuffer TraceSnapshotMessage(
    const std::vector<RingCopy>& rings, const TraceWindow& window,
    const SnapshotInfo& info, size_t max_size);

}  // namespace aos::tracing

#endif  // AOS_TRACING_TRACE_SNAPSHOT_MESSAGE_H_
