#ifndef AOS_TOOLS_METRICS_EXPORTER_H_
#define AOS_TOOLS_METRICS_EXPORTER_H_

// Timing reports as Prometheus metrics (text exposition format 0.0.4, which
// OpenMetrics scrapers read too), served over HTTP on /metrics, so Grafana
// dashboards can show how late every callback of a robot runs.
//
//   MetricsServer server;
//   if (absl::Status status = server.Start(9971); !status.ok()) ...
//   server.Publish(RenderMetrics(accumulator.Summaries(), config));
//
// Per callback (labels node, application, kind, name): wakeup latency and
// handler time as histograms in seconds, and counters of calls, missed
// cycles and lost messages; per sender, messages sent and send errors. All
// are cumulative since the exporter started. Not for realtime code.

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/timing_report_codec.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace aos {

// The `le` bounds of every exported histogram, in seconds: 1-2-5 steps from
// 1 us to 1 s. A sample counts below a bound when its histogram bucket
// lies wholly below it, so a count can lag by one bucket (< 3.2 % of the
// bound) at each bound.
const std::vector<double>& MetricsBucketBoundsSeconds();

// The metrics of `summaries` (accumulated reports). When an application
// (node and name) has reports from several processes, as after a restart,
// only the most recent process is exported, so no series is duplicated.
std::string RenderMetrics(const std::vector<timing::ReportContents>& summaries,
                          const Configuration& config);

// Serves the last Publish()ed text on http://ADDRESS:PORT/metrics from a
// thread of its own, which blocks every signal (so SIGTERM reaches the
// program's event loop, whenever the server was started).
class MetricsServer {
 public:
  MetricsServer();
  ~MetricsServer();  // Stops serving.

  // Listens on `address`:`port` (port 0: any free port, see port()). The
  // error names the address and port.
  absl::Status Start(const std::string& address, int port);
  int port() const { return port_; }

  // What /metrics returns from now on. Thread-safe.
  void Publish(std::string text);

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::string text_;
};

}  // namespace aos

#endif  // AOS_TOOLS_METRICS_EXPORTER_H_
