#ifndef AOS_EVENTS_TIMING_REPORT_ACCUMULATOR_H_
#define AOS_EVENTS_TIMING_REPORT_ACCUMULATOR_H_

// Sums timing reports per application, exactly: what
// aos_timing_report_streamer prints on exit, and what a log reader sums.
//
//   TimingReportAccumulator accumulator;
//   absl::StatusOr<timing::ReportContents> report = DecodeTimingReport(bytes);
//   if (report.ok()) accumulator.Add(*report);
//   for (const timing::ReportContents& summary : accumulator.Summaries()) ...
//
// Not for realtime code: it allocates freely.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "aos/events/timing_report_codec.h"

namespace aos {

class TimingReportAccumulator {
 public:
  // Adds one decoded report (timing_report_codec.h validates it) to its
  // application's summary (node + name + pid: two nodes may run the same
  // program with the same pid). Entries merge with the same entry of
  // earlier reports (watchers, fetchers and senders by channel, timers and
  // phased loops by name; new ones are appended in first-seen order):
  // counts add, statistics combine (as exactly as the reports' floats
  // allow), histograms add bucket by bucket. The window spans the earliest
  // start to the latest end; the CPU latency limit is the latest report's.
  void Add(const timing::ReportContents& report);

  // One summary per application, ordered by node, name, then pid.
  std::vector<timing::ReportContents> Summaries() const;

  // Reports added so far.
  int64_t reports() const { return reports_; }

 private:
  std::map<std::tuple<std::string, std::string, int>, timing::ReportContents>
      applications_;
  int64_t reports_ = 0;
};

}  // namespace aos

#endif  // AOS_EVENTS_TIMING_REPORT_ACCUMULATOR_H_
