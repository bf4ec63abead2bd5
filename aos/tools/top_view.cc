#include "aos/tools/top_view.h"

#include <algorithm>
#include <cmath>
#include <sstream>

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

}  // namespace

std::string RenderTop(const std::vector<timing::ReportContents>& latest,
                      const Configuration& config, const TopOptions& options) {
  std::vector<Row> rows;
  for (const timing::ReportContents& report : latest) {
    const std::string application =
        StrCat(report.header.name, "[", report.header.pid, "]",
               report.header.node.empty() ? "" : " on ", report.header.node);
    auto add = [&](std::string callback, uint64_t count,
                   const timing::LatencyRecorder& latency,
                   uint64_t missed_or_lost) {
      rows.push_back({application, std::move(callback), count,
                      Percentile(latency, 50), Percentile(latency, 99),
                      Max(latency), missed_or_lost});
    };
    for (const timing::TimerTiming& t : report.timers) {
      add(StrCat("timer ", t.name), t.count, t.wakeup_latency, t.missed_cycles);
    }
    for (const timing::TimerTiming& t : report.phased_loops) {
      add(StrCat("phased loop ", t.name), t.count, t.wakeup_latency,
          t.missed_cycles);
    }
    for (const timing::WatcherTiming& w : report.watchers) {
      add(StrCat("watcher ", DescribeChannel(config, w.channel_index)), w.count,
          w.wakeup_latency, w.lost_messages);
    }
    for (const timing::FetcherTiming& f : report.fetchers) {
      add(StrCat("fetcher ", DescribeChannel(config, f.channel_index)), f.count,
          f.latency, f.lost_messages);
    }
  }
  // Slowest first; callbacks without samples last.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    const double pa = std::isnan(a.p99_ns) ? -1 : a.p99_ns;
    const double pb = std::isnan(b.p99_ns) ? -1 : b.p99_ns;
    return pa > pb;
  });
  size_t over_gate = 0;
  for (const Row& row : rows) {
    if (options.gate_us > 0 && row.max_ns > options.gate_us * 1e3) ++over_gate;
  }
  std::ostringstream out;
  out << "aos top: " << latest.size() << " applications, " << rows.size()
      << " callbacks; the latest report window of each, slowest p99 first; "
      << "wakeup latency in " << TimeUnitName(options.unit) << "\n";
  if (options.gate_us > 0) {
    out << "gate --max_wakeup_latency_us=" << options.gate_us << ": "
        << (over_gate == 0 ? std::string("every callback within it")
                           : StrCat(over_gate, " callback",
                                    over_gate == 1 ? "" : "s", " over it (!)"))
        << "\n";
  }
  out << "\n";
  // Columns fit 120 characters: the names get what the numbers leave.
  constexpr size_t kApplication = 24;
  constexpr size_t kCallback = 46;
  auto fit = [](const std::string& text, size_t width) {
    if (text.size() <= width)
      return text + std::string(width - text.size(), ' ');
    return text.substr(0, width - 3) + "...";
  };
  auto right = [](const std::string& text, size_t width) {
    return text.size() >= width ? text
                                : std::string(width - text.size(), ' ') + text;
  };
  out << "  " << fit("application", kApplication) << " "
      << fit("callback", kCallback) << right("count", 7) << right("p50", 8)
      << right("p99", 8) << right("max", 8) << right("missed/lost", 12) << "\n";
  size_t shown = 0;
  for (const Row& row : rows) {
    if (options.max_rows > 0 && shown++ >= options.max_rows) {
      out << "  ... " << rows.size() - options.max_rows << " more\n";
      break;
    }
    const bool over = options.gate_us > 0 && row.max_ns > options.gate_us * 1e3;
    out << (over ? "! " : "  ") << fit(row.application, kApplication) << " "
        << fit(row.callback, kCallback) << right(StrCat(row.count), 7)
        << right(FormatDuration(row.p50_ns, options.unit), 8)
        << right(FormatDuration(row.p99_ns, options.unit), 8)
        << right(FormatDuration(row.max_ns, options.unit), 8)
        << right(StrCat(row.missed_or_lost), 12) << "\n";
  }
  return out.str();
}

}  // namespace aos
