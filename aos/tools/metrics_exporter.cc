#include "aos/tools/metrics_exporter.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <thread>

#include "aos/events/timing_report_format.h"
#include "aos/util/printable.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"

namespace aos {
namespace {}  // namespace

std::string PrometheusLabelValue(std::string_view value) {
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

namespace {

std::string Escaped(std::string_view value) {
  return PrometheusLabelValue(value);
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
                          const Configuration& config,
                          const PathDirectory* directory) {
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
      const std::pair<const char*, uint64_t> damage[] = {
          {"refused_wakeups", s.refused_wakeups},
          {"impossible_sent_times", s.impossible_sent_times}};
      for (const auto& [kind, count] : damage) {
        families.Add(
            "aos_shared_memory_damage_total", "counter",
            "Damage a sender met in its queue's file and got past: wakeups "
            "not signalled to unproven watcher registrations, replaced "
            "messages whose sent time was in the future.",
            StrCat("aos_shared_memory_damage_total{", labels, ",damage=\"",
                   kind, "\"} ", count, "\n"));
      }
    }
    for (const PathEntry& entry : PathEntriesOf(*report)) {
      const timing::PathTimings* paths = entry.paths;
      const std::string labels = Labels(
          header, entry.kind, DescribeChannel(config, entry.channel_index));
      families.Add("aos_path_samples_dropped_total", "counter",
                   "Path ages a watcher or fetcher did not report: its "
                   "messages came by more (origin, hops) paths than it "
                   "has room for.",
                   StrCat("aos_path_samples_dropped_total{", labels, "} ",
                          paths->dropped_samples(), "\n"));
      families.Add("aos_invalid_path_origins_total", "counter",
                   "Origins messages claimed that could not be true "
                   "(damaged or forged).",
                   StrCat("aos_invalid_path_origins_total{", labels, "} ",
                          paths->invalid_origins(), "\n"));
    }
    for (const ReportPath& path : PathsOf(*report)) {
      const std::string labels =
          StrCat(Labels(header, path.kind,
                        DescribeChannel(config, path.channel_index)),
                 ",origin_id=\"", FormatOriginId(path.path->origin_id),
                 "\",hops=\"", path.path->hops, "\",route=\"",
                 Escaped(DescribePath(directory, header, path)), "\"");
      families.Add(
          "aos_path_age_seconds", "histogram",
          "How old the data a watcher or fetcher got was, per origin and "
          "hops: callback start minus the origin's scheduled time.",
          HistogramLines("aos_path_age_seconds", labels, path.path->age));
      if (path.entry->deadline_ns() > 0) {
        families.Add("aos_path_deadline_overruns_total", "counter",
                     "Path ages over the deadline the watcher or fetcher "
                     "declared.",
                     StrCat("aos_path_deadline_overruns_total{", labels, "} ",
                            path.path->deadline_overruns, "\n"));
      }
    }
    families.Add(
        "aos_reopened_queue_files_total", "counter",
        "Queue files the application found deleted or replaced and re-opened.",
        StrCat("aos_reopened_queue_files_total{",
               Labels(header, "loop", header.name), "} ",
               header.reopened_queue_files, "\n"));
  }
  return families.Text();
}

namespace {

// civetweb's own log lines, kept while Start() runs (they say why it
// failed) and dropped after: a hostile client must not be able to write to
// our stderr. Only the starting thread writes it.
thread_local std::string* start_log = nullptr;

int KeepStartLog(const mg_connection*, const char* message) {
  if (start_log != nullptr && start_log->size() < 4096) {
    StrAppend(start_log, start_log->empty() ? "" : "; ", message);
  }
  return 1;  // Handled: civetweb writes nothing itself.
}

// civetweb's error when it cannot listen says no more than "Failed to
// setup server ports": a bind of our own first says why. Like civetweb's, it
// sets SO_REUSEADDR, so the connections a previous run closed (TIME_WAIT:
// the server closes every connection) do not count, but a listener does.
absl::Status CheckPortFree(const std::string& address, in_addr ip, int port) {
  const ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::OkStatus();  // civetweb will fail and say so.
  const int on = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in socket_address = {};
  socket_address.sin_family = AF_INET;
  socket_address.sin_port = htons(static_cast<uint16_t>(port));
  socket_address.sin_addr = ip;
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&socket_address),
           sizeof(socket_address)) != 0) {
    return absl::UnavailableError(StrCat("cannot serve metrics on ", address,
                                         ":", port, ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

MetricsServer::MetricsServer() : text_(std::make_shared<const std::string>()) {}

MetricsServer::~MetricsServer() {
  if (context_ == nullptr) return;
  // mg_stop() waits for the accepting thread, which looks at the stop flag
  // only between polls of up to 2 s: a connection wakes it at once. (A
  // worker reading from a client notices within 2 s too.)
  std::mutex mutex;
  std::condition_variable changed;
  bool stopped = false;
  std::thread waker([&]() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!changed.wait_for(lock, std::chrono::milliseconds(10),
                             [&]() { return stopped; })) {
      const ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (!fd.valid()) continue;
      sockaddr_in address = {};
      address.sin_family = AF_INET;
      address.sin_port = htons(static_cast<uint16_t>(port_));
      address.sin_addr = wake_address_;
      connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address));
    }
  });
  mg_stop(context_);
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopped = true;
  }
  changed.notify_all();
  waker.join();
}

absl::Status MetricsServer::Start(const std::string& address, int port) {
  in_addr ip;
  if (inet_pton(AF_INET, address.c_str(), &ip) != 1) {
    return absl::InvalidArgumentError(StrCat("cannot serve metrics on ",
                                             Printable(address), ":", port,
                                             ": not an IPv4 address"));
  }
  if (port != 0) {
    if (absl::Status free = CheckPortFree(address, ip, port); !free.ok()) {
      return free;
    }
  }
  static std::once_flag library;
  std::call_once(library, []() { mg_init_library(0); });

  const std::string listening = StrCat(address, ":", port);
  const std::string workers = StrCat(kWorkers);
  const std::string queued = StrCat(kQueuedConnections);
  const std::string head_bytes = StrCat(kMaxRequestHeadBytes);
  const std::string head_ms = StrCat(kRequestHeadTimeout.count());
  // clang-format off
  const char* options[] = {
      "listening_ports", listening.c_str(),
      "num_threads", workers.c_str(),
      "connection_queue", queued.c_str(),
      "max_request_size", head_bytes.c_str(),
      "request_timeout_ms", head_ms.c_str(),
      "enable_keep_alive", "no",
      // No document_root: nothing but /metrics is served.
      nullptr};
  // clang-format on
  mg_callbacks callbacks = {};
  callbacks.log_message = KeepStartLog;
  callbacks.init_thread = CountThreadStart;
  mg_init_data init = {&callbacks, this, options};
  char error_text[256] = "";
  unsigned error_code = 0;
  mg_error_data error = {&error_code, error_text, sizeof(error_text)};

  struct sigaction sigpipe;
  sigaction(SIGPIPE, nullptr, &sigpipe);
  std::string log;
  start_log = &log;
  // The threads take no signals: SIGTERM and Ctrl-C go to the program's own
  // threads, where an event loop reads them (ShmEventLoop blocks them only
  // in the thread that made it), instead of killing the process here.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  context_ = mg_start2(&init, &error);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  start_log = nullptr;
  // civetweb runs on with fewer workers than asked when it cannot start
  // them all; we would not be bounded as documented.
  if (context_ != nullptr &&
      log.find("Cannot start worker thread") != std::string::npos) {
    mg_stop(context_);
    context_ = nullptr;
  }
  if (context_ == nullptr) {
    sigaction(SIGPIPE, &sigpipe, nullptr);
    return absl::UnavailableError(
        StrCat("cannot serve metrics on ", address, ":", port, ": ",
               Printable(StrCat(error_text, log.empty() ? "" : " (", log,
                                log.empty() ? "" : ")"),
                         400)));
  }
  mg_set_request_handler(context_, "/metrics$", HandleMetrics, this);
  // Each thread ignores SIGPIPE as it starts (civetweb itself sends with
  // MSG_NOSIGNAL); once all have, the program's own choice comes back.
  {
    std::unique_lock<std::mutex> lock(threads_mutex_);
    threads_changed_.wait_for(lock, std::chrono::seconds(30), [this]() {
      return threads_started_ == kWorkers + 1;  // And the accepting thread.
    });
  }
  sigaction(SIGPIPE, &sigpipe, nullptr);
  wake_address_.s_addr =
      ip.s_addr == htonl(INADDR_ANY) ? htonl(INADDR_LOOPBACK) : ip.s_addr;
  mg_server_port ports[1];
  port_ = mg_get_server_ports(context_, 1, ports) == 1 ? ports[0].port : port;
  return absl::OkStatus();
}

void* MetricsServer::CountThreadStart(const mg_context* context, int) {
  auto* server = static_cast<MetricsServer*>(mg_get_user_data(context));
  std::lock_guard<std::mutex> lock(server->threads_mutex_);
  ++server->threads_started_;
  server->threads_changed_.notify_all();
  return nullptr;
}

std::shared_ptr<const std::string> MetricsServer::Text() {
  std::lock_guard<std::mutex> lock(mutex_);
  return text_;
}

int MetricsServer::HandleMetrics(mg_connection* connection, void* server) {
  // A body, if any, is never read: civetweb would read and drop it after
  // the answer, to keep the connection, for as long as the client sends.
  // Closing the connection instead costs the client nothing but a reset.
  mg_disable_connection_keep_alive(connection);
  const char* method = mg_get_request_info(connection)->request_method;
  const bool head = strcmp(method, "HEAD") == 0;
  if (!head && strcmp(method, "GET") != 0) {
    mg_response_header_start(connection, 405);
    mg_response_header_add(connection, "Allow", "GET, HEAD", -1);
    mg_response_header_add(connection, "Content-Length", "0", -1);
    mg_response_header_send(connection);
    return 405;
  }
  const std::shared_ptr<const std::string> text =
      static_cast<MetricsServer*>(server)->Text();
  mg_response_header_start(connection, 200);
  mg_response_header_add(connection, "Content-Type",
                         "text/plain; version=0.0.4", -1);
  mg_response_header_add(connection, "Content-Length",
                         StrCat(text->size()).c_str(), -1);
  mg_response_header_send(connection);
  if (!head) mg_write(connection, text->data(), text->size());
  return 200;
}

void MetricsServer::Publish(std::string text) {
  auto published = std::make_shared<const std::string>(std::move(text));
  std::lock_guard<std::mutex> lock(mutex_);
  text_ = std::move(published);
}

}  // namespace aos
