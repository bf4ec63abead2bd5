#include "aos/tools/streamer/json_sink.h"

#include <iostream>

#include "aos/events/timing_report_format.h"

namespace aos::streamer {

void JsonSink::OnLiveness(
    const std::vector<ApplicationLiveness>& applications) {
  if (!options().streams_text() || SilentLines(applications).empty()) return;
  std::cout << LivenessJson(applications) << "\n" << std::flush;
}

std::string JsonSink::Format(const timing::ReportContents& report,
                             bool accumulated) const {
  return TimingReportToJsonLine(report, configuration(), accumulated,
                                directory()) +
         "\n";
}

}  // namespace aos::streamer
