#include "aos/tools/streamer/metrics_sink.h"

#include <iostream>

#include "aos/util/str_cat.h"

namespace aos::streamer {

std::string LivenessMetrics(
    const std::vector<ApplicationLiveness>& applications) {
  if (applications.empty()) return "";
  std::string text =
      "# HELP aos_application_up Whether a configured application sent a "
      "timing report within --silent_after_s (1) or is silent (0).\n"
      "# TYPE aos_application_up gauge\n";
  for (const ApplicationLiveness& application : applications) {
    StrAppend(&text, "aos_application_up{node=\"",
              PrometheusLabelValue(application.node), "\",application=\"",
              PrometheusLabelValue(application.name), "\"} ",
              application.up ? "1\n" : "0\n");
  }
  return text;
}

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
  summaries_ = accumulator.Summaries();
  Republish();
}

void MetricsSink::OnLiveness(
    const std::vector<ApplicationLiveness>& applications) {
  liveness_ = LivenessMetrics(applications);
  Republish();
}

void MetricsSink::Republish() {
  std::string text = RenderMetrics(summaries_, *configuration_, directory_);
  text.append(liveness_);
  server_.Publish(std::move(text));
}

}  // namespace aos::streamer
