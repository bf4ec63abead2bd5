#ifndef AOS_TOOLS_METRICS_EXPORTER_H_
#define AOS_TOOLS_METRICS_EXPORTER_H_

// Timing reports as Prometheus metrics (text exposition format 0.0.4, which
// OpenMetrics scrapers read too), served over HTTP on /metrics, so Grafana
// dashboards can show how late every callback of a robot runs.
//
//   MetricsServer server;
//   if (absl::Status status = server.Start("127.0.0.1", 9971);
//       !status.ok()) ...
//   server.Publish(RenderMetrics(accumulator.Summaries(), config));
//
// Per callback (labels node, application, kind, name): wakeup latency and
// handler time as histograms in seconds, and counters of calls, missed
// cycles and lost messages; per sender, messages sent and send errors; per
// path of a watcher or fetcher (labels origin_id, hops and route too), the
// age of its data as a histogram and its deadline overruns. All are
// cumulative since the exporter started. Not for realtime code.

#include <netinet/in.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "aos/configuration_generated.h"
#include "aos/events/path_directory.h"
#include "aos/events/timing_report_codec.h"

struct mg_connection;
struct mg_context;

namespace aos {

// The `le` bounds of every exported histogram, in seconds: 1-2-5 steps from
// 1 us to 1 s. A sample counts below a bound when its histogram bucket
// lies wholly below it, so a count can lag by one bucket (< 3.2 % of the
// bound) at each bound.
const std::vector<double>& MetricsBucketBoundsSeconds();

// The metrics of `summaries` (accumulated reports). When an application
// (node and name) has reports from several processes, as after a restart,
// only the most recent process is exported, so no series is duplicated.
// Paths are named (label route) through `directory`, or by their origin id
// and hops when it is null; a path's route can change as reports arrive
// (from "?" to names), its origin_id and hops do not.
std::string RenderMetrics(const std::vector<timing::ReportContents>& summaries,
                          const Configuration& config,
                          const PathDirectory* directory = nullptr);

// A Prometheus label value: backslash, quote and newline escaped.
std::string PrometheusLabelValue(std::string_view value);

// Serves the last Publish()ed text on http://ADDRESS:PORT/metrics (GET and
// HEAD) with civetweb, from threads of its own that block every signal (so
// SIGTERM reaches the program's event loop, whenever the server was
// started). Not for realtime code.
//
// Bounded against hostile clients (docs/streamer.md, "Hostile clients"):
// - a request head is at most kMaxRequestHeadBytes, else 400 or 413;
// - it must come whole within kRequestHeadTimeout of a worker taking the
//   connection, however slowly it trickles in (the last wait may reach
//   twice that), else 400 and the connection is closed;
// - no body is ever read, nor drained: any method but GET and HEAD gets
//   405, and every connection is closed after its one answer (no
//   keep-alive), so a body of any size costs neither memory nor a worker;
// - kWorkers connections are served at a time, each by its own thread;
//   kQueuedConnections more wait accepted, the rest in the kernel's listen
//   backlog: never more than kWorkers + kQueuedConnections of our file
//   descriptors. Up to kWorkers - 1 held connections cost a scrape
//   nothing; each kWorkers more delay it by at most two head timeouts.
// Not bounded: a client that reads its answer slowly keeps its worker as
// long as it takes some bytes every kRequestHeadTimeout.
class MetricsServer {
 public:
  static constexpr int kWorkers = 256;
  static constexpr int kQueuedConnections = 20;
  static constexpr int kMaxRequestHeadBytes = 8192;
  static constexpr std::chrono::milliseconds kRequestHeadTimeout{2000};

  MetricsServer();
  ~MetricsServer();  // Stops serving; returns once every worker has ended.
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Listens on `address` (IPv4) : `port` (0: any free port, see port()).
  // The error names the address and port and says why. The process's
  // SIGPIPE disposition is left as it was (civetweb sets it to ignore as
  // its threads start; Start() puts it back once they have).
  absl::Status Start(const std::string& address, int port);
  int port() const { return port_; }

  // What /metrics returns from now on. Thread-safe. An answer being sent
  // keeps the text it started with.
  void Publish(std::string text);

 private:
  static int HandleMetrics(mg_connection* connection, void* server);
  static void* CountThreadStart(const mg_context* context, int thread_type);
  std::shared_ptr<const std::string> Text();

  mg_context* context_ = nullptr;
  int port_ = 0;
  in_addr wake_address_ = {};  // Where the destructor connects to.
  std::mutex mutex_;
  std::shared_ptr<const std::string> text_;

  // civetweb's threads that have started, for Start() to wait on.
  std::mutex threads_mutex_;
  std::condition_variable threads_changed_;
  int threads_started_ = 0;
};

}  // namespace aos

#endif  // AOS_TOOLS_METRICS_EXPORTER_H_
