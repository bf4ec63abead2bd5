#include "aos/tools/metrics_exporter.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <map>

#include "aos/events/timing_report_format.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {

// Prometheus label values escape backslash, quote and newline.
std::string Escaped(std::string_view value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  return escaped;
}

// A number as Prometheus reads it: shortest round-trip text, +Inf, NaN.
std::string Value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return StrCat(value);
}

// The metric families, each written once with its HELP and TYPE.
class Families {
 public:
  void Add(std::string_view family, std::string_view type,
           std::string_view help, std::string sample_lines) {
    Family& f = families_[std::string(family)];
    f.type = type;
    f.help = help;
    f.lines += sample_lines;
  }

  std::string Text() const {
    std::string text;
    for (const auto& [name, family] : families_) {
      StrAppend(&text, "# HELP ", name, " ", family.help, "\n# TYPE ", name,
                " ", family.type, "\n", family.lines);
    }
    return text;
  }

 private:
  struct Family {
    std::string type;
    std::string help;
    std::string lines;
  };
  std::map<std::string, Family> families_;
};

// One histogram's sample lines: cumulative buckets, sum and count.
std::string HistogramLines(std::string_view family, const std::string& labels,
                           const timing::LatencyRecorder& latency) {
  const timing::LatencyHistogram& histogram = latency.histogram();
  std::string lines;
  for (double bound : MetricsBucketBoundsSeconds()) {
    const int64_t bound_ns = static_cast<int64_t>(std::llround(bound * 1e9));
    uint64_t below = 0;
    histogram.ForEachNonEmptyBucket(
        [&](size_t, int64_t, int64_t upper, uint64_t count) {
          if (upper <= bound_ns) below += count;
        });
    StrAppend(&lines, family, "_bucket{", labels, ",le=\"", Value(bound),
              "\"} ", below, "\n");
  }
  const timing::RunningStatistic& statistic = latency.statistic();
  const uint64_t count = histogram.count();
  StrAppend(&lines, family, "_bucket{", labels, ",le=\"+Inf\"} ", count, "\n");
  // The sum from the statistic, over the histogram's samples.
  const double sum = statistic.count() == 0
                         ? 0
                         : statistic.average() * static_cast<double>(count);
  StrAppend(&lines, family, "_sum{", labels, "} ", Value(sum), "\n", family,
            "_count{", labels, "} ", count, "\n");
  return lines;
}

std::string Labels(const timing::ReportHeader& header, std::string_view kind,
                   std::string_view name) {
  return StrCat("node=\"", Escaped(header.node), "\",application=\"",
                Escaped(header.name), "\",kind=\"", kind, "\",name=\"",
                Escaped(name), "\"");
}

}  // namespace

const std::vector<double>& MetricsBucketBoundsSeconds() {
  static const std::vector<double> bounds = {
      1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3,
      2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1,  0.2,  0.5,  1.0};
  return bounds;
}

std::string RenderMetrics(const std::vector<timing::ReportContents>& summaries,
                          const Configuration& config) {
  // The latest process of each application.
  std::map<std::pair<std::string, std::string>, const timing::ReportContents*>
      latest;
  for (const timing::ReportContents& summary : summaries) {
    const timing::ReportContents*& chosen =
        latest[{summary.header.node, summary.header.name}];
    if (chosen == nullptr ||
        summary.header.monotonic_end_ns > chosen->header.monotonic_end_ns) {
      chosen = &summary;
    }
  }
  Families families;
  for (const auto& [key, report] : latest) {
    const timing::ReportHeader& header = report->header;
    auto callback = [&](std::string_view kind, std::string_view name,
                        uint64_t count, const timing::LatencyRecorder& wakeup,
                        const timing::LatencyRecorder* handler,
                        std::string_view counter, uint64_t missed_or_lost) {
      const std::string labels = Labels(header, kind, name);
      families.Add(
          "aos_wakeup_latency_seconds", "histogram",
          "How late each callback started: after its scheduled time "
          "(timers) or the message's send time (watchers); fetch "
          "latency for fetchers.",
          HistogramLines("aos_wakeup_latency_seconds", labels, wakeup));
      if (handler != nullptr) {
        families.Add(
            "aos_handler_time_seconds", "histogram",
            "How long each callback ran.",
            HistogramLines("aos_handler_time_seconds", labels, *handler));
      }
      families.Add("aos_calls_total", "counter",
                   "Callback calls (fetchers: messages fetched).",
                   StrCat("aos_calls_total{", labels, "} ", count, "\n"));
      families.Add(
          StrCat("aos_", counter, "_total"), "counter",
          counter == "missed_cycles"
              ? "Scheduled times with no call because the loop was late."
              : "Messages overwritten before the callback got to them.",
          StrCat("aos_", counter, "_total{", labels, "} ", missed_or_lost,
                 "\n"));
    };
    for (const timing::TimerTiming& t : report->timers) {
      callback("timer", t.name, t.count, t.wakeup_latency, &t.handler_time,
               "missed_cycles", t.missed_cycles);
    }
    for (const timing::TimerTiming& t : report->phased_loops) {
      callback("phased_loop", t.name, t.count, t.wakeup_latency,
               &t.handler_time, "missed_cycles", t.missed_cycles);
    }
    for (const timing::WatcherTiming& w : report->watchers) {
      callback("watcher", DescribeChannel(config, w.channel_index), w.count,
               w.wakeup_latency, &w.handler_time, "lost_messages",
               w.lost_messages);
    }
    for (const timing::FetcherTiming& f : report->fetchers) {
      callback("fetcher", DescribeChannel(config, f.channel_index), f.count,
               f.latency, nullptr, "lost_messages", f.lost_messages);
    }
    for (const timing::SenderTiming& s : report->senders) {
      const std::string labels =
          Labels(header, "sender", DescribeChannel(config, s.channel_index));
      families.Add(
          "aos_messages_sent_total", "counter", "Messages sent.",
          StrCat("aos_messages_sent_total{", labels, "} ", s.count, "\n"));
      const std::pair<const char*, timing::SendError> errors[] = {
          {"sent_too_fast", timing::SendError::MESSAGE_SENT_TOO_FAST},
          {"invalid_redzone", timing::SendError::INVALID_REDZONE}};
      for (const auto& [error, index] : errors) {
        families.Add(
            "aos_send_errors_total", "counter", "Sends that failed, by error.",
            StrCat("aos_send_errors_total{", labels, ",error=\"", error, "\"} ",
                   s.error_counts[static_cast<size_t>(index)], "\n"));
      }
    }
  }
  return families.Text();
}

MetricsServer::MetricsServer() : server_(std::make_unique<httplib::Server>()) {
  server_->Get("/metrics",
               [this](const httplib::Request&, httplib::Response& response) {
                 std::lock_guard<std::mutex> lock(mutex_);
                 response.set_content(text_, "text/plain; version=0.0.4");
               });
}

MetricsServer::~MetricsServer() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

namespace {

// httplib binds with SO_REUSEPORT, so a second server on a port in use
// would share it silently. A plain bind says whether it is free.
absl::Status CheckPortFree(const std::string& address, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::OkStatus();  // httplib will say what is wrong.
  sockaddr_in socket_address = {};
  socket_address.sin_family = AF_INET;
  socket_address.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &socket_address.sin_addr) != 1) {
    close(fd);
    return absl::InvalidArgumentError(StrCat("cannot serve metrics on ",
                                             address, ":", port,
                                             ": not an IPv4 address"));
  }
  const int result = bind(fd, reinterpret_cast<sockaddr*>(&socket_address),
                          sizeof(socket_address));
  const int error = errno;
  close(fd);
  if (result != 0) {
    return absl::UnavailableError(StrCat("cannot serve metrics on ", address,
                                         ":", port, ": ", strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MetricsServer::Start(const std::string& address, int port) {
  if (port != 0) {
    if (absl::Status free = CheckPortFree(address, port); !free.ok()) {
      return free;
    }
  }
  port_ = port == 0 ? server_->bind_to_any_port(address)
                    : (server_->bind_to_port(address, port) ? port : -1);
  if (port_ < 0) {
    return absl::UnavailableError(StrCat("cannot serve metrics on ", address,
                                         ":", port, ": ", strerror(errno)));
  }
  // The thread takes no signals: SIGTERM and Ctrl-C go to the program's own
  // threads, where an event loop reads them (ShmEventLoop blocks them only
  // in the thread that made it), instead of killing the process here.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([this]() { server_->listen_after_bind(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  // stop() before the thread listens would be lost, and the destructor
  // would wait forever: return once it listens (a few ms).
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) usleep(1000);
  return absl::OkStatus();
}

void MetricsServer::Publish(std::string text) {
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = std::move(text);
}

}  // namespace aos
