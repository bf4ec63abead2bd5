#include "aos/tracing/sched_tracks.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "aos/util/str_cat.h"

namespace aos::tracing {
namespace {

// A task's time on one CPU.
struct Slice {
  SchedTask task;
  int64_t begin_ns;
  int64_t end_ns;
  // It left still runnable: something took the CPU from it.
  bool preempted;
  // No switch onto the CPU was recorded for it: `begin_ns` is its wakeup
  // or the CPU's last switch.
  bool inferred_start;
};

std::string SliceName(const SchedTask& task) {
  const std::string priority = UserPriority(task.prio);
  return StrCat(task.comm, " (pid ", task.pid,
                priority.empty() ? "" : StrCat(", ", priority), ")");
}

}  // namespace

void AddSchedTracks(const SchedText& sched, int64_t recorded_since_ns,
                    const std::vector<int>& loop_pids, Trace* trace) {
  const TraceWindow window = trace->window;
  const std::set<int> loops(loop_pids.begin(), loop_pids.end());
  // Per CPU, in time order: the slices, and the wakeups of loops.
  std::map<int, std::vector<Slice>> slices;
  std::map<int, std::vector<const SchedEvent*>> wakeups;
  // Per CPU: the task on it since when (from the last switch seen).
  std::map<int, std::pair<SchedTask, int64_t>> running;
  std::vector<const SchedEvent*> ordered;
  for (const SchedEvent& event : sched.events) ordered.push_back(&event);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const SchedEvent* a, const SchedEvent* b) {
                     return a->monotonic_ns < b->monotonic_ns;
                   });
  uint64_t in_window = 0;
  // Per CPU: the last time each task was woken to run there.
  std::map<int, std::map<int, int64_t>> woken;
  for (const SchedEvent* event : ordered) {
    if (event->monotonic_ns >= window.begin_ns &&
        event->monotonic_ns <= window.end_ns) {
      ++in_window;
    }
    if (event->kind == SchedKind::kWakeup) {
      woken[event->cpu][event->next.pid] = event->monotonic_ns;
      if (loops.contains(event->next.pid)) {
        wakeups[event->cpu].push_back(event);
      }
      continue;
    }
    if (event->prev.pid != 0) {
      // When the leaving task came on: the switch that brought it, or, if
      // none was recorded (some kernels trace no switch out of the idle
      // task), its wakeup to this CPU since the last switch, or else that
      // switch, or the recording's start.
      auto it = running.find(event->cpu);
      std::optional<int64_t> begin;
      bool inferred = true;
      if (it != running.end() && it->second.first.pid == event->prev.pid) {
        begin = it->second.second;
        inferred = false;
      } else {
        const int64_t since = it != running.end()     ? it->second.second
                              : sched.overwritten > 0 ? event->monotonic_ns
                                                      : recorded_since_ns;
        begin = since;
        const std::map<int, int64_t>& cpu_woken = woken[event->cpu];
        auto wakeup = cpu_woken.find(event->prev.pid);
        if (wakeup != cpu_woken.end() && wakeup->second >= since) {
          begin = wakeup->second;
        }
      }
      if (*begin < event->monotonic_ns) {
        slices[event->cpu].push_back(Slice{event->prev, *begin,
                                           event->monotonic_ns,
                                           event->prev_state == "R", inferred});
      }
    }
    running[event->cpu] = {event->next, event->monotonic_ns};
  }
  // Whatever runs at the end ran to the window's end (the rings and the
  // kernel are read after it).
  for (const auto& [cpu, task_since] : running) {
    if (task_since.first.pid != 0 && task_since.second < window.end_ns) {
      slices[cpu].push_back(Slice{task_since.first, task_since.second,
                                  window.end_ns, false, false});
    }
  }
  // The CPUs a loop ran on in the window; all if none did.
  std::set<int> cpus;
  for (const auto& [cpu, list] : slices) {
    for (const Slice& slice : list) {
      if (loops.contains(slice.task.pid) && slice.end_ns >= window.begin_ns &&
          slice.begin_ns <= window.end_ns) {
        cpus.insert(cpu);
      }
    }
  }
  if (cpus.empty()) {
    for (const auto& [cpu, list] : slices) cpus.insert(cpu);
  }
  int pid = 1;
  for (const TraceEvent& event : trace->events)
    pid = std::max(pid, event.pid + 1);
  trace->events.push_back(Metadata("process_name", pid, 0, "kernel: CPUs"));
  for (const int cpu : cpus) {
    const int tid = cpu + 1;
    trace->events.push_back(
        Metadata("thread_name", pid, tid, StrCat("CPU ", cpu)));
    for (const Slice& slice : slices[cpu]) {
      const int64_t begin = std::max(slice.begin_ns, window.begin_ns);
      const int64_t end = std::min(slice.end_ns, window.end_ns);
      if (end < begin) continue;
      TraceEvent event;
      event.phase = 'X';
      event.name = SliceName(slice.task);
      event.category = "sched";
      event.pid = pid;
      event.tid = tid;
      event.ts_ns = begin;
      event.dur_ns = end - begin;
      event.args = {{"pid", slice.task.pid},
                    {"kernel_prio", slice.task.prio},
                    {"preempted", slice.preempted ? 1 : 0},
                    {"inferred_start", slice.inferred_start ? 1 : 0}};
      trace->events.push_back(std::move(event));
    }
    for (const SchedEvent* wakeup : wakeups[cpu]) {
      if (wakeup->monotonic_ns < window.begin_ns ||
          wakeup->monotonic_ns > window.end_ns) {
        continue;
      }
      TraceEvent event;
      event.phase = 'i';
      event.name = StrCat("wakeup ", wakeup->next.comm);
      event.category = "sched";
      event.pid = pid;
      event.tid = tid;
      event.ts_ns = wakeup->monotonic_ns;
      event.args = {{"pid", wakeup->next.pid}};
      trace->events.push_back(std::move(event));
    }
  }
  trace->info.kernel_sched = true;
  trace->info.kernel_events = in_window;
  trace->info.kernel_overwritten = sched.overwritten;
  trace->info.kernel_unparsed = static_cast<uint64_t>(sched.unparsed);
}

}  // namespace aos::tracing
