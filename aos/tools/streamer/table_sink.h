#ifndef AOS_TOOLS_STREAMER_TABLE_SINK_H_
#define AOS_TOOLS_STREAMER_TABLE_SINK_H_

// --format=table: one row per callback in --units, and under the reports
// the message bridges' statistics (their latest, which count since each
// bridge started, close the summary).

#include <map>
#include <string>
#include <vector>

#include "aos/tools/streamer/text_report_sink.h"

namespace aos::streamer {

class TableSink : public TextReportSink {
 public:
  using TextReportSink::TextReportSink;

  // Keeps the latest of each node; prints it if reports stream.
  void OnBridgeStatistics(const std::string& node,
                          std::span<const uint8_t> statistics) override;
  // Prints the silent applications (if reports stream), and keeps them for
  // the summary.
  void OnLiveness(
      const std::vector<ApplicationLiveness>& applications) override;
  // The summaries, then each node's latest bridge statistics, then the
  // applications silent at the end.
  absl::Status Finish(
      const std::vector<timing::ReportContents>& summaries) override;

 protected:
  std::string Format(const timing::ReportContents& report,
                     bool accumulated) const override;
  std::string SummaryHeading() const override {
    return "Summary: every report of each application added up\n\n";
  }

 private:
  std::map<std::string, std::vector<uint8_t>> latest_bridge_statistics_;
  std::string silent_lines_;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_TABLE_SINK_H_
