#include "aos/events/timing_report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <sstream>

#include "aos/events/streamed_report_bfbs_generated.h"
#include "aos/events/streamed_report_generated.h"
#include "aos/events/timing_path.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/time/time.h"
#include "aos/util/display_width.h"
#include "aos/util/plain_table.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

using timing::LatencyHistogram;
using timing::LatencyRecorder;
using timing::ReportContents;
using timing::RunningStatistic;

// A table whose columns are right-aligned to their widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) {
    rows_.push_back(std::move(header));
  }
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  void Print(std::ostream* out) const {
    std::vector<size_t> widths(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size(); ++i)
        widths[i] = std::max(widths[i], row[i].size());
    }
    for (const auto& row : rows_) {
      *out << "   ";
      for (size_t i = 0; i < row.size(); ++i) {
        *out << (i == 0 ? " " : " | ")
             << std::string(widths[i] - row[i].size(), ' ') << row[i];
      }
      *out << "\n";
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// A double as AOS prints it (iostream defaults: 6 significant digits).
std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// A share of the window in %, to 3 significant digits.
std::string Percent(double part, double whole) {
  const double percent = whole > 0 ? 100.0 * part / whole : 0.0;
  // Never in scientific notation: a share too small for three decimals is
  // said so.
  if (percent > 0 && percent < 0.001) return "< 0.001";
  std::ostringstream out;
  out << std::setprecision(3) << percent;
  return out.str();
}

// Rounded to float first, as the report carries it.
std::string FormatStatistic(const RunningStatistic& statistic) {
  auto f = [](double value) { return Number(static_cast<float>(value)); };
  return StrCat(f(statistic.average()), " [", f(statistic.min()), ", ",
                f(statistic.max()), "] std ",
                f(statistic.standard_deviation()));
}

// p-th percentile in seconds; "-" without samples in the histogram.
std::string Percentile(const LatencyHistogram& histogram, double percentile) {
  if (histogram.count() == 0) return "-";
  return Number(static_cast<double>(histogram.PercentileNs(percentile)) * 1e-9);
}

// Which regime the figures come from: CPUs kept out of deep idle states by
// a PM QoS limit the loop held, or free to sleep; then, only where the loop
// used them, its busy-poll window (with the CPU it burned and the wakeups
// it served in the window), the CPUs its idle poller kept from halting, and
// how early it armed its timers (with the CPU spent spinning to their times
// and the timer wakeups that came early).
std::string WakeupRegimeText(const timing::ReportHeader& header) {
  std::string text =
      header.cpu_latency_limit_us < 0
          ? std::string("CPU wakeup limit: none")
          : StrCat("CPU wakeup limit: ", header.cpu_latency_limit_us, " us, ",
                   header.cpu_latency_limit_cpus == "all"
                       ? std::string("all CPUs")
                       : StrCat("CPUs ", header.cpu_latency_limit_cpus));
  if (header.busy_poll_us > 0) {
    StrAppend(
        &text, "; busy poll ", std::to_string(header.busy_poll_us), " us: ",
        Percent(static_cast<double>(header.busy_poll_ns), header.window_ns()),
        " % of the time polling, ", std::to_string(header.busy_poll_wakeups),
        " wakeups caught");
  }
  if (!header.idle_poll_cpus.empty()) {
    StrAppend(&text, "; idle poller on CPUs ", header.idle_poll_cpus);
  }
  if (header.timer_anticipation_auto || header.timer_anticipation_lead_ns > 0) {
    StrAppend(
        &text, "; timers armed ",
        Number(static_cast<double>(header.timer_anticipation_lead_ns) * 1e-3),
        " us early", header.timer_anticipation_auto ? " (auto)" : "", ": ",
        Percent(static_cast<double>(header.timer_anticipation_ns),
                header.window_ns()),
        " % of the time spinning, ", std::to_string(header.timer_wakeups_early),
        " of ", std::to_string(header.timer_wakeups), " timer wakeups early");
  }
  return text;
}

// "; shared memory damaged: N wakeups refused (forged or stale watcher
// registrations), M impossible sent times", or "" when the sender met none.
// When the window ended, for people: the time of day (UTC, to the
// millisecond) on the loop's realtime clock; a report without a realtime
// start (0) gets its monotonic time, in seconds.
std::string WindowEndText(const timing::ReportHeader& header) {
  const double end_ns =
      static_cast<double>(header.realtime_start_ns) + header.window_ns();
  // Before 1970 or past int64_t ns (2262): not a time of day to show.
  if (header.realtime_start_ns <= 0 || !(end_ns < 9e18)) {
    char text[64];
    snprintf(text, sizeof(text), "at %.3f s on its monotonic clock",
             static_cast<double>(header.monotonic_end_ns) * 1e-9);
    return text;
  }
  const int64_t end = static_cast<int64_t>(end_ns);
  const time_t seconds = static_cast<time_t>(end / 1000000000);
  std::tm utc;
  gmtime_r(&seconds, &utc);
  char text[64];
  snprintf(text, sizeof(text), "%02d:%02d:%02d.%03d UTC", utc.tm_hour,
           utc.tm_min, utc.tm_sec,
           static_cast<int>(end % 1000000000 / 1000000));
  return text;
}

std::string SharedMemoryDamage(const timing::SenderTiming& sender) {
  if (sender.refused_wakeups == 0 && sender.impossible_sent_times == 0) {
    return "";
  }
  return StrCat("; shared memory damaged: ", sender.refused_wakeups,
                " wakeups refused (forged or stale watcher registrations), ",
                sender.impossible_sent_times, " impossible sent times");
}

// A line saying how many queue files the loop re-opened, or "".
std::string ReopenedFiles(const timing::ReportHeader& header) {
  if (header.reopened_queue_files == 0) return "";
  return StrCat("  queue files deleted or replaced under it, re-opened: ",
                header.reopened_queue_files, "\n");
}

std::string ChannelName(const Configuration& config, int index) {
  const Channel* channel = ChannelAt(config, index);
  return channel == nullptr ? StrCat("<channel ", index, "?>")
                            : channel->name()->str();
}

std::string ChannelType(const Configuration& config, int index) {
  const Channel* channel = ChannelAt(config, index);
  return channel == nullptr ? "?" : channel->type()->str();
}

void PrintTimers(std::string_view title,
                 const std::vector<timing::TimerTiming>& timers,
                 std::ostream* out) {
  if (timers.empty()) return;
  *out << "  " << title << " (" << timers.size() << "):\n";
  Table table({"Name", "Count", "Wakeup Latency", "p50", "p99", "Handler Time",
               "p50", "p99", "Missed"});
  for (const timing::TimerTiming& timer : timers) {
    const LatencyRecorder& wakeup = timer.wakeup_latency;
    const LatencyRecorder& handler = timer.handler_time;
    table.AddRow(
        {InlinePrintable(timer.name), StrCat(timer.count),
         FormatStatistic(wakeup.statistic()),
         Percentile(wakeup.histogram(), 50), Percentile(wakeup.histogram(), 99),
         FormatStatistic(handler.statistic()),
         Percentile(handler.histogram(), 50),
         Percentile(handler.histogram(), 99), StrCat(timer.missed_cycles)});
  }
  table.Print(out);
}

std::string ReportOwner(const ReportContents& report) {
  return StrCat(InlinePrintable(report.header.name), "[", report.header.pid,
                "]");
}

// A timer, phased loop, watcher or fetcher with a latency, as the JSON
// lines and gnuplot tables name and read it.
struct LatencyEntry {
  std::string_view kind;  // "timer", "phased_loop", "watcher", "fetcher".
  std::string name;       // The timer's name or the channel's.
  std::string type;       // The channel's type; empty for timers.
  int channel_index = -1;
  // The wakeup latency (fetchers: the fetch latency).
  const LatencyRecorder* latency = nullptr;
  // Null for fetchers.
  const LatencyRecorder* handler = nullptr;
  // Null for timers and phased loops.
  const timing::PathTimings* paths = nullptr;
};

// Calls fn(const LatencyEntry&) for every watcher, fetcher, timer and
// phased loop, in that order.
template <typename F>
void ForEachLatencyEntry(const ReportContents& report,
                         const Configuration& config, F&& fn) {
  for (const timing::WatcherTiming& w : report.watchers) {
    fn(LatencyEntry{"watcher", ChannelName(config, w.channel_index),
                    ChannelType(config, w.channel_index), w.channel_index,
                    &w.wakeup_latency, &w.handler_time, &w.paths});
  }
  for (const timing::FetcherTiming& f : report.fetchers) {
    fn(LatencyEntry{"fetcher", ChannelName(config, f.channel_index),
                    ChannelType(config, f.channel_index), f.channel_index,
                    &f.latency, nullptr, &f.paths});
  }
  for (const auto& [kind, timers] :
       {std::pair{"timer", &report.timers},
        std::pair{"phased_loop", &report.phased_loops}}) {
    for (const timing::TimerTiming& t : *timers) {
      fn(LatencyEntry{kind, t.name, std::string(), -1, &t.wakeup_latency,
                      &t.handler_time, nullptr});
    }
  }
}

flatbuffers::Offset<timing::Percentiles> EncodePercentiles(
    flatbuffers::FlatBufferBuilder* fbb, const LatencyRecorder* latency) {
  if (latency == nullptr || latency->histogram().count() == 0) return {};
  const LatencyHistogram& histogram = latency->histogram();
  return timing::CreatePercentiles(
      *fbb, histogram.PercentileNs(50), histogram.PercentileNs(90),
      histogram.PercentileNs(99), histogram.PercentileNs(99.9),
      histogram.max_ns());
}

// The extremes of a latency in ns: the histogram's exact ones when it has
// the samples, else the statistic's.
double MinNs(const LatencyRecorder& latency) {
  return latency.histogram().count() > 0
             ? static_cast<double>(latency.histogram().min_ns())
             : latency.statistic().min() * 1e9;
}
double MaxNs(const LatencyRecorder& latency) {
  return latency.histogram().count() > 0
             ? static_cast<double>(latency.histogram().max_ns())
             : latency.statistic().max() * 1e9;
}
double PercentileNs(const LatencyRecorder& latency, double percentile) {
  if (latency.histogram().count() == 0) return NAN;
  return static_cast<double>(latency.histogram().PercentileNs(percentile));
}

// A row: name, count, wakeup (or fetch) latency figures, handler p50 and
// max, and the last column (missed or lost).
std::vector<std::string> CallbackRow(std::string name, uint64_t count,
                                     const LatencyRecorder& latency,
                                     const LatencyRecorder* handler,
                                     uint64_t missed_or_lost, TimeUnit unit) {
  auto d = [&](double ns) { return FormatDuration(ns, unit); };
  return {std::move(name),
          StrCat(count),
          d(MinNs(latency)),
          d(latency.statistic().average() * 1e9),
          d(PercentileNs(latency, 50)),
          d(PercentileNs(latency, 99)),
          d(PercentileNs(latency, 99.9)),
          d(MaxNs(latency)),
          handler == nullptr ? "-" : d(PercentileNs(*handler, 50)),
          handler == nullptr ? "-" : d(MaxNs(*handler)),
          StrCat(missed_or_lost)};
}

// The "paths" section of a table (docs/streamer.md): one row per path of
// a watcher or fetcher, figures first and the route last, then a line for
// each entry that dropped samples or met invalid origins. Nothing when the
// report has none of these.
void PrintPaths(const ReportContents& report, const Configuration& config,
                const PathDirectory* directory, TimeUnit unit,
                std::ostream* out) {
  const std::vector<ReportPath> paths = PathsOf(report);
  // The watchers and fetchers that dropped samples or met invalid origins.
  std::vector<std::string> troubles;
  for (const PathEntry& entry : PathEntriesOf(report)) {
    std::vector<std::string> counts;
    if (entry.paths->dropped_samples() > 0) {
      counts.push_back(StrCat(entry.paths->dropped_samples(),
                              " path samples dropped (more paths than ",
                              timing::kMaxPathsPerEntry, ")"));
    }
    if (entry.paths->invalid_origins() > 0) {
      counts.push_back(StrCat(entry.paths->invalid_origins(),
                              " invalid origins (damaged or forged)"));
    }
    if (counts.empty()) continue;
    troubles.push_back(StrCat("  ", entry.kind, " ",
                              DescribeChannel(config, entry.channel_index),
                              ": ", StrJoin(counts, ", "), "\n"));
  }
  if (paths.empty() && troubles.empty()) return;
  *out << "  paths: age of the data at callback start (callback start - "
          "origin time) in "
       << TimeUnitName(unit) << "\n";
  const bool deadlines = std::any_of(
      paths.begin(), paths.end(),
      [](const ReportPath& path) { return path.entry->deadline_ns() > 0; });
  const bool uncertainties = std::any_of(
      paths.begin(), paths.end(),
      [](const ReportPath& path) { return path.path->max_uncertainty_ns > 0; });
  // An empty first column indents the rows under the section's title.
  PlainTable table(PlainTable::LastColumn::kLeft);
  std::vector<std::string> header = {"", "hops", "count", "p50", "p99", "max"};
  if (deadlines) header.insert(header.end(), {"deadline", "overruns"});
  if (uncertainties) header.push_back("±");
  header.push_back("route");
  table.AddRow(std::move(header));
  auto d = [&](double ns) { return FormatDuration(ns, unit); };
  for (const ReportPath& path : paths) {
    const timing::PathTiming& p = *path.path;
    std::vector<std::string> row = {"",
                                    StrCat(p.hops),
                                    StrCat(p.count()),
                                    d(PercentileNs(p.age, 50)),
                                    d(PercentileNs(p.age, 99)),
                                    d(MaxNs(p.age))};
    if (deadlines) {
      const int64_t deadline = path.entry->deadline_ns();
      row.push_back(deadline > 0 ? d(static_cast<double>(deadline)) : "-");
      row.push_back(deadline > 0 ? StrCat(p.deadline_overruns) : "-");
    }
    if (uncertainties) {
      row.push_back(
          p.max_uncertainty_ns > 0
              ? StrCat("±", d(static_cast<double>(p.max_uncertainty_ns)))
              : "-");
    }
    row.push_back(DescribePath(directory, report.header, path));
    table.AddRow(std::move(row));
  }
  if (!paths.empty()) table.Print(out);
  for (const std::string& line : troubles) *out << line;
}

}  // namespace

std::string_view TimeUnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kNanoseconds:
      return "ns";
    case TimeUnit::kMicroseconds:
      return "us";
    case TimeUnit::kMilliseconds:
      return "ms";
  }
  return "?";
}

bool ParseTimeUnit(std::string_view text, TimeUnit* unit) {
  for (TimeUnit candidate : {TimeUnit::kNanoseconds, TimeUnit::kMicroseconds,
                             TimeUnit::kMilliseconds}) {
    if (text == TimeUnitName(candidate)) {
      *unit = candidate;
      return true;
    }
  }
  return false;
}

std::string FormatDuration(double value_ns, TimeUnit unit) {
  if (std::isnan(value_ns)) return "-";
  const double scale = unit == TimeUnit::kNanoseconds    ? 1.0
                       : unit == TimeUnit::kMicroseconds ? 1e3
                                                         : 1e6;
  const double value = value_ns / scale;
  if (value == 0) return "0";
  // A report from elsewhere may hold anything a float can.
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[64];
  // Beyond any real latency (a month in ns): 3 digits with an exponent.
  if (std::abs(value) >= 1e15) {
    snprintf(text, sizeof(text), "%.3g", value);
    return text;
  }
  int exponent = static_cast<int>(std::floor(std::log10(std::abs(value))));
  // 0.99996 rounds to 1.00, not 1.000: the digits follow the rounded value.
  const double last_digit = std::pow(10.0, exponent - 2);
  const double rounded = std::round(value / last_digit) * last_digit;
  if (std::isfinite(rounded)) {
    exponent = static_cast<int>(std::floor(std::log10(std::abs(rounded))));
  }
  const int decimals = std::clamp(2 - exponent, 0, 9);
  snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

std::string FormatTimingTable(const ReportContents& report,
                              const Configuration& config, TimeUnit unit,
                              const PathDirectory* directory) {
  const timing::ReportHeader& header = report.header;
  std::ostringstream out;
  // Names come from whoever sent the report (shared memory, a log, a
  // peer): never raw to the terminal.
  out << InlinePrintable(header.name) << "[" << header.pid << "]";
  if (!header.node.empty()) out << " on node " << InlinePrintable(header.node);
  if (!header.version.empty()) {
    out << " version \"" << InlinePrintable(header.version) << "\"";
  }
  // In seconds: ns / 1e3 in milliseconds.
  out << ": window of "
      << FormatDuration(header.window_ns() / 1e3, TimeUnit::kMilliseconds)
      << " s ending " << WindowEndText(header) << "; "
      << WakeupRegimeText(header) << "\n";
  const std::string_view units = TimeUnitName(unit);
  if (!report.timers.empty() || !report.phased_loops.empty() ||
      !report.watchers.empty() || !report.fetchers.empty()) {
    out << "  wakeup latency and handler time in " << units
        << (report.fetchers.empty() ? "" : " (fetchers: fetch latency)")
        << "\n";
    // 120 columns, less the 10 number columns, count and missed/lost.
    constexpr size_t kNameWidth = 34;
    PlainTable table;
    table.AddRow({"callback", "count", "min", "avg", "p50", "p99", "p99.9",
                  "max", "hdl p50", "hdl max", "missed/lost"});
    std::vector<std::string> idle;
    for (const auto& [kind, timers] :
         {std::pair{"timer ", &report.timers},
          std::pair{"phased loop ", &report.phased_loops}}) {
      for (const timing::TimerTiming& t : *timers) {
        // A timer that neither ran nor missed a cycle (one that stops the
        // program, say) would be a row of dashes: named below instead.
        if (t.count == 0 && t.missed_cycles == 0) {
          idle.push_back(StrCat(kind, InlinePrintable(t.name)));
          continue;
        }
        table.AddRow(CallbackRow(
            FitDisplayWidth(StrCat(kind, InlinePrintable(t.name)), kNameWidth),
            t.count, t.wakeup_latency, &t.handler_time, t.missed_cycles, unit));
      }
    }
    for (const timing::WatcherTiming& w : report.watchers) {
      table.AddRow(CallbackRow(
          FitDisplayWidth(
              StrCat("watcher ", ChannelName(config, w.channel_index), " ",
                     ChannelType(config, w.channel_index)),
              kNameWidth),
          w.count, w.wakeup_latency, &w.handler_time, w.lost_messages, unit));
    }
    for (const timing::FetcherTiming& f : report.fetchers) {
      table.AddRow(CallbackRow(
          FitDisplayWidth(
              StrCat("fetcher ", ChannelName(config, f.channel_index), " ",
                     ChannelType(config, f.channel_index)),
              kNameWidth),
          f.count, f.latency, nullptr, f.lost_messages, unit));
    }
    table.Print(&out);
    if (!idle.empty()) {
      out << "  not run in this window: " << StrJoin(idle, ", ") << "\n";
    }
  }
  for (const timing::SenderTiming& sender : report.senders) {
    out << "  sender " << ChannelName(config, sender.channel_index) << " "
        << ChannelType(config, sender.channel_index) << ": " << sender.count
        << " sent";
    if (sender.count > 0) {
      out << ", " << Number(std::round(sender.size.average())) << " B avg";
    }
    const uint64_t too_fast = sender.error_counts[static_cast<size_t>(
        timing::SendError::MESSAGE_SENT_TOO_FAST)];
    const uint64_t redzone = sender.error_counts[static_cast<size_t>(
        timing::SendError::INVALID_REDZONE)];
    if (too_fast + redzone == 0) {
      out << ", no errors";
    } else {
      out << ", errors: " << too_fast << " sent too fast, " << redzone
          << " redzone";
    }
    out << SharedMemoryDamage(sender) << "\n";
  }
  PrintPaths(report, config, directory, unit, &out);
  if (header.dropped_histograms > 0 || header.dropped_entries > 0 ||
      header.send_failures > 0) {
    out << "  dropped to fit max_size: " << header.dropped_histograms
        << " histograms, " << header.dropped_entries
        << " entries; reports not sent since start: " << header.send_failures
        << "\n";
  }
  out << ReopenedFiles(header);
  return out.str();
}

std::string FormatTimingReportAos(const ReportContents& report,
                                  const Configuration& config) {
  const timing::ReportHeader& header = report.header;
  std::ostringstream out;
  out << InlinePrintable(header.name) << "[" << header.pid << "] ("
      << InlinePrintable(header.node) << ") version: \""
      << InlinePrintable(header.version) << "\" ("
      << monotonic_clock::time_point(
             std::chrono::nanoseconds(header.monotonic_start_ns))
      << ","
      << realtime_clock::time_point(
             std::chrono::nanoseconds(header.realtime_start_ns))
      << "):\n  Window: "
      << DurationInSeconds(std::chrono::nanoseconds(
             static_cast<int64_t>(std::min(header.window_ns(), 9e18))))
      << " sec, until "
      << monotonic_clock::time_point(
             std::chrono::nanoseconds(header.monotonic_end_ns))
      << "; " << WakeupRegimeText(header) << "\n";
  if (!report.watchers.empty()) {
    out << "  Watchers (" << report.watchers.size() << "):\n";
    Table table({"Channel Name", "Type", "Count", "Wakeup Latency", "p50",
                 "p99", "Handler Time", "p50", "p99", "Lost"});
    for (const timing::WatcherTiming& watcher : report.watchers) {
      const LatencyRecorder& wakeup = watcher.wakeup_latency;
      const LatencyRecorder& handler = watcher.handler_time;
      table.AddRow({ChannelName(config, watcher.channel_index),
                    ChannelType(config, watcher.channel_index),
                    StrCat(watcher.count), FormatStatistic(wakeup.statistic()),
                    Percentile(wakeup.histogram(), 50),
                    Percentile(wakeup.histogram(), 99),
                    FormatStatistic(handler.statistic()),
                    Percentile(handler.histogram(), 50),
                    Percentile(handler.histogram(), 99),
                    StrCat(watcher.lost_messages)});
    }
    table.Print(&out);
  }
  if (!report.senders.empty()) {
    out << "  Senders (" << report.senders.size() << "):\n";
    Table table({"Channel Name", "Type", "Count", "Size", "Errors"});
    for (const timing::SenderTiming& sender : report.senders) {
      std::vector<std::string> errors;
      for (uint64_t count : sender.error_counts)
        errors.push_back(StrCat(count));
      table.AddRow({ChannelName(config, sender.channel_index),
                    ChannelType(config, sender.channel_index),
                    StrCat(sender.count), FormatStatistic(sender.size),
                    StrJoin(errors, ", ")});
    }
    table.Print(&out);
  }
  if (!report.fetchers.empty()) {
    out << "  Fetchers (" << report.fetchers.size() << "):\n";
    Table table(
        {"Channel Name", "Type", "Count", "Latency", "p50", "p99", "Lost"});
    for (const timing::FetcherTiming& fetcher : report.fetchers) {
      const LatencyRecorder& latency = fetcher.latency;
      table.AddRow({ChannelName(config, fetcher.channel_index),
                    ChannelType(config, fetcher.channel_index),
                    StrCat(fetcher.count), FormatStatistic(latency.statistic()),
                    Percentile(latency.histogram(), 50),
                    Percentile(latency.histogram(), 99),
                    StrCat(fetcher.lost_messages)});
    }
    table.Print(&out);
  }
  PrintTimers("Timers", report.timers, &out);
  PrintTimers("Phased loops", report.phased_loops, &out);
  if (header.dropped_histograms > 0 || header.dropped_entries > 0 ||
      header.send_failures > 0) {
    out << "  Dropped to fit: " << header.dropped_histograms << " histograms, "
        << header.dropped_entries
        << " entries; reports not sent since start: " << header.send_failures
        << "\n";
  }
  for (const timing::SenderTiming& sender : report.senders) {
    const std::string damage = SharedMemoryDamage(sender);
    if (!damage.empty()) {
      out << "  Sender " << ChannelName(config, sender.channel_index) << damage
          << "\n";
    }
  }
  out << ReopenedFiles(header);
  return out.str();
}

std::string TimingReportToJsonLine(const ReportContents& report,
                                   const Configuration& config,
                                   bool accumulated,
                                   const PathDirectory* directory) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);
  const auto encoded = timing::EncodeReportContents(&fbb, report);
  std::vector<flatbuffers::Offset<timing::EntryPercentiles>> entries;
  // The paths of the watcher or fetcher at `channel_index`, each with its
  // route (when there is a directory) and the percentiles of its ages.
  auto encode_paths = [&](std::string_view kind, int channel_index,
                          const timing::PathTimings& paths) {
    std::vector<flatbuffers::Offset<timing::PathPercentiles>> encoded_paths;
    for (const timing::PathTiming& path : paths) {
      const auto age = EncodePercentiles(&fbb, &path.age);
      const auto route =
          directory == nullptr
              ? flatbuffers::Offset<flatbuffers::String>()
              : fbb.CreateString(DescribePath(directory, report.header,
                                              {.kind = kind,
                                               .channel_index = channel_index,
                                               .entry = &paths,
                                               .path = &path}));
      timing::PathPercentiles::Builder builder(fbb);
      builder.add_origin_id(path.origin_id);
      builder.add_hops(path.hops);
      builder.add_max_uncertainty_ns(path.max_uncertainty_ns);
      if (!route.IsNull()) builder.add_route(route);
      if (!age.IsNull()) builder.add_age(age);
      encoded_paths.push_back(builder.Finish());
    }
    return fbb.CreateVector(encoded_paths);
  };
  ForEachLatencyEntry(report, config, [&](const LatencyEntry& entry) {
    // A fetcher's one latency goes in `latency`.
    const bool fetcher = entry.handler == nullptr;
    const auto wakeup_p =
        EncodePercentiles(&fbb, fetcher ? nullptr : entry.latency);
    const auto handler_p = EncodePercentiles(&fbb, entry.handler);
    const auto latency_p =
        EncodePercentiles(&fbb, fetcher ? entry.latency : nullptr);
    const auto paths_p =
        entry.paths == nullptr || entry.paths->size() == 0
            ? flatbuffers::Offset<flatbuffers::Vector<
                  flatbuffers::Offset<timing::PathPercentiles>>>()
            : encode_paths(entry.kind, entry.channel_index, *entry.paths);
    const auto kind_offset = fbb.CreateString(entry.kind);
    const auto name_offset = fbb.CreateString(entry.name);
    const auto type_offset = entry.type.empty()
                                 ? flatbuffers::Offset<flatbuffers::String>()
                                 : fbb.CreateString(entry.type);
    timing::EntryPercentiles::Builder builder(fbb);
    builder.add_kind(kind_offset);
    builder.add_name(name_offset);
    if (!entry.type.empty()) builder.add_type(type_offset);
    if (!wakeup_p.IsNull()) builder.add_wakeup_latency(wakeup_p);
    if (!handler_p.IsNull()) builder.add_handler_time(handler_p);
    if (!latency_p.IsNull()) builder.add_latency(latency_p);
    if (!paths_p.IsNull()) builder.add_paths(paths_p);
    entries.push_back(builder.Finish());
  });
  const auto entry_vector = fbb.CreateVector(entries);
  timing::StreamedReport::Builder streamed(fbb);
  streamed.add_accumulated(accumulated);
  streamed.add_report(encoded);
  streamed.add_percentiles(entry_vector);
  fbb.Finish(streamed.Finish());
  return FlatbufferToJson(
      fbb.GetBufferPointer(),
      *reflection::GetSchema(timing::StreamedReportBinarySchema::data()));
}

std::string HistogramsAsGnuplotTable(const std::vector<ReportContents>& reports,
                                     const Configuration& config,
                                     const PathDirectory* directory) {
  std::string out =
      "# aos timing histograms: one block per histogram (gnuplot: index N);\n"
      "# columns: bucket lower bound (us), upper bound (us), samples\n";
  bool first = true;
  auto block = [&](const ReportContents& report, std::string_view what,
                   const LatencyHistogram& histogram) {
    if (histogram.count() == 0) return;
    if (!first) out += "\n\n";
    first = false;
    StrAppend(&out, "# ", ReportOwner(report), " ", what, "\n");
    histogram.ForEachNonEmptyBucket(
        [&](size_t, int64_t lower, int64_t upper, uint64_t count) {
          StrAppend(&out, Number(lower / 1e3), " ", Number(upper / 1e3), " ",
                    count, "\n");
        });
  };
  for (const ReportContents& report : reports) {
    ForEachLatencyEntry(report, config, [&](const LatencyEntry& entry) {
      const std::string name =
          StrCat(entry.kind, " ", entry.name, entry.type.empty() ? "" : " ",
                 entry.type);
      block(report,
            StrCat(name,
                   entry.handler == nullptr ? " latency" : " wakeup_latency"),
            entry.latency->histogram());
      if (entry.handler != nullptr) {
        block(report, StrCat(name, " handler_time"),
              entry.handler->histogram());
      }
    });
  }
  // Path ages last, so the blocks above keep their indices.
  for (const ReportContents& report : reports) {
    for (const ReportPath& path : PathsOf(report)) {
      block(
          report,
          StrCat("path ", DescribePath(directory, report.header, path), " age"),
          path.path->age.histogram());
    }
  }
  return out;
}

WorstWakeup FindWorstWakeup(const std::vector<ReportContents>& reports,
                            const Configuration& config) {
  WorstWakeup worst;
  for (const ReportContents& report : reports) {
    ForEachLatencyEntry(report, config, [&](const LatencyEntry& entry) {
      if (entry.handler == nullptr) return;  // A fetcher has no wakeup.
      const double max_us = entry.latency->statistic().max() * 1e6;
      if (!(max_us > worst.max_us)) return;
      worst.max_us = max_us;
      worst.what =
          StrCat(ReportOwner(report), " ", entry.kind, " ", entry.name);
    });
  }
  return worst;
}

WorstPathAge FindWorstPathAge(const std::vector<ReportContents>& reports,
                              const PathDirectory* directory) {
  WorstPathAge worst;
  for (const ReportContents& report : reports) {
    for (const ReportPath& path : PathsOf(report)) {
      const LatencyRecorder& age = path.path->age;
      if (age.statistic().count() == 0) continue;
      ++worst.paths;
      const double max_us = MaxNs(age) / 1e3;
      if (!worst.what.empty() && !(max_us > worst.max_us)) continue;
      worst.max_us = max_us;
      worst.what = StrCat(ReportOwner(report), " path ",
                          DescribePath(directory, report.header, path), " (",
                          FormatHops(path.path->hops), ")");
    }
  }
  return worst;
}

namespace {

// A CSV field: quoted (quotes doubled) if it holds a comma, quote or
// newline.
std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) {
    return std::string(text);
  }
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// A number for CSV: plain, 6 significant digits; empty for NaN.
std::string CsvNumber(double value) {
  if (std::isnan(value)) return "";
  char text[64];
  snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

}  // namespace

std::string TimingReportCsvHeader() {
  return "time_s,node,application,pid,kind,name,count,avg_us,p50_us,p99_us,"
         "max_us,missed_or_lost\n";
}

std::string TimingReportToCsvRows(const ReportContents& report,
                                  const Configuration& config,
                                  const PathDirectory* directory) {
  const timing::ReportHeader& header = report.header;
  const std::string prefix = StrCat(
      CsvNumber(static_cast<double>(header.monotonic_end_ns) / 1e9), ",",
      CsvField(header.node), ",", CsvField(header.name), ",", header.pid, ",");
  std::string out;
  auto row = [&](std::string_view kind, std::string_view name, uint64_t count,
                 const LatencyRecorder* latency, uint64_t missed_or_lost) {
    const bool samples =
        latency != nullptr && !std::isnan(latency->statistic().average());
    StrAppend(
        &out, prefix, kind, ",", CsvField(name), ",", count, ",",
        samples ? CsvNumber(latency->statistic().average() * 1e6) : "", ",",
        latency == nullptr ? "" : CsvNumber(PercentileNs(*latency, 50) / 1e3),
        ",",
        latency == nullptr ? "" : CsvNumber(PercentileNs(*latency, 99) / 1e3),
        ",", samples ? CsvNumber(MaxNs(*latency) / 1e3) : "", ",",
        missed_or_lost, "\n");
  };
  for (const timing::TimerTiming& t : report.timers) {
    row("timer", t.name, t.count, &t.wakeup_latency, t.missed_cycles);
  }
  for (const timing::TimerTiming& t : report.phased_loops) {
    row("phased_loop", t.name, t.count, &t.wakeup_latency, t.missed_cycles);
  }
  for (const timing::WatcherTiming& w : report.watchers) {
    row("watcher", DescribeChannel(config, w.channel_index), w.count,
        &w.wakeup_latency, w.lost_messages);
  }
  for (const timing::FetcherTiming& f : report.fetchers) {
    row("fetcher", DescribeChannel(config, f.channel_index), f.count,
        &f.latency, f.lost_messages);
  }
  for (const timing::SenderTiming& s : report.senders) {
    uint64_t errors = 0;
    for (uint64_t e : s.error_counts) errors += e;
    row("sender", DescribeChannel(config, s.channel_index), s.count, nullptr,
        errors);
  }
  for (const ReportPath& path : PathsOf(report)) {
    row("path", DescribePath(directory, report.header, path),
        path.path->count(), &path.path->age, path.path->deadline_overruns);
  }
  return out;
}

}  // namespace aos
