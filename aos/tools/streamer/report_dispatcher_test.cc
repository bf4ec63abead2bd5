#include "aos/tools/streamer/report_dispatcher.h"

#include <string>
#include <vector>

#include "aos/events/timing_report_test_data.h"
#include "gtest/gtest.h"

namespace aos::streamer {
namespace {

// Delivers the messages a test gives it, as the live and log sources do.
class FakeSource : public ReportSource {
 public:
  explicit FakeSource(const Configuration* config) : config_(config) {}
  const Configuration& configuration() const override { return *config_; }
  std::string ConfigDescription() const override { return "the test's"; }
  std::string ConfigMismatchAdvice() const override { return "fix it"; }
  absl::Status Subscribe(const std::vector<NodeChannel>&,
                         const std::vector<NodeChannel>&,
                         const std::vector<NodeChannel>&,
                         ReportReceiver*) override {
    return absl::OkStatus();
  }
  void Run() override {}
  void Stop() override { ++stops; }
  void SayWhatWasSeen() const override {}

  int stops = 0;

 private:
  const Configuration* config_;
};

// Records what reaches a sink.
class RecordingSink : public ReportSink {
 public:
  void OnReport(const timing::ReportContents& report,
                const TimingReportAccumulator& accumulator) override {
    names.push_back(report.header.name);
    summaries = accumulator.Summaries().size();
  }
  std::vector<std::string> names;
  size_t summaries = 0;
};

std::string Report(std::string_view name, int pid) {
  std::string json =
      testing::PingReport(testing::kPingStart, testing::kPingEnd);
  json.replace(json.find("\"ping\""), 6, StrCat("\"", name, "\""));
  json.replace(json.find("3885755"), 7, StrCat(pid));
  return json;
}

class ReportDispatcherTest : public ::testing::Test {
 protected:
  void Deliver(std::string_view json) {
    const flatbuffers::DetachedBuffer buffer = testing::ReportFromJson(json);
    Context context;
    context.size = buffer.size();
    dispatcher_->OnReport(context, buffer.data());
  }
  void Make(StreamerOptions options) {
    options_ = std::move(options);
    dispatcher_.emplace(&options_, &source_, &directory_,
                        std::vector<ReportSink*>{&sink_});
  }

  FlatbufferDetachedBuffer<Configuration> config_ = testing::PingPongChannels();
  FakeSource source_{&config_.message()};
  PathDirectory directory_{&config_.message()};
  RecordingSink sink_;
  StreamerOptions options_;
  std::optional<ReportDispatcher> dispatcher_;
};

TEST_F(ReportDispatcherTest, FiltersAndAccumulatesWhatMatches) {
  StreamerOptions options;
  options.applications = {"ping"};
  options.flags.pid = 7;
  Make(options);
  Deliver(Report("ping", 7));
  Deliver(Report("pong", 7));
  Deliver(Report("ping", 8));
  Deliver(Report("ping", 7));
  EXPECT_EQ(sink_.names, (std::vector<std::string>{"ping", "ping"}));
  EXPECT_EQ(sink_.summaries, 1u);
  EXPECT_EQ(dispatcher_->tally().matched, 2);
  // Every valid report is seen, matched or not.
  EXPECT_EQ(dispatcher_->tally().SeenNames(), "ping, pong");
  EXPECT_EQ(dispatcher_->malformed(), 0);
}

TEST_F(ReportDispatcherTest, CountsMalformedReports) {
  Make({});
  const std::string garbage = "not a flatbuffer at all";
  Context context;
  context.size = garbage.size();
  dispatcher_->OnReport(context, garbage.data());
  dispatcher_->OnBridgeStatistics("pi1", context, garbage.data());
  EXPECT_EQ(dispatcher_->malformed(), 2);
  EXPECT_TRUE(sink_.names.empty());
  EXPECT_EQ(dispatcher_->tally().SeenNames(), "nobody");
}

TEST_F(ReportDispatcherTest, StopsTheSourceAtCount) {
  StreamerOptions options;
  options.flags.count = 2;
  Make(options);
  Deliver(Report("ping", 1));
  EXPECT_EQ(source_.stops, 0);
  Deliver(Report("ping", 1));
  EXPECT_EQ(source_.stops, 1);
  // A log may still hold reports: they are not shown.
  Deliver(Report("ping", 1));
  EXPECT_EQ(sink_.names.size(), 2u);
}

}  // namespace
}  // namespace aos::streamer
