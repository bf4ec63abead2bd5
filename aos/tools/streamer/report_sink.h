#ifndef AOS_TOOLS_STREAMER_REPORT_SINK_H_
#define AOS_TOOLS_STREAMER_REPORT_SINK_H_

// One of aos_timing_report_streamer's outputs: a --format on stdout
// (table_sink.h, aos_sink.h, json_sink.h, csv_sink.h), the --top screen
// (top_sink.h), Prometheus metrics (metrics_sink.h), or a file written at
// the end (histogram_file_sink.h, plot_sink.h). The ReportDispatcher hands
// every sink the same reports, in the order they arrive.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "aos/events/timing_report_accumulator.h"
#include "aos/events/timing_report_codec.h"
#include "aos/tools/streamer/application_liveness.h"

namespace aos::streamer {

class ReportSink {
 public:
  virtual ~ReportSink() = default;

  // Before the first report is delivered.
  virtual void Start() {}
  // A report that passed the filters, after it was added to `accumulator`
  // (which holds every matched report so far).
  virtual void OnReport(const timing::ReportContents& report,
                        const TimingReportAccumulator& accumulator) {
    (void)report;
    (void)accumulator;
  }
  // The latest ClientStatistics (a verified flatbuffer) of `node`'s message
  // bridge, delivered only where bridges are shown.
  virtual void OnBridgeStatistics(const std::string& node,
                                  std::span<const uint8_t> statistics) {
    (void)node;
    (void)statistics;
  }
  // Once a second: every configured application of the shown nodes, up or
  // silent (application_liveness.h).
  virtual void OnLiveness(
      const std::vector<ApplicationLiveness>& applications) {
    (void)applications;
  }
  // At the end, every application's reports summed up. An error (one line
  // for the user, e.g. a file that cannot be written) makes the streamer
  // exit 1.
  virtual absl::Status Finish(
      const std::vector<timing::ReportContents>& summaries) {
    (void)summaries;
    return absl::OkStatus();
  }
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_REPORT_SINK_H_
