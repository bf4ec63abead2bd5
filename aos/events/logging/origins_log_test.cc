// Path origins in a log, read back from hand-made logs: every kind of good,
// missing and damaged origins record (LogFileReader keeps what is true,
// calls the rest unknown and says so), a log from before origins were
// recorded, replay of what is known, and aos_dump -v's lines for them.
// (logger_test and forwarded_log_test check logs the logger wrote against
// what was sent, and replay's path ages.)
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/mcap_writer.h"
#include "aos/events/logging/message_origins_generated.h"
#include "aos/events/logging/origins_record.h"
#include "aos/events/logging/pingpong_log.h"
#include "aos/events/timing_report_codec.h"
#include "aos/testing/path.h"
#include "aos/util/subprocess.h"
#include "examples/ping_generated.h"
#include "examples/pong_generated.h"
#include "gtest/gtest.h"

namespace aos::logging {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMillisecond = 1'000'000;
// The log times (ns) of Ping i, and of the Pong.
constexpr int64_t LogTime(int i) { return (10 + i) * kSecond; }
constexpr int64_t kReplyTime = 18 * kSecond;
// A malformed origins record after the last message.
constexpr int64_t kStrayTime = 19 * kSecond;

// ping's timer "ping" (named by a timing report in the log) and an origin
// no report names.
const uint32_t kPingTimer = PathOriginId("", "ping", "timer", "ping");
constexpr uint32_t kUnnamed = 0xabc;

std::string Bytes(const flatbuffers::FlatBufferBuilder& fbb) {
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

std::string Hex(uint32_t id) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08" PRIx32, id);
  return text;
}

// A single-node log of /test (Ping, 8 messages, Pong, 1) and
// one timing report of ping on /aos, with origins records of every kind.
class OriginsLogTest : public ::testing::Test {
 protected:
  // What Ping i carried, as the reader must give it; nullopt:
  // unknown.
  static std::optional<PathOrigins> Expected(int i) {
    PathOrigins origins;
    switch (i) {
      case 0:
        origins.Add({.id = kPingTimer,
                     .hops = 1,
                     .monotonic_time_ns = LogTime(0) - 10 * kMillisecond});
        origins.Add({.id = kUnnamed,
                     .hops = 2,
                     .uncertainty_us = 25,
                     .monotonic_time_ns = LogTime(0) - 3 * kMillisecond});
        return origins;
      case 1:  // No record: none.
      case 3:  // Another message's record: none of its own.
        return origins;
      case 5: {
        PathOrigins::Raw raw{};
        raw.dropped = 3;
        origins = PathOrigins::FromRaw(raw, 0, nullptr);
        origins.Add({.id = kPingTimer,
                     .hops = 1,
                     .monotonic_time_ns = LogTime(5) - 10 * kMillisecond});
        return origins;
      }
      default:  // Damaged: 2, 4, 6, 7.
        return std::nullopt;
    }
  }

  // The record written before Ping i (empty: none).
  static std::string Record(int i, uint16_t channel) {
    flatbuffers::FlatBufferBuilder fbb;
    switch (i) {
      case 1:
        return "";
      case 2: {  // An origin later than the message, beyond its uncertainty.
        PathOrigins later;
        later.Add({.id = kPingTimer,
                   .hops = 1,
                   .monotonic_time_ns = LogTime(2) + kMillisecond});
        return std::string(EncodeOriginsRecord(channel, i, later, &fbb));
      }
      case 3:
        return std::string(
            EncodeOriginsRecord(channel, 99, *Expected(0), &fbb));
      case 4: {  // Five origins.
        std::vector<Origin> five;
        for (uint32_t id = 1; id <= 5; ++id) {
          five.emplace_back(id, 1, 0, LogTime(4) - kMillisecond);
        }
        const auto vector = fbb.CreateVectorOfStructs(five);
        MessageOriginsBuilder builder(fbb);
        builder.add_channel_id(channel);
        builder.add_queue_index(i);
        builder.add_origins(vector);
        builder.add_dropped(0);
        fbb.Finish(builder.Finish());
        return Bytes(fbb);
      }
      case 6:
        return "not a flatbuffer at all";
      case 7: {  // No dropped field.
        const auto vector = fbb.CreateVectorOfStructs<Origin>(nullptr, 0);
        MessageOriginsBuilder builder(fbb);
        builder.add_channel_id(channel);
        builder.add_queue_index(i);
        builder.add_origins(vector);
        fbb.Finish(builder.Finish());
        return Bytes(fbb);
      }
      default:
        return std::string(EncodeOriginsRecord(channel, i, *Expected(i), &fbb));
    }
  }

  // Writes the log; without `origins_channel`, as before origins were
  // recorded: no origins channel and no records.
  void WriteLog(bool origins_channel) {
    auto writer = McapWriter::Create(path_, {.chunk_size = 256});
    ASSERT_TRUE(writer.ok()) << writer.status();
    McapWriter& mcap = **writer;
    ASSERT_TRUE(AddConfig(&mcap).ok());
    ASSERT_TRUE(
        mcap.AddMetadata(kLoggerMetadata, {{std::string(kLoggerNode), ""}})
            .ok());
    auto ping =
        mcap.AddChannel(0, "/test", kFlatbufferEncoding,
                        {{std::string(kChannelType), "aos.examples.Ping"}});
    auto pong =
        mcap.AddChannel(0, "/test", kFlatbufferEncoding,
                        {{std::string(kChannelType), "aos.examples.Pong"}});
    auto reports =
        mcap.AddChannel(0, "/aos", kFlatbufferEncoding,
                        {{std::string(kChannelType), "aos.timing.Report"}});
    ASSERT_TRUE(ping.ok() && pong.ok() && reports.ok());
    uint16_t records = 0;
    if (origins_channel) {
      auto schema = mcap.AddSchema(kOriginsType, kFlatbufferEncoding,
                                   MessageOriginsSchema());
      ASSERT_TRUE(schema.ok());
      auto channel =
          mcap.AddChannel(*schema, kOriginsTopic, kFlatbufferEncoding, {});
      ASSERT_TRUE(channel.ok());
      records = *channel;
    }
    uint32_t record_sequence = 0;
    auto write_record = [&](std::string_view record, int64_t log_time) {
      if (!origins_channel || record.empty()) return;
      ASSERT_TRUE(mcap.WriteMessage(records, record_sequence++, log_time,
                                    log_time + 5 * kSecond, record)
                      .ok());
    };

    // ping's report, naming its timer.
    timing::ReportContents report;
    report.header.name = "ping";
    report.header.monotonic_start_ns = 8 * kSecond;
    report.header.monotonic_end_ns = 9 * kSecond;
    timing::TimerTiming timer;
    timer.name = "ping";
    timer.origin_id = kPingTimer;
    report.timers.push_back(timer);
    const flatbuffers::DetachedBuffer encoded =
        timing::EncodeReportContents(report);
    ASSERT_TRUE(
        mcap.WriteMessage(
                *reports, 0, 9 * kSecond, 14 * kSecond,
                std::string_view(reinterpret_cast<const char*>(encoded.data()),
                                 encoded.size()))
            .ok());

    for (int i = 0; i < 8; ++i) {
      write_record(Record(i, *ping), LogTime(i));
      flatbuffers::FlatBufferBuilder fbb;
      examples::Ping::Builder message(fbb);
      message.add_value(i);
      fbb.Finish(message.Finish());
      ASSERT_TRUE(mcap.WriteMessage(*ping, i, LogTime(i),
                                    LogTime(i) + 5 * kSecond, Bytes(fbb))
                      .ok());
    }
    write_record("garbage", kReplyTime);
    flatbuffers::FlatBufferBuilder fbb;
    examples::Pong::Builder reply(fbb);
    reply.add_value(1);
    fbb.Finish(reply.Finish());
    ASSERT_TRUE(mcap.WriteMessage(*pong, 0, kReplyTime,
                                  kReplyTime + 5 * kSecond, Bytes(fbb))
                    .ok());
    write_record("garbage too", kStrayTime);
    ASSERT_TRUE(mcap.Close().ok());
  }

  static absl::Status AddConfig(McapWriter* mcap) {
    const FlatbufferDetachedBuffer<Configuration>& config =
        testing::PingPongConfigBuffer();
    return mcap->AddAttachment(
        kConfigAttachment, kConfigMediaType,
        std::string_view(reinterpret_cast<const char*>(config.span().data()),
                         config.span().size()),
        0, 0);
  }

  // aos_dump --log=path_ ARGS: its stdout lines (it must exit 0).
  std::vector<std::string> Dump(std::vector<std::string> args) {
    args.insert(args.begin(), "--log=" + path_);
    Subprocess dump(aos::testing::ArtifactPath("aos/tools/aos_dump"), args,
                    aos::testing::TestTempDir());
    EXPECT_EQ(dump.Wait(), 0) << dump.Stderr();
    std::vector<std::string> lines;
    std::istringstream out(dump.Stdout());
    for (std::string line; std::getline(out, line);) lines.push_back(line);
    return lines;
  }

  std::string path_ = aos::testing::TestTempDir() + "/origins.mcap";
};

TEST_F(OriginsLogTest, TheReaderKeepsWhatIsTrueAndSaysWhatIsDamaged) {
  WriteLog(true);
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE((*log)->records_origins());
  std::optional<LogMessage> report = (*log)->Next();
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->channel->name()->string_view(), "/aos");
  EXPECT_TRUE(report->origins_known);
  EXPECT_TRUE(report->context.origins.empty());
  for (int i = 0; i < 8; ++i) {
    std::optional<LogMessage> message = (*log)->Next();
    ASSERT_TRUE(message.has_value()) << i;
    EXPECT_EQ(
        flatbuffers::GetRoot<examples::Ping>(message->context.data)->value(),
        i);
    const std::optional<PathOrigins> expected = Expected(i);
    EXPECT_EQ(message->origins_known, expected.has_value()) << i;
    EXPECT_EQ(message->context.origins, expected.value_or(PathOrigins())) << i;
  }
  std::optional<LogMessage> reply = (*log)->Next();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->channel->type()->string_view(), "aos.examples.Pong");
  EXPECT_FALSE(reply->origins_known);
  EXPECT_TRUE(reply->context.origins.empty());
  EXPECT_FALSE((*log)->Next().has_value());
  // Once per channel, and once for the record no message follows.
  EXPECT_EQ(
      (*log)->problems(),
      (std::vector<std::string>{
          path_ + ": the message of /test aos.examples.Ping at log time "
                  "12000000000 ns has a damaged origins record (1 of its 1 "
                  "origins cannot be true: more than 4, id 0, 0 hops, an id "
                  "twice, or later than the message); its origins are unknown, "
                  "as are those of any later such message of the channel",
          path_ +
              ": the message of /test aos.examples.Pong at log time "
              "18000000000 ns has a damaged origins record (not a valid "
              "aos.logging.MessageOrigins); its origins are unknown, as are "
              "those of any later such message of the channel",
          path_ +
              ": the origins record at log time 19000000000 ns is not a "
              "valid aos.logging.MessageOrigins (damaged or hand-made log), "
              "and no message of its time follows it; skipped, as are any "
              "later such"}));
}

// Written before origins were recorded: every message's origins are
// unknown, which is no damage.
TEST_F(OriginsLogTest, ALogWithoutOriginsRecordsHasUnknownOrigins) {
  WriteLog(false);
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_FALSE((*log)->records_origins());
  int messages = 0;
  while (std::optional<LogMessage> message = (*log)->Next()) {
    EXPECT_FALSE(message->origins_known);
    EXPECT_TRUE(message->context.origins.empty());
    ++messages;
  }
  EXPECT_EQ(messages, 10);
  EXPECT_TRUE((*log)->problems().empty());
}

// Replay sends what is known as recorded, and nothing where the origins
// are unknown.
TEST_F(OriginsLogTest, ReplaySendsTheKnownOrigins) {
  WriteLog(true);
  const std::vector<PathOrigins> seen =
      testing::ReplayWatchingOrigins(path_, "/test", "aos.examples.Ping")
          .origins;
  ASSERT_EQ(seen.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(seen[i], Expected(i).value_or(PathOrigins())) << i;
  }
}

// aos_dump -v: one line per origin under each message, the log's timing
// reports naming ping's timer; none and unknown said.
TEST_F(OriginsLogTest, AosDumpPrintsEachOriginUnderItsMessage) {
  WriteLog(true);
  const std::string unknown =
      "  origins unknown (its origins record in the log is damaged)";
  const std::string ping = Hex(kPingTimer) + " (timer ping of ping)";
  const std::vector<std::string> expected = {
      "  origin " + ping +
          ": hops 1, time 9.990000000sec, age 10000.000 us ±0 us",
      "  origin 0x00000abc: hops 2, time 9.997000000sec, age 3000.000 us "
      "±25 us",
      "  no origins",
      unknown,
      "  no origins",
      unknown,
      "  origin " + ping +
          ": hops 1, time 14.990000000sec, age 10000.000 us ±0 us",
      "  3 more origins dropped on the way (no room)",
      unknown,
      unknown,
  };
  for (const std::string flag : {"-v", "--origins"}) {
    const std::vector<std::string> lines =
        Dump({flag, "/test", "aos.examples.Ping"});
    std::vector<std::string> origin_lines;
    int messages = 0;
    for (const std::string& line : lines) {
      if (line.starts_with("  ")) {
        origin_lines.push_back(line);
      } else {
        EXPECT_NE(line.find(" /test aos.examples.Ping: {"), std::string::npos)
            << line;
        ++messages;
      }
    }
    EXPECT_EQ(messages, 8) << flag;
    EXPECT_EQ(origin_lines, expected) << flag;
  }
  // Without the flag, the messages only.
  EXPECT_EQ(Dump({"/test", "aos.examples.Ping"}).size(), 8u);
}

TEST_F(OriginsLogTest, AosDumpSaysWhenALogDoesNotRecordOrigins) {
  WriteLog(false);
  const std::vector<std::string> lines =
      Dump({"-v", "/test", "aos.examples.Pong"});
  EXPECT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines.back(),
            "  origins unknown (the log does not record origins: an "
            "aos_logger before 2026-11-26 wrote it)");
}

}  // namespace
}  // namespace aos::logging
