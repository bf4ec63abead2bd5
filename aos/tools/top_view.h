#ifndef AOS_TOOLS_TOP_VIEW_H_
#define AOS_TOOLS_TOP_VIEW_H_

// One screen of `aos_timing_report_streamer --top`, like top(1): the latest
// report window of every application, one row per callback, the slowest
// (by p99 wakeup latency) first, with a mark where the
// --max_wakeup_latency_us gate would fail; then, when watchers or fetchers
// report paths, one row per path, the oldest (by max age) first, marked
// where --max_path_age_us would fail. Plain text, fitted to a terminal's
// width and height; the streamer clears the terminal with ANSI codes before
// each screen (only when stdout is one), so it works over ssh without
// curses.
//
//   const Terminal terminal = QueryTerminal(STDOUT_FILENO);
//   std::cout << kClearScreen
//             << RenderTop(latest, config,
//                          {.width = terminal.columns, .height =
//                          terminal.rows});

#include <string>
#include <string_view>
#include <vector>

#include "aos/configuration_generated.h"
#include "aos/events/path_directory.h"
#include "aos/events/timing_report_codec.h"
#include "aos/events/timing_report_format.h"

namespace aos {

struct TopOptions {
  TimeUnit unit = TimeUnit::kMicroseconds;
  // Rows over it are marked "!" (0: no gate).
  double gate_us = 0;
  // At most this many callback rows (the slowest), and as many path rows
  // (the oldest); 0: all.
  size_t max_rows = 0;
  // Names paths by their routes (null: by origin id and hops).
  const PathDirectory* directory = nullptr;
  // Paths whose max age is over it are marked "!" (0: no gate).
  double path_gate_us = 0;
  // The terminal's width: rows are fitted to width - 1 columns (so that
  // none wraps), the names taking what the figures leave and cut in the
  // middle, keeping both ends ("messa... pi1" and "messa... pi2" stay
  // apart); 0 (unknown) or 120 and more: the 120-column layout. Below 67
  // the names keep 8 and 10 columns and rows are wider than the terminal.
  int width = 0;
  // The terminal's height: the screen keeps to height - 1 lines, the last
  // saying how many were left out (0: no limit).
  int height = 0;
};

// The screen for the latest window of each application in `latest`.
std::string RenderTop(const std::vector<timing::ReportContents>& latest,
                      const Configuration& config, const TopOptions& options);

}  // namespace aos

#endif  // AOS_TOOLS_TOP_VIEW_H_
