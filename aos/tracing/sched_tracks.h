#ifndef AOS_TRACING_SCHED_TRACKS_H_
#define AOS_TRACING_SCHED_TRACKS_H_

// The kernel scheduler's view of a snapshot's window, added to its Chrome
// trace: one process, "kernel: CPUs", with one track per CPU an event loop
// ran on in the window, holding a complete event per stretch of time a task
// ran there ("python3 (pid 77, rtprio 50)"; idle time is left empty; a
// stretch whose start no switch recorded, as after the idle task on some
// kernels, starts at the task's wakeup and says `inferred_start`), and
// an instant "wakeup <comm>" where the kernel woke a loop's thread. Beside
// the loops' tracks it shows what held the CPU while a loop waited.
//
//   SchedText sched = ParseSchedText(*recorder->ReadText());
//   AddSchedTracks(sched, recorder->started_ns(), loop_pids, &trace);

#include <cstdint>
#include <vector>

#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/sched_text.h"

namespace aos::tracing {

// Adds the tracks for `trace->window` and fills `trace->info`'s kernel
// figures. `recorded_since_ns`: when the kernel started recording (a task
// already running then starts there, or where the buffer's oldest event on
// that CPU is, if the buffer overwrote older ones). `loop_pids`: the loops'
// threads; with none of them running in the window, every CPU gets a track.
void AddSchedTracks(const SchedText& sched, int64_t recorded_since_ns,
                    const std::vector<int>& loop_pids, Trace* trace);

}  // namespace aos::tracing

#endif  // AOS_TRACING_SCHED_TRACKS_H_
