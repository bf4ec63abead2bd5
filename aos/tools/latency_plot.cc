#include "aos/tools/latency_plot.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "aos/events/timing_report_format.h"
#include "aos/util/gnuplot.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

// Distinct colours for up to ten curves, then round again.
double Us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// A round number at or above `value`: 1, 2 or 5 times a power of ten.
double NiceCeiling(double value) {
  if (value <= 0) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double step : {1.0, 2.0, 5.0, 10.0}) {
    if (step * power >= value) return step * power;
  }
  return 10 * power;
}

std::string Figure(double us) {
  return us >= 1000
             ? StrCat(FormatDuration(us * 1e3, TimeUnit::kMilliseconds), " ms")
             : StrCat(FormatDuration(us * 1e3, TimeUnit::kMicroseconds), " us");
}

}  // namespace

std::vector<PlottedLatency> WakeupLatencies(
    const std::vector<timing::ReportContents>& reports,
    const Configuration& config) {
  std::vector<PlottedLatency> latencies;
  for (const timing::ReportContents& report : reports) {
    // Names come from whoever sent the report.
    const std::string owner = StrCat(InlinePrintable(report.header.name), "[",
                                     report.header.pid, "]");
    auto add = [&](std::string what, const timing::LatencyRecorder& latency) {
      if (latency.histogram().count() == 0) return;
      latencies.push_back({StrCat(owner, " ", what), latency.histogram()});
    };
    for (const timing::TimerTiming& timer : report.timers) {
      // The loop's own report timer: a sample a second, noise on a plot of
      // the application's callbacks (the table shows it).
      if (timer.name == "timing_reports") continue;
      add(StrCat("timer ", InlinePrintable(timer.name)), timer.wakeup_latency);
    }
    for (const timing::TimerTiming& phased : report.phased_loops) {
      add(StrCat("phased loop ", InlinePrintable(phased.name)),
          phased.wakeup_latency);
    }
    for (const timing::WatcherTiming& watcher : report.watchers) {
      add(StrCat("watcher ", DescribeChannel(config, watcher.channel_index)),
          watcher.wakeup_latency);
    }
  }
  return latencies;
}

std::vector<PlottedLatency> PathAges(
    const std::vector<timing::ReportContents>& reports,
    const PathDirectory* directory) {
  std::vector<PlottedLatency> ages;
  for (const timing::ReportContents& report : reports) {
    for (const ReportPath& path : PathsOf(report)) {
      const timing::LatencyHistogram& histogram = path.path->age.histogram();
      if (histogram.count() == 0) continue;
      std::string label =
          StrCat(InlinePrintable(report.header.name), "[", report.header.pid,
                 "] ", DescribePath(directory, report.header, path));
      // Without a directory the hops are in the name already.
      if (directory != nullptr) {
        StrAppend(&label, " (", FormatHops(path.path->hops), ")");
      }
      ages.push_back({std::move(label), histogram});
    }
  }
  return ages;
}

std::string PathPlotFile(std::string_view png_path) {
  constexpr std::string_view kPng = ".png";
  if (png_path.size() >= kPng.size() &&
      png_path.substr(png_path.size() - kPng.size()) == kPng) {
    png_path.remove_suffix(kPng.size());
  }
  return StrCat(png_path, "_paths.png");
}

double PlotRangeUs(const std::vector<PlottedLatency>& latencies) {
  double range = 0;
  for (const PlottedLatency& latency : latencies) {
    // The whole curve if its tail is short; else three times its p99, so
    // the rare far samples do not squeeze the distribution into one column
    // (they are counted and their maximum named at the edge).
    const double max = Us(latency.histogram.max_ns());
    const double p99 = Us(latency.histogram.PercentileNs(99));
    range = std::max(range, std::min(max * 1.05, p99 * 3));
  }
  return NiceCeiling(range);
}

double PlotBinUs(double range_us) { return std::max(range_us / 500, 1e-3); }

std::vector<PlotBox> PlotBoxes(const timing::LatencyHistogram& histogram,
                               double bin_us) {
  std::vector<PlotBox> boxes;
  histogram.ForEachNonEmptyBucket(
      [&](size_t, int64_t lower, int64_t upper, uint64_t count) {
        const double lower_us = Us(lower);
        const double upper_us = Us(upper);
        if (upper_us - lower_us >= bin_us) {
          boxes.push_back({lower_us, upper_us, count});
          return;
        }
        // A narrow bucket counts in the bin its lower end falls in (buckets
        // come in order, so that bin is the last box or a new one).
        const double bin_lower = std::floor(lower_us / bin_us) * bin_us;
        if (!boxes.empty() && boxes.back().lower_us == bin_lower) {
          boxes.back().count += count;
        } else {
          boxes.push_back({bin_lower, bin_lower + bin_us, count});
        }
      });
  return boxes;
}

std::string LatencyPlotScript(const std::vector<PlottedLatency>& latencies,
                              std::string_view data_path,
                              std::string_view png_path, std::string_view title,
                              std::string_view x_axis) {
  const double range = PlotRangeUs(latencies);
  std::string script = StrCat(
      "set terminal png size 1200,700 noenhanced font ',10'\n", "set output ",
      GnuplotQuoted(png_path), "\n", "set title ", GnuplotQuoted(title), "\n",
      "set xlabel ", GnuplotQuoted(x_axis), "\n", "set ylabel ",
      GnuplotQuoted(StrCat("samples per bucket (buckets under ",
                           Figure(PlotBinUs(range)), " merged into ",
                           Figure(PlotBinUs(range)), " bins; log scale)")),
      "\n", "set logscale y\nset yrange [0.7:*]\n", "set xrange [0:", range,
      "]\n", "set grid\nset key below left Left reverse\n",
      // Room under the x label for one legend line per curve.
      "set bmargin ", latencies.size() + 4, "\n",
      "set style fill transparent solid 0.45 noborder\n");
  int beyond = 0;
  for (size_t i = 0; i < latencies.size(); ++i) {
    const std::string_view color = kPlotColors[i % std::size(kPlotColors)];
    const timing::LatencyHistogram& h = latencies[i].histogram;
    const double max = Us(h.max_ns());
    if (max <= range) {
      StrAppend(&script, "set arrow from ", max, ", graph 0 to ", max,
                ", graph 1 nohead dt 2 lw 1.5 lc rgb '", color, "'\n");
      continue;
    }
    // Far out: how many, and the farthest, at the right edge, one line per
    // curve.
    uint64_t far = 0;
    h.ForEachNonEmptyBucket([&](size_t, int64_t lower, int64_t, uint64_t n) {
      if (Us(lower) >= range) far += n;
    });
    StrAppend(&script, "set label ",
              GnuplotQuoted(StrCat(far, far == 1 ? " sample" : " samples",
                                   " beyond, max ", Figure(max), " ->")),
              " at graph 0.99, graph ", 0.95 - 0.05 * beyond, " right tc rgb '",
              color, "'\n");
    ++beyond;
  }
  script += "plot ";
  for (size_t i = 0; i < latencies.size(); ++i) {
    const timing::LatencyHistogram& h = latencies[i].histogram;
    const std::string legend =
        StrCat(latencies[i].label, ": p50 ", Figure(Us(h.PercentileNs(50))),
               ", p99 ", Figure(Us(h.PercentileNs(99))), ", max ",
               Figure(Us(h.max_ns())), " (", h.count(), " samples)");
    StrAppend(&script, i == 0 ? "" : ", \\\n     ", GnuplotQuoted(data_path),
              " index ", i, " using (($1+$2)/2):3:($2-$1) with boxes lc rgb '",
              kPlotColors[i % std::size(kPlotColors)], "' title ",
              GnuplotQuoted(legend));
  }
  script += "\n";
  return script;
}

absl::Status WriteLatencyPlot(
    const std::vector<timing::ReportContents>& reports,
    const Configuration& config, const std::string& png_path,
    std::string_view title) {
  const std::vector<PlottedLatency> latencies =
      WakeupLatencies(reports, config);
  if (latencies.empty()) {
    return absl::FailedPreconditionError(
        StrCat("nothing to plot in ", png_path,
               ": no timer or watcher of the selected reports ran"));
  }
  return WriteLatencyPlot(latencies, png_path, title);
}

absl::Status WriteLatencyPlot(const std::vector<PlottedLatency>& latencies,
                              const std::string& png_path,
                              std::string_view title, std::string_view x_axis) {
  if (latencies.empty()) {
    return absl::FailedPreconditionError(
        StrCat("nothing to plot in ", png_path, ": no latencies"));
  }
  char directory[] = "/tmp/aos_plot_XXXXXX";
  if (mkdtemp(directory) == nullptr) {
    return absl::InternalError(StrCat("cannot make a directory for ", png_path,
                                      ": ", strerror(errno)));
  }
  const std::string data_path = StrCat(directory, "/histograms.dat");
  {
    std::ofstream data(data_path);
    const double bin_us = PlotBinUs(PlotRangeUs(latencies));
    for (size_t i = 0; i < latencies.size(); ++i) {
      if (i > 0) data << "\n\n";
      for (const PlotBox& box : PlotBoxes(latencies[i].histogram, bin_us)) {
        data << box.lower_us << " " << box.upper_us << " " << box.count << "\n";
      }
    }
  }
  const absl::Status status = RunGnuplotScript(
      LatencyPlotScript(latencies, data_path, png_path, title, x_axis),
      png_path);
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
  return status;
}

}  // namespace aos
