#ifndef AOS_TOOLS_STREAMER_METRICS_SINK_H_
#define AOS_TOOLS_STREAMER_METRICS_SINK_H_

// --metrics_port: the accumulated reports as Prometheus metrics on
// http://--metrics_address:PORT/metrics (metrics_exporter.h), republished
// after every matched report.

#include <memory>

#include "absl/status/statusor.h"
#include "aos/configuration.h"
#include "aos/events/path_directory.h"
#include "aos/tools/metrics_exporter.h"
#include "aos/tools/streamer/report_sink.h"
#include "aos/tools/streamer/streamer_options.h"

namespace aos::streamer {

// `applications` as Prometheus text: the gauge aos_application_up{node,
// application}, 1 up, 0 silent, with its HELP and TYPE lines (nothing when
// there are none).
std::string LivenessMetrics(
    const std::vector<ApplicationLiveness>& applications);

class MetricsSink : public ReportSink {
 public:
  // Starts serving on --metrics_address:--metrics_port and says where on
  // stderr. Errors (one line): the address cannot be listened on.
  static absl::StatusOr<std::unique_ptr<MetricsSink>> Start(
      const StreamerOptions& options, const Configuration* configuration,
      const PathDirectory* directory);

  void OnReport(const timing::ReportContents& report,
                const TimingReportAccumulator& accumulator) override;
  // Adds aos_application_up (LivenessMetrics) to what is served.
  void OnLiveness(
      const std::vector<ApplicationLiveness>& applications) override;

 private:
  // Serves the summaries and the liveness last seen.
  void Republish();

  MetricsSink(const Configuration* configuration,
              const PathDirectory* directory)
      : configuration_(configuration), directory_(directory) {}

  const Configuration* configuration_;
  const PathDirectory* directory_;
  MetricsServer server_;
  std::vector<timing::ReportContents> summaries_;
  std::string liveness_;
};

}  // namespace aos::streamer

#endif  // AOS_TOOLS_STREAMER_METRICS_SINK_H_
