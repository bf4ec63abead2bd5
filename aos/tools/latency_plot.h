#ifndef AOS_TOOLS_LATENCY_PLOT_H_
#define AOS_TOOLS_LATENCY_PLOT_H_

// The accumulated wakeup-latency histograms of timers, phased loops and
// watchers as one PNG, OSADL style: latency in us on a linear x axis,
// samples on a logarithmic y axis (a bucket with one sample still shows),
// one colour per callback with its p50, p99 and max in the legend, and
// each maximum marked, at the right edge with its value when it lies beyond
// the range that shows the distribution. The ages of the paths of watchers
// and fetchers are drawn the same way, into a PNG of their own (ages are
// often much longer than wakeup latencies and would squeeze them).
//
//   absl::Status status = WriteLatencyPlot(summaries, config, "run.png",
//                                          "ping and pong, 10 s");
//   status = WriteLatencyPlot(PathAges(summaries, &directory),
//                             PathPlotFile("run.png"), "ping and pong",
//                             kPathAgeAxis);
//
// Drawn by gnuplot (Debian's gnuplot-nox), run as a child process. Not for
// realtime code.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/path_directory.h"
#include "aos/events/timing_report_codec.h"

namespace aos {

// One curve: a callback's wakeup latencies.
struct PlottedLatency {
  // "ping[123] timer ping", "pong[124] watcher /test aos.examples.Ping".
  std::string label;
  timing::LatencyHistogram histogram;
};

// The wakeup-latency histograms (with samples) of every timer, phased loop
// and watcher of `reports`, but the loops' own "timing_reports" timers.
std::vector<PlottedLatency> WakeupLatencies(
    const std::vector<timing::ReportContents>& reports,
    const Configuration& config);

// The path ages (with samples) of every watcher and fetcher of `reports`,
// one curve per path: "ping[123] <route> (2 hops)", the route through
// `directory` (by origin id and hops when it is null).
std::vector<PlottedLatency> PathAges(
    const std::vector<timing::ReportContents>& reports,
    const PathDirectory* directory);

// Where the path ages go beside the wakeup latencies' `png_path`:
// "run.png" -> "run_paths.png" ("plot" -> "plot_paths.png").
std::string PathPlotFile(std::string_view png_path);

// The x axis' labels.
inline constexpr std::string_view kWakeupLatencyAxis = "wakeup latency (us)";
inline constexpr std::string_view kPathAgeAxis =
    "path age: callback start - origin time (us)";

// The upper end of the x axis, in us: the whole of every curve whose tail is
// short, else three times its 99th percentile, so the distribution fills
// the plot; samples beyond are counted and their maximum named at the
// edge.
double PlotRangeUs(const std::vector<PlottedLatency>& latencies);

// One box of a curve: samples between lower_us and upper_us.
struct PlotBox {
  double lower_us;
  double upper_us;
  uint64_t count;
};

// The width of the bins the narrow buckets of a plot of x range `range_us`
// are merged into: 1/500 of the range, at least 1 ns (1 us for the usual
// 500 us range, OSADL's bin).
double PlotBinUs(double range_us);

// `histogram`'s boxes: its buckets narrower than `bin_us` (below about 32
// bin widths: the histogram's buckets are 1 ns wide below 64 ns) merged
// into bins `bin_us` wide, so that a curve whose samples lie in hundreds of
// such buckets shows their mass; wider buckets as they are.
std::vector<PlotBox> PlotBoxes(const timing::LatencyHistogram& histogram,
                               double bin_us);

// The gnuplot script that draws `latencies` into `png_path`, reading each
// curve's boxes (PlotBoxes) from `data_path` (blocks of "lower_us upper_us
// count", one per curve, in order).
std::string LatencyPlotScript(const std::vector<PlottedLatency>& latencies,
                              std::string_view data_path,
                              std::string_view png_path, std::string_view title,
                              std::string_view x_axis = kWakeupLatencyAxis);

// Writes the data and script to a temporary directory and runs gnuplot.
// Errors name the PNG path and what failed (no gnuplot, nothing to plot,
// gnuplot's own message).
absl::Status WriteLatencyPlot(
    const std::vector<timing::ReportContents>& reports,
    const Configuration& config, const std::string& png_path,
    std::string_view title);

// The same for any latencies (a benchmark's, cyclictest's, path ages), one
// curve each, `x_axis` naming what they are.
absl::Status WriteLatencyPlot(const std::vector<PlottedLatency>& latencies,
                              const std::string& png_path,
                              std::string_view title,
                              std::string_view x_axis = kWakeupLatencyAxis);

}  // namespace aos

#endif  // AOS_TOOLS_LATENCY_PLOT_H_
