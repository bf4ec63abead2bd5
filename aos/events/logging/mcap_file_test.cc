// McapWriter and McapReader together: what one writes the other reads, with
// every compression, and what survives a killed writer, a cut-short file and
// a damaged chunk. (mcap_check_test reads our files with the MCAP project's
// own reader.)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "aos/events/logging/mcap_reader.h"
#include "aos/events/logging/mcap_writer.h"
#include "aos/testing/path.h"
#include "gtest/gtest.h"

namespace aos::logging {
namespace {

// Message i of the test files: on channel i % 2, at log time 1000 * i,
// published at 5 + 1000 * i, holding i's decimal digits repeated.
struct Sent {
  uint16_t channel;
  uint64_t log_time;
  uint64_t publish_time;
  std::string data;
};

Sent MessageNumber(int i) {
  std::string data;
  while (data.size() < 200) data += std::to_string(i) + ",";
  return Sent{.channel = static_cast<uint16_t>(i % 2),
              .log_time = 1000u * i,
              .publish_time = 1000u * i + 5,
              .data = data};
}

// Writes `count` messages into `path` with small chunks (about 10 messages
// each), the way the logger sets up a file. Closes it if `close`.
void WriteFile(const std::string& path, Compression compression, int count,
               bool close = true) {
  auto writer = McapWriter::Create(
      path, {.compression = compression, .chunk_size = 2000});
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto schema = (*writer)->AddSchema("aos.testing.TestMessage", "flatbuffer",
                                     std::string("bfbs\0bytes", 10));
  ASSERT_TRUE(schema.ok());
  for (std::string topic : {"/even", "/odd"}) {
    ASSERT_TRUE((*writer)
                    ->AddChannel(*schema, topic, "flatbuffer",
                                 {{"aos_type", "aos.testing.TestMessage"}})
                    .ok());
  }
  ASSERT_TRUE((*writer)
                  ->AddAttachment("config.bin", "application/octet-stream",
                                  "config bytes", 1, 2)
                  .ok());
  ASSERT_TRUE((*writer)->AddMetadata("aos_logger", {{"node", "pi1"}}).ok());
  for (int i = 0; i < count; ++i) {
    const Sent sent = MessageNumber(i);
    ASSERT_TRUE((*writer)
                    ->WriteMessage(sent.channel, i, sent.log_time,
                                   sent.publish_time, sent.data)
                    .ok());
  }
  if (close) {
    ASSERT_TRUE((*writer)->Close().ok());
  } else {
    // Leave the file as a killed writer would (the destructor would close).
    writer->release();
  }
}

// The numbers of the messages read, checking each against what was sent.
std::vector<int> ReadNumbers(McapReader* reader) {
  std::vector<int> numbers;
  while (std::optional<McapMessage> message = reader->Next()) {
    const int i = message->sequence;
    const Sent sent = MessageNumber(i);
    EXPECT_EQ(message->channel_id, sent.channel) << i;
    EXPECT_EQ(message->log_time, sent.log_time) << i;
    EXPECT_EQ(message->publish_time, sent.publish_time) << i;
    EXPECT_EQ(message->data, sent.data) << i;
    numbers.push_back(i);
  }
  return numbers;
}

std::vector<int> Range(int begin, int end) {
  std::vector<int> result;
  for (int i = begin; i < end; ++i) result.push_back(i);
  return result;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), bytes.size());
}

class McapFileTest : public ::testing::TestWithParam<Compression> {
 protected:
  std::string path_ = aos::testing::TestTempDir() + "/test.mcap";
};

TEST_P(McapFileTest, ReadsBackEverythingThroughTheSummary) {
  WriteFile(path_, GetParam(), 100);
  auto reader = McapReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->read_summary());
  EXPECT_EQ((*reader)->library(), "aos");
  ASSERT_EQ((*reader)->schemas().size(), 1u);
  EXPECT_EQ((*reader)->schemas().at(1).name, "aos.testing.TestMessage");
  EXPECT_EQ((*reader)->schemas().at(1).encoding, "flatbuffer");
  EXPECT_EQ((*reader)->schemas().at(1).data, std::string("bfbs\0bytes", 10));
  ASSERT_EQ((*reader)->channels().size(), 2u);
  EXPECT_EQ((*reader)->channels().at(1).topic, "/odd");
  EXPECT_EQ((*reader)->channels().at(1).schema_id, 1);
  EXPECT_EQ((*reader)->channels().at(1).metadata.at("aos_type"),
            "aos.testing.TestMessage");
  ASSERT_EQ((*reader)->attachments().size(), 1u);
  EXPECT_EQ((*reader)->attachments()[0].data, "config bytes");
  ASSERT_EQ((*reader)->metadata().size(), 1u);
  EXPECT_EQ((*reader)->metadata()[0].metadata.at("node"), "pi1");
  EXPECT_EQ(ReadNumbers(reader->get()), Range(0, 100));
  EXPECT_TRUE((*reader)->problems().empty());
}

// The writer dies after its last chunk went out: a scan finds every
// finished chunk and says there was no footer.
TEST_P(McapFileTest, ScansAFileWithoutSummary) {
  WriteFile(path_, GetParam(), 100, /*close=*/false);
  auto reader = McapReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_FALSE((*reader)->read_summary());
  EXPECT_EQ((*reader)->channels().size(), 2u);
  EXPECT_EQ((*reader)->attachments().size(), 1u);
  const std::vector<int> numbers = ReadNumbers(reader->get());
  // Only the open chunk (fewer than 10 messages) is lost.
  ASSERT_GE(numbers.size(), 90u);
  EXPECT_EQ(numbers, Range(0, numbers.size()));
  ASSERT_EQ((*reader)->problems().size(), 1u);
  EXPECT_NE((*reader)->problems()[0].find("no Footer"), std::string::npos);
}

// Cut anywhere: the chunks before the cut are read, and one problem says
// where the file ends.
TEST_P(McapFileTest, ReadsACutShortFileUpToTheCut) {
  WriteFile(path_, GetParam(), 100);
  const std::string whole = ReadAll(path_);
  for (size_t cut : {whole.size() / 2, whole.size() / 3, whole.size() - 3}) {
    SCOPED_TRACE(cut);
    WriteAll(path_, std::string_view(whole).substr(0, cut));
    auto reader = McapReader::Open(path_);
    ASSERT_TRUE(reader.ok()) << reader.status();
    const std::vector<int> numbers = ReadNumbers(reader->get());
    EXPECT_EQ(numbers, Range(0, numbers.size()));
    if (cut < whole.size() / 2 + 1) {
      EXPECT_GT(numbers.size(), 10u);
      EXPECT_LT(numbers.size(), 100u);
    }
    ASSERT_FALSE((*reader)->problems().empty());
    EXPECT_NE((*reader)->problems().back().find(path_), std::string::npos);
  }
}

// Bytes flipped inside one chunk: that chunk is reported and skipped, every
// other message is read.
TEST_P(McapFileTest, SkipsADamagedChunk) {
  WriteFile(path_, GetParam(), 100);
  std::string bytes = ReadAll(path_);
  // Walk the records (opcode, uint64 length, content) to the fifth Chunk
  // and damage the last bytes of its (compressed) records.
  size_t offset = 8;
  int chunks = 0;
  while (true) {
    ASSERT_LT(offset + 9, bytes.size());
    uint64_t length;
    std::memcpy(&length, bytes.data() + offset + 1, 8);
    if (bytes[offset] == 0x06 && ++chunks == 5) {
      const size_t end = offset + 9 + length;
      for (size_t i = end - 8; i < end; ++i) bytes[i] ^= 0x5a;
      break;
    }
    offset += 9 + length;
  }
  WriteAll(path_, bytes);
  auto reader = McapReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const std::vector<int> numbers = ReadNumbers(reader->get());
  ASSERT_EQ((*reader)->problems().size(), 1u) << (*reader)->problems()[0];
  EXPECT_NE((*reader)->problems()[0].find("its messages are lost"),
            std::string::npos)
      << (*reader)->problems()[0];
  // One chunk (about 10 messages) is gone; the rest are there, in order.
  EXPECT_GE(numbers.size(), 80u);
  EXPECT_LT(numbers.size(), 100u);
  EXPECT_TRUE(std::is_sorted(numbers.begin(), numbers.end()));
  EXPECT_EQ(numbers.front(), 0);
  EXPECT_EQ(numbers.back(), 99);
}

INSTANTIATE_TEST_SUITE_P(Compressions, McapFileTest,
                         ::testing::Values(Compression::kNone,
                                           Compression::kLz4,
                                           Compression::kZstd),
                         [](const auto& info) {
                           return info.param == Compression::kNone
                                      ? std::string("none")
                                      : std::string(
                                            CompressionName(info.param));
                         });

// A writer killed with SIGKILL in the middle of writing leaves every chunk
// it finished readable.
TEST(McapWriterTest, SurvivesSigkill) {
  const std::string path = aos::testing::TestTempDir() + "/killed.mcap";
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    auto writer = McapWriter::Create(
        path, {.compression = Compression::kZstd, .chunk_size = 2000});
    if (!writer.ok()) _exit(2);
    if (!(*writer)->AddChannel(0, "/even", "flatbuffer", {}).ok()) _exit(2);
    if (!(*writer)->AddChannel(0, "/odd", "flatbuffer", {}).ok()) _exit(2);
    for (int i = 0; i < 1000; ++i) {
      const Sent sent = MessageNumber(i);
      if (!(*writer)
               ->WriteMessage(sent.channel, i, sent.log_time, sent.publish_time,
                              sent.data)
               .ok()) {
        _exit(2);
      }
      if (i == 555) raise(SIGKILL);
    }
    _exit(3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  auto reader = McapReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const std::vector<int> numbers = ReadNumbers(reader->get());
  // At most the open chunk (about 10 messages) is lost.
  EXPECT_GE(numbers.size(), 540u);
  EXPECT_EQ(numbers, Range(0, numbers.size()));
}

// A full disk is an error naming the file, and every later call says the
// same instead of writing half records.
TEST(McapWriterTest, DiskFullNamesTheFile) {
  auto writer = McapWriter::Create("/dev/full", {});
  if (writer.ok()) {
    // The header may sit in the page cache... /dev/full fails every write.
    FAIL() << "writing the header to /dev/full succeeded";
  }
  EXPECT_NE(writer.status().message().find("/dev/full"), std::string::npos);
  EXPECT_NE(writer.status().message().find("No space left on device"),
            std::string::npos)
      << writer.status();
}

TEST(McapWriterTest, UnwritableDirectoryNamesThePath) {
  const std::string path =
      aos::testing::TestTempDir() + "/no/such/dir/log.mcap";
  auto writer = McapWriter::Create(path, {});
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find(path), std::string::npos)
      << writer.status();
}

TEST(McapReaderTest, RefusesWhatIsNotMcap) {
  const std::string path = aos::testing::TestTempDir() + "/not.mcap";
  WriteAll(path, "{\"json\": \"is not MCAP, not even close\"}");
  auto reader = McapReader::Open(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find(path), std::string::npos);
  EXPECT_NE(reader.status().message().find("not an MCAP file"),
            std::string::npos);
  EXPECT_FALSE(McapReader::Open(path + ".missing").ok());
}

}  // namespace
}  // namespace aos::logging
