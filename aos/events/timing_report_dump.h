#ifndef AOS_EVENTS_TIMING_REPORT_DUMP_H_
#define AOS_EVENTS_TIMING_REPORT_DUMP_H_

// Reading timing reports as people and tools do: the table AOS's
// aos_timing_report_streamer prints (plus percentiles, missed cycles and lost
// messages), and exact accumulation of many reports into one per
// application. Shared by aos_timing_report_streamer and, later, log readers.
//
//   TimingReportAccumulator accumulator;
//   if (absl::Status status = accumulator.Add(bytes); !status.ok()) ...;
//   std::cout << FormatTimingReport(report, config);
//   for (const auto& summary : accumulator.Summaries()) ...
//
// Not for realtime code: it allocates freely.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/event_loop_generated.h"
#include "aos/events/streamed_report_generated.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/flatbuffers.h"

namespace aos {

// The report as a table in AOS's format, with the window on its own line:
//
//   ping[3885755] () version: "ping_version" (12.000000000sec,2026-...):
//     Window: 1 sec, until 13.000000000sec
//     Watchers (1):
//       Channel Name | Type | Count | Wakeup Latency | p50 | p99 | ...
//
// Statistics print as "average [min, max] std deviation" in seconds (sizes
// in bytes); p50 and p99 come from the histograms ("-" when the report
// dropped them). Channels are named through `config` (a bad channel_index
// prints as "<channel N?>"). Sections with no entries are left out. Columns
// are right-aligned.
std::string FormatTimingReport(const timing::Report& report,
                               const Configuration& config);

// The report as one line of JSON: an aos.timing.StreamedReport
// (aos/events/streamed_report.fbs) holding it, `accumulated`, and the p50,
// p90, p99, p99.9 and max of every histogram it has, entries named through
// `config`.
std::string TimingReportToJsonLine(const timing::Report& report,
                                   const Configuration& config,
                                   bool accumulated);

// Every histogram of the reports as a gnuplot-readable table, like Xenomai's
// `latency -g`: one block per histogram ("# ping[123] timer ping
// wakeup_latency"), lines "lower_us upper_us count" for non-empty buckets,
// blocks separated by two blank lines (gnuplot's `index`).
std::string HistogramsAsGnuplotTable(
    const std::vector<FlatbufferDetachedBuffer<timing::Report>>& reports,
    const Configuration& config);

// The largest max wakeup latency among the timers, phased loops and
// watchers of `reports`, with what it belongs to ("ping[123] timer ping").
struct WorstWakeup {
  std::string what;
  double max_us = 0;
};
WorstWakeup FindWorstWakeup(
    const std::vector<FlatbufferDetachedBuffer<timing::Report>>& reports,
    const Configuration& config);

// Checks that `bytes` hold a well-formed aos.timing.Report: the flatbuffers
// Verifier, a name, and histograms that decode (known layout, sane buckets).
// The error names what is wrong.
absl::Status ValidateTimingReport(std::span<const uint8_t> bytes);

// Adds one encoded latency of a validated report (a Statistic over `count`
// samples, and its Histogram if present) to running totals: statistics
// combine (a NaN, sample-less statistic adds nothing), histograms add.
// Returns whether there was a histogram. Aborts on a histogram that does not
// decode: validate reports (ValidateTimingReport) first.
bool MergeEncodedLatency(const timing::Statistic* statistic,
                         const timing::Histogram* histogram, uint32_t count,
                         timing::RunningStatistic* statistic_total,
                         timing::LatencyHistogram* histogram_total);

// Merges reports per application (name + pid) exactly: counts and error
// counts add, statistics combine (as exactly as the reports' floats allow),
// histograms add bucket by bucket, and the window spans the first start to
// the last end.
class TimingReportAccumulator {
 public:
  // Validates and adds one report. A malformed report is refused (its error
  // returned) and changes nothing.
  absl::Status Add(std::span<const uint8_t> bytes);

  // One accumulated report per application, ordered by name then pid.
  std::vector<FlatbufferDetachedBuffer<timing::Report>> Summaries() const;

  // Reports added so far.
  int64_t reports() const { return reports_; }

 private:
  struct Latency {
    timing::RunningStatistic statistic;
    timing::LatencyHistogram histogram;
    bool has_histogram = false;
  };
  struct TimerEntry {
    uint64_t count = 0;
    Latency wakeup;
    Latency handler;
    uint64_t missed_cycles = 0;
  };
  struct WatcherEntry {
    uint64_t count = 0;
    Latency wakeup;
    Latency handler;
    uint64_t lost_messages = 0;
  };
  struct FetcherEntry {
    uint64_t count = 0;
    Latency latency;
    uint64_t lost_messages = 0;
  };
  struct SenderEntry {
    uint64_t count = 0;
    timing::RunningStatistic size;
    std::vector<uint64_t> error_counts;
  };
  struct Application {
    std::string name;
    int pid = 0;
    std::string version;
    std::string node;
    int64_t monotonic_start = INT64_MAX;
    int64_t monotonic_end = INT64_MIN;
    int64_t realtime_start = 0;
    uint64_t send_failures = 0;
    uint64_t dropped_histograms = 0;
    uint64_t dropped_entries = 0;
    // As in the latest report.
    int32_t cpu_latency_limit_us = -1;
    std::string cpu_latency_limit_cpus;
    // Keyed by channel index (watchers, fetchers, senders) or name (timers),
    // in first-seen order.
    std::vector<std::pair<int, WatcherEntry>> watchers;
    std::vector<std::pair<int, SenderEntry>> senders;
    std::vector<std::pair<int, FetcherEntry>> fetchers;
    std::vector<std::pair<std::string, TimerEntry>> timers;
    std::vector<std::pair<std::string, TimerEntry>> phased_loops;
  };

  static void AddLatency(const timing::Statistic* statistic,
                         const timing::Histogram* histogram, uint32_t count,
                         Latency* latency);
  static void AddTimers(
      const flatbuffers::Vector<flatbuffers::Offset<timing::Timer>>* timers,
      std::vector<std::pair<std::string, TimerEntry>>* entries);

  std::map<std::pair<std::string, int>, Application> applications_;
  int64_t reports_ = 0;
};

}  // namespace aos

#endif  // AOS_EVENTS_TIMING_REPORT_DUMP_H_
