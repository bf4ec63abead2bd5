#include "aos/tools/metrics_exporter.h"

#include <httplib.h>
#include <unistd.h>

#include <fstream>

#include "aos/events/timing_report_test_data.h"
#include "aos/testing/path.h"
#include "aos/util/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::aos::testing::DecodedFromJson;
using ::aos::testing::kPingEnd;
using ::aos::testing::kPingStart;
using ::aos::testing::PingPongChannels;
using ::aos::testing::PingReport;
using ::testing::HasSubstr;
using ::testing::Not;

std::string PingMetrics() {
  return RenderMetrics({DecodedFromJson(PingReport(kPingStart, kPingEnd))},
                       PingPongChannels().message());
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
  httplib::Client client("127.0.0.1", server.port());
  const auto response = client.Get("/metrics");
  ASSERT_TRUE(response) << "no answer from port " << server.port();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->get_header_value("Content-Type"),
            "text/plain; version=0.0.4");
  EXPECT_EQ(response->body, PingMetrics());

  ASSERT_EQ(access("/usr/bin/promtool", X_OK), 0)
      << "promtool is missing: tools/aos.sh install installs Debian's "
         "prometheus package";
  const std::string dir = aos::testing::TestTempDir();
  std::ofstream(dir + "/metrics.txt") << response->body;
  Subprocess promtool(
      "/bin/sh", {"-c", "promtool check metrics < " + dir + "/metrics.txt"},
      dir);
  EXPECT_EQ(promtool.Wait(), 0) << promtool.Stdout() << promtool.Stderr();
  EXPECT_EQ(promtool.Stdout() + promtool.Stderr(), "");
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

}  // namespace
}  // namespace aos
