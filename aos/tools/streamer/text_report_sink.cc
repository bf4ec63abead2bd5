#include "aos/tools/streamer/text_report_sink.h"

#include <iostream>

namespace aos::streamer {

void TextReportSink::Start() {
  if (options_->streams_text()) std::cout << Preamble();
}

void TextReportSink::OnReport(const timing::ReportContents& report,
                              const TimingReportAccumulator& /*accumulator*/) {
  if (options_->streams_text()) {
    std::cout << Format(report, false) << std::flush;
  }
}

absl::Status TextReportSink::Finish(
    const std::vector<timing::ReportContents>& summaries) {
  if (!options_->flags.accumulate) return absl::OkStatus();
  std::cout << SummaryHeading();
  for (const timing::ReportContents& summary : summaries) {
    std::cout << Format(summary, true) << AfterSummary();
  }
  return absl::OkStatus();
}

}  // namespace aos::streamer
