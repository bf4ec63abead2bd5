// McapWriter and McapReader together: what one writes the other reads, with
// every compression, and what survives a killed writer, a cut-short file and
// a damaged chunk. (mcap_check_test reads our files with the MCAP project's
// own reader.)
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "aos/events/logging/hostile_log.h"
#include "aos/events/logging/mcap_reader.h"
#include "aos/events/logging/mcap_writer.h"
#include "aos/testing/path.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"
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

// Hostile files (mcap_reader.h, "Hostile files"): built at test time with
// hostile_log.h on top of a good file of 100 messages (0 to 99 000 ns).
class McapHostileTest : public ::testing::Test {
 protected:
  McapHostileTest() {
    WriteFile(path_, Compression::kZstd, 100);
    data_ = testing::DataSection(ReadAll(path_));
  }

  // A chunk of `zeros` zero bytes between a message at `first` and, if
  // `last` is given, one at `last` (sequence 1000 and 1001: not of the good
  // file), on channel 0.
  static std::string ZeroChunk(uint64_t zeros, uint64_t first,
                               std::optional<uint64_t> last = std::nullopt) {
    std::vector<testing::ChunkPiece> pieces = {
        {.bytes = testing::MessageRecord(0, 1000, first, first, "bomb") +
                  testing::UnknownRecordPrefix(zeros),
         .zeros = zeros}};
    if (last.has_value()) {
      pieces.push_back(
          {.bytes = testing::MessageRecord(0, 1001, *last, *last, "bomb")});
    }
    return testing::ZstdChunkRecord(first, last.value_or(first), pieces);
  }

  // Opens data_ + `records`, ended without a summary, with `limits`.
  std::unique_ptr<McapReader> OpenWith(std::string_view records,
                                       McapReadLimits limits = {}) {
    testing::WriteWholeFile(
        path_, data_ + std::string(records) + testing::EndWithoutSummary());
    auto reader = McapReader::Open(path_, std::move(limits));
    CHECK(reader.ok()) << reader.status();
    return std::move(*reader);
  }

  // The sequence numbers read: the good file's are checked against what was
  // written; the bombs' (1000, 1001) are only counted.
  static std::vector<int> ReadAllNumbers(McapReader* reader) {
    std::vector<int> numbers;
    while (std::optional<McapMessage> message = reader->Next()) {
      if (message->sequence < 1000) {
        EXPECT_EQ(message->data, MessageNumber(message->sequence).data);
      }
      numbers.push_back(message->sequence);
    }
    return numbers;
  }

  static std::string Problems(const McapReader& reader) {
    std::string all;
    for (const std::string& problem : reader.problems()) all += problem + "\n";
    return all;
  }

  std::string path_ = aos::testing::TestTempDir() + "/hostile.mcap";
  std::string data_;
};

// Opening a FIFO used to block until a writer came (forever): it is refused
// at once, naming the file.
TEST(McapReaderTest, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string path = aos::testing::TestTempDir() + "/log.fifo";
  unlink(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
  std::promise<absl::Status> opened;
  std::future<absl::Status> result = opened.get_future();
  std::thread([&opened, path]() {
    auto reader = McapReader::Open(path);
    opened.set_value(reader.ok() ? absl::OkStatus() : reader.status());
  }).detach();
  if (result.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    // Let the blocked open finish, so the thread can end.
    const ScopedFd writer(open(path.c_str(), O_WRONLY | O_NONBLOCK));
    result.wait();
    FAIL() << "McapReader::Open of a FIFO did not return within 30 s";
  }
  const absl::Status status = result.get();
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            path + ": not a regular file (an MCAP log is one)");
}

// A chunk claiming more than the per-chunk limit is refused before it is
// decompressed (nothing of its size is allocated): one problem naming the
// file, its offset and the sizes; every other message is read.
TEST_F(McapHostileTest, ChunkOverTheLimitIsRefusedAndReadingGoesOn) {
  const std::string bomb = ZeroChunk(32 << 20, 50500);
  std::unique_ptr<McapReader> reader = OpenWith(
      bomb,
      {.max_chunk_bytes = 8 << 20, .max_chunk_reason = "the test's limit"});
  EXPECT_EQ(ReadAllNumbers(reader.get()), Range(0, 100));
  ASSERT_EQ(reader->problems().size(), 1u) << Problems(*reader);
  EXPECT_EQ(reader->problems()[0],
            StrCat(path_, ": the chunk at byte ", data_.size(),
                   " (messages from 50500 to 50500 ns) claims ",
                   (32 << 20) + 9 + 31 + 4, " bytes uncompressed from ",
                   bomb.size() - 9 - 8 - 8 - 8 - 4 - 4 - 4 - 8,
                   " compressed, more than the 8388608 bytes a chunk may hold "
                   "here (the test's limit); refused; its messages are lost"));
}

// A size no compressed data of that length can expand to is a forgery,
// refused before anything is allocated for it.
TEST_F(McapHostileTest, ClaimBeyondWhatTheCompressionCanHoldIsRefused) {
  const std::string forged =
      testing::ChunkRecord(50500, 50500, uint64_t{1} << 40, "zstd",
                           std::string(100, 'x')) +
      testing::ChunkRecord(50600, 50600, 1000, "", std::string(10, 'x')) +
      testing::ChunkRecord(50700, 50700, 100000, "lz4", std::string(100, 'x'));
  std::unique_ptr<McapReader> reader = OpenWith(forged);
  EXPECT_EQ(ReadAllNumbers(reader.get()), Range(0, 100));
  ASSERT_EQ(reader->problems().size(), 3u) << Problems(*reader);
  EXPECT_NE(reader->problems()[0].find(
                "claims 1099511627776 bytes uncompressed from 100 compressed, "
                "more than zstd data of that size can hold (3276800): the file "
                "is damaged or forged"),
            std::string::npos)
      << reader->problems()[0];
  EXPECT_NE(reader->problems()[1].find("more than an uncompressed chunk"),
            std::string::npos)
      << reader->problems()[1];
  EXPECT_NE(reader->problems()[2].find("more than lz4 data"), std::string::npos)
      << reader->problems()[2];
}

// The bomb: copies of one chunk, all starting at the same time. They
// are opened one at a time, so a budget of a little more than one chunk
// reads every copy.
TEST_F(McapHostileTest, CopiesOfAChunkAreDecompressedOneAtATime) {
  const std::string chunk = ZeroChunk(4 << 20, 50500);
  std::unique_ptr<McapReader> reader =
      OpenWith(chunk + chunk + chunk, {.memory_budget_bytes = 5 << 20});
  const std::vector<int> numbers = ReadAllNumbers(reader.get());
  EXPECT_EQ(std::count(numbers.begin(), numbers.end(), 1000), 3);
  EXPECT_EQ(numbers.size(), 103u);
  EXPECT_TRUE(reader->problems().empty()) << Problems(*reader);
}

// Chunks that overlap in time must be open together; past the budget the
// next is refused, naming the budget, and the ones open are read to the end.
TEST_F(McapHostileTest, OverlappingChunksPastTheBudgetAreRefused) {
  const std::string chunk = ZeroChunk(6 << 20, 50500, 90500);
  std::unique_ptr<McapReader> reader =
      OpenWith(chunk + chunk + chunk + chunk,
               {.memory_budget_bytes = 16 << 20, .budget_name = "--budget"});
  const std::vector<int> numbers = ReadAllNumbers(reader.get());
  EXPECT_EQ(std::count(numbers.begin(), numbers.end(), 1000), 2);
  EXPECT_EQ(std::count(numbers.begin(), numbers.end(), 1001), 2);
  EXPECT_EQ(numbers.size(), 104u);
  ASSERT_EQ(reader->problems().size(), 2u) << Problems(*reader);
  for (int i = 0; i < 2; ++i) {
    const std::string& problem = reader->problems()[i];
    EXPECT_NE(problem.find(StrCat(
                  ": the chunk at byte ", data_.size() + (2 + i) * chunk.size(),
                  " (messages from 50500 to 90500 ns) needs ",
                  (6 << 20) + 9 + 2 * 35, " bytes uncompressed from ")),
              std::string::npos)
        << problem;
    EXPECT_NE(problem.find(" bytes: over the memory budget of 16777216 bytes "
                           "for open chunks (--budget); refused; its messages "
                           "are lost"),
              std::string::npos)
        << problem;
  }
}

// Chunks that all overlap stay open together (tiny ones fit any budget):
// 20,000 of them are merged in time order, each message found in
// O(log open chunks) rather than by a scan of them all.
TEST_F(McapHostileTest, ManyOverlappingChunksAreMergedInOrder) {
  constexpr int kChunks = 20000;
  std::string records;
  for (int i = 0; i < kChunks; ++i) {
    const uint64_t first = 100000 + i;
    const uint64_t last = 200000 + (kChunks - i);
    const std::string messages =
        testing::MessageRecord(0, 1000, first, first, "a") +
        testing::MessageRecord(0, 1001, last, last, "b");
    records += testing::ChunkRecord(first, last, messages.size(), "", messages);
  }
  std::unique_ptr<McapReader> reader = OpenWith(records);
  uint64_t previous = 0;
  size_t read = 0;
  while (std::optional<McapMessage> message = reader->Next()) {
    ASSERT_GE(message->log_time, previous) << read;
    previous = message->log_time;
    ++read;
  }
  EXPECT_EQ(read, 100u + 2 * kChunks);
  EXPECT_TRUE(reader->problems().empty()) << Problems(*reader);
}

// A chunk the summary indexes many times is decompressed and read once.
TEST_F(McapHostileTest, AChunkIndexedManyTimesIsReadOnce) {
  const std::string chunk = ZeroChunk(1 << 20, 500);
  const std::string body = data_ + chunk;
  const std::vector<uint64_t> offsets(10000, data_.size());
  testing::WriteWholeFile(
      path_, body + testing::EndWithSummary(body.size(), offsets, {}));
  auto reader = McapReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->read_summary());
  EXPECT_EQ(ReadAllNumbers(reader->get()), std::vector<int>{1000});
}

// An attachment the summary indexes many times is copied once.
TEST_F(McapHostileTest, AnAttachmentIndexedManyTimesIsTakenOnce) {
  const std::string attachment =
      testing::AttachmentRecord("big", std::string(1 << 20, 'a'), 0);
  const std::string body = data_ + attachment;
  const std::vector<uint64_t> offsets(10000, data_.size());
  testing::WriteWholeFile(
      path_, body + testing::EndWithSummary(body.size(), {}, offsets));
  auto reader = McapReader::Open(path_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->attachments().size(), 1u);
}

// Strings from the file reach problems escaped and bounded: no NUL, no
// escape sequence, no line of megabytes.
TEST_F(McapHostileTest, StringsFromTheFileAreEscapedAndBounded) {
  const std::string evil = std::string("zst\0d\x1b[2J\x1b]0;pwned\x07\n", 20) +
                           std::string(4 << 20, 'z');
  const std::string records =
      testing::ChunkRecord(50500, 50500, 10, evil, std::string(10, 'x')) +
      testing::AttachmentRecord(evil, "data", 12345);
  std::unique_ptr<McapReader> reader = OpenWith(records);
  EXPECT_EQ(ReadAllNumbers(reader.get()), Range(0, 100));
  ASSERT_EQ(reader->problems().size(), 2u);
  for (const std::string& problem : reader->problems()) {
    EXPECT_LT(problem.size(), 1000u);
    for (const char c : problem) {
      ASSERT_TRUE(c >= 0x20 && c <= 0x7e)
          << "byte " << static_cast<int>(static_cast<unsigned char>(c))
          << " in " << problem;
    }
    EXPECT_NE(problem.find("\\x1b[2J"), std::string::npos) << problem;
    EXPECT_NE(problem.find(StrCat(" (", evil.size(), " bytes)")),
              std::string::npos)
        << problem;
  }
}

// Past kMaxListedProblems, problems are counted; the count comes last.
TEST_F(McapHostileTest, ProblemsPastTheLimitAreCounted) {
  std::string records;
  for (int i = 0; i < 150; ++i) {
    records += testing::ChunkRecord(50500, 50500, 10, "bad", "x");
  }
  std::unique_ptr<McapReader> reader = OpenWith(records);
  EXPECT_EQ(ReadAllNumbers(reader.get()), Range(0, 100));
  ASSERT_EQ(reader->problems().size(), kMaxListedProblems + 1);
  EXPECT_EQ(reader->problems().back(),
            StrCat(path_,
                   ": 50 more problems after the first 100 were not "
                   "listed one by one"));
}

}  // namespace
}  // namespace aos::logging
