#include "aos/events/logging/pingpong_log.h"

#include "aos/events/event_loop_generated.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_reader.h"
#include "aos/events/logging/logger.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_generated.h"
#include "aos/testing/test_reply_generated.h"
#include "glog/logging.h"

namespace aos::logging::testing {
namespace {

const FlatbufferDetachedBuffer<Configuration>& ReadTestConfig(
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

// Ping sends a TestMessage (value 1, 2, ...) every 10 ms; pong answers each
// with a TestReply of the same value.
class PingAndPong {
 public:
  PingAndPong(EventLoop* ping, EventLoop* pong)
      : ping_(ping),
        ping_sender_(ping->MakeSender<aos::testing::TestMessage>("/test")),
        pong_sender_(pong->MakeSender<aos::testing::TestReply>("/test")) {
    TimerHandler* timer = ping->AddTimer([this]() { Ping(); });
    timer->set_name("ping");
    ping->OnRun([this, timer]() {
      timer->Schedule(ping_->monotonic_now() + std::chrono::milliseconds(10),
                      std::chrono::milliseconds(10));
    });
    pong->MakeWatcher("/test", [this](const aos::testing::TestMessage& m) {
      auto builder = pong_sender_.MakeBuilder();
      auto reply = builder.MakeBuilder<aos::testing::TestReply>();
      reply.add_value(m.value());
      reply.add_initial_send_time(m.send_time());
      builder.CheckOk(builder.Send(reply.Finish()));
    });
  }
  PingAndPong(const PingAndPong&) = delete;
  PingAndPong& operator=(const PingAndPong&) = delete;

 private:
  void Ping() {
    auto builder = ping_sender_.MakeBuilder();
    auto message = builder.MakeBuilder<aos::testing::TestMessage>();
    message.add_value(++count_);
    message.add_send_time(ping_->monotonic_now().time_since_epoch().count());
    builder.CheckOk(builder.Send(message.Finish()));
  }

  EventLoop* const ping_;
  Sender<aos::testing::TestMessage> ping_sender_;
  Sender<aos::testing::TestReply> pong_sender_;
  int count_ = 0;
};

}  // namespace

const FlatbufferDetachedBuffer<Configuration>& TestConfigBuffer() {
  static const FlatbufferDetachedBuffer<Configuration>& config =
      ReadTestConfig("aos/testing/test_config.json");
  return config;
}

const Configuration& TestConfig() { return TestConfigBuffer().message(); }

const FlatbufferDetachedBuffer<Configuration>& MultiNodeTestConfig() {
  static const FlatbufferDetachedBuffer<Configuration>& config =
      ReadTestConfig("aos/testing/test_multinode_config.json");
  return config;
}

PingPongLog RecordPingPong(const std::string& path, Compression compression,
                           monotonic_clock::duration duration,
                           monotonic_clock::duration poll_period) {
  PingPongLog result;
  SimulatedEventLoopFactory factory(&TestConfig());
  std::unique_ptr<EventLoop> logger_loop = factory.MakeEventLoop("aos_logger");
  std::unique_ptr<Logger> logger =
      StartLogger(logger_loop.get(), path, compression, poll_period);

  std::unique_ptr<EventLoop> ping = factory.MakeEventLoop("ping");
  std::unique_ptr<EventLoop> pong = factory.MakeEventLoop("pong");
  std::unique_ptr<EventLoop> observer = factory.MakeEventLoop("observer");
  std::unique_ptr<EventLoop> path_observer =
      factory.MakeEventLoop("path_observer");
  path_observer->SkipTimingReport();
  PingAndPong apps(ping.get(), pong.get());
  auto remember = [&](std::string_view channel, int value) {
    const Context& context = observer->context();
    result.sent.push_back(
        SentMessage{.channel = std::string(channel),
                    .monotonic_sent_time = context.monotonic_event_time,
                    .realtime_sent_time = context.realtime_event_time,
                    .value = value,
                    .origins = context.origins});
  };
  observer->MakeWatcher("/test", [&](const aos::testing::TestMessage& m) {
    remember("/test aos.testing.TestMessage", m.value());
  });
  observer->MakeWatcher("/test", [&](const aos::testing::TestReply& m) {
    remember("/test aos.testing.TestReply", m.value());
  });
  observer->MakeWatcher("/aos", [&](const aos::timing::Report&) {
    ++result.reports;
    result.report_origins.push_back(observer->context().origins);
  });
  path_observer->MakeWatcher("/test", [](const aos::testing::TestReply&) {});
  factory.RunFor(duration);
  absl::Status finished = logger->Finish();
  CHECK(finished.ok()) << finished;
  result.pong_paths = path_observer->watchers().front()->timing().paths;
  return result;
}

MultiNodePingPongLog RecordMultiNodePingPong(
    const std::string& path, monotonic_clock::duration duration) {
  MultiNodePingPongLog result;
  const Configuration& config = MultiNodeTestConfig().message();
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
  PingAndPong apps(ping.get(), pong.get());
  observer->MakeWatcher("/test", [&](const aos::testing::TestMessage& m) {
    ReceivedPing received{.value = m.value(), .context = observer->context()};
    received.context.data = nullptr;
    result.pings.push_back(received);
  });
  observer->MakeWatcher(
      "/test", [&](const aos::testing::TestReply&) { ++result.pongs; });
  factory.RunFor(duration);
  absl::Status finished = logger->Finish();
  CHECK(finished.ok()) << finished;
  result.pi1_boot = factory.boot_uuid(pi1);
  result.pi2_boot = factory.boot_uuid(pi2);
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
