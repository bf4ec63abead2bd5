// Messages forwarded from another node in a log: the logger keeps their
// remote fields (remote records, log_format.h), LogFileReader gives them
// back (or "unknown" when a record is missing or malformed), and LogReader
// replays them on the logged node with those fields and the recorded
// realtime clock.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/log_reader.h"
#include "aos/events/logging/mcap_reader.h"
#include "aos/events/logging/mcap_writer.h"
#include "aos/events/logging/pingpong_log.h"
#include "aos/events/logging/remote_message_generated.h"
#include "aos/events/logging/remote_record.h"
#include "aos/events/simulated_event_loop.h"
#include "aos/testing/path.h"
#include "aos/util/subprocess.h"
#include "examples/ping_generated.h"
#include "examples/pong_generated.h"
#include "gtest/gtest.h"

namespace aos::logging {
namespace {

using testing::MultiNodePingPongConfig;
using testing::MultiNodePingPongLog;
using testing::ReceivedPing;
using testing::RecordMultiNodePingPong;

// The remote fields (and local send times) of two contexts match.
void ExpectSameOrigin(const Context& actual, const Context& expected,
                      size_t i) {
  EXPECT_EQ(actual.monotonic_event_time, expected.monotonic_event_time) << i;
  EXPECT_EQ(actual.realtime_event_time, expected.realtime_event_time) << i;
  EXPECT_EQ(actual.monotonic_remote_time, expected.monotonic_remote_time) << i;
  EXPECT_EQ(actual.realtime_remote_time, expected.realtime_remote_time) << i;
  EXPECT_EQ(actual.remote_queue_index, expected.remote_queue_index) << i;
  EXPECT_EQ(actual.source_boot_uuid, expected.source_boot_uuid) << i;
  // And the path origins it carried, in this node's clock.
  EXPECT_EQ(actual.origins, expected.origins) << i;
}

bool IsPing(const Channel& channel) {
  return channel.name()->string_view() == "/test" &&
         channel.type()->string_view() == "aos.examples.Ping";
}

class ForwardedLogTest : public ::testing::Test {
 protected:
  std::string path_ = aos::testing::TestTempDir() + "/pi2.mcap";
};

TEST_F(ForwardedLogTest, TheLogKeepsTheRemoteFieldsOfForwardedMessages) {
  // Long enough for pi1's first timing reports (at 1 s) to arrive.
  const MultiNodePingPongLog recorded =
      RecordMultiNodePingPong(path_, std::chrono::milliseconds(1500));
  ASSERT_GE(recorded.pings.size(), 149u);
  // Pong on pi2 answered every ping that reached it; ping on pi1 received
  // the answers (all but those still on the way back), none late, and each
  // pong's origin was its timer call, translated to pi2 and back to pi1.
  EXPECT_EQ(recorded.counts.not_sent, 0);
  EXPECT_EQ(recorded.counts.answered,
            static_cast<int64_t>(recorded.pings.size()));
  EXPECT_EQ(recorded.counts.answered, recorded.pongs);
  EXPECT_GE(recorded.counts.pongs, 148);
  EXPECT_LE(recorded.counts.pongs, recorded.counts.answered);
  EXPECT_EQ(recorded.counts.late, 0);
  EXPECT_EQ(recorded.counts.origins_checked, recorded.counts.pongs);
  EXPECT_EQ(recorded.counts.origins_wrong, 0);

  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ((*log)->node_name(), "pi2");
  size_t pings = 0;
  int pongs = 0;
  int pi1_reports = 0;
  while (std::optional<LogMessage> message = (*log)->Next()) {
    const Context& context = message->context;
    if (IsPing(*message->channel)) {
      ASSERT_LT(pings, recorded.pings.size());
      const ReceivedPing& expected = recorded.pings[pings];
      EXPECT_EQ(flatbuffers::GetRoot<examples::Ping>(context.data)->value(),
                expected.value);
      EXPECT_EQ(context.queue_index, expected.context.queue_index);
      ExpectSameOrigin(context, expected.context, pings);
      EXPECT_EQ(context.source_boot_uuid, recorded.pi1_boot);
      // Ping's timer on pi1, 1 hop.
      ASSERT_EQ(context.origins.size(), 1u);
      EXPECT_EQ(context.origins.begin()->id,
                PathOriginId("pi1", "ping", "timer", "ping"));
      EXPECT_EQ(context.origins.begin()->hops, 1);
      // pi1's clocks, not pi2's.
      EXPECT_NE(context.monotonic_remote_time, context.monotonic_event_time);
      ++pings;
    } else if (message->channel->name()->string_view() == "/pi1/aos") {
      // pi1's timing reports are forwarded too.
      EXPECT_EQ(context.source_boot_uuid, recorded.pi1_boot);
      EXPECT_NE(context.remote_queue_index, Context::kInvalidQueueIndex);
      ++pi1_reports;
    } else {
      // pi2's own messages: the remote fields are the local ones.
      EXPECT_EQ(context.monotonic_remote_time, context.monotonic_event_time);
      EXPECT_EQ(context.realtime_remote_time, context.realtime_event_time);
      EXPECT_EQ(context.remote_queue_index, context.queue_index);
      EXPECT_EQ(context.source_boot_uuid, recorded.pi2_boot);
      if (message->channel->type()->string_view() == "aos.examples.Pong") {
        ++pongs;
      }
    }
  }
  EXPECT_EQ(pings, recorded.pings.size());
  EXPECT_EQ(pongs, recorded.pongs);
  EXPECT_GT(pi1_reports, 0);
  EXPECT_TRUE((*log)->problems().empty());
}

TEST_F(ForwardedLogTest, TheRemoteRecordsAreAnMcapChannelWithItsSchema) {
  RecordMultiNodePingPong(path_, std::chrono::milliseconds(500));
  auto mcap = McapReader::Open(path_);
  ASSERT_TRUE(mcap.ok()) << mcap.status();
  const McapChannel* remote = nullptr;
  const McapChannel* origins = nullptr;
  for (const auto& [id, channel] : (*mcap)->channels()) {
    if (channel.topic == kRemoteMessageTopic) remote = &channel;
    if (channel.topic == kOriginsTopic) origins = &channel;
  }
  ASSERT_NE(remote, nullptr);
  ASSERT_NE(origins, nullptr);
  EXPECT_EQ(remote->metadata.count(std::string(kChannelType)), 0u);
  EXPECT_EQ(remote->message_encoding, kFlatbufferEncoding);
  const McapSchema& schema = (*mcap)->schemas().at(remote->schema_id);
  EXPECT_EQ(schema.name, kRemoteMessageType);
  EXPECT_EQ(schema.encoding, kFlatbufferEncoding);
  EXPECT_EQ(schema.data, RemoteMessageSchema());
  // Every record comes just before its message (and its origins record,
  // if it has one), at the same time.
  std::optional<McapMessage> previous;
  // A message's data is valid only until the next Next(): the previous one's
  // is kept here.
  std::string previous_data;
  int records = 0;
  while (std::optional<McapMessage> message = (*mcap)->Next()) {
    if (message->channel_id == origins->id) continue;
    if (previous.has_value() && previous->channel_id == remote->id) {
      std::optional<RemoteRecord> record = DecodeRemoteRecord(previous_data);
      ASSERT_TRUE(record.has_value());
      EXPECT_EQ(record->channel_id, message->channel_id);
      EXPECT_EQ(record->queue_index, message->sequence);
      EXPECT_EQ(previous->log_time, message->log_time);
      EXPECT_EQ(previous->publish_time, message->publish_time);
      EXPECT_EQ(previous->sequence, static_cast<uint32_t>(records));
      ++records;
    }
    previous_data = std::string(message->data);
    previous = std::move(message);
  }
  EXPECT_GT(records, 40);
}

TEST_F(ForwardedLogTest, ASingleNodeLogHasNoRemoteRecords) {
  testing::RecordPingPong(path_, Compression::kZstd,
                          std::chrono::milliseconds(200));
  auto mcap = McapReader::Open(path_);
  ASSERT_TRUE(mcap.ok()) << mcap.status();
  for (const auto& [id, channel] : (*mcap)->channels()) {
    EXPECT_NE(channel.topic, kRemoteMessageTopic);
  }
  for (const auto& [id, schema] : (*mcap)->schemas()) {
    EXPECT_NE(schema.name, kRemoteMessageType);
  }
}

// New code against recorded data from another node: pong replaced, the
// recorded pings (forwarded from pi1) replayed on pi2 as they arrived.
TEST_F(ForwardedLogTest, ReplaySendsForwardedMessagesAsRecorded) {
  const MultiNodePingPongLog recorded =
      RecordMultiNodePingPong(path_, std::chrono::seconds(1));
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  SimulatedEventLoopFactory factory((*log)->configuration());
  LogReader replay(
      log->get(), &factory, {.channel_filter = [](const Channel& channel) {
        return channel.type()->string_view() != "aos.examples.Pong";
      }});
  const Node* pi2 = (*log)->node();
  std::unique_ptr<EventLoop> pong = factory.MakeEventLoop("new_pong", pi2);
  // Its figures add up over the whole replay.
  pong->SkipTimingReport();
  Sender<examples::Pong> sender = pong->MakeSender<examples::Pong>("/test");
  std::vector<ReceivedPing> seen;
  pong->MakeWatcher("/test", [&](const examples::Ping& message) {
    seen.push_back(
        ReceivedPing{.value = message.value(), .context = pong->context()});
    auto builder = sender.MakeBuilder();
    auto reply = builder.MakeBuilder<examples::Pong>();
    reply.add_value(message.value());
    builder.CheckOk(builder.Send(reply.Finish()));
  });
  factory.Run();

  ASSERT_EQ(seen.size(), recorded.pings.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].value, recorded.pings[i].value) << i;
    ExpectSameOrigin(seen[i].context, recorded.pings[i].context, i);
  }
  // Its watcher measures the path ages pi2 saw when recording: the ping's
  // time through the network, from ping's timer on pi1.
  const timing::PathTimings& paths = pong->watchers().front()->timing().paths;
  ASSERT_EQ(paths.size(), 1u);
  int64_t min_age = INT64_MAX;
  int64_t max_age = INT64_MIN;
  for (const ReceivedPing& ping : recorded.pings) {
    const int64_t age =
        ping.context.monotonic_event_time.time_since_epoch().count() -
        ping.context.origins.begin()->monotonic_time_ns;
    min_age = std::min(min_age, age);
    max_age = std::max(max_age, age);
  }
  EXPECT_GT(min_age, 0);
  EXPECT_EQ(paths.begin()->count(), recorded.pings.size());
  EXPECT_EQ(paths.begin()->age.histogram().min_ns(), min_age);
  EXPECT_EQ(paths.begin()->age.histogram().max_ns(), max_age);
  // Realtime is the recorded one, not the simulation's default.
  EXPECT_EQ(seen.front().context.realtime_event_time.time_since_epoch() -
                seen.front().context.monotonic_event_time.time_since_epoch(),
            testing::kPi2RealtimeOffset);
  EXPECT_EQ(replay.send_errors(), 0u);
}

// A hand-made log of pi2 with one forwarded channel and remote records that
// are good, missing, garbage, belong to another message, lack a field, or
// are cut short.
class DamagedRemoteRecordTest : public ForwardedLogTest {
 protected:
  static constexpr int kMessages = 7;
  // Which messages have a usable record.
  static bool HasGoodRecord(int i) { return i == 0 || i == kMessages - 1; }

  void SetUp() override {
    const FlatbufferDetachedBuffer<Configuration>& config =
        MultiNodePingPongConfig();
    auto writer = McapWriter::Create(path_, {});
    ASSERT_TRUE(writer.ok()) << writer.status();
    McapWriter& mcap = **writer;
    const std::span<const uint8_t> config_bytes = config.span();
    ASSERT_TRUE(mcap.AddAttachment(
                        kConfigAttachment, kConfigMediaType,
                        std::string_view(
                            reinterpret_cast<const char*>(config_bytes.data()),
                            config_bytes.size()),
                        0, 0)
                    .ok());
    ASSERT_TRUE(
        mcap.AddMetadata(kLoggerMetadata, {{std::string(kLoggerNode), "pi2"}})
            .ok());
    auto ping =
        mcap.AddChannel(0, "/test", kFlatbufferEncoding,
                        {{std::string(kChannelType), "aos.examples.Ping"},
                         {std::string(kChannelSourceNode), "pi1"}});
    ASSERT_TRUE(ping.ok());
    auto schema = mcap.AddSchema(kRemoteMessageType, kFlatbufferEncoding,
                                 RemoteMessageSchema());
    ASSERT_TRUE(schema.ok());
    auto remote =
        mcap.AddChannel(*schema, kRemoteMessageTopic, kFlatbufferEncoding, {});
    ASSERT_TRUE(remote.ok());

    flatbuffers::FlatBufferBuilder fbb;
    for (int i = 0; i < kMessages; ++i) {
      const uint64_t log_time = (10 + i) * 1'000'000'000ull;
      const uint64_t publish_time = log_time + 5'000'000'000ull;
      RemoteOrigin good_origin;
      good_origin.monotonic_remote_time =
          monotonic_clock::time_point(std::chrono::seconds(3 + i));
      good_origin.realtime_remote_time =
          realtime_clock::time_point(std::chrono::seconds(1000 + i));
      good_origin.remote_queue_index = 100 + i;
      good_origin.source_boot_uuid = pi1_boot_;
      const RemoteRecord good{.channel_id = *ping,
                              .queue_index = static_cast<uint32_t>(i),
                              .origin = good_origin};
      std::string record;
      switch (i) {
        case 1:  // No record.
          break;
        case 2:
          record = "not a flatbuffer at all";
          break;
        case 3: {  // Another message's record.
          RemoteRecord other = good;
          other.queue_index = 99;
          record = std::string(EncodeRemoteRecord(other, &fbb));
          break;
        }
        case 4: {  // No source_boot_uuid.
          fbb.Clear();
          RemoteMessageBuilder builder(fbb);
          builder.add_channel_id(*ping);
          builder.add_queue_index(i);
          builder.add_monotonic_remote_time(1);
          builder.add_realtime_remote_time(2);
          builder.add_remote_queue_index(3);
          fbb.Finish(builder.Finish());
          record.assign(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                        fbb.GetSize());
          break;
        }
        case 5:  // Cut short.
          record = std::string(EncodeRemoteRecord(good, &fbb));
          record.resize(record.size() / 2);
          break;
        default:
          record = std::string(EncodeRemoteRecord(good, &fbb));
      }
      if (i != 1) {
        ASSERT_TRUE(
            mcap.WriteMessage(*remote, i, log_time, publish_time, record).ok());
      }
      flatbuffers::FlatBufferBuilder message_fbb;
      examples::Ping::Builder message(message_fbb);
      message.add_value(i);
      message_fbb.Finish(message.Finish());
      ASSERT_TRUE(mcap.WriteMessage(
                          *ping, i, log_time, publish_time,
                          std::string_view(reinterpret_cast<const char*>(
                                               message_fbb.GetBufferPointer()),
                                           message_fbb.GetSize()))
                      .ok());
    }
    ASSERT_TRUE(mcap.Close().ok());
  }

  const UUID pi1_boot_ = UUID::Random();
};

TEST_F(DamagedRemoteRecordTest, TheReaderLeavesTheRemoteFieldsUnknown) {
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  for (int i = 0; i < kMessages; ++i) {
    std::optional<LogMessage> message = (*log)->Next();
    ASSERT_TRUE(message.has_value()) << i;
    const Context& context = message->context;
    EXPECT_EQ(flatbuffers::GetRoot<examples::Ping>(context.data)->value(), i);
    EXPECT_EQ(context.queue_index, static_cast<uint32_t>(i));
    if (HasGoodRecord(i)) {
      EXPECT_EQ(context.monotonic_remote_time,
                monotonic_clock::time_point(std::chrono::seconds(3 + i)));
      EXPECT_EQ(context.realtime_remote_time,
                realtime_clock::time_point(std::chrono::seconds(1000 + i)));
      EXPECT_EQ(context.remote_queue_index, static_cast<uint32_t>(100 + i));
      EXPECT_EQ(context.source_boot_uuid, pi1_boot_);
    } else {
      EXPECT_EQ(context.monotonic_remote_time, monotonic_clock::min_time) << i;
      EXPECT_EQ(context.realtime_remote_time, realtime_clock::min_time) << i;
      EXPECT_EQ(context.remote_queue_index, Context::kInvalidQueueIndex) << i;
      EXPECT_TRUE(context.source_boot_uuid.IsZero()) << i;
    }
  }
  EXPECT_FALSE((*log)->Next().has_value());
  // Said once for the channel (from message 1 on), once for the malformed
  // records (from message 2 on).
  ASSERT_EQ((*log)->problems().size(), 2u);
  EXPECT_NE((*log)->problems()[0].find(
                "/test aos.examples.Ping (forwarded from pi1) at log "
                "time 11000000000 ns has no valid remote record"),
            std::string::npos)
      << (*log)->problems()[0];
  EXPECT_NE((*log)->problems()[1].find(
                "the remote record at log time 12000000000 ns is not a valid "
                "aos.logging.RemoteMessage"),
            std::string::npos)
      << (*log)->problems()[1];
}

// aos_dump --log prints each forwarded message with where it was first
// sent, and says so where the log's record of that is missing or damaged.
TEST_F(DamagedRemoteRecordTest, AosDumpSaysWhichRemoteTimesAreUnknown) {
  Subprocess dump(aos::testing::ArtifactPath("aos/tools/aos_dump"),
                  {"--log=" + path_, "/test", "aos.examples.Ping"},
                  aos::testing::TestTempDir());
  ASSERT_EQ(dump.Wait(), 0) << dump.Stderr();
  std::vector<std::string> lines;
  std::istringstream out(dump.Stdout());
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kMessages)) << dump.Stdout();
  for (int i = 0; i < kMessages; ++i) {
    std::ostringstream origin;
    if (HasGoodRecord(i)) {
      origin << "(sent there "
             << monotonic_clock::time_point(std::chrono::seconds(3 + i)) << " ("
             << realtime_clock::time_point(std::chrono::seconds(1000 + i))
             << "), queue index " << 100 + i << ", boot "
             << pi1_boot_.ToString() << ")";
    } else {
      origin << "(remote times unknown)";
    }
    EXPECT_NE(lines[i].find("/test aos.examples.Ping from pi1 " + origin.str() +
                            ": {"),
              std::string::npos)
        << lines[i];
  }
}

TEST_F(DamagedRemoteRecordTest, ReplaySendsEveryMessageAnyway) {
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  SimulatedEventLoopFactory factory((*log)->configuration());
  LogReader replay(log->get(), &factory);
  std::unique_ptr<EventLoop> watcher =
      factory.MakeEventLoop("watcher", (*log)->node());
  watcher->SkipTimingReport();
  std::vector<Context> seen;
  watcher->MakeWatcher("/test", [&](const examples::Ping&) {
    seen.push_back(watcher->context());
  });
  factory.Run();
  ASSERT_EQ(seen.size(), static_cast<size_t>(kMessages));
  EXPECT_EQ(replay.replayed_messages(), static_cast<uint64_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    const Context& context = seen[i];
    EXPECT_EQ(context.monotonic_event_time,
              monotonic_clock::time_point(std::chrono::seconds(10 + i)));
    EXPECT_EQ(context.realtime_event_time,
              realtime_clock::time_point(std::chrono::seconds(15 + i)));
    if (HasGoodRecord(i)) {
      EXPECT_EQ(context.remote_queue_index, static_cast<uint32_t>(100 + i));
      EXPECT_EQ(context.source_boot_uuid, pi1_boot_);
    } else {
      // Sent with an empty origin: the local fields, no boot.
      EXPECT_EQ(context.monotonic_remote_time, context.monotonic_event_time);
      EXPECT_EQ(context.remote_queue_index, context.queue_index);
      EXPECT_TRUE(context.source_boot_uuid.IsZero()) << i;
    }
  }
}

}  // namespace
}  // namespace aos::logging
