#include "aos/tools/streamer/json_sink.h"

#include "aos/events/timing_report_format.h"

namespace aos::streamer {

std::string JsonSink::Format(const timing::ReportContents& report,
                             bool accumulated) const {
  return TimingReportToJsonLine(report, configuration(), accumulated,
                                directory()) +
         "\n";
}

}  // namespace aos::streamer
