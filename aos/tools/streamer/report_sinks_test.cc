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

// The header comes once, before the first row: a streamed report's, or
// the summaries' where nothing streamed.
TEST(ReportSinksTest, CsvHeaderBeforeTheFirstRow) {
  const auto config = testing::PingPongChannels();
  const timing::ReportContents report = testing::DecodedFromJson(
      testing::PingReport(testing::kPingStart, testing::kPingEnd));
  TimingReportAccumulator accumulator;
  accumulator.Add(report);
  auto header_count = [](const std::string& text) {
    size_t count = 0;
    for (size_t at = text.find(",missed_or_lost,window\n");
         at != std::string::npos;
         at = text.find(",missed_or_lost,window\n", at + 1)) {
      ++count;
    }
    return count;
  };
  for (const bool stream : {true, false}) {
    for (const bool top : {false, true}) {
      StreamerOptions options;
      options.format = OutputFormat::kCsv;
      options.flags.stream = stream;
      options.flags.top = top;
      CapturedCout out;
      CsvSink sink(&options, &config.message(), nullptr);
      sink.Start();
      const bool streams = stream && !top;
      EXPECT_EQ(out.text().ends_with(",missed_or_lost,window\n"), streams)
          << "stream " << stream << ", top " << top << ": " << out.text();
      sink.OnReport(report, accumulator);
      ASSERT_TRUE(sink.Finish(accumulator.Summaries()).ok());
      const std::string text = out.text();
      EXPECT_TRUE(text.starts_with("time_s,")) << text;
      EXPECT_EQ(header_count(text), 1u) << text;
      EXPECT_TRUE(text.ends_with(",summary\n")) << text;
    }
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
