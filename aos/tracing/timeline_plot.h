#ifndef AOS_TRACING_TIMELINE_PLOT_H_
#define AOS_TRACING_TIMELINE_PLOT_H_

// A snapshot (chrome_trace.h's JSON) drawn as a timeline PNG, for a page or
// a bug report where a trace viewer is not at hand: one row per track
// ("ping: timer ping", "kernel: CPUs: CPU 1"), a bar per handler run or
// stretch a task ran (in its loop's colour; other tasks grey), a dot per
// instant event (sends, wakeups, triggers), the time axis in ms from the
// trigger (the window's start for a command's snapshot), the trigger a dashed
// line, and bars wide enough named inside.
//
//   absl::StatusOr<Timeline> timeline = ReadTimeline("aos_trace.1.json");
//   absl::Status status = WriteTimelinePlot(*timeline, "t.png", -30, 2);
//
// Drawn by gnuplot (Debian's gnuplot-nox), run as a child process. Not for
// realtime code.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "aos/tracing/chrome_trace.h"

namespace aos::tracing {

struct TimelineBar {
  int row = 0;
  // Microseconds of the loops' monotonic clock.
  double begin_us = 0;
  double end_us = 0;
  std::string name;
  // The process whose colour it gets (row_process's numbering): its row's,
  // or, for a kernel CPU's stretch, the loop's whose thread ran; -1 for any
  // other task (grey).
  int process = 0;
};

struct TimelineMark {
  int row = 0;
  double at_us = 0;
  std::string name;
};

struct Timeline {
  // Row labels, top to bottom: "<process>: <track>".
  std::vector<std::string> rows;
  // The row's process, for its colour (0, 1, ... in the file's order).
  std::vector<int> row_process;
  std::vector<TimelineBar> bars;
  std::vector<TimelineMark> marks;
  // Time zero of the axis (the trigger, else the window's start), in us.
  double zero_us = 0;
  double window_begin_us = 0;
  double window_end_us = 0;
  // "ping: wakeup latency".
  std::string reason;
};

// Reads a snapshot written by aos_trace (chrome_trace_reader.h). An
// error names the file and what in it is missing or not a snapshot.
absl::StatusOr<Timeline> ReadTimeline(const std::string& path);

// The timeline of `trace`.
Timeline TimelineOf(const Trace& trace);

// The gnuplot script that draws `timeline` from `from_ms` to `to_ms` (ms
// from its zero) into `png_path`; NaN for either: the window's edge.
std::string TimelineScript(const Timeline& timeline,
                           const std::string& png_path, double from_ms,
                           double to_ms);

// Draws `timeline` into `png_path` with gnuplot. An error names the PNG and
// why (gnuplot missing or failing, an empty range).
absl::Status WriteTimelinePlot(const Timeline& timeline,
                               const std::string& png_path, double from_ms,
                               double to_ms);

}  // namespace aos::tracing

#endif  // AOS_TRACING_TIMELINE_PLOT_H_
