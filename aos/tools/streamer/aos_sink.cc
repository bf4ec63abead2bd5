#include "aos/tools/streamer/aos_sink.h"

#include "aos/events/timing_report_format.h"

namespace aos::streamer {

std::string AosSink::Format(const timing::ReportContents& report,
                            bool /*accumulated*/) const {
  return FormatTimingReportAos(report, configuration());
}

}  // namespace aos::streamer
