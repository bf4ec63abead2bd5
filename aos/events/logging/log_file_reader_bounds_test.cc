// What LogFileReader lets a log make it allocate (log_file_reader.h,
// "Hostile logs"): the largest chunk aos_logger can write, even of data
// that compresses 30000-fold, is read; a chunk claiming one byte more is
// refused; strings from the log reach problems escaped.
#include <map>
#include <string>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/logging/hostile_log.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/log_format.h"
#include "aos/events/logging/log_memory_flag.h"
#include "aos/events/logging/mcap_writer.h"
#include "aos/testing/path.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

namespace aos::logging {
namespace {

// One channel, /big, whose messages may be 1 MiB: the largest record is a
// message of that size.
constexpr int kMaxSize = 1 << 20;
constexpr uint64_t kLargestChunk =
    kMaxChunkSize - 1 + kMessageRecordOverhead + kMaxSize;

const FlatbufferDetachedBuffer<Configuration>& BigConfig() {
  static const auto* const config = new FlatbufferDetachedBuffer<Configuration>(
      configuration::ReadConfigFromJson(
          StrCat(R"({ "channels": [ { "name": "/big", "type": "T", )",
                 R"("max_size": )", kMaxSize, " } ] }"))
          .value());
  return *config;
}

// Starts an aos log of BigConfig() at `path` (the configuration attached,
// /big as MCAP channel 0, `metadata` if any), written by McapWriter with
// aos_logger's largest --chunk_size.
std::unique_ptr<McapWriter> StartLog(
    const std::string& path,
    const std::map<std::string, std::string>& metadata = {},
    std::string_view topic = "/big") {
  auto writer = McapWriter::Create(
      path, {.compression = Compression::kZstd, .chunk_size = kMaxChunkSize});
  CHECK(writer.ok()) << writer.status();
  CHECK((*writer)
            ->AddChannel(0, topic, kFlatbufferEncoding,
                         {{std::string(kChannelType), "T"}})
            .ok());
  const FlatbufferDetachedBuffer<Configuration>& config = BigConfig();
  CHECK((*writer)
            ->AddAttachment(kConfigAttachment, kConfigMediaType,
                            std::string_view(reinterpret_cast<const char*>(
                                                 config.span().data()),
                                             config.span().size()),
                            0, 0)
            .ok());
  if (!metadata.empty()) {
    CHECK((*writer)->AddMetadata(kLoggerMetadata, metadata).ok());
  }
  return std::move(*writer);
}

class LogFileReaderBoundsTest : public ::testing::Test {
 protected:
  std::string path_ = aos::testing::TestTempDir() + "/bounds.mcap";
};

// The writer closes a chunk once it holds kMaxChunkSize bytes: the largest
// it writes holds kMaxChunkSize - 1 bytes and then a message of max_size.
// Zeros, which zstd shrinks about 30000-fold: that ratio alone refuses
// nothing.
TEST_F(LogFileReaderBoundsTest, TheLargestChunkTheLoggerWritesIsRead) {
  std::unique_ptr<McapWriter> writer = StartLog(path_);
  const std::string zeros(kMaxSize, '\0');
  uint64_t chunk = 0;
  uint32_t sent = 0;
  // Fill the chunk to exactly kMaxChunkSize - 1 bytes...
  while (chunk < kMaxChunkSize - 1) {
    const uint64_t room = kMaxChunkSize - 1 - chunk;
    uint64_t size = std::min<uint64_t>(kMaxSize, room - kMessageRecordOverhead);
    // ...leaving room for at least one more record.
    if (room - (kMessageRecordOverhead + size) != 0 &&
        room - (kMessageRecordOverhead + size) < kMessageRecordOverhead) {
      size -= kMessageRecordOverhead;
    }
    ASSERT_TRUE(writer
                    ->WriteMessage(0, sent, 1000 + sent, 0,
                                   std::string_view(zeros).substr(0, size))
                    .ok());
    chunk += kMessageRecordOverhead + size;
    ++sent;
  }
  ASSERT_EQ(chunk, kMaxChunkSize - 1);
  // ...then one message of max_size closes it.
  ASSERT_TRUE(writer->WriteMessage(0, sent, 1000 + sent, 0, zeros).ok());
  ++sent;
  ASSERT_TRUE(writer->Close().ok());

  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  uint32_t read = 0;
  while (std::optional<LogMessage> message = (*log)->Next()) {
    EXPECT_EQ(message->context.queue_index, read);
    ++read;
  }
  EXPECT_EQ(read, sent);
  EXPECT_TRUE((*log)->problems().empty()) << (*log)->problems()[0];
}

// A chunk one byte larger than aos_logger can write for the log's channels
// is refused, naming why; a chunk of exactly that size beside it is read.
TEST_F(LogFileReaderBoundsTest, OneByteMoreThanTheLoggerWritesIsRefused) {
  std::unique_ptr<McapWriter> writer = StartLog(path_);
  ASSERT_TRUE(writer->WriteMessage(0, 0, 1000, 0, "first").ok());
  ASSERT_TRUE(writer->Close().ok());
  const std::string data = testing::DataSection(testing::ReadWholeFile(path_));
  const auto chunk = [](uint64_t size, uint32_t sequence) {
    const std::string message =
        testing::MessageRecord(0, sequence, 2000, 0, "bomb");
    const uint64_t zeros = size - message.size() - 9;
    return testing::ZstdChunkRecord(
        2000, 2000,
        {{.bytes = message + testing::UnknownRecordPrefix(zeros),
          .zeros = zeros}});
  };
  const std::string largest = chunk(kLargestChunk, 1);
  testing::WriteWholeFile(path_, data + largest + chunk(kLargestChunk + 1, 2) +
                                     testing::EndWithoutSummary());
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  std::vector<uint32_t> read;
  while (std::optional<LogMessage> message = (*log)->Next()) {
    read.push_back(message->context.queue_index);
  }
  EXPECT_EQ(read, (std::vector<uint32_t>{0, 1}));
  ASSERT_EQ((*log)->problems().size(), 1u);
  EXPECT_NE((*log)->problems()[0].find(
                StrCat(": the chunk at byte ", data.size() + largest.size(),
                       " (messages from 2000 to 2000 ns) claims ",
                       kLargestChunk + 1, " bytes uncompressed from ")),
            std::string::npos)
      << (*log)->problems()[0];
  EXPECT_NE((*log)->problems()[0].find(StrCat(
                "compressed, more than the ", kLargestChunk,
                " bytes a chunk may hold here (the largest chunk aos_logger "
                "writes for this log's channels: 67108864 bytes less one, "
                "plus their largest record); refused; its messages are lost")),
            std::string::npos)
      << (*log)->problems()[0];
}

// Names from the log (a topic, the boot UUID, the node) reach problems and
// errors escaped and bounded.
TEST_F(LogFileReaderBoundsTest, StringsFromTheLogAreEscaped) {
  const std::string evil =
      std::string("\x1b[2J\0x", 6) + std::string(1 << 20, 'e');
  {
    std::unique_ptr<McapWriter> writer =
        StartLog(path_, {{std::string(kLoggerBootUuid), evil}}, evil);
    ASSERT_TRUE(writer->WriteMessage(0, 0, 1000, 0, "x").ok());
    ASSERT_TRUE(writer->Close().ok());
  }
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  while ((*log)->Next().has_value()) {
  }
  ASSERT_EQ((*log)->problems().size(), 2u);
  for (const std::string& problem : (*log)->problems()) {
    EXPECT_NE(problem.find(StrCat("\"\\x1b[2J\\x00xeee")), std::string::npos)
        << problem;
    EXPECT_NE(problem.find(StrCat(" (", evil.size(), " bytes)")),
              std::string::npos)
        << problem;
    EXPECT_LT(problem.size(), 1000u);
  }

  StartLog(path_, {{std::string(kLoggerNode), evil}})->Close().IgnoreError();
  auto refused = LogFileReader::Open(path_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                StrCat("it was logged on node \"\\x1b[2J\\x00xeee")),
            std::string::npos)
      << refused.status().message().substr(0, 1000);
  EXPECT_LT(refused.status().message().size(), 1000u);
}

// Messages sit in a chunk at any offset; flatbuffers reads scalars in place,
// so every message comes aligned (the fuzzer's UBSan found misaligned
// loads).
TEST_F(LogFileReaderBoundsTest, MessagesComeAligned) {
  {
    std::unique_ptr<McapWriter> writer = StartLog(path_);
    for (uint32_t i = 0; i < 20; ++i) {
      ASSERT_TRUE(
          writer->WriteMessage(0, i, 1000 + i, 0, std::string(1 + 3 * i, 'm'))
              .ok());
    }
    ASSERT_TRUE(writer->Close().ok());
  }
  auto log = LogFileReader::Open(path_);
  ASSERT_TRUE(log.ok()) << log.status();
  uint32_t read = 0;
  while (std::optional<LogMessage> message = (*log)->Next()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(message->context.data) %
                  kLogMessageAlignment,
              0u)
        << "message " << read;
    EXPECT_EQ(std::string_view(static_cast<const char*>(message->context.data),
                               message->context.size),
              std::string(1 + 3 * read, 'm'));
    ++read;
  }
  EXPECT_EQ(read, 20u);
}

// --log_memory_mb out of range is an error naming the flag.
TEST_F(LogFileReaderBoundsTest, MemoryFlagOutOfRangeIsNamed) {
  FLAGS_log_memory_mb = 0;
  auto log = OpenLogWithMemoryFlag(path_);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(),
            "--log_memory_mb=0: give 1 to 1048576 (MiB)");
  FLAGS_log_memory_mb = 256;
}

}  // namespace
}  // namespace aos::logging
