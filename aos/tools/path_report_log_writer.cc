// For streamer_paths_test: an MCAP log whose timing reports carry paths,
// which no event loop sends yet (issue 23): ping's and pong's reports of
// PingPongWithPaths() (aos/events/timing_report_test_data.h), with the
// channel indices of --config, three windows each, sent on /aos in
// simulation and recorded by the logger.
#include <iostream>

#include "aos/configuration.h"
#include "aos/events/channel_description.h"
#include "aos/events/logging/logger.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/events/timing_report_test_data.h"
#include "aos/init.h"
#include "gflags/gflags.h"

DEFINE_string(config, "", "The configuration: /aos and ping's and pong's.");
DEFINE_string(log, "", "The MCAP log to write.");

namespace aos {
namespace {

// `what`: a string or an absl::Status's message.
template <typename Text>
int Fail(const Text& what) {
  std::cerr << "path_report_log_writer: " << StrCat(what) << "\n";
  return 1;
}

// The index of "/test `type`" in `config`, or -1.
int TestChannel(const Configuration& config, std::string_view type) {
  for (int i = 0; i < static_cast<int>(config.channels()->size()); ++i) {
    if (DescribeChannel(config, i) == StrCat("/test ", type)) return i;
  }
  return -1;
}

int Main() {
  auto config = configuration::ReadConfig(FLAGS_config);
  if (!config.ok()) return Fail(config.status().message());
  const int ping_channel = TestChannel(config->message(), "aos.examples.Ping");
  const int pong_channel = TestChannel(config->message(), "aos.examples.Pong");
  if (ping_channel < 0 || pong_channel < 0) {
    return Fail(StrCat(FLAGS_config, " has no /test Ping or Pong"));
  }
  testing::PingPongPathReports reports = testing::PingPongWithPaths();
  reports.ping.watchers[0].channel_index = pong_channel;
  reports.ping.senders[0].channel_index = ping_channel;
  reports.pong.watchers[0].channel_index = ping_channel;
  reports.pong.senders[0].channel_index = pong_channel;

  SimulatedEventLoopFactory factory(&config->message());
  std::unique_ptr<EventLoop> logger_loop = factory.MakeEventLoop("aos_logger");
  logger_loop->SkipTimingReport();
  auto writer = logging::McapWriter::Create(FLAGS_log, {});
  if (!writer.ok()) return Fail(writer.status().message());
  auto logger =
      logging::Logger::Make(logger_loop.get(), std::move(*writer), {});
  if (!logger.ok()) return Fail(logger.status().message());

  std::unique_ptr<EventLoop> reporter = factory.MakeEventLoop("reporter");
  reporter->SkipTimingReport();
  std::unique_ptr<RawSender> sender =
      reporter->MakeRawSender(reporter->FindChannel(
          "/aos", "aos.timing.Report", configuration::ChannelAccess::kSend));
  int window = 0;
  TimerHandler* timer = reporter->AddTimer([&]() {
    for (timing::ReportContents* report : {&reports.ping, &reports.pong}) {
      report->header.monotonic_start_ns =
          testing::kPingStart + window * int64_t{1'000'000'000};
      report->header.monotonic_end_ns =
          testing::kPingEnd + window * int64_t{1'000'000'000};
      const flatbuffers::DetachedBuffer bytes =
          timing::EncodeReportContents(*report);
      sender->CheckOk(sender->Send(bytes.data(), bytes.size()));
    }
    ++window;
  });
  reporter->OnRun([&]() {
    timer->Schedule(reporter->monotonic_now() + std::chrono::seconds(1),
                    std::chrono::seconds(1));
  });
  factory.RunFor(std::chrono::milliseconds(3500));
  if (absl::Status finished = (*logger)->Finish(); !finished.ok()) {
    return Fail(finished.message());
  }
  return 0;
}

}  // namespace
}  // namespace aos

int main(int argc, char** argv) {
  aos::InitGoogle(&argc, &argv,
                  "Usage: path_report_log_writer --config=C --log=L\n"
                  "Writes a log of timing reports that carry paths.");
  return aos::Main();
}
