#ifndef AOS_EVENTS_TIMING_REPORT_FORMAT_H_
#define AOS_EVENTS_TIMING_REPORT_FORMAT_H_

// Timing reports as people and tools read them: a table for people, the
// table AOS's aos_timing_report_streamer prints (plus percentiles, missed
// cycles and lost messages), one JSON line per report, a gnuplot table of
// the histograms, and the worst wakeup and path age. All take decoded
// reports (timing_report_codec.h), so a report is validated once, when
// received.
//
//   std::cout << FormatTimingTable(report, config, TimeUnit::kMicroseconds,
//                                  &directory);
//
// Paths (the ages of the data watchers and fetchers got, per origin) are
// named by their routes through a PathDirectory (path_directory.h) that
// has learned every loop's reports; where a function takes a null
// directory, a path is named by its origin id and hops alone.
//
// Not for realtime code: it allocates freely.

#include <string>
#include <vector>

#include "aos/configuration_generated.h"
#include "aos/events/channel_description.h"
#include "aos/events/path_directory.h"
#include "aos/events/timing_report_codec.h"

namespace aos {

// The unit a table for people prints times in.
enum class TimeUnit { kNanoseconds, kMicroseconds, kMilliseconds };

// "ns", "us", "ms".
std::string_view TimeUnitName(TimeUnit unit);
// Parses "ns", "us" or "ms"; false for anything else.
[[nodiscard]] bool ParseTimeUnit(std::string_view text, TimeUnit* unit);

// `value_ns` in `unit` with 3 significant digits and no exponent ("5.44",
// "26.6", "102", "1450"); "-" for NaN, "inf" and "-inf" for infinities,
// and 3 digits with an exponent from 1e15 on ("1.7e+308").
std::string FormatDuration(double value_ns, TimeUnit unit);

// The report as a table for people, one row per callback, in `unit`,
// within 120 columns for names up to about 30 characters:
//
//   ping[3885755]: window of 1.00 s ending 19:12:15.089 UTC;
//   CPU wakeup limit: none
//     wakeup latency and handler time in us
//     callback                  count    min    avg    p50    p99  p99.9 ...
//     timer ping                  100   4.69   26.6   5.44    102    102 ...
//     watcher /test aos.ex...Pong 100   5.40   36.7   5.44    102    102 ...
//     senders: /test aos.examples.Ping 100 sent, 32 B, no errors
//
// Timers, phased loops and watchers show their wakeup latency (min, avg,
// p50, p99, p99.9, max) and handler time (p50, max), then missed cycles
// (timers) or lost messages (watchers, fetchers); fetchers show their
// fetch latency. Channels are named by name and type through `config`.
// Percentiles are "-" where the report dropped its histograms. The header
// names the node and version when the report has them, and the window's
// length and end (time of day in UTC on the loop's realtime clock; the
// monotonic time when the report has no realtime start). A timer or phased
// loop that neither ran nor missed a cycle in the window gets no row, only
// its name on a "not run in this window" line under the table.
//
// Then, when its watchers or fetchers have paths, a paths section: one row
// per path with its hops, count and age (p50, p99, max) in `unit`, the
// deadline and overruns (when a deadline was declared), the largest
// translation uncertainty ("±", origins on other nodes), and its route
// (through `directory`, if not null); and a line for each watcher or
// fetcher that dropped path samples or met invalid origins:
//
//     paths: age of the data at callback start (callback start - origin
//     time) in us
//       hops  count   p50  p99  max  route
//          2    100  5.44  102  102  ping timer "ping" → /test ... → ping
//          watcher
std::string FormatTimingTable(const timing::ReportContents& report,
                              const Configuration& config, TimeUnit unit,
                              const PathDirectory* directory = nullptr);

// The header line of the CSV below, ending in '\n':
//   time_s,node,application,pid,kind,name,count,avg_us,p50_us,p99_us,max_us,missed_or_lost
std::string TimingReportCsvHeader();

// One CSV row (RFC 4180: fields with a comma, quote or newline quoted) per
// entry of `report`: time_s is the end of its window on the loop's
// monotonic clock in seconds; kind is timer, phased_loop, watcher, fetcher
// or sender; name is the timer's name or the channel's name and type;
// avg/p50/p99/max are the wakeup latency (fetchers: fetch latency) in us,
// empty where there were no samples (and for senders); missed_or_lost is
// missed cycles, lost messages, or a sender's failed sends. Then one row
// per path of its watchers and fetchers, kind path: name is the route
// (through `directory`) or the origin id and hops, count the ages
// recorded, avg/p50/p99/max the age in us, missed_or_lost the deadline
// overruns.
std::string TimingReportToCsvRows(const timing::ReportContents& report,
                                  const Configuration& config,
                                  const PathDirectory* directory = nullptr);

// The report as a table in AOS's format, with the window on its own line:
//
//   ping[3885755] () version: "ping_version" (12.000000000sec,2026-...):
//     Window: 1 sec, until 13.000000000sec; CPU wakeup limit: none
//     Watchers (1):
//       Channel Name | Type | Count | Wakeup Latency | p50 | p99 | ...
//
// Statistics print as "average [min, max] std deviation" in seconds (sizes
// in bytes); p50 and p99 come from the histograms ("-" when the report
// dropped them). Channels are named through `config` (a bad channel_index
// prints as "<channel N?>"). Sections with no entries are left out. Columns
// are right-aligned.
std::string FormatTimingReportAos(const timing::ReportContents& report,
                                  const Configuration& config);

// The report as one line of JSON: an aos.timing.StreamedReport
// (aos/events/streamed_report.fbs) holding it, `accumulated`, and the p50,
// p90, p99, p99.9 and max of every histogram it has (path ages too), entries
// named through `config`, paths with their routes through `directory` (no
// route when it is null).
std::string TimingReportToJsonLine(const timing::ReportContents& report,
                                   const Configuration& config,
                                   bool accumulated,
                                   const PathDirectory* directory = nullptr);

// Every histogram of the reports as a gnuplot-readable table, like Xenomai's
// `latency -g`: one block per histogram ("# ping[123] timer ping
// wakeup_latency"), lines "lower_us upper_us count" for non-empty buckets,
// blocks separated by two blank lines (gnuplot's `index`). The path ages
// come after every other block ("# ping[123] path <route> age"), named
// through `directory`.
std::string HistogramsAsGnuplotTable(
    const std::vector<timing::ReportContents>& reports,
    const Configuration& config, const PathDirectory* directory = nullptr);

// The largest max wakeup latency among the timers, phased loops and
// watchers of `reports`, with what it belongs to ("ping[123] timer ping").
struct WorstWakeup {
  std::string what;
  double max_us = 0;
};
WorstWakeup FindWorstWakeup(const std::vector<timing::ReportContents>& reports,
                            const Configuration& config);

// The largest max age among the paths of `reports` with what it belongs to
// ("ping[123] path <route> (2 hops)", named through `directory`), and how
// many paths had ages at all (a gate that saw none must not pass).
struct WorstPathAge {
  std::string what;
  double max_us = 0;
  size_t paths = 0;
};
WorstPathAge FindWorstPathAge(
    const std::vector<timing::ReportContents>& reports,
    const PathDirectory* directory);

}  // namespace aos

#endif  // AOS_EVENTS_TIMING_REPORT_FORMAT_H_
