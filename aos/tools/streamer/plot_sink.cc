#include "aos/tools/streamer/plot_sink.h"

#include <algorithm>
#include <iostream>

#include "aos/events/timing_report_format.h"
#include "aos/tools/latency_plot.h"
#include "aos/util/str_cat.h"

namespace aos::streamer {

absl::Status PlotSink::Finish(
    const std::vector<timing::ReportContents>& summaries) {
  std::vector<std::string> names;
  double seconds = 0;
  for (const auto& summary : summaries) {
    names.push_back(summary.header.name);
    seconds = std::max(seconds, summary.header.window_ns() / 1e9);
  }
  const std::string what =
      StrCat(StrJoin(names, ", "), ", ",
             FormatDuration(seconds * 1e6, TimeUnit::kMilliseconds), " s");
  if (absl::Status plotted =
          WriteLatencyPlot(summaries, *configuration_, path_,
                           StrCat("aos wakeup latency: ", what));
      !plotted.ok()) {
    return plotted;
  }
  std::cerr << "aos_timing_report_streamer: wrote " << path_ << "\n";
  // Path ages, often far longer than wakeups, in a plot of their own.
  const std::vector<PlottedLatency> ages = PathAges(summaries, directory_);
  if (ages.empty()) return absl::OkStatus();
  const std::string path_plot = PathPlotFile(path_);
  if (absl::Status aged = WriteLatencyPlot(
          ages, path_plot, StrCat("aos path age: ", what), kPathAgeAxis);
      !aged.ok()) {
    return aged;
  }
  std::cerr << "aos_timing_report_streamer: wrote " << path_plot << "\n";
  return absl::OkStatus();
}

}  // namespace aos::streamer
