#include "aos/tracing/trace_merge.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

// The numeric argument `key` of `event`, if it has one.
std::optional<int64_t> Arg(const TraceEvent& event, std::string_view key) {
  for (const auto& [name, value] : event.args) {
    if (name == key) return value;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Trace> MergeTraces(const std::vector<Trace>& traces) {
  if (traces.empty()) {
    return absl::InvalidArgumentError("no snapshots to merge");
  }
  const Trace& base = traces[0];
  if (!base.info.requested_by.empty()) {
    return absl::InvalidArgumentError(
        StrCat("the first snapshot must be the asking node's; it was asked "
               "for by ",
               base.info.requested_by));
  }
  Trace merged;
  merged.info = base.info;
  merged.window = base.window;
  merged.info.merged.push_back(StrCat(
      base.info.node.empty() ? "(this node)" : base.info.node, ": its clock"));
  int next_pid = 1;
  uint64_t next_flow = 1;
  // Sends, by (channel, queue index, send time on the sending node's own
  // clock), and where they are in the merged trace; and the watcher runs
  // of messages other nodes sent, to draw flows from those sends.
  std::map<std::tuple<std::string, int64_t, int64_t>, FlowEnd> sends;
  std::vector<std::pair<std::tuple<std::string, int64_t, int64_t>, FlowEnd>>
      remote_receives;
  for (size_t i = 0; i < traces.size(); ++i) {
    const Trace& trace = traces[i];
    int64_t shift = 0;
    if (i > 0) {
      if (trace.info.requested_by != base.info.node ||
          trace.info.requester_trigger_ns != base.info.trigger_ns) {
        return absl::InvalidArgumentError(
            StrCat("snapshot ", i + 1, " (node ", trace.info.node,
                   ") was not asked for by ", base.info.node, "'s trigger at ",
                   base.info.trigger_ns, " ns (it was asked by '",
                   trace.info.requested_by, "' for ",
                   trace.info.requester_trigger_ns, " ns)"));
      }
      // Its clock + offset = the asking node's clock.
      shift = trace.info.clock_offset_ns;
      merged.info.merged.push_back(StrCat(
          trace.info.node, ": clock offset ", trace.info.clock_offset_ns,
          " ns (uncertainty ", trace.info.clock_offset_uncertainty_ns, " ns)"));
      merged.torn += trace.torn;
    } else {
      merged.torn = trace.torn;
    }
    int max_pid = 0;
    uint64_t max_flow = 0;
    for (TraceEvent event : trace.events) {
      max_pid = std::max(max_pid, event.pid);
      max_flow = std::max(max_flow, event.id);
      const int64_t own_ts_ns = event.ts_ns;
      event.pid += next_pid - 1;
      if (event.phase == 's' || event.phase == 'f') event.id += next_flow - 1;
      if (event.phase != 'M') event.ts_ns += shift;
      if (event.phase == 'M' && event.name == "process_name" &&
          !trace.info.node.empty() &&
          !event.text_arg.starts_with(StrCat(trace.info.node, " "))) {
        event.text_arg = StrCat(trace.info.node, " ", event.text_arg);
      }
      const FlowEnd site{event.pid, event.tid, event.ts_ns};
      if (event.phase == 'i' && event.name.starts_with("send ")) {
        const std::optional<int64_t> queue = Arg(event, "queue_index");
        const std::optional<int64_t> sent = Arg(event, "sent_ns");
        if (queue) {
          sends[{event.name.substr(5), *queue, sent ? *sent : own_ts_ns}] =
              site;
        }
      }
      if (event.phase == 'X' && event.name.starts_with("watcher ")) {
        const std::optional<int64_t> queue = Arg(event, "remote_queue_index");
        const std::optional<int64_t> sent = Arg(event, "remote_sent_ns");
        if (queue && sent) {
          remote_receives.push_back(
              {{event.name.substr(8), *queue, *sent}, site});
        }
      }
      merged.events.push_back(std::move(event));
    }
    next_pid += max_pid;
    next_flow += max_flow;
  }
  // Across nodes: from a send on one node to the watcher on another that
  // got it (its remote queue index and send time are that send's).
  for (const auto& [key, to] : remote_receives) {
    const auto from = sends.find(key);
    if (from == sends.end()) continue;
    AddFlow(next_flow++, from->second, to, &merged.events);
    ++merged.info.cross_node_flows;
  }
  return merged;
}

}  // namespace aos::tracing
