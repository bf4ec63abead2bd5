#include "aos/tools/streamer/metrics_sink.h"

#include <iostream>

#include "aos/util/str_cat.h"

namespace aos::streamer {

absl::StatusOr<std::unique_ptr<MetricsSink>> MetricsSink::Start(
    const StreamerOptions& options, const Configuration* configuration,
    const PathDirectory* directory) {
  std::unique_ptr<MetricsSink> sink(new MetricsSink(configuration, directory));
  const StreamerFlags& flags = options.flags;
  if (absl::Status status =
          sink->server_.Start(flags.metrics_address, flags.metrics_port);
      !status.ok()) {
    return status;
  }
  std::cerr << "aos_timing_report_streamer: serving metrics on http://"
            << flags.metrics_address << ":" << sink->server_.port()
            << "/metrics\n";
  return sink;
}

void MetricsSink::OnReport(const timing::ReportContents& /*report*/,
                           const TimingReportAccumulator& accumulator) {
  server_.Publish(
      RenderMetrics(accumulator.Summaries(), *configuration_, directory_));
}

}  // namespace aos::streamer
