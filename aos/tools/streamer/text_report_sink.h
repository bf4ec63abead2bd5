#ifndef AOS_TOOLS_STREAMER_TEXT_REPORT_SINK_H_
#define AOS_TOOLS_STREAMER_TEXT_REPORT_SINK_H_

// What the four --format sinks (table, aos, json, csv) share: each report on
// stdout as it arrives (--stream, unless --top draws screens instead), and
// on exit every application's summary (--accumulate). A subclass says only
// how one report is written.

#include <string>

#include "aos/configuration.h"
#include "aos/events/path_directory.h"
#include "aos/tools/streamer/report_sink.h"
#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

class TextReportSink : public ReportSink {
 public:
  // Nothing is owned; all must outlive the sink.
  TextReportSink(const StreamerOptions* options,
                 const Configuration* configuration,
                 const PathDirectory* directory)
      : options_(options),
        configuration_(configuration),
        directory_(directory) {}

  // Writes Preamble() if reports stream.
  void Start() override;
  // Writes Format(report, false) if reports stream.
  void OnReport(const timing::ReportContents& report,
                const TimingReportAccumulator& accumulator) override;
  // With --accumulate: SummaryHeading(), then each summary's
  // Format(summary, true) followed by AfterSummary().
  absl::Status Finish(
      const std::vector<timing::ReportContents>& summaries) override;

 protected:
  // One report (`accumulated`: a summary) as it is printed.
  virtual std::string Format(const timing::ReportContents& report,
                             bool accumulated) const = 0;
  // Printed before the first streamed report.
  virtual std::string Preamble() const { return ""; }
  // Printed before the summaries.
  virtual std::string SummaryHeading() const { return ""; }
  // Printed after each summary.
  virtual std::string AfterSummary() const { return ""; }

  const StreamerOptions& options() const { return *options_; }
  const Configuration& configuration() const { return *configuration_; }
  const PathDirectory* directory() const { return directory_; }

 private:
  const StreamerOptions* options_;
  const Configuration* configuration_;
  const PathDirectory* directory_;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_TEXT_REPORT_SINK_H_
