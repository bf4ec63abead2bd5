#include "aos/tracing/chrome_trace.h"

#include <map>
#include <tuple>
#include <unordered_map>

#include "aos/util/json_writer.h"
#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

// Where a message was sent from: its send event's process, thread, time.
struct SendSite {
  int pid;
  int tid;
  int64_t ts_ns;
};

bool InWindow(const TraceWindow& window, int64_t ns) {
  return ns >= window.begin_ns && ns <= window.end_ns;
}

// "timer ping", "watcher /pong", or "callback 3" when the names table has
// no entry for it (made while the loop ran).
std::string TrackLabel(const TrackName* name, uint16_t index) {
  if (name == nullptr) return StrCat("callback ", index);
  const std::string label =
      name->name.empty() ? StrCat("#", index) : name->name;
  return StrCat(TrackKindName(name->kind), " ", label);
}

// An instant event on `tid`'s track with one numeric argument.
TraceEvent Instant(std::string name, int pid, int tid, int64_t ts_ns,
                   std::string_view arg, int64_t value) {
  TraceEvent event;
  event.phase = 'i';
  event.name = std::move(name);
  event.category = "aos";
  event.pid = pid;
  event.tid = tid;
  event.ts_ns = ts_ns;
  event.args.emplace_back(arg, value);
  return event;
}

}  // namespace

TraceEvent Metadata(std::string_view what, int pid, int tid, std::string text) {
  TraceEvent event;
  event.phase = 'M';
  // As Chrome writes them; some readers want a category on every event.
  event.category = "__metadata";
  event.name = what;
  event.pid = pid;
  event.tid = tid;
  event.text_arg = std::move(text);
  return event;
}

void AddFlow(uint64_t id, const FlowEnd& from, const FlowEnd& to,
             std::vector<TraceEvent>* events) {
  TraceEvent begin;
  begin.phase = 's';
  begin.name = "message";
  begin.category = "flow";
  begin.pid = from.pid;
  begin.tid = from.tid;
  begin.ts_ns = from.ts_ns;
  begin.id = id;
  TraceEvent end = begin;
  end.phase = 'f';
  end.pid = to.pid;
  end.tid = to.tid;
  end.ts_ns = to.ts_ns;
  events->push_back(std::move(begin));
  events->push_back(std::move(end));
}

Trace BuildTrace(const std::vector<RingCopy>& rings, const TraceWindow& window,
                 const SnapshotInfo& info) {
  Trace trace;
  trace.info = info;
  trace.window = window;
  // (channel, queue index) -> where it was sent.
  std::map<std::pair<int, uint32_t>, SendSite> sends;
  // Watcher starts to join to sends: pid, tid, ts, channel, queue index.
  std::vector<std::tuple<int, int, int64_t, int, uint32_t>> receives;
  for (size_t r = 0; r < rings.size(); ++r) {
    const RingCopy& ring = rings[r];
    trace.torn += ring.torn;
    const int pid = static_cast<int>(r) + 1;
    trace.events.push_back(
        Metadata("process_name", pid, 0,
                 StrCat(ring.node.empty() ? "" : StrCat(ring.node, " "),
                        ring.application, " (pid ", ring.pid, ")")));
    std::unordered_map<uint16_t, const TrackName*> callbacks;
    std::unordered_map<uint16_t, const TrackName*> channels;
    for (const TrackName& name : ring.names) {
      if (name.kind == TrackKind::kChannel) {
        channels[name.index] = &name;
      } else {
        callbacks[name.index] = &name;
        trace.events.push_back(Metadata("thread_name", pid, name.index + 1,
                                        TrackLabel(&name, name.index)));
      }
    }
    trace.events.push_back(Metadata("thread_name", pid, 0, "loop"));
    auto channel_name = [&](uint16_t index) {
      auto it = channels.find(index);
      return it == channels.end() ? StrCat("channel ", index)
                                  : it->second->name;
    };
    // Callback index -> its start event, until its end.
    std::unordered_map<uint16_t, Event> running;
    // Callback index -> the running watcher's message's queue index and send
    // time on the node that sent it, if another node sent it.
    std::unordered_map<uint16_t, std::pair<uint32_t, int64_t>> remote;
    int current_tid = 0;
    for (const Event& event : ring.events) {
      switch (event.kind) {
        case EventKind::kTimerStart:
        case EventKind::kWatcherStart:
          running[event.index] = event;
          remote.erase(event.index);
          current_tid = event.index + 1;
          break;
        case EventKind::kTimerEnd:
        case EventKind::kWatcherEnd: {
          current_tid = 0;
          auto it = running.find(event.index);
          if (it == running.end()) break;
          const Event start = it->second;
          running.erase(it);
          if (event.monotonic_ns < window.begin_ns ||
              start.monotonic_ns > window.end_ns) {
            break;
          }
          const auto name = callbacks.find(event.index);
          TraceEvent run;
          run.phase = 'X';
          run.name = TrackLabel(
              name == callbacks.end() ? nullptr : name->second, event.index);
          run.category =
              event.kind == EventKind::kTimerEnd ? "timer" : "watcher";
          run.pid = pid;
          run.tid = event.index + 1;
          run.ts_ns = start.monotonic_ns;
          run.dur_ns = event.monotonic_ns - start.monotonic_ns;
          const bool timer = event.kind == EventKind::kTimerEnd;
          run.args.emplace_back(timer ? "scheduled_ns" : "sent_ns",
                                start.aux_ns);
          run.args.emplace_back("wakeup_latency_ns",
                                start.monotonic_ns - start.aux_ns);
          if (!timer) {
            run.args.emplace_back("queue_index", start.queue_index);
            if (auto from = remote.find(event.index); from != remote.end()) {
              run.args.emplace_back("remote_queue_index", from->second.first);
              run.args.emplace_back("remote_sent_ns", from->second.second);
              remote.erase(from);
            }
            if (name != callbacks.end() && name->second->channel >= 0) {
              receives.emplace_back(pid, run.tid, start.monotonic_ns,
                                    name->second->channel, start.queue_index);
            }
          }
          trace.events.push_back(std::move(run));
          break;
        }
        case EventKind::kSend:
          if (!InWindow(window, event.monotonic_ns)) break;
          trace.events.push_back(Instant(
              StrCat("send ", channel_name(event.index)), pid, current_tid,
              event.monotonic_ns, "queue_index", event.queue_index));
          // Exact, for flows across nodes (ts is a fraction of us).
          trace.events.back().args.emplace_back("sent_ns", event.monotonic_ns);
          sends[{event.index, event.queue_index}] =
              SendSite{pid, current_tid, event.monotonic_ns};
          break;
        case EventKind::kLost:
          if (!InWindow(window, event.monotonic_ns)) break;
          trace.events.push_back(Instant(
              StrCat("lost ", channel_name(event.index)), pid, current_tid,
              event.monotonic_ns, "count", event.queue_index));
          break;
        case EventKind::kMissedCycles:
          if (!InWindow(window, event.monotonic_ns)) break;
          trace.events.push_back(Instant("missed cycles", pid, event.index + 1,
                                         event.monotonic_ns, "count",
                                         event.queue_index));
          break;
        case EventKind::kTrigger:
          if (!InWindow(window, event.monotonic_ns)) break;
          trace.events.push_back(Instant(
              StrCat("trigger: ", TriggerReasonName(static_cast<TriggerReason>(
                                      event.queue_index))),
              pid, current_tid, event.monotonic_ns, "value", event.aux_ns));
          break;
        case EventKind::kRemoteReceive:
          remote[event.index] = {event.queue_index, event.aux_ns};
          break;
        case EventKind::kNone:
          break;
      }
    }
  }
  uint64_t flow_id = 0;
  for (const auto& [pid, tid, ts_ns, channel, queue_index] : receives) {
    auto it = sends.find({channel, queue_index});
    if (it == sends.end()) continue;
    ++flow_id;
    AddFlow(flow_id, FlowEnd{it->second.pid, it->second.tid, it->second.ts_ns},
            FlowEnd{pid, tid, ts_ns}, &trace.events);
  }
  return trace;
}

std::string TraceJson(const Trace& trace) {
  JsonWriter json(1);
  json.BeginObject();
  json.Key("traceEvents").BeginArray();
  for (const TraceEvent& event : trace.events) {
    json.BeginObject();
    json.Key("ph").String(std::string_view(&event.phase, 1));
    json.Key("name").String(event.name);
    if (!event.category.empty()) json.Key("cat").String(event.category);
    json.Key("pid").Number(event.pid);
    json.Key("tid").Number(event.tid);
    if (event.phase != 'M') {
      json.Key("ts").Number(static_cast<double>(event.ts_ns) / 1e3);
    }
    if (event.phase == 'X') {
      json.Key("dur").Number(static_cast<double>(event.dur_ns) / 1e3);
    }
    if (event.phase == 'i') json.Key("s").String("t");
    if (event.phase == 's' || event.phase == 'f') {
      json.Key("id").Number(event.id);
      if (event.phase == 'f') json.Key("bp").String("e");
    }
    if (event.phase == 'M') {
      json.Key("args").BeginObject().Key("name").String(event.text_arg);
      json.EndObject();
    } else if (!event.args.empty()) {
      json.Key("args").BeginObject();
      for (const auto& [key, value] : event.args) json.Key(key).Number(value);
      json.EndObject();
    }
    json.EndObject();
  }
  json.EndArray();
  json.Key("displayTimeUnit").String("ns");
  json.Key("otherData").BeginObject();
  json.Key("reason").String(trace.info.reason);
  json.Key("node").String(trace.info.node);
  if (!trace.info.requested_by.empty()) {
    json.Key("requested_by").String(trace.info.requested_by);
    json.Key("requester_trigger_ns").Number(trace.info.requester_trigger_ns);
    json.Key("clock_offset_ns").Number(trace.info.clock_offset_ns);
    json.Key("clock_offset_uncertainty_ns")
        .Number(trace.info.clock_offset_uncertainty_ns);
  }
  json.Key("trigger_ns").Number(trace.info.trigger_ns);
  json.Key("window_begin_ns").Number(trace.window.begin_ns);
  json.Key("window_end_ns").Number(trace.window.end_ns);
  json.Key("suppressed_snapshots").Number(trace.info.suppressed);
  json.Key("torn_events").Number(trace.torn);
  json.Key("skipped_rings").BeginArray();
  for (const std::string& why : trace.info.skipped_rings) json.String(why);
  json.EndArray();
  if (!trace.info.merged.empty()) {
    json.Key("merged").BeginArray();
    for (const std::string& part : trace.info.merged) json.String(part);
    json.EndArray();
    json.Key("cross_node_flows").Number(trace.info.cross_node_flows);
  }
  if (trace.info.kernel_sched) {
    json.Key("kernel_sched_events").Number(trace.info.kernel_events);
    json.Key("kernel_events_overwritten").Number(trace.info.kernel_overwritten);
    json.Key("kernel_lines_unread").Number(trace.info.kernel_unparsed);
  }
  json.EndObject();
  json.EndObject();
  return json.Text();
}

}  // namespace aos::tracing
