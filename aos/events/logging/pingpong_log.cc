#include "aos/events/logging/pingpong_log.h"

#include "aos/events/event_loop_generated.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_reader.h"
#include "aos/events/logging/logger.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "examples/ping_application.h"
#include "examples/ping_generated.h"
#include "examples/pong_application.h"
#include "examples/pong_generated.h"
#include "glog/logging.h"

namespace aos::logging::testing {
namespace {

const FlatbufferDetachedBuffer<Configuration>& ReadConfigOnce(
    std::string_view path) {
  auto read = configuration::ReadConfig(aos::testing::ArtifactPath(path));
  CHECK(read.ok()) << read.status();
  return *new FlatbufferDetachedBuffer<Configuration>(std::move(*read));
}

std::unique_ptr<Logger> StartLogger(EventLoop* loop, const std::string& path,
                                    Compression compression,
                                    monotonic_clock::duration poll_period) {
  auto writer = McapWriter::Create(
      path, {.compression = compression, .chunk_size = 4096});
  CHECK(writer.ok()) << writer.status();
  LoggerOptions options;
  options.poll_period = poll_period;
  auto logger = Logger::Make(loop, std::move(*writer), options);
  CHECK(logger.ok()) << logger.status();
  return std::move(*logger);
}

PingPongCounts Counts(const examples::PingApplication& ping,
                      const examples::PongApplication& pong) {
  PingPongCounts counts;
  counts.pings = ping.pings();
  counts.not_sent = ping.not_sent();
  counts.pongs = ping.pongs();
  counts.late = ping.answers().late();
  counts.origins_checked = ping.origins_checked();
  counts.origins_wrong = ping.origins_wrong();
  counts.answered = pong.answered();
  return counts;
}

// Ping every 10 ms for as long as the simulation runs.
examples::PingOptions PingEvery10Ms() {
  examples::PingOptions options;
  options.period = std::chrono::milliseconds(10);
  options.where = "the simulation";
  return options;
}

}  // namespace

const FlatbufferDetachedBuffer<Configuration>& PingPongConfigBuffer() {
  static const FlatbufferDetachedBuffer<Configuration>& config =
      ReadConfigOnce("examples/pingpong_config.json");
  return config;
}

const Configuration& PingPongConfig() {
  return PingPongConfigBuffer().message();
}

const FlatbufferDetachedBuffer<Configuration>& MultiNodePingPongConfig() {
  static const FlatbufferDetachedBuffer<Configuration>& config =
      ReadConfigOnce("examples/multinode_pingpong_config.json");
  return config;
}

PingPongLog RecordPingPong(const std::string& path, Compression compression,
                           monotonic_clock::duration duration,
                           monotonic_clock::duration poll_period) {
  PingPongLog result;
  SimulatedEventLoopFactory factory(&PingPongConfig());
  std::unique_ptr<EventLoop> logger_loop = factory.MakeEventLoop("aos_logger");
  std::unique_ptr<Logger> logger =
      StartLogger(logger_loop.get(), path, compression, poll_period);

  std::unique_ptr<EventLoop> ping = factory.MakeEventLoop("ping");
  std::unique_ptr<EventLoop> pong = factory.MakeEventLoop("pong");
  std::unique_ptr<EventLoop> observer = factory.MakeEventLoop("observer");
  std::unique_ptr<EventLoop> path_observer =
      factory.MakeEventLoop("path_observer");
  path_observer->SkipTimingReport();
  examples::PingApplication ping_app(ping.get(), PingEvery10Ms());
  examples::PongApplication pong_app(pong.get());
  auto remember = [&](std::string_view channel, int value) {
    const Context& context = observer->context();
    result.sent.push_back(
        SentMessage{.channel = std::string(channel),
                    .monotonic_sent_time = context.monotonic_event_time,
                    .realtime_sent_time = context.realtime_event_time,
                    .value = value,
                    .origins = context.origins});
  };
  observer->MakeWatcher("/test", [&](const examples::Ping& m) {
    remember(kPingChannel, m.value());
  });
  observer->MakeWatcher("/test", [&](const examples::Pong& m) {
    remember(kPongChannel, m.value());
  });
  observer->MakeWatcher("/aos", [&](const aos::timing::Report&) {
    ++result.reports;
    result.report_origins.push_back(observer->context().origins);
  });
  path_observer->MakeWatcher("/test", [](const examples::Pong&) {});
  factory.RunFor(duration);
  absl::Status finished = logger->Finish();
  CHECK(finished.ok()) << finished;
  result.pong_paths = path_observer->watchers().front()->timing().paths;
  result.counts = Counts(ping_app, pong_app);
  return result;
}

MultiNodePingPongLog RecordMultiNodePingPong(
    const std::string& path, monotonic_clock::duration duration) {
  MultiNodePingPongLog result;
  const Configuration& config = MultiNodePingPongConfig().message();
  const Node* pi1 = configuration::GetNode(config, "pi1");
  const Node* pi2 = configuration::GetNode(config, "pi2");
  SimulatedEventLoopFactory factory(&config);
  factory.SetMonotonicOffset(pi2, kPi2MonotonicOffset);
  factory.SetRealtimeOffset(pi2, kPi2RealtimeOffset);
  std::unique_ptr<EventLoop> logger_loop =
      factory.MakeEventLoop("aos_logger", pi2);
  std::unique_ptr<Logger> logger =
      StartLogger(logger_loop.get(), path, Compression::kZstd,
                  monotonic_clock::duration::zero());

  std::unique_ptr<EventLoop> ping = factory.MakeEventLoop("ping", pi1);
  std::unique_ptr<EventLoop> pong = factory.MakeEventLoop("pong", pi2);
  std::unique_ptr<EventLoop> observer = factory.MakeEventLoop("observer", pi2);
  examples::PingApplication ping_app(ping.get(), PingEvery10Ms());
  examples::PongApplication pong_app(pong.get());
  observer->MakeWatcher("/test", [&](const examples::Ping& m) {
    ReceivedPing received{.value = m.value(), .context = observer->context()};
    received.context.data = nullptr;
    result.pings.push_back(received);
  });
  observer->MakeWatcher("/test",
                        [&](const examples::Pong&) { ++result.pongs; });
  factory.RunFor(duration);
  absl::Status finished = logger->Finish();
  CHECK(finished.ok()) << finished;
  result.pi1_boot = factory.boot_uuid(pi1);
  result.pi2_boot = factory.boot_uuid(pi2);
  result.counts = Counts(ping_app, pong_app);
  return result;
}

ReplayedOrigins ReplayWatchingOrigins(const std::string& path,
                                      std::string_view name,
                                      std::string_view type) {
  auto log = LogFileReader::Open(path);
  CHECK(log.ok()) << log.status();
  SimulatedEventLoopFactory factory((*log)->configuration());
  LogReader replay(log->get(), &factory);
  std::unique_ptr<EventLoop> watcher =
      factory.MakeEventLoop("origins_watcher", (*log)->node());
  watcher->SkipTimingReport();
  const Channel* channel = configuration::GetChannel(
      *(*log)->configuration(), name, type, "origins_watcher", (*log)->node());
  CHECK(channel != nullptr) << "no channel " << name << " " << type;
  ReplayedOrigins result;
  watcher->MakeRawWatcher(channel, [&](const Context& context, const void*) {
    result.origins.push_back(context.origins);
  });
  factory.Run();
  result.paths = watcher->watchers().front()->timing().paths;
  return result;
}

}  // namespace aos::logging::testing
