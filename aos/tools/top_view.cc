#include "aos/tools/top_view.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "aos/util/display_width.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

struct Row {
  std::string application;
  std::string callback;
  uint64_t count = 0;
  double p50_ns = NAN;
  double p99_ns = NAN;
  double max_ns = NAN;
  uint64_t missed_or_lost = 0;
};

struct PathRow {
  std::string route;
  uint64_t count = 0;
  double p50_ns = NAN;
  double p99_ns = NAN;
  double max_ns = NAN;
  // "-" without a deadline.
  std::string overruns;
};

// Columns fit 120 characters: the names get what the numbers leave.
constexpr size_t kApplication = 24;
constexpr size_t kCallback = 46;
// "! " before the names, a space between them, and the figures after:
// count 7, p50, p99 and max 8 each, missed/lost 12.
constexpr size_t kFigures = 43;
constexpr size_t kFixed = 2 + 1 + kFigures;
// The least the names are cut to.
constexpr size_t kMinApplication = 8;
constexpr size_t kMinCallback = 10;

// `text` in exactly `width` columns: cut in its middle (both ends say the
// most: a node's name, a pid), or padded.
std::string Fit(const std::string& text, size_t width) {
  const std::string fitted = FitDisplayWidth(text, width);
  return fitted +
         std::string(width - std::min(width, DisplayWidth(fitted)), ' ');
}

std::string Right(const std::string& text, size_t width) {
  return text.size() >= width ? text
                              : std::string(width - text.size(), ' ') + text;
}

// Whether `max_ns` is over a gate of `gate_us` (0: none).
bool Over(double max_ns, double gate_us) {
  return gate_us > 0 && max_ns > gate_us * 1e3;
}

// "gate --flag=N: every callback within it", or how many are over it.
std::string GateLine(std::string_view flag, double gate_us, size_t over,
                     std::string_view what) {
  return StrCat(
      "gate --", flag, "=", gate_us, ": ",
      over == 0 ? StrCat("every ", what, " within it")
                : StrCat(over, " ", what, over == 1 ? "" : "s", " over it (!)"),
      "\n");
}

double Percentile(const timing::LatencyRecorder& latency, double percentile) {
  return latency.histogram().count() == 0
             ? NAN
             : static_cast<double>(
                   latency.histogram().PercentileNs(percentile));
}

double Max(const timing::LatencyRecorder& latency) {
  if (latency.histogram().count() > 0) {
    return static_cast<double>(latency.histogram().max_ns());
  }
  return latency.statistic().max() * 1e9;  // NaN without samples.
}

// `screen` in at most height - 1 lines (0: all of it), the last of them
// saying how many were left out, so that a redraw never scrolls.
std::string KeepTo(const std::string& screen, int height) {
  if (height <= 0) return screen;
  const size_t keep = static_cast<size_t>(std::max(2, height - 1));
  std::vector<size_t> line_ends;
  for (size_t i = 0; i < screen.size(); ++i) {
    if (screen[i] == '\n') line_ends.push_back(i);
  }
  if (line_ends.size() <= keep) return screen;
  return StrCat(screen.substr(0, line_ends[keep - 2] + 1), "  ... ",
                line_ends.size() - (keep - 1),
                " more lines: a taller terminal shows them\n");
}

}  // namespace

std::string RenderTop(const std::vector<timing::ReportContents>& latest,
                      const Configuration& config, const TopOptions& options) {
  std::vector<Row> rows;
  for (const timing::ReportContents& report : latest) {
    // Names come from whoever sent the report: never raw to the terminal.
    const std::string application =
        StrCat(InlinePrintable(report.header.name), "[", report.header.pid, "]",
               report.header.node.empty() ? "" : " on ",
               InlinePrintable(report.header.node));
    auto add = [&](std::string callback, uint64_t count,
                   const timing::LatencyRecorder& latency,
                   uint64_t missed_or_lost) {
      rows.push_back({application, std::move(callback), count,
                      Percentile(latency, 50), Percentile(latency, 99),
                      Max(latency), missed_or_lost});
    };
    for (const timing::TimerTiming& t : report.timers) {
      add(StrCat("timer ", InlinePrintable(t.name)), t.count, t.wakeup_latency,
          t.missed_cycles);
    }
    for (const timing::TimerTiming& t : report.phased_loops) {
      add(StrCat("phased loop ", InlinePrintable(t.name)), t.count,
          t.wakeup_latency, t.missed_cycles);
    }
    for (const timing::WatcherTiming& w : report.watchers) {
      add(StrCat("watcher ",
                 InlinePrintable(DescribeChannel(config, w.channel_index))),
          w.count, w.wakeup_latency, w.lost_messages);
    }
    for (const timing::FetcherTiming& f : report.fetchers) {
      add(StrCat("fetcher ",
                 InlinePrintable(DescribeChannel(config, f.channel_index))),
          f.count, f.latency, f.lost_messages);
    }
  }
  // Slowest first; callbacks without samples last.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    const double pa = std::isnan(a.p99_ns) ? -1 : a.p99_ns;
    const double pb = std::isnan(b.p99_ns) ? -1 : b.p99_ns;
    return pa > pb;
  });
  std::vector<PathRow> paths;
  for (const timing::ReportContents& report : latest) {
    for (const ReportPath& path : PathsOf(report)) {
      const timing::LatencyRecorder& age = path.path->age;
      paths.push_back({DescribePath(options.directory, report.header, path),
                       path.path->count(), Percentile(age, 50),
                       Percentile(age, 99), Max(age),
                       path.entry->deadline_ns() > 0
                           ? StrCat(path.path->deadline_overruns)
                           : "-"});
    }
  }
  // Oldest first; paths without samples last.
  std::stable_sort(paths.begin(), paths.end(),
                   [](const PathRow& a, const PathRow& b) {
                     const double ma = std::isnan(a.max_ns) ? -1 : a.max_ns;
                     const double mb = std::isnan(b.max_ns) ? -1 : b.max_ns;
                     return ma > mb;
                   });
  size_t over_gate = 0;
  for (const Row& row : rows) over_gate += Over(row.max_ns, options.gate_us);
  size_t paths_over_gate = 0;
  for (const PathRow& row : paths) {
    paths_over_gate += Over(row.max_ns, options.path_gate_us);
  }
  // The names share what the figures leave of width - 1 columns.
  size_t application_width = kApplication;
  size_t callback_width = kCallback;
  const size_t usable = options.width > 0 ? options.width - 1 : 0;
  if (options.width > 0 && usable < kFixed + kApplication + kCallback) {
    const size_t names = usable > kFixed + kMinApplication + kMinCallback
                             ? usable - kFixed
                             : kMinApplication + kMinCallback;
    // The application's names get what they need, or at least half: an
    // application's name ends with its node, which tells two bridges
    // apart, and a callback's with its type.
    size_t widest_application = DisplayWidth("application");
    size_t widest_callback = DisplayWidth("callback");
    for (const Row& row : rows) {
      widest_application =
          std::max(widest_application, DisplayWidth(row.application));
      widest_callback = std::max(widest_callback, DisplayWidth(row.callback));
    }
    const size_t left_by_callbacks =
        names > widest_callback ? names - widest_callback : 0;
    application_width = std::max(
        kMinApplication,
        std::min(widest_application, std::max(names / 2, left_by_callbacks)));
    callback_width = std::max(kMinCallback, names - application_width);
  }
  const size_t route_width = application_width + 1 + callback_width;
  std::ostringstream out;
  const std::string heading =
      StrCat("aos top: ", latest.size(), " applications, ", rows.size(),
             " callbacks; the latest report window of each, slowest p99 "
             "first; wakeup latency in ",
             TimeUnitName(options.unit));
  if (usable == 0 || DisplayWidth(heading) <= usable) {
    out << heading << "\n";
  } else {
    out << "aos top: " << latest.size() << " applications, " << rows.size()
        << " callbacks, slowest p99 first, " << TimeUnitName(options.unit)
        << "\n";
  }
  if (options.gate_us > 0) {
    out << GateLine("max_wakeup_latency_us", options.gate_us, over_gate,
                    "callback");
  }
  if (options.path_gate_us > 0) {
    out << GateLine("max_path_age_us", options.path_gate_us, paths_over_gate,
                    "path");
  }
  out << "\n";
  // The figures of a row, after its names.
  auto figures = [&](uint64_t count, double p50_ns, double p99_ns,
                     double max_ns, const std::string& last) {
    return StrCat(
        Right(StrCat(count), 7), Right(FormatDuration(p50_ns, options.unit), 8),
        Right(FormatDuration(p99_ns, options.unit), 8),
        Right(FormatDuration(max_ns, options.unit), 8), Right(last, 12), "\n");
  };
  auto more = [&](size_t* shown, size_t total) {
    if (options.max_rows == 0 || (*shown)++ < options.max_rows) return false;
    out << "  ... " << total - options.max_rows << " more\n";
    return true;
  };
  out << "  " << Fit("application", application_width) << " "
      << Fit("callback", callback_width) << Right("count", 7) << Right("p50", 8)
      << Right("p99", 8) << Right("max", 8) << Right("missed/lost", 12) << "\n";
  size_t shown = 0;
  for (const Row& row : rows) {
    if (more(&shown, rows.size())) break;
    out << (Over(row.max_ns, options.gate_us) ? "! " : "  ")
        << Fit(row.application, application_width) << " "
        << Fit(row.callback, callback_width)
        << figures(row.count, row.p50_ns, row.p99_ns, row.max_ns,
                   StrCat(row.missed_or_lost));
  }
  if (paths.empty()) return KeepTo(out.str(), options.height);
  out << "\n  " << paths.size() << (paths.size() == 1 ? " path" : " paths")
      << ": age of the data at callback start, oldest max first\n"
      << "  " << Fit("route", route_width) << Right("count", 7)
      << Right("p50", 8) << Right("p99", 8) << Right("max", 8)
      << Right("overruns", 12) << "\n";
  shown = 0;
  for (const PathRow& row : paths) {
    if (more(&shown, paths.size())) break;
    out << (Over(row.max_ns, options.path_gate_us) ? "! " : "  ")
        << Fit(row.route, route_width)
        << figures(row.count, row.p50_ns, row.p99_ns, row.max_ns, row.overruns);
  }
  return KeepTo(out.str(), options.height);
}

}  // namespace aos
