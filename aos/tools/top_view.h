#ifndef AOS_TOOLS_TOP_VIEW_H_
#define AOS_TOOLS_TOP_VIEW_H_

// One screen of `aos_timing_report_streamer --top`, like top(1): the latest
// report window of every application, one row per callback, the slowest
// (by p99 wakeup latency) first, with a mark where the
// --max_wakeup_latency_us gate would fail; then, when watchers or fetchers
// report paths, one row per path, the oldest (by max age) first, marked
// where --max_path_age_us would fail. Plain text; the streamer clears the
// terminal with ANSI codes before each screen, so it works over ssh without
// curses.
//
//   std::cout << kClearScreen << RenderTop(latest, config, options);

#include <string>
#include <string_view>
#include <vector>

#include "aos/configuration_generated.h"
#include "aos/events/path_directory.h"
#include "aos/events/timing_report_codec.h"
#include "aos/events/timing_report_format.h"

namespace aos {

// Cursor home, then clear the screen (ANSI).
inline constexpr std::string_view kClearScreen = "\x1b[H\x1b[2J";

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
};

// The screen for the latest window of each application in `latest`.
std::string RenderTop(const std::vector<timing::ReportContents>& latest,
                      const Configuration& config, const TopOptions& options);

}  // namespace aos

#endif  // AOS_TOOLS_TOP_VIEW_H_
