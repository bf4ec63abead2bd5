// The logger, LogFileReader and LogReader together, in simulation: what a
// ping/pong run sends is what the log holds, at the same times, and what
// replay sends again.
#include "aos/events/logging/logger.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/event_loop_generated.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/log_reader.h"
#include "aos/events/logging/mcap_reader.h"
#include "aos/events/logging/pingpong_log.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/allocation_counter.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_generated.h"
#include "examples/ping_application.h"
#include "examples/ping_generated.h"
#include "examples/pong_application.h"
#include "examples/pong_generated.h"
#include "gtest/gtest.h"

namespace aos::logging {
namespace {

using testing::kPingChannel;
using testing::kPongChannel;
using testing::PingPongConfig;
using testing::PingPongLog;
using testing::RecordPingPong;
using testing::SentMessage;

// Ping sends at 0, 10, ..., 1000 ms of a 1 s run (the first at the start):
// 101 pings, each answered at once.
constexpr int64_t kPingsIn1s = 101;

std::string Describe(const Channel* channel) {
  return std::string(channel->name()->string_view()) + " " +
         std::string(channel->type()->string_view());
}

int ValueOf(const LogMessage& message) {
  const std::string type = std::string(message.channel->type()->string_view());
  if (type == "aos.examples.Ping") {
    return flatbuffers::GetRoot<examples::Ping>(message.context.data)->value();
  }
  return flatbuffers::GetRoot<examples::Pong>(message.context.data)->value();
}

// Ping's and pong's own figures of a run of `pings` pings: every one
// answered once, on time, its pong's origin exactly ping's timer call.
void ExpectEveryPingAnswered(const testing::PingPongCounts& counts,
                             int64_t pings) {
  EXPECT_EQ(counts.pings, pings);
  EXPECT_EQ(counts.not_sent, 0);
  EXPECT_EQ(counts.answered, pings);
  EXPECT_EQ(counts.pongs, pings);
  EXPECT_EQ(counts.late, 0);
  EXPECT_EQ(counts.origins_checked, pings);
  EXPECT_EQ(counts.origins_wrong, 0);
}

class LoggerTest : public ::testing::Test {
 protected:
  std::string path_ = aos::testing::TestTempDir() + "/pingpong.mcap";
};

// With watchers (poll period 0) and with fetchers polled every 10 ms: the
// same log.
class LoggerModeTest
    : public LoggerTest,
      public ::testing::WithParamInterface<monotonic_clock::duration> {};

TEST_P(LoggerModeTest, LogsEveryMessageAtItsSendTimes) {
  const PingPongLog sent = RecordPingPong(path_, Compression::kZstd,
                                          std::chrono::seconds(2), GetParam());
  // Pings at 0, 10, ..., 2000 ms.
  ExpectEveryPingAnswered(sent.counts, 201);
  ASSERT_EQ(sent.sent.size(), 2u * 201u);

  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->node_name(), "");
  EXPECT_EQ((*log)->node(), nullptr);
  // The stored configuration is the one logged with, schemas included.
  ASSERT_EQ((*log)->configuration()->channels()->size(),
            PingPongConfig().channels()->size());
  std::vector<std::string> logged;
  for (const Channel* channel : (*log)->logged_channels()) {
    EXPECT_NE(channel->schema(), nullptr);
    logged.push_back(Describe(channel));
  }
  // Every channel of the config (aos/aos.json's /aos channels included),
  // whether or not anything was sent on it.
  EXPECT_EQ(logged,
            (std::vector<std::string>{
                "/aos aos.starter.StarterRpc", "/aos aos.starter.Status",
                "/aos aos.timing.Report", "/aos aos.tracing.TraceSnapshot",
                std::string(kPingChannel), std::string(kPongChannel)}));

  EXPECT_TRUE((*log)->records_origins());
  size_t next = 0;
  int reports = 0;
  std::map<std::string, int> report_applications;
  monotonic_clock::time_point last = monotonic_clock::min_time;
  while (std::optional<LogMessage> message = (*log)->Next()) {
    EXPECT_GE(message->context.monotonic_event_time, last);
    last = message->context.monotonic_event_time;
    // Every message's origins, exactly as it carried them.
    EXPECT_TRUE(message->origins_known);
    if (message->channel->name()->string_view() == "/aos") {
      ASSERT_LT(reports, static_cast<int>(sent.report_origins.size()));
      EXPECT_EQ(message->context.origins, sent.report_origins[reports]);
      EXPECT_EQ(message->context.origins.size(), 1u);
      ++reports;
      const auto* report =
          flatbuffers::GetRoot<aos::timing::Report>(message->context.data);
      ++report_applications[report->name()->str()];
      continue;
    }
    ASSERT_LT(next, sent.sent.size());
    const SentMessage& expected = sent.sent[next++];
    EXPECT_EQ(Describe(message->channel), expected.channel);
    EXPECT_EQ(message->context.monotonic_event_time,
              expected.monotonic_sent_time);
    EXPECT_EQ(message->context.realtime_event_time,
              expected.realtime_sent_time);
    EXPECT_EQ(ValueOf(*message), expected.value);
    EXPECT_EQ(message->context.origins, expected.origins) << next;
    // Ping's timer: sent by it (1 hop), or answered by pong (2).
    ASSERT_EQ(expected.origins.size(), 1u);
    EXPECT_EQ(expected.origins.begin()->hops,
              expected.channel == kPingChannel ? 1 : 2);
    EXPECT_EQ(expected.origins.begin()->id,
              PathOriginId("", "ping", "timer", "ping"));
  }
  EXPECT_EQ(next, sent.sent.size());
  EXPECT_EQ(reports, sent.reports);
  // The logger is an ordinary application: its own reports are logged.
  EXPECT_GT(report_applications["aos_logger"], 0);
  EXPECT_GT(report_applications["ping"], 0);
  EXPECT_GT(report_applications["pong"], 0);
  EXPECT_TRUE((*log)->problems().empty());
  EXPECT_TRUE((*log)->lost_messages().empty());
}

INSTANTIATE_TEST_SUITE_P(WatchersAndPolling, LoggerModeTest,
                         ::testing::Values(monotonic_clock::duration::zero(),
                                           std::chrono::milliseconds(10)),
                         [](const auto& info) {
                           return info.param ==
                                          monotonic_clock::duration::zero()
                                      ? std::string("Watchers")
                                      : std::string("Polling");
                         });

TEST_F(LoggerTest, RecordsOnlyTheChannelsTheFilterSelects) {
  SimulatedEventLoopFactory factory(&PingPongConfig());
  std::unique_ptr<EventLoop> loop = factory.MakeEventLoop("aos_logger");
  auto writer = McapWriter::Create(path_, {});
  ASSERT_TRUE(writer.ok());
  auto logger = Logger::Make(loop.get(), std::move(*writer),
                             {.channel_filter = [](const Channel& channel) {
                               return channel.name()->string_view() == "/aos" &&
                                      channel.type()->string_view() ==
                                          "aos.timing.Report";
                             }});
  ASSERT_TRUE(logger.ok()) << logger.status();
  EXPECT_EQ((*logger)->channel_count(), 1u);
  factory.RunFor(std::chrono::milliseconds(2500));
  ASSERT_TRUE((*logger)->Finish().ok());
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ((*log)->logged_channels().size(), 1u);
  int messages = 0;
  while ((*log)->Next().has_value()) ++messages;
  EXPECT_EQ(messages, 2);  // The logger's own reports at 1 s and 2 s.
}

TEST_F(LoggerTest, NothingToLogIsAnError) {
  SimulatedEventLoopFactory factory(&PingPongConfig());
  std::unique_ptr<EventLoop> loop = factory.MakeEventLoop("aos_logger");
  auto writer = McapWriter::Create(path_, {});
  ASSERT_TRUE(writer.ok());
  auto logger =
      Logger::Make(loop.get(), std::move(*writer),
                   {.channel_filter = [](const Channel&) { return false; }});
  ASSERT_FALSE(logger.ok());
  EXPECT_NE(logger.status().message().find(path_), std::string::npos);
}

TEST_F(LoggerTest, AnMcapFileWithoutConfigurationIsNotAnAosLog) {
  auto writer = McapWriter::Create(path_, {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Close().ok());
  auto log = LogFileReader::Open(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("not an aos log"), std::string::npos)
      << log.status();
}

// A boot UUID in the metadata that does not parse is said, not silently
// zero.
TEST_F(LoggerTest, AnUnreadableBootUuidIsAProblem) {
  auto writer = McapWriter::Create(path_, {});
  ASSERT_TRUE(writer.ok());
  const std::span<const uint8_t> config =
      testing::MultiNodePingPongConfig().span();
  ASSERT_TRUE(
      (*writer)
          ->AddAttachment(
              kConfigAttachment, kConfigMediaType,
              std::string_view(reinterpret_cast<const char*>(config.data()),
                               config.size()),
              0, 0)
          .ok());
  ASSERT_TRUE((*writer)
                  ->AddMetadata(kLoggerMetadata,
                                {{std::string(kLoggerNode), "pi2"},
                                 {std::string(kLoggerBootUuid), "not-a-uuid"}})
                  .ok());
  ASSERT_TRUE((*writer)->Close().ok());
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->problems(),
            std::vector<std::string>{
                path_ + ": its aos_logger metadata's boot_uuid \"not-a-uuid\" "
                        "is not a UUID; the logged node's boot is unknown (all "
                        "zeros)"});
}

// Replay: a fresh watcher sees every recorded Pong at its recorded time.
TEST_F(LoggerTest, ReplaySendsEveryMessageAtItsRecordedTime) {
  const PingPongLog sent =
      RecordPingPong(path_, Compression::kLz4, std::chrono::seconds(1));
  ExpectEveryPingAnswered(sent.counts, kPingsIn1s);
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  SimulatedEventLoopFactory factory((*log)->configuration());
  LogReader replay(log->get(), &factory);
  std::unique_ptr<EventLoop> test = factory.MakeEventLoop("test");
  std::vector<SentMessage> seen;
  test->MakeWatcher("/test", [&](const examples::Pong& reply) {
    seen.push_back(
        SentMessage{.channel = std::string(kPongChannel),
                    .monotonic_sent_time = test->context().monotonic_event_time,
                    .realtime_sent_time = realtime_clock::min_time,
                    .value = reply.value(),
                    .origins = test->context().origins});
  });
  factory.Run();
  std::vector<SentMessage> pongs;
  for (const SentMessage& message : sent.sent) {
    if (message.channel == kPongChannel) {
      pongs.push_back(message);
    }
  }
  ASSERT_EQ(seen.size(), pongs.size());
  ASSERT_EQ(pongs.size(), static_cast<size_t>(kPingsIn1s));
  for (size_t i = 0; i < pongs.size(); ++i) {
    EXPECT_EQ(seen[i].value, pongs[i].value) << i;
    EXPECT_EQ(seen[i].monotonic_sent_time, pongs[i].monotonic_sent_time) << i;
    EXPECT_EQ(seen[i].origins, pongs[i].origins) << i;
  }
  EXPECT_EQ(replay.send_errors(), 0u);
  EXPECT_EQ(replay.replayed_messages(), sent.sent.size() + sent.reports);
}

// Replay sends each message with its recorded origins, so a watcher of the
// replayed pongs measures the path ages the recording's watcher measured,
// exactly (simulated time): per origin and hops, every sample.
TEST_F(LoggerTest, ReplayMeasuresTheRecordedPathAgesAgain) {
  const PingPongLog sent =
      RecordPingPong(path_, Compression::kZstd, std::chrono::seconds(1));
  ASSERT_EQ(sent.pong_paths.size(), 1u);
  const testing::ReplayedOrigins replay =
      testing::ReplayWatchingOrigins(path_, "/test", "aos.examples.Pong");
  const timing::PathTimings& replayed = replay.paths;
  ASSERT_EQ(replayed.size(), sent.pong_paths.size());
  const timing::PathTiming& expected = *sent.pong_paths.begin();
  const timing::PathTiming& measured = *replayed.begin();
  EXPECT_EQ(measured.origin_id, PathOriginId("", "ping", "timer", "ping"));
  EXPECT_EQ(measured.origin_id, expected.origin_id);
  EXPECT_EQ(measured.hops, 2u);
  EXPECT_EQ(measured.hops, expected.hops);
  EXPECT_EQ(measured.count(), static_cast<uint64_t>(kPingsIn1s));
  EXPECT_EQ(measured.count(), expected.count());
  EXPECT_EQ(measured.age.statistic().average(),
            expected.age.statistic().average());
  EXPECT_EQ(measured.age.statistic().min(), expected.age.statistic().min());
  EXPECT_EQ(measured.age.statistic().max(), expected.age.statistic().max());
  EXPECT_EQ(measured.age.statistic().standard_deviation(),
            expected.age.statistic().standard_deviation());
  EXPECT_EQ(measured.age.histogram(), expected.age.histogram());
  EXPECT_EQ(replayed.invalid_origins(), 0u);
  // And each pong carried exactly its recorded origins.
  std::vector<PathOrigins> recorded;
  for (const SentMessage& message : sent.sent) {
    if (message.channel == kPongChannel) {
      recorded.push_back(message.origins);
    }
  }
  EXPECT_EQ(replay.origins, recorded);
}

// A replayed local message whose log has no origins for it carries none:
// not the replayer's timer.
TEST_F(LoggerTest, ReplayedMessagesWithoutOriginsCarryNone) {
  SimulatedEventLoopFactory recording(&PingPongConfig());
  std::unique_ptr<EventLoop> logger_loop =
      recording.MakeEventLoop("aos_logger");
  logger_loop->SkipTimingReport();
  auto writer = McapWriter::Create(path_, {});
  ASSERT_TRUE(writer.ok());
  auto logger = Logger::Make(logger_loop.get(), std::move(*writer), {});
  ASSERT_TRUE(logger.ok()) << logger.status();
  std::unique_ptr<EventLoop> sender_loop = recording.MakeEventLoop("sender");
  sender_loop->SkipTimingReport();
  Sender<examples::Ping> sender =
      sender_loop->MakeSender<examples::Ping>("/test");
  // OnRun is no timer: what it sends carries no origins.
  sender_loop->OnRun([&]() {
    auto builder = sender.MakeBuilder();
    builder.CheckOk(
        builder.Send(builder.MakeBuilder<examples::Ping>().Finish()));
  });
  recording.RunFor(std::chrono::seconds(1));
  ASSERT_TRUE((*logger)->Finish().ok());

  EXPECT_EQ(testing::ReplayWatchingOrigins(path_, "/test", "aos.examples.Ping")
                .origins,
            std::vector<PathOrigins>{PathOrigins()});
}

// Recording a message's origins allocates nothing once the logger is warm
// (its chunk buffers grown, its message indexes as large as any chunk
// needs): between two flushes, every ping (its timer as origin), its pong
// (the same origin, 2 hops) and their origins records are written into the
// open chunk. Ping and pong allocate nothing either (their headers say so).
TEST_F(LoggerTest, RecordingOriginsAllocatesNothingBetweenFlushes) {
  SimulatedEventLoopFactory factory(&PingPongConfig());
  std::unique_ptr<EventLoop> logger_loop = factory.MakeEventLoop("aos_logger");
  auto writer = McapWriter::Create(path_, {});
  ASSERT_TRUE(writer.ok());
  LoggerOptions options;
  options.flush_period = std::chrono::seconds(1);
  auto logger = Logger::Make(logger_loop.get(), std::move(*writer), options);
  ASSERT_TRUE(logger.ok()) << logger.status();
  std::unique_ptr<EventLoop> ping_loop = factory.MakeEventLoop("ping");
  std::unique_ptr<EventLoop> pong_loop = factory.MakeEventLoop("pong");
  examples::PingOptions ping_options;
  ping_options.period = std::chrono::milliseconds(10);
  examples::PingApplication ping(ping_loop.get(), ping_options);
  examples::PongApplication pong(pong_loop.get());
  // Two flushed chunks of 100 pings and 100 pongs each, then 40 of each
  // into the third.
  factory.RunFor(std::chrono::milliseconds(2500));
  const uint64_t recorded = (*logger)->recorded_messages();
  const uint64_t before = aos::testing::HeapAllocations();
  factory.RunFor(std::chrono::milliseconds(400));
  EXPECT_EQ(aos::testing::HeapAllocations() - before, 0u);
  EXPECT_EQ((*logger)->recorded_messages() - recorded, 2u * 40u);
  EXPECT_EQ(ping.origins_wrong(), 0);
  ASSERT_TRUE((*logger)->Finish().ok());
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  int with_origins = 0;
  while (std::optional<LogMessage> message = (*log)->Next()) {
    with_origins += message->context.origins.size() == 1 ? 1 : 0;
  }
  // Pings and pongs at 0, 10, ..., 2900 ms.
  EXPECT_GE(with_origins, 2 * 290);
}

// New code against recorded data: a new pong answers the recorded pings.
TEST_F(LoggerTest, ReplayFeedsNewCodeTheRecordedInputs) {
  ExpectEveryPingAnswered(
      RecordPingPong(path_, Compression::kZstd, std::chrono::seconds(1)).counts,
      kPingsIn1s);
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  SimulatedEventLoopFactory factory((*log)->configuration());
  LogReader replay(
      log->get(), &factory, {.channel_filter = [](const Channel& channel) {
        return channel.type()->string_view() == "aos.examples.Ping";
      }});
  std::unique_ptr<EventLoop> pong = factory.MakeEventLoop("new_pong");
  Sender<examples::Pong> sender = pong->MakeSender<examples::Pong>("/test");
  std::vector<monotonic_clock::time_point> ping_times;
  pong->MakeWatcher("/test", [&](const examples::Ping& message) {
    ping_times.push_back(pong->context().monotonic_event_time);
    auto builder = sender.MakeBuilder();
    auto reply = builder.MakeBuilder<examples::Pong>();
    reply.add_value(-message.value());
    builder.CheckOk(builder.Send(reply.Finish()));
  });
  factory.Run();
  ASSERT_EQ(ping_times.size(), static_cast<size_t>(kPingsIn1s));
  // The recorded pings came every 10 ms; so do the replayed ones.
  for (size_t i = 1; i < ping_times.size(); ++i) {
    EXPECT_EQ(ping_times[i] - ping_times[i - 1], std::chrono::milliseconds(10));
  }
}

// On one node of a multi-node system: the channels readable there (its own
// and those forwarded to it), the forwarded ones marked with their source
// node, and the node named in the log.
TEST_F(LoggerTest, RecordsTheChannelsOfItsNode) {
  auto config = configuration::ReadConfigFromJson(R"({
    "nodes": [ { "name": "pi1", "hostname": "pi1" },
               { "name": "pi2", "hostname": "pi2" } ],
    "channels": [
      { "name": "/forwarded", "type": "aos.testing.TestMessage",
        "source_node": "pi1", "destination_nodes": [ { "name": "pi2" } ] },
      { "name": "/pi1_only", "type": "aos.testing.TestMessage",
        "source_node": "pi1" },
      { "name": "/pi2_only", "type": "aos.testing.TestMessage",
        "source_node": "pi2" } ] })");
  ASSERT_TRUE(config.ok()) << config.status();
  const Node* pi1 = configuration::GetNode(config->message(), "pi1");
  const Node* pi2 = configuration::GetNode(config->message(), "pi2");
  SimulatedEventLoopFactory factory(&config->message());
  std::unique_ptr<EventLoop> logger_loop =
      factory.MakeEventLoop("aos_logger", pi2);
  logger_loop->SkipTimingReport();
  auto writer = McapWriter::Create(path_, {});
  ASSERT_TRUE(writer.ok());
  auto logger = Logger::Make(logger_loop.get(), std::move(*writer), {});
  ASSERT_TRUE(logger.ok()) << logger.status();
  EXPECT_EQ((*logger)->channel_count(), 2u);

  std::unique_ptr<EventLoop> sender_loop = factory.MakeEventLoop("sender", pi1);
  sender_loop->SkipTimingReport();
  Sender<aos::testing::TestMessage> sender =
      sender_loop->MakeSender<aos::testing::TestMessage>("/forwarded");
  sender_loop->OnRun([&]() {
    auto builder = sender.MakeBuilder();
    auto message = builder.MakeBuilder<aos::testing::TestMessage>();
    message.add_value(7);
    builder.CheckOk(builder.Send(message.Finish()));
  });
  factory.RunFor(std::chrono::seconds(1));
  ASSERT_TRUE((*logger)->Finish().ok());

  auto mcap = McapReader::Open(path_);
  ASSERT_TRUE(mcap.ok());
  std::map<std::string, std::string> source_nodes;
  for (const auto& [id, channel] : (*mcap)->channels()) {
    auto source = channel.metadata.find("source_node");
    source_nodes[channel.topic] =
        source == channel.metadata.end() ? "" : source->second;
  }
  // And the remote records of the forwarded messages, and the origins
  // records (log_format.h).
  EXPECT_EQ(source_nodes,
            (std::map<std::string, std::string>{{"/forwarded", "pi1"},
                                                {"/pi2_only", ""},
                                                {"aos_path_origins", ""},
                                                {"aos_remote_message", ""}}));

  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->node_name(), "pi2");
  ASSERT_NE((*log)->node(), nullptr);
  std::optional<LogMessage> message = (*log)->Next();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->channel->name()->string_view(), "/forwarded");
  EXPECT_EQ(
      flatbuffers::GetRoot<aos::testing::TestMessage>(message->context.data)
          ->value(),
      7);
  EXPECT_EQ(message->context.source_boot_uuid, factory.boot_uuid(pi1));
  EXPECT_EQ(message->context.remote_queue_index, 0u);
  EXPECT_EQ(message->context.monotonic_remote_time, monotonic_clock::epoch());
  EXPECT_FALSE((*log)->Next().has_value());
  EXPECT_TRUE((*log)->problems().empty());
}

// The channels a logger on `node` records from `json`, by name, or the
// error Make() gave.
absl::StatusOr<std::vector<std::string>> RecordedChannels(
    std::string_view json, std::string_view node_name,
    const std::string& path) {
  auto config = configuration::ReadConfigFromJson(json);
  CHECK(config.ok()) << config.status();
  const Node* node = configuration::GetNode(config->message(), node_name);
  SimulatedEventLoopFactory factory(&config->message());
  std::unique_ptr<EventLoop> loop = factory.MakeEventLoop("aos_logger", node);
  loop->SkipTimingReport();
  auto writer = McapWriter::Create(path, {});
  CHECK(writer.ok()) << writer.status();
  auto logger = Logger::Make(loop.get(), std::move(*writer), {});
  if (!logger.ok()) return logger.status();
  CHECK((*logger)->Finish().ok());
  auto log = LogFileReader::Open(path);
  CHECK(log.ok()) << log.status();
  std::vector<std::string> names;
  for (const Channel* channel : (*log)->logged_channels()) {
    names.push_back(channel->name()->str());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// AOS's LoggerConfig, on one node's log: NOT_LOGGED is never recorded,
// REMOTE_LOGGER only by the logger_nodes; what reaches the node from
// another one is kept unless NOT_LOGGED.
TEST_F(LoggerTest, TheLoggerFieldDecidesWhatANodeRecords) {
  const absl::StatusOr<std::vector<std::string>> recorded =
      RecordedChannels(R"({
    "nodes": [ { "name": "pi1", "hostname": "pi1" },
               { "name": "pi2", "hostname": "pi2" } ],
    "channels": [
      { "name": "/local", "type": "aos.testing.TestMessage",
        "source_node": "pi2" },
      { "name": "/not_logged", "type": "aos.testing.TestMessage",
        "source_node": "pi2", "logger": "NOT_LOGGED" },
      { "name": "/remote_elsewhere", "type": "aos.testing.TestMessage",
        "source_node": "pi2", "logger": "REMOTE_LOGGER",
        "logger_nodes": [ "pi1" ] },
      { "name": "/remote_here", "type": "aos.testing.TestMessage",
        "source_node": "pi2", "logger": "REMOTE_LOGGER",
        "logger_nodes": [ "pi2" ] },
      { "name": "/local_and_remote", "type": "aos.testing.TestMessage",
        "source_node": "pi2", "logger": "LOCAL_AND_REMOTE_LOGGER",
        "logger_nodes": [ "pi1" ] },
      { "name": "/forwarded", "type": "aos.testing.TestMessage",
        "source_node": "pi1", "destination_nodes": [ { "name": "pi2" } ] },
      { "name": "/forwarded_not_logged", "type": "aos.testing.TestMessage",
        "source_node": "pi1", "logger": "NOT_LOGGED",
        "destination_nodes": [ { "name": "pi2",
                                 "timestamp_logger": "NOT_LOGGED" } ] },
      { "name": "/pi1_only", "type": "aos.testing.TestMessage",
        "source_node": "pi1" } ] })",
                       "pi2", path_);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(*recorded,
            (std::vector<std::string>{"/forwarded", "/local",
                                      "/local_and_remote", "/remote_here"}));
}

TEST_F(LoggerTest, NotLoggedChannelsAreLeftOutOfASingleNodeLog) {
  const absl::StatusOr<std::vector<std::string>> recorded =
      RecordedChannels(R"({ "channels": [
      { "name": "/logged", "type": "aos.testing.TestMessage" },
      { "name": "/not_logged", "type": "aos.testing.TestMessage",
        "logger": "NOT_LOGGED" } ] })",
                       "", path_);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(*recorded, (std::vector<std::string>{"/logged"}));
}

// AOS aborts on a REMOTE kind without nodes; here it is one line naming the
// channel.
TEST_F(LoggerTest, ARemoteLoggerWithoutNodesIsAnErrorNamingTheChannel) {
  const absl::StatusOr<std::vector<std::string>> recorded =
      RecordedChannels(R"({ "channels": [
      { "name": "/logged", "type": "aos.testing.TestMessage" },
      { "name": "/elsewhere", "type": "aos.testing.TestMessage",
        "logger": "LOCAL_AND_REMOTE_LOGGER" } ] })",
                       "", path_);
  ASSERT_FALSE(recorded.ok());
  EXPECT_EQ(recorded.status().message(),
            "channel /elsewhere (type aos.testing.TestMessage): logger "
            "LOCAL_AND_REMOTE_LOGGER needs other nodes to log it, and this "
            "config has no nodes; use LOCAL_LOGGER or NOT_LOGGED");
}

}  // namespace
}  // namespace aos::logging
