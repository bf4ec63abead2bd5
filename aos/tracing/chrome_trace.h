#ifndef AOS_TRACING_CHROME_TRACE_H_
#define AOS_TRACING_CHROME_TRACE_H_

// A snapshot of rings as a Chrome trace (the trace event format that
// Perfetto and chrome://tracing open): one process per ring (loop), one
// thread (track) per callback, a complete event ("X") per handler run,
// instant events ("i") for sends, lost messages, missed cycles and
// triggers, and flow events ("s" -> "f") from a send to each watcher call
// that got that message (same channel and queue index), across processes.
//
//   Trace trace = BuildTrace(rings, window, info);
//   WriteFile(path, TraceJson(trace));
//
// Times ("ts", "dur") are microseconds of the loops' monotonic clock.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "aos/tracing/ring_reader.h"

namespace aos::tracing {

// The part of the rings' time a snapshot keeps: [begin_ns, end_ns].
struct TraceWindow {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

// What a snapshot says about itself (the JSON's "otherData").
struct SnapshotInfo {
  // Why: "snapshot" (a command) or the trigger's reason.
  std::string reason;
  // The trigger's time (0: a command's snapshot).
  int64_t trigger_ns = 0;
  // Snapshots the rate limit suppressed since the last one written.
  uint64_t suppressed = 0;
  // Rings found but not read (another layout, damaged), and why.
  std::vector<std::string> skipped_rings;
  // The node whose rings these are ("" in a single-node system).
  std::string node;
  // A snapshot another node's recorder asked for (peer_snapshots.h): that
  // node, its trigger on its clock, and its clock minus this node's (with
  // the estimate's uncertainty, -1 if from the request's own times).
  std::string requested_by;
  int64_t requester_trigger_ns = 0;
  int64_t clock_offset_ns = 0;
  int64_t clock_offset_uncertainty_ns = -1;
  // A merged snapshot (trace_merge.h): each node's part, as "pi2: clock
  // offset 44247 ns (+-185042)".
  std::vector<std::string> merged;
  // In a merged snapshot, the flows drawn from a send on one node to the
  // watcher on another that got it.
  uint64_t cross_node_flows = 0;
  // Whether the kernel's scheduler events are in (sched_tracks.h), and:
  // how many fell in the window, how many the kernel's buffer overwrote
  // before it was read, how many lines could not be read.
  bool kernel_sched = false;
  uint64_t kernel_events = 0;
  uint64_t kernel_overwritten = 0;
  uint64_t kernel_unparsed = 0;
};

// One trace event. Fields a phase does not use stay empty or zero.
struct TraceEvent {
  char phase = 'X';
  std::string name;
  std::string category;
  int pid = 0;
  int tid = 0;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  // Flow events: the flow's id.
  uint64_t id = 0;
  // Numeric arguments, in order; for metadata events, `text_arg` instead.
  std::vector<std::pair<std::string, int64_t>> args;
  std::string text_arg;
};

struct Trace {
  std::vector<TraceEvent> events;
  SnapshotInfo info;
  TraceWindow window;
  // Events the rings lost to overwriting or tearing, summed.
  uint64_t torn = 0;
};

// A metadata event: `what` is "process_name" or "thread_name", `text` the
// name given to process `pid` (thread `tid`).
TraceEvent Metadata(std::string_view what, int pid, int tid, std::string text);

// Where a flow starts or ends: a process, a track, a time.
struct FlowEnd {
  int pid = 0;
  int tid = 0;
  int64_t ts_ns = 0;
};

// Appends to `events` the flow `id` of a message, from `from` (its send) to
// `to` (the watcher call that got it).
void AddFlow(uint64_t id, const FlowEnd& from, const FlowEnd& to,
             std::vector<TraceEvent>* events);

// Builds the trace of `rings` in `window`. A handler run is kept if it
// overlaps the window and its start is still in the ring.
Trace BuildTrace(const std::vector<RingCopy>& rings, const TraceWindow& window,
                 const SnapshotInfo& info);

// The strict JSON text of `trace`: {"traceEvents": [...],
// "displayTimeUnit": "ns", "otherData": {...}}.
std::string TraceJson(const Trace& trace);

}  // namespace aos::tracing

#endif  // AOS_TRACING_CHROME_TRACE_H_
