#include "aos/tools/metrics_exporter.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "aos/events/timing_report_test_data.h"
#include "aos/testing/path.h"
#include "aos/tools/http_test_client.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#ifdef __SANITIZE_THREAD__
// Under `bazel test --config=tsan` (docs/building.md, "ThreadSanitizer"):
// Debian's libcivetweb (1.15) is built without REENTRANT_TIME, so its worker
// threads format the HTTP Date header with gmtime(), whose result is one
// static buffer every thread shares: two responses formatted at once race on
// it. The race is inside the library and touches only that header, never the
// metrics body MetricsServer hands it; the fix is building civetweb with
// REENTRANT_TIME, which is not ours to build. Only races with a civetweb
// frame are suppressed: one in our own code still fails the test.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libcivetweb.so\n";
}
#endif

namespace aos {
namespace {

using ::aos::testing::DecodedFromJson;
using ::aos::testing::kPingEnd;
using ::aos::testing::kPingStart;
using ::aos::testing::PingPongChannels;
using ::aos::testing::PingReport;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

// How long a test waits for what must come on a loaded machine.
constexpr std::chrono::milliseconds kGenerous = std::chrono::seconds(30);

std::string PingMetrics() {
  return RenderMetrics({DecodedFromJson(PingReport(kPingStart, kPingEnd))},
                       PingPongChannels().message());
}

// Prometheus' own checker (Debian's prometheus package) accepts `text`.
void ExpectPromtoolAccepts(const std::string& text) {
  ASSERT_EQ(access("/usr/bin/promtool", X_OK), 0)
      << "promtool is missing: tools/aos.sh install installs Debian's "
         "prometheus package";
  const std::string dir = aos::testing::TestTempDir();
  std::ofstream(dir + "/metrics.txt") << text;
  Subprocess promtool(
      "/bin/sh", {"-c", "promtool check metrics < " + dir + "/metrics.txt"},
      dir);
  EXPECT_EQ(promtool.Wait(), 0) << promtool.Stdout() << promtool.Stderr();
  EXPECT_EQ(promtool.Stdout() + promtool.Stderr(), "");
}

TEST(MetricsExporterTest, HistogramsPerCallbackWithCumulativeBuckets) {
  const std::string text = PingMetrics();
  const std::string labels =
      "node=\"\",application=\"ping\",kind=\"watcher\",name=\"/test "
      "aos.examples.Pong\"";
  EXPECT_THAT(text, HasSubstr("# TYPE aos_wakeup_latency_seconds histogram\n"));
  // 50 samples at 5.4 us, 50 at 102 us (layout 1 buckets 266 and 402).
  EXPECT_THAT(text, HasSubstr("aos_wakeup_latency_seconds_bucket{" + labels +
                              ",le=\"5e-06\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("aos_wakeup_latency_seconds_bucket{" + labels +
                              ",le=\"1e-05\"} 50\n"));
  EXPECT_THAT(text, HasSubstr("aos_wakeup_latency_seconds_bucket{" + labels +
                              ",le=\"1e-04\"} 50\n"));
  EXPECT_THAT(text, HasSubstr("aos_wakeup_latency_seconds_bucket{" + labels +
                              ",le=\"2e-04\"} 100\n"));
  EXPECT_THAT(text, HasSubstr("aos_wakeup_latency_seconds_bucket{" + labels +
                              ",le=\"+Inf\"} 100\n"));
  EXPECT_THAT(text, HasSubstr("aos_wakeup_latency_seconds_count{" + labels +
                              "} 100\n"));
  EXPECT_THAT(
      text, HasSubstr("aos_missed_cycles_total{node=\"\",application=\"ping\","
                      "kind=\"timer\",name=\"ping\"} 2\n"));
  EXPECT_THAT(text,
              HasSubstr("aos_send_errors_total{node=\"\",application=\"ping\","
                        "kind=\"sender\",name=\"/test aos.examples.Ping\","
                        "error=\"sent_too_fast\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("aos_shared_memory_damage_total{node=\"\","
                              "application=\"ping\",kind=\"sender\",name="
                              "\"/test aos.examples.Ping\",damage=\"refused_"
                              "wakeups\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("aos_reopened_queue_files_total{node=\"\","
                              "application=\"ping\",kind=\"loop\",name="
                              "\"ping\"} 0\n"));
  // Each family's HELP and TYPE once.
  const size_t first = text.find("# TYPE aos_calls_total counter");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(text.find("# TYPE aos_calls_total counter", first + 1),
            std::string::npos);
}

TEST(MetricsExporterTest, ARestartedApplicationIsExportedOnce) {
  timing::ReportContents old_process =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  timing::ReportContents new_process =
      DecodedFromJson(PingReport(kPingEnd, kPingEnd + 1'000'000'000));
  new_process.header.pid = 7;
  new_process.timers[0].missed_cycles = 9;
  const std::string text =
      RenderMetrics({old_process, new_process}, PingPongChannels().message());
  EXPECT_THAT(text, HasSubstr("kind=\"timer\",name=\"ping\"} 9\n"));
  EXPECT_THAT(text, Not(HasSubstr("kind=\"timer\",name=\"ping\"} 2\n")));
}

// Served over HTTP to a real client, and Prometheus' own checker accepts it.
TEST(MetricsExporterTest, ServedOverHttpAndPromtoolAcceptsIt) {
  MetricsServer server;
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  server.Publish(PingMetrics());
  const absl::StatusOr<HttpResponse> response =
      HttpGet(server.port(), "/metrics", kGenerous);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->Header("Content-Type"), "text/plain; version=0.0.4");
  EXPECT_EQ(response->body, PingMetrics());
  ExpectPromtoolAccepts(response->body);
}

// Per path: the age histogram, labelled by origin id, hops and route, and
// the deadline overruns where a deadline was declared.
TEST(MetricsExporterTest, PathsHaveAgeHistogramsAndDeadlineOverruns) {
  testing::PingPongPaths paths;
  const testing::PingPongPathReports& reports = paths.reports();
  const PathDirectory& directory = paths.directory();
  const std::string text =
      RenderMetrics({reports.ping, reports.pong}, paths.config(), &directory);
  const std::string watcher =
      "node=\"\",application=\"ping\",kind=\"watcher\",name=\"/test "
      "aos.examples.Pong\"";
  const std::string labels =
      StrCat(watcher, ",origin_id=\"", FormatOriginId(reports.origin_id),
             "\",hops=\"2\",route=\"ping timer \\\"ping\\\" → /test "
             "aos.examples.Ping → pong → /test aos.examples.Pong → ping "
             "watcher\"");
  EXPECT_THAT(text, HasSubstr("# TYPE aos_path_age_seconds histogram\n"));
  // 50 ages of 1 ms, 50 of 3 ms.
  EXPECT_THAT(text, HasSubstr("aos_path_age_seconds_bucket{" + labels +
                              ",le=\"0.001\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("aos_path_age_seconds_bucket{" + labels +
                              ",le=\"0.002\"} 50\n"));
  EXPECT_THAT(text, HasSubstr("aos_path_age_seconds_bucket{" + labels +
                              ",le=\"0.005\"} 100\n"));
  EXPECT_THAT(text,
              HasSubstr("aos_path_age_seconds_count{" + labels + "} 100\n"));
  EXPECT_THAT(
      text, HasSubstr("aos_path_deadline_overruns_total{" + labels + "} 50\n"));
  EXPECT_THAT(text,
              HasSubstr("aos_path_samples_dropped_total{" + watcher + "} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("aos_invalid_path_origins_total{" + watcher + "} 0\n"));
  // pong's path declared no deadline: no overrun counter.
  EXPECT_THAT(text, Not(HasSubstr("aos_path_deadline_overruns_total{node="
                                  "\"\",application=\"pong\"")));
  ExpectPromtoolAccepts(text);
  // Without a directory the route is the origin id and hops.
  EXPECT_THAT(RenderMetrics({reports.pong}, paths.config()),
              HasSubstr(StrCat("route=\"", UnresolvedPath(reports.origin_id, 1),
                               "\"")));
}

// The server closes every connection, so its side keeps them in TIME_WAIT
// for a minute: a streamer started again at once still gets its port.
TEST(MetricsExporterTest, APortJustServedOnCanBeServedOnAgain) {
  int port = 0;
  {
    MetricsServer first;
    ASSERT_TRUE(first.Start("127.0.0.1", 0).ok());
    port = first.port();
    ASSERT_TRUE(HttpGet(port, "/metrics", kGenerous).ok());
  }
  MetricsServer second;
  const absl::Status status = second.Start("127.0.0.1", port);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(MetricsExporterTest, APortInUseIsNamed) {
  MetricsServer first;
  ASSERT_TRUE(first.Start("127.0.0.1", 0).ok());
  MetricsServer second;
  const absl::Status status = second.Start("127.0.0.1", first.port());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("cannot serve metrics on 127.0.0.1:" +
                        std::to_string(first.port())));
}

// A field of /proc/self/status in KiB (VmRSS, VmHWM); the server runs in
// this process.
int64_t StatusKib(std::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(StrCat(field, ":"), 0) == 0) {
      return std::stoll(line.substr(field.size() + 1));
    }
  }
  ADD_FAILURE() << "no " << field << " in /proc/self/status";
  return 0;
}

// Hostile clients of one server, held by a thread of their own until
// destroyed: `idle` connections that never send a byte, and `trickling` ones
// that send one byte of a request head a second and never end it. One the
// server closes is opened again at once, so the load stays what it was, as
// an attacker would keep it.
class HostileConnections {
 public:
  HostileConnections(int port, int idle, int trickling) : port_(port) {
    for (int i = 0; i < idle + trickling; ++i) {
      connections_.push_back(
          {std::make_unique<LoopbackConnection>(port, kGenerous), i >= idle});
      if (!connections_.back().connection->ok()) {
        error_ = connections_.back().connection->error();
        return;
      }
      Trickle(connections_.back());
    }
    thread_ = std::thread([this]() { Run(); });
  }
  ~HostileConnections() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // "" once all are open, else why one could not be opened.
  const std::string& error() const { return error_; }

  // Waits until the server has closed each idle and each trickling
  // connection at least once (they are open again by then); false if it
  // has not within `timeout`.
  bool WaitUntilEachWasClosed(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout, [this]() {
      for (const Held& held : connections_) {
        if (held.closed_by_server == 0) return false;
      }
      return true;
    });
  }

  // How many times the server closed an idle / a trickling connection.
  std::string Closes() {
    std::lock_guard<std::mutex> lock(mutex_);
    int idle = 0, trickling = 0;
    for (const Held& held : connections_) {
      (held.trickling ? trickling : idle) += held.closed_by_server;
    }
    return StrCat(idle, " idle and ", trickling, " trickling connections");
  }

 private:
  struct Held {
    std::unique_ptr<LoopbackConnection> connection;
    bool trickling;
    int closed_by_server = 0;
    size_t bytes_sent = 0;
  };

  // One more byte of a head that never ends.
  static void Trickle(Held& held) {
    if (!held.trickling) return;
    static constexpr std::string_view kHead =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Trickle: ";
    const char byte =
        held.bytes_sent < kHead.size() ? kHead[held.bytes_sent] : 'a';
    if (held.connection->SendSome(std::string_view(&byte, 1)) == 1) {
      ++held.bytes_sent;
    }
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!changed_.wait_for(lock, std::chrono::seconds(1),
                              [this]() { return stop_; })) {
      for (Held& held : connections_) {
        if (held.connection->ClosedByPeer()) {
          auto fresh = std::make_unique<LoopbackConnection>(
              port_, std::chrono::seconds(1));
          if (!fresh->ok()) continue;  // Again in a second.
          held.connection = std::move(fresh);
          held.bytes_sent = 0;
          ++held.closed_by_server;
        }
        Trickle(held);
      }
      changed_.notify_all();
    }
  }

  const int port_;
  std::string error_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::vector<Held> connections_;
};

// The fault-injection campaign's stall: 8 trickling connections took every
// worker of the old server, and /metrics went unanswered for as long as
// they lasted. Held idle and trickling connections must not keep /metrics
// from answering, neither at first nor once the server has let go of them
// and they came back.
TEST(MetricsServerTest, AnswersWhileIdleAndTricklingConnectionsAreHeld) {
  MetricsServer server;
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  server.Publish(PingMetrics());
  HostileConnections hostile(server.port(), 200, 8);
  ASSERT_EQ(hostile.error(), "");

  const auto scrape = [&](std::string_view when) {
    const Clock::time_point start = Clock::now();
    const absl::StatusOr<HttpResponse> response =
        HttpGet(server.port(), "/metrics", kGenerous);
    const std::chrono::duration<double, std::milli> took = Clock::now() - start;
    ASSERT_TRUE(response.ok())
        << "/metrics " << when
        << " while 200 idle and 8 trickling connections were held: "
        << response.status();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, PingMetrics());
    std::cout << "/metrics answered in " << took.count() << " ms " << when
              << " while 200 idle and 8 trickling connections were held\n";
  };
  scrape("at first");
  if (HasFatalFailure()) return;
  ASSERT_TRUE(hostile.WaitUntilEachWasClosed(kGenerous))
      << "the server did not close every idle and trickling connection "
         "within 30 s; it closed "
      << hostile.Closes();
  scrape("after the server closed them and they came back");
  std::cout << "the server closed " << hostile.Closes() << "\n";
}

// What became of a request that declared a huge body and kept sending it.
struct HugeBodyOutcome {
  size_t sent = 0;      // Body bytes the server's socket took.
  bool closed = false;  // The server closed while we were still sending.
  absl::StatusOr<std::string> answer = std::string();
};

// Sends `method` `path` declaring `declared` body bytes, then body bytes as
// fast as the server takes them, until it closes the connection, the whole
// body is sent, or 30 s have passed; then reads what it answered.
HugeBodyOutcome StreamHugeBody(int port, std::string_view method,
                               std::string_view path, size_t declared) {
  HugeBodyOutcome outcome;
  LoopbackConnection connection(port, kGenerous);
  if (!connection.ok()) {
    outcome.answer = absl::UnavailableError(connection.error());
    return outcome;
  }
  if (!connection.SendAll(
          StrCat(method, " ", path,
                 " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "Content-Type: application/octet-stream\r\nContent-Length: ",
                 declared, "\r\n\r\n"),
          kGenerous)) {
    outcome.closed = true;
  }
  const std::string chunk(size_t{1} << 20, 'x');
  const Clock::time_point deadline = Clock::now() + kGenerous;
  while (!outcome.closed && outcome.sent < declared &&
         Clock::now() < deadline) {
    // The answer may come first: a server that then reads on (to keep the
    // connection) would take the whole body, so keep sending regardless.
    const short ready =
        connection.Poll(POLLOUT, std::chrono::milliseconds(100));
    if (ready & (POLLERR | POLLHUP)) outcome.closed = true;
    if ((ready & POLLOUT) == 0) continue;
    const ssize_t n = connection.SendSome(
        std::string_view(chunk).substr(0, declared - outcome.sent));
    if (n < 0) {
      outcome.closed = true;
    } else {
      outcome.sent += static_cast<size_t>(n);
    }
  }
  outcome.answer = connection.ReadUntilClosed(kGenerous);
  return outcome;
}

// The campaign's balloon: a 256 MiB body was read whole before the 404.
// Requests that declare 256 MiB and keep sending are answered without the
// body being read, and the connection is closed at once instead of being
// drained: the server's memory stays where it was and no worker is held.
TEST(MetricsServerTest, AHugeBodyIsNeitherBufferedNorDrained) {
  MetricsServer server;
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  server.Publish(PingMetrics());
  constexpr size_t kDeclared = size_t{256} << 20;
  const int64_t rss_before_kib = StatusKib("VmRSS");
  const struct {
    std::string_view method;
    std::string_view path;
    int status;
  } requests[] = {{"POST", "/metrics", 405},
                  {"GET", "/metrics", 200},
                  {"POST", "/elsewhere", 404}};
  for (const auto& request : requests) {
    SCOPED_TRACE(StrCat(request.method, " ", request.path));
    const HugeBodyOutcome outcome =
        StreamHugeBody(server.port(), request.method, request.path, kDeclared);
    std::cout << request.method << " " << request.path << " declaring "
              << kDeclared << " bytes: the server's socket took "
              << outcome.sent << " bytes before it closed; answer: "
              << (outcome.answer.ok() ? Printable(outcome.answer->substr(0, 40))
                                      : outcome.answer.status().ToString())
              << "\n";
    EXPECT_TRUE(outcome.closed)
        << "the server neither closed nor read the body within 30 s";
    EXPECT_LT(outcome.sent, kDeclared) << "the server read the whole body";
    // A reset may overtake the answer; when it came, it is the right one.
    if (outcome.answer.ok() && !outcome.answer->empty()) {
      const absl::StatusOr<HttpResponse> response =
          ParseHttpResponse(*outcome.answer);
      ASSERT_TRUE(response.ok()) << response.status();
      EXPECT_EQ(response->status, request.status);
    }
  }
  const int64_t growth_kib = StatusKib("VmHWM") - rss_before_kib;
  std::cout << "peak RSS grew by " << growth_kib << " KiB\n";
  EXPECT_LT(growth_kib, 32 * 1024) << "a body was buffered";
  // The server goes on.
  EXPECT_TRUE(HttpGet(server.port(), "/metrics", kGenerous).ok());
}

// civetweb can serve files, WebDAV and CGI; with no document root it must
// serve nothing but /metrics.
TEST(MetricsServerTest, NothingButMetricsIsServed) {
  MetricsServer server;
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  server.Publish(PingMetrics());
  for (std::string_view request :
       {"GET / HTTP/1.1\r\n", "GET /etc/passwd HTTP/1.1\r\n",
        "GET /../../../../etc/passwd HTTP/1.1\r\n",
        "GET /metrics/../../etc/passwd HTTP/1.1\r\n",
        "GET /metrics.txt HTTP/1.1\r\n", "GET /cgi-bin/test.cgi HTTP/1.1\r\n",
        "PROPFIND / HTTP/1.1\r\nDepth: 1\r\n",
        "PUT /uploaded HTTP/1.1\r\nContent-Length: 3\r\n",
        "DELETE /metrics HTTP/1.1\r\n", "OPTIONS * HTTP/1.1\r\n"}) {
    SCOPED_TRACE(Printable(request));
    LoopbackConnection connection(server.port(), kGenerous);
    ASSERT_TRUE(connection.ok()) << connection.error();
    ASSERT_TRUE(connection.SendAll(
        StrCat(request, "Host: 127.0.0.1\r\nConnection: close\r\n\r\nabc"),
        kGenerous));
    const absl::StatusOr<std::string> answer =
        connection.ReadUntilClosed(kGenerous);
    ASSERT_TRUE(answer.ok()) << answer.status();
    if (answer->empty()) continue;  // Closed without an answer: refused too.
    const absl::StatusOr<HttpResponse> response = ParseHttpResponse(*answer);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_GE(response->status, 400) << response->head;
    EXPECT_THAT(response->body, Not(HasSubstr("root:")));
  }
}

// civetweb's threads set SIGPIPE to be ignored as they start; the program
// keeps the disposition it had (a streamer whose stdout pipe closes still
// ends by SIGPIPE).
TEST(MetricsServerTest, SigpipeIsLeftAsItWas) {
  struct sigaction before;
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &before), 0);
  ASSERT_EQ(before.sa_handler, SIG_DFL);
  MetricsServer server;
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  struct sigaction after;
  ASSERT_EQ(sigaction(SIGPIPE, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
}

// Headers are bounded in total, not only per line: a head of many short
// header lines is refused, not parsed.
TEST(MetricsServerTest, AnOversizedRequestHeadIsRefused) {
  MetricsServer server;
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  server.Publish(PingMetrics());
  std::string head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 20000; ++i) StrAppend(&head, "X-", i, ": a\r\n");
  head += "\r\n";
  LoopbackConnection connection(server.port(), kGenerous);
  ASSERT_TRUE(connection.ok()) << connection.error();
  connection.SendAll(head, kGenerous);  // May stop early: the server closed.
  const absl::StatusOr<std::string> answer =
      connection.ReadUntilClosed(kGenerous);
  ASSERT_TRUE(answer.ok()) << answer.status();
  const absl::StatusOr<HttpResponse> response = ParseHttpResponse(*answer);
  ASSERT_TRUE(response.ok()) << response.status();
  // civetweb says 400 when its buffer fills before the blank line.
  EXPECT_THAT(response->status, ::testing::AnyOf(400, 413, 431))
      << response->head;
}

// The campaign sent 2,016 malformed requests without a crash; this keeps
// that so: 2,000 mutants of valid requests, each sent whole and then our
// end closed, each answered or closed, and /metrics still served after.
TEST(MetricsServerTest, MalformedRequestsAreAnsweredOrClosed) {
  MetricsServer server;
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  server.Publish(PingMetrics());
  const std::vector<std::string> seeds = {
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
      "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
      "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n0\r\n\r\n",
      "HEAD /metrics?a=b%20c HTTP/1.0\r\nHost: x\r\nExpect: 100-continue\r\n"
      "Range: bytes=0-10\r\n\r\n",
  };
  std::mt19937 random(21);
  int answered = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string request = seeds[i % seeds.size()];
    const int mutations = 1 + static_cast<int>(random() % 8);
    for (int m = 0; m < mutations; ++m) {
      const size_t at = random() % (request.size() + 1);
      const char byte = static_cast<char>(random() % 256);
      switch (random() % 4) {
        case 0:  // Replace a byte.
          if (at < request.size()) request[at] = byte;
          break;
        case 1:  // Insert one.
          request.insert(at, 1, byte);
          break;
        case 2:  // Drop one.
          if (at < request.size()) request.erase(at, 1);
          break;
        case 3:  // Repeat a piece, up to 4 KiB.
          request.insert(at, request.substr(at, random() % 4096));
          break;
      }
    }
    LoopbackConnection connection(server.port(), kGenerous);
    ASSERT_TRUE(connection.ok())
        << "request " << i << ": " << connection.error();
    connection.SendAll(request, kGenerous);
    connection.FinishSending();
    const absl::StatusOr<std::string> answer =
        connection.ReadUntilClosed(kGenerous);
    ASSERT_TRUE(answer.ok() || absl::IsUnavailable(answer.status()))
        << "request " << i << " " << Printable(request) << ": "
        << answer.status();
    if (answer.ok() && !answer->empty()) ++answered;
  }
  std::cout << "of 2000 malformed requests, " << answered
            << " were answered and " << 2000 - answered
            << " closed without an answer\n";
  const absl::StatusOr<HttpResponse> response =
      HttpGet(server.port(), "/metrics", kGenerous);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, PingMetrics());
}

}  // namespace
}  // namespace aos
