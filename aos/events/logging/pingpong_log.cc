#include "aos/events/logging/pingpong_log.h"

#include "aos/events/event_loop_generated.h"
#include "aos/events/logging/logger.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_generated.h"
#include "aos/testing/test_reply_generated.h"
#include "glog/logging.h"

namespace aos::logging::testing {

const Configuration& TestConfig() {
  static const auto* const config = [] {
    auto read = configuration::ReadConfig(
        aos::testing::ArtifactPath("aos/testing/test_config.json"));
    CHECK(read.ok()) << read.status();
    return new FlatbufferDetachedBuffer<Configuration>(std::move(*read));
  }();
  return config->message();
}

PingPongLog RecordPingPong(const std::string& path, Compression compression,
                           monotonic_clock::duration duration,
                           monotonic_clock::duration poll_period) {
  PingPongLog result;
  SimulatedEventLoopFactory factory(&TestConfig());
  std::unique_ptr<EventLoop> logger_loop = factory.MakeEventLoop("aos_logger");
  auto writer = McapWriter::Create(
      path, {.compression = compression, .chunk_size = 4096});
  CHECK(writer.ok()) << writer.status();
  LoggerOptions options;
  options.poll_period = poll_period;
  auto logger = Logger::Make(logger_loop.get(), std::move(*writer), options);
  CHECK(logger.ok()) << logger.status();

  std::unique_ptr<EventLoop> ping = factory.MakeEventLoop("ping");
  std::unique_ptr<EventLoop> pong = factory.MakeEventLoop("pong");
  std::unique_ptr<EventLoop> observer = factory.MakeEventLoop("observer");
  Sender<aos::testing::TestMessage> ping_sender =
      ping->MakeSender<aos::testing::TestMessage>("/test");
  Sender<aos::testing::TestReply> pong_sender =
      pong->MakeSender<aos::testing::TestReply>("/test");
  int count = 0;
  TimerHandler* timer = ping->AddTimer([&]() {
    auto builder = ping_sender.MakeBuilder();
    auto message = builder.MakeBuilder<aos::testing::TestMessage>();
    message.add_value(++count);
    message.add_send_time(ping->monotonic_now().time_since_epoch().count());
    builder.CheckOk(builder.Send(message.Finish()));
  });
  ping->OnRun([&]() {
    timer->Schedule(ping->monotonic_now() + std::chrono::milliseconds(10),
                    std::chrono::milliseconds(10));
  });
  pong->MakeWatcher("/test", [&](const aos::testing::TestMessage& message) {
    auto builder = pong_sender.MakeBuilder();
    auto reply = builder.MakeBuilder<aos::testing::TestReply>();
    reply.add_value(message.value());
    reply.add_initial_send_time(message.send_time());
    builder.CheckOk(builder.Send(reply.Finish()));
  });
  auto remember = [&](std::string_view channel, int value) {
    const Context& context = observer->context();
    result.sent.push_back(
        SentMessage{.channel = std::string(channel),
                    .monotonic_sent_time = context.monotonic_event_time,
                    .realtime_sent_time = context.realtime_event_time,
                    .value = value});
  };
  observer->MakeWatcher("/test", [&](const aos::testing::TestMessage& m) {
    remember("/test aos.testing.TestMessage", m.value());
  });
  observer->MakeWatcher("/test", [&](const aos::testing::TestReply& m) {
    remember("/test aos.testing.TestReply", m.value());
  });
  observer->MakeWatcher("/aos",
                        [&](const aos::timing::Report&) { ++result.reports; });
  factory.RunFor(duration);
  absl::Status finished = (*logger)->Finish();
  CHECK(finished.ok()) << finished;
  return result;
}

}  // namespace aos::logging::testing
