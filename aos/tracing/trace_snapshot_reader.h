#ifndef AOS_TRACING_TRACE_SNAPSHOT_READER_H_
#define AOS_TRACING_TRACE_SNAPSHOT_READER_H_

// A logged aos.tracing.TraceSnapshot message (trace_snapshot.fbs) back as
// the rings, window and info a Chrome trace is built of (chrome_trace.h):
// what `aos_trace from-log` turns into snapshot files.
//
//   absl::StatusOr<LoggedSnapshot> logged = ReadTraceSnapshot(bytes);
//   if (logged.ok()) {
//     Trace trace = BuildTrace(logged->rings, logged->window, logged->info);
//   }
//
// Never trusts the bytes: a message that does not verify is an error; an
// event naming a ring the message does not have is left out and counted
// in its `torn`. Not for realtime code.

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/ring_reader.h"

namespace aos::tracing {

struct LoggedSnapshot {
  std::vector<RingCopy> rings;
  TraceWindow window;
  SnapshotInfo info;
  // Events the sender left out to fit the channel, and events naming no
  // ring of the message.
  uint64_t left_out = 0;
  uint64_t unplaced = 0;
};

absl::StatusOr<LoggedSnapshot> ReadTraceSnapshot(
    std::span<const uint8_t> message);

}  // namespace aos::tracing

#endif  // AOS_TRACING_TRACE_SNAPSHOT_READER_H_
