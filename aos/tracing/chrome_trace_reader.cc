#include "aos/tracing/chrome_trace_reader.h"

#include <cmath>

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

}  // namespace aos::tracing
