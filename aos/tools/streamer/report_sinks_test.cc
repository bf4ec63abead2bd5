// The sinks' own behaviour; what each --format prints is tested in
// aos/events/timing_report_format_test.cc and, end to end, by the
// streamer's shell tests.
#include <sstream>

#include "aos/events/timing_report_test_data.h"
#include "aos/tools/streamer/aos_sink.h"
#include "aos/tools/streamer/csv_sink.h"
#include "aos/tools/streamer/metrics_sink.h"
#include "aos/tools/streamer/table_sink.h"
#include "gtest/gtest.h"

namespace aos::streamer {
namespace {

// Captures std::cout for its lifetime.
class CapturedCout {
 public:
  CapturedCout() : old_(std::cout.rdbuf(text_.rdbuf())) {}
  ~CapturedCout() { std::cout.rdbuf(old_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* old_;
};

// The up/down gauge per configured application, label values escaped.
TEST(ReportSinksTest, LivenessMetricsIsAGaugePerApplication) {
  std::vector<ApplicationLiveness> applications(2);
  applications[0].node = "pi1";
  applications[0].name = "ping";
  applications[0].up = true;
  applications[1].node = "pi2";
  applications[1].name = "po\"ng";
  applications[1].up = false;
  EXPECT_EQ(LivenessMetrics(applications),
            "# HELP aos_application_up Whether a configured application sent "
            "a timing report within --silent_after_s (1) or is silent (0).\n"
            "# TYPE aos_application_up gauge\n"
            "aos_application_up{node=\"pi1\",application=\"ping\"} 1\n"
            "aos_application_up{node=\"pi2\",application=\"po\\\"ng\"} 0\n");
  EXPECT_EQ(LivenessMetrics({}), "");
}

TEST(ReportSinksTest, AppendCsvColumnSkipsQuotedLineBreaks) {
  EXPECT_EQ(AppendCsvColumn("a,b\n\"x\ny\",c\n", "report"),
            "a,b,report\n\"x\ny\",c,report\n");
  EXPECT_EQ(AppendCsvColumn("", "summary"), "");
}

TEST(ReportSinksTest, CsvHeaderOnlyWhenStreaming) {
  const auto config = testing::PingPongChannels();
  StreamerOptions options;
  options.format = OutputFormat::kCsv;
  {
    CapturedCout out;
    CsvSink sink(&options, &config.message(), nullptr);
    sink.Start();
    EXPECT_TRUE(out.text().ends_with(",missed_or_lost,window\n")) << out.text();
  }
  options.flags.top = true;
  {
    CapturedCout out;
    CsvSink sink(&options, &config.message(), nullptr);
    sink.Start();
    EXPECT_EQ(out.text(), "");
  }
}

TEST(ReportSinksTest, StreamsEachReportAndSumsUpAtTheEnd) {
  const auto config = testing::PingPongChannels();
  const timing::ReportContents report = testing::DecodedFromJson(
      testing::PingReport(testing::kPingStart, testing::kPingEnd));
  StreamerOptions options;
  options.format = OutputFormat::kAos;
  CapturedCout out;
  AosSink sink(&options, &config.message(), nullptr);
  sink.Start();
  TimingReportAccumulator accumulator;
  accumulator.Add(report);
  sink.OnReport(report, accumulator);
  const std::string streamed = out.text();
  EXPECT_TRUE(streamed.starts_with("ping[3885755]")) << streamed;
  ASSERT_TRUE(sink.Finish(accumulator.Summaries()).ok());
  const std::string summary = out.text().substr(streamed.size());
  EXPECT_TRUE(summary.starts_with("\nAccumulated timing reports :\n\nping["))
      << summary;
}

TEST(ReportSinksTest, NoSummaryWithoutAccumulate) {
  const auto config = testing::PingPongChannels();
  const timing::ReportContents report = testing::DecodedFromJson(
      testing::PingReport(testing::kPingStart, testing::kPingEnd));
  StreamerOptions options;
  options.flags.accumulate = false;
  options.flags.stream = false;
  CapturedCout out;
  TableSink sink(&options, &config.message(), nullptr);
  TimingReportAccumulator accumulator;
  accumulator.Add(report);
  sink.OnReport(report, accumulator);
  ASSERT_TRUE(sink.Finish(accumulator.Summaries()).ok());
  EXPECT_EQ(out.text(), "");
}

}  // namespace
}  // namespace aos::streamer
