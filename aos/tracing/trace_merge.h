#ifndef AOS_TRACING_TRACE_MERGE_H_
#define AOS_TRACING_TRACE_MERGE_H_

// One timeline from the snapshots of several nodes (docs/tracing.md,
// "Across nodes"): the snapshot of the node whose trigger it was, and the
// snapshots other nodes wrote because it asked (peer_snapshots.h), each
// moved onto the asking node's clock by the clock offset it records.
//
//   // ReadTrace: chrome_trace_reader.h
//   absl::StatusOr<Trace> pi1 = ReadTrace("aos_trace.1.pi1.json");
//   absl::StatusOr<Trace> pi2 = ReadTrace("aos_trace.1.pi2.json");
//   absl::StatusOr<Trace> both = MergeTraces({*pi1, *pi2});
//
// Not for realtime code.

#include <vector>

#include "absl/status/statusor.h"
#include "aos/tracing/chrome_trace.h"

namespace aos::tracing {

// `traces[0]` is the asking node's snapshot (not asked for itself); every
// other must have been asked for by that node for that trigger (an error
// names the one that was not). Their events move by their clock offset onto
// the asking node's clock; processes and flows are renumbered so none
// collide; "kernel: CPUs" gets its node's name. The result's info is the
// asking node's, with `merged` naming each node.
absl::StatusOr<Trace> MergeTraces(const std::vector<Trace>& traces);

}  // namespace aos::tracing

#endif  // AOS_TRACING_TRACE_MERGE_H_
