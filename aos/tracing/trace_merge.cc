#include "aos/tracing/trace_merge.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "aos/util/json_document.h"
#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

// Larger pids and tids, and times (us) beyond about 2^62 ns, are no
// snapshot's.
constexpr int64_t kMaxId = int64_t{1} << 20;
constexpr double kMaxUs = 4.6e15;

// Microseconds with a fraction, as TraceJson writes them, to ns.
int64_t Ns(double us) { return std::llround(us * 1e3); }

// The first error of `statuses`, or OK.
absl::Status FirstError(std::initializer_list<absl::Status> statuses) {
  for (const absl::Status& status : statuses) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<TraceEvent> ReadEvent(const JsonValue& value) {
  TraceEvent event;
  absl::StatusOr<std::string> phase = value["ph"].String();
  absl::StatusOr<std::string> name = value["name"].String();
  absl::StatusOr<int64_t> pid = value["pid"].Integer();
  absl::StatusOr<int64_t> tid = value["tid"].Integer();
  if (absl::Status status = FirstError(
          {phase.status(), name.status(), pid.status(), tid.status()});
      !status.ok()) {
    return status;
  }
  if (phase->size() != 1) {
    return absl::InvalidArgumentError(StrCat(value.source(), ": ",
                                             value["ph"].path(), " is \"",
                                             *phase, "\", not one letter"));
  }
  // Our snapshots number processes and tracks from 1 and 0, small; what
  // is far outside is no snapshot of ours (and would overflow merging).
  for (const auto& [field, number] :
       {std::pair<std::string_view, int64_t>{"pid", *pid}, {"tid", *tid}}) {
    if (number < 0 || number > kMaxId) {
      return absl::InvalidArgumentError(StrCat(value.source(), ": ",
                                               value[field].path(), " ", number,
                                               " is not 0 to ", kMaxId));
    }
  }
  event.phase = (*phase)[0];
  event.name = *name;
  event.pid = static_cast<int>(*pid);
  event.tid = static_cast<int>(*tid);
  if (value["cat"].exists()) {
    absl::StatusOr<std::string> category = value["cat"].String();
    if (!category.ok()) return category.status();
    event.category = *category;
  }
  if (event.phase == 'M') {
    absl::StatusOr<std::string> text = value["args"]["name"].String();
    if (!text.ok()) return text.status();
    event.text_arg = *text;
    return event;
  }
  absl::StatusOr<double> ts = value["ts"].Number();
  if (!ts.ok()) return ts.status();
  if (!(std::abs(*ts) < kMaxUs)) {
    return absl::InvalidArgumentError(StrCat(
        value.source(), ": ", value["ts"].path(), " ", *ts, " is no time"));
  }
  event.ts_ns = Ns(*ts);
  if (event.phase == 'X') {
    absl::StatusOr<double> dur = value["dur"].Number();
    if (!dur.ok()) return dur.status();
    if (!(*dur >= 0 && *dur < kMaxUs)) {
      return absl::InvalidArgumentError(StrCat(
          value.source(), ": ", value["dur"].path(), " ", *dur, " is no time"));
    }
    event.dur_ns = Ns(*dur);
  }
  if (event.phase == 's' || event.phase == 'f') {
    absl::StatusOr<int64_t> id = value["id"].Integer();
    if (!id.ok()) return id.status();
    if (*id < 0 || *id > (int64_t{1} << 40)) {
      return absl::InvalidArgumentError(StrCat(value.source(), ": ",
                                               value["id"].path(), " ", *id,
                                               " is no flow id"));
    }
    event.id = static_cast<uint64_t>(*id);
  }
  if (value["args"].exists()) {
    auto members = value["args"].Members();
    if (!members.ok()) return members.status();
    for (const auto& [key, arg] : *members) {
      absl::StatusOr<int64_t> number = arg.Integer();
      if (!number.ok()) return number.status();
      event.args.emplace_back(key, *number);
    }
  }
  return event;
}

// The numeric argument `key` of `event`, if it has one.
std::optional<int64_t> Arg(const TraceEvent& event, std::string_view key) {
  for (const auto& [name, value] : event.args) {
    if (name == key) return value;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Trace> ReadTrace(const std::string& path) {
  absl::StatusOr<JsonDocument> document = JsonDocument::ReadFile(path);
  if (!document.ok()) return document.status();
  const JsonValue other = document->root()["otherData"];
  Trace trace;
  SnapshotInfo& info = trace.info;
  absl::StatusOr<std::string> reason = other["reason"].String();
  absl::StatusOr<int64_t> trigger = other["trigger_ns"].Integer();
  absl::StatusOr<int64_t> begin = other["window_begin_ns"].Integer();
  absl::StatusOr<int64_t> end = other["window_end_ns"].Integer();
  absl::StatusOr<int64_t> suppressed = other["suppressed_snapshots"].Integer();
  absl::StatusOr<int64_t> torn = other["torn_events"].Integer();
  if (absl::Status status =
          FirstError({reason.status(), trigger.status(), begin.status(),
                      end.status(), suppressed.status(), torn.status()});
      !status.ok()) {
    return status;
  }
  info.reason = *reason;
  info.trigger_ns = *trigger;
  trace.window = TraceWindow{*begin, *end};
  info.suppressed = static_cast<uint64_t>(*suppressed);
  trace.torn = static_cast<uint64_t>(*torn);
  if (other["node"].exists()) {
    absl::StatusOr<std::string> node = other["node"].String();
    if (!node.ok()) return node.status();
    info.node = *node;
  }
  if (other["requested_by"].exists()) {
    absl::StatusOr<std::string> by = other["requested_by"].String();
    absl::StatusOr<int64_t> at = other["requester_trigger_ns"].Integer();
    absl::StatusOr<int64_t> offset = other["clock_offset_ns"].Integer();
    absl::StatusOr<int64_t> uncertainty =
        other["clock_offset_uncertainty_ns"].Integer();
    if (absl::Status status = FirstError(
            {by.status(), at.status(), offset.status(), uncertainty.status()});
        !status.ok()) {
      return status;
    }
    constexpr int64_t kHourNs = int64_t{3600} * 1'000'000'000;
    if (*offset > kHourNs || *offset < -kHourNs) {
      return absl::InvalidArgumentError(
          StrCat(path, ": otherData.clock_offset_ns ", *offset,
                 " is more than an hour"));
    }
    info.requested_by = *by;
    info.requester_trigger_ns = *at;
    info.clock_offset_ns = *offset;
    info.clock_offset_uncertainty_ns = *uncertainty;
  }
  absl::StatusOr<std::vector<JsonValue>> events =
      document->root()["traceEvents"].Elements();
  if (!events.ok()) return events.status();
  for (const JsonValue& value : *events) {
    absl::StatusOr<TraceEvent> event = ReadEvent(value);
    if (!event.ok()) return event.status();
    trace.events.push_back(std::move(*event));
  }
  return trace;
}

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
