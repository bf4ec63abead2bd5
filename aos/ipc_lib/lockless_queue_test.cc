#include "aos/ipc_lib/lockless_queue.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "aos/ipc_lib/bounded_wait.h"
#include "aos/ipc_lib/lockless_queue_internal.h"
#include "aos/ipc_lib/queue_test_util.h"
#include "aos/testing/allocation_counter.h"
#include "aos/testing/path.h"
#include "aos/util/scoped_fd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::ipc_lib {
namespace {

using ::testing::AllOf;
using testing::CheckTestMessage;
using ::testing::HasSubstr;
using testing::TestMessageHeader;
using testing::TestMessageLength;
using testing::WriteTestMessage;

constexpr std::string_view kChannel = "/test aos.examples.Ping";

QueueLayout SmallLayout() {
  QueueLayout layout;
  layout.message_data_size = 64;
  layout.queue_size = 8;
  layout.num_senders = 3;
  layout.num_watchers = 3;
  layout.channel_storage_duration_ns = 0;
  return layout;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

class LocklessQueueTest : public ::testing::Test {
 protected:
  std::unique_ptr<QueueMemory> Open(const std::string& path,
                                    const QueueLayout& layout,
                                    mode_t mode = 0600) {
    auto memory = QueueMemory::Open(path, layout, mode, kChannel);
    EXPECT_TRUE(memory.ok()) << memory.status();
    return memory.ok() ? std::move(memory).value() : nullptr;
  }

  std::string ErrorOpening(const std::string& path, const QueueLayout& layout) {
    auto memory = QueueMemory::Open(path, layout, 0600, kChannel);
    EXPECT_FALSE(memory.ok()) << path << " opened";
    return memory.ok() ? "" : std::string(memory.status().message());
  }

  std::unique_ptr<QueueSender> MakeSender(QueueMemory* memory) {
    auto sender = QueueSender::Make(memory);
    EXPECT_TRUE(sender.ok()) << sender.status();
    return sender.ok() ? std::move(sender).value() : nullptr;
  }

  // Sends a test message; returns the result.
  QueueSender::Result SendTest(QueueSender* sender, uint32_t writer,
                               uint32_t sequence, MessageInfo* sent = nullptr) {
    const size_t length = TestMessageLength(sequence, sender->size());
    WriteTestMessage(sender->Data(), sender->size(), writer, sequence, length);
    MessageInfo ignored;
    return sender->Send(length, MessageOrigin(),
                        sent != nullptr ? sent : &ignored);
  }

  std::string dir_ = aos::testing::TestTempDir();
};

// ------------------------------------------------------------------ layout

TEST_F(LocklessQueueTest, LayoutToString) {
  QueueLayout layout;
  layout.message_data_size = 64;
  layout.queue_size = 2000;
  layout.num_senders = 10;
  layout.num_watchers = 10;
  layout.channel_storage_duration_ns = 2000000000;
  EXPECT_EQ(layout.ToString(),
            "max_size 64, queue 2000, senders 10, watchers 10, "
            "storage 2000000000 ns, layout version 4");
}

TEST_F(LocklessQueueTest, HashDiffersWhenAnyFieldDiffers) {
  const QueueLayout base = SmallLayout();
  std::vector<QueueLayout> layouts(6, base);
  layouts[1].message_data_size += 8;
  layouts[2].queue_size += 1;
  layouts[3].num_senders += 1;
  layouts[4].num_watchers += 1;
  layouts[5].channel_storage_duration_ns += 1;
  std::set<uint64_t> hashes;
  for (const QueueLayout& layout : layouts) hashes.insert(layout.Hash());
  EXPECT_EQ(hashes.size(), layouts.size());
  EXPECT_EQ(base.Hash(), SmallLayout().Hash());
}

TEST_F(LocklessQueueTest, MemorySizeIsSane) {
  const QueueLayout layout = SmallLayout();
  const size_t size = layout.MemorySize();
  const size_t messages = layout.queue_size + layout.num_senders;
  EXPECT_EQ(size % 64, 0u);
  // At least every message with both redzones, and the ring.
  EXPECT_GE(size, messages * (layout.message_data_size + 2 * 64) +
                      layout.queue_size * 8);
  // And not wildly more.
  EXPECT_LE(size, 4096 + messages * (layout.message_data_size + 4 * 64) +
                      layout.queue_size * 8 +
                      64 * (layout.num_senders + layout.num_watchers));
  // Every field that adds memory adds some.
  QueueLayout bigger = layout;
  for (uint32_t QueueLayout::*field :
       {&QueueLayout::message_data_size, &QueueLayout::queue_size,
        &QueueLayout::num_senders, &QueueLayout::num_watchers}) {
    bigger = layout;
    bigger.*field += 64;
    EXPECT_GT(bigger.MemorySize(), size);
  }
}

// ------------------------------------------------------------------ open

TEST_F(LocklessQueueTest, CreatesFileWithExactModeAndDirectories) {
  const mode_t old_umask = umask(0);
  for (mode_t mode : {0600, 0660}) {
    const std::string path = aos::StrCat(dir_, "/mode", mode, "/sub/queue");
    auto memory = Open(path, SmallLayout(), mode);
    ASSERT_NE(memory, nullptr);
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode) << path;
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(static_cast<size_t>(st.st_size), SmallLayout().MemorySize());
    ASSERT_EQ(
        stat((dir_ + "/mode" + std::to_string(mode) + "/sub").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode | 0100 | (mode & 040 ? 010 : 0));
  }
  // The mode is exact whatever the umask.
  umask(077);
  const std::string path = dir_ + "/masked";
  ASSERT_NE(Open(path, SmallLayout(), 0660), nullptr);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  umask(old_umask);
}

TEST_F(LocklessQueueTest, SecondOpenSharesMemory) {
  const std::string path = dir_ + "/shared";
  auto first = Open(path, SmallLayout());
  auto second = Open(path, SmallLayout());
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first->base(), second->base());
  auto sender = MakeSender(first.get());
  MessageInfo sent;
  ASSERT_EQ(SendTest(sender.get(), 7, 1, &sent), QueueSender::Result::kGood);
  QueueReader reader(second.get());
  EXPECT_EQ(reader.NextIndex(), 1u);
  std::vector<char> buffer(64);
  MessageInfo info;
  ASSERT_EQ(reader.Read(0, &info, buffer.data()), QueueReader::Result::kGood);
  TestMessageHeader decoded;
  EXPECT_EQ(CheckTestMessage(buffer.data(), info.size, &decoded), "");
  EXPECT_EQ(decoded.writer, 7u);
  EXPECT_EQ(info.monotonic_sent_time, sent.monotonic_sent_time);
}

TEST_F(LocklessQueueTest, ConcurrentCreatorsAllGetOneQueue) {
  for (int round = 0; round < 20; ++round) {
    const std::string path = aos::StrCat(dir_, "/race", round);
    std::vector<std::unique_ptr<QueueMemory>> memories(4);
    std::vector<std::thread> threads;
    std::atomic<bool> go{false};
    for (auto& memory : memories) {
      threads.emplace_back([&] {
        while (!go.load()) {
        }
        auto opened = QueueMemory::Open(path, SmallLayout(), 0600, kChannel);
        ASSERT_TRUE(opened.ok()) << opened.status();
        memory = std::move(opened).value();
      });
    }
    go = true;
    for (auto& thread : threads) thread.join();
    for (auto& memory : memories) ASSERT_NE(memory, nullptr);
    auto sender = MakeSender(memories[0].get());
    ASSERT_EQ(SendTest(sender.get(), 1, 1), QueueSender::Result::kGood);
    for (auto& memory : memories) {
      EXPECT_EQ(QueueReader(memory.get()).NextIndex(), 1u);
      EXPECT_EQ(internal::CheckQueueInvariants(*memory), "");
    }
  }
}

TEST_F(LocklessQueueTest, LayoutMismatchNamesBothLayoutsAndChangesNothing) {
  const std::string path = dir_ + "/mismatch";
  {
    auto memory = Open(path, SmallLayout());
    auto sender = MakeSender(memory.get());
    ASSERT_EQ(SendTest(sender.get(), 1, 1), QueueSender::Result::kGood);
  }
  const std::string before = ReadFile(path);
  QueueLayout other = SmallLayout();
  other.message_data_size = 128;
  EXPECT_THAT(ErrorOpening(path, other),
              AllOf(HasSubstr(std::string(kChannel)), HasSubstr(path),
                    HasSubstr(SmallLayout().ToString()),
                    HasSubstr(other.ToString()), HasSubstr("delete " + path)));
  // A smaller layout (the file is big enough for it) is refused just the
  // same.
  other = SmallLayout();
  other.channel_storage_duration_ns = 5;
  EXPECT_THAT(ErrorOpening(path, other), HasSubstr(other.ToString()));
  EXPECT_EQ(ReadFile(path), before);
}

TEST_F(LocklessQueueTest, GarbageAndTruncatedFilesAreRefused) {
  std::mt19937 random(1);
  std::string garbage(SmallLayout().MemorySize(), '\0');
  for (char& c : garbage) c = static_cast<char>(random());
  const std::string path = dir_ + "/garbage";
  WriteFile(path, garbage);
  EXPECT_THAT(
      ErrorOpening(path, SmallLayout()),
      AllOf(HasSubstr("not an aos queue"), HasSubstr(path),
            HasSubstr("delete " + path), HasSubstr(std::string(kChannel))));
  EXPECT_EQ(ReadFile(path), garbage);

  const std::string tiny = dir_ + "/tiny";
  WriteFile(tiny, "0123456789");
  EXPECT_THAT(ErrorOpening(tiny, SmallLayout()),
              AllOf(HasSubstr("truncated"), HasSubstr(tiny)));

  const std::string half = dir_ + "/half";
  ASSERT_NE(Open(half, SmallLayout()), nullptr);
  ASSERT_EQ(truncate(half.c_str(), SmallLayout().MemorySize() / 2), 0);
  const std::string before = ReadFile(half);
  EXPECT_THAT(ErrorOpening(half, SmallLayout()),
              AllOf(HasSubstr("truncated"), HasSubstr(half)));
  EXPECT_EQ(ReadFile(half), before);

  const std::string directory = dir_ + "/directory";
  std::filesystem::create_directories(directory);
  EXPECT_THAT(ErrorOpening(directory, SmallLayout()),
              HasSubstr("not a regular file"));
}

// A file its creator never finished (it died, or an older build left it):
// nobody holds its lock, so the next opener removes it and makes it again,
// and it is a working queue.
TEST_F(LocklessQueueTest, AbandonedFilesAreMadeAgain) {
  for (const std::string& contents :
       {std::string(), std::string(SmallLayout().MemorySize(), '\0')}) {
    const std::string path =
        dir_ + "/abandoned_" + std::to_string(contents.size());
    WriteFile(path, contents);
    std::unique_ptr<QueueMemory> memory = Open(path, SmallLayout());
    ASSERT_NE(memory, nullptr) << path;
    std::unique_ptr<QueueSender> sender = MakeSender(memory.get());
    ASSERT_NE(sender, nullptr);
    EXPECT_EQ(SendTest(sender.get(), 1, 1), QueueSender::Result::kGood);
    EXPECT_EQ(QueueReader(memory.get()).NextIndex(), 1u);
    EXPECT_EQ(memory->CheckFile(), QueueMemory::FileState::kInPlace);
  }
}

// A file whose creator is still at work (it holds the lock) is waited for,
// then refused by name: it is never taken from a live creator.
TEST_F(LocklessQueueTest, FilesStillBeingCreatedAreWaitedForThenRefused) {
  const std::string path = dir_ + "/being_created";
  WriteFile(path, std::string(SmallLayout().MemorySize(), '\0'));
  const ScopedFd creator(open(path.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(creator.valid());
  ASSERT_EQ(flock(creator.get(), LOCK_EX), 0);
  EXPECT_THAT(ErrorOpening(path, SmallLayout()),
              AllOf(HasSubstr("still being created by another process"),
                    HasSubstr(path), HasSubstr("delete " + path)));
  EXPECT_EQ(ReadFile(path), std::string(SmallLayout().MemorySize(), '\0'));
}

// CheckFile says whether the path still names the mapped file.
TEST_F(LocklessQueueTest, CheckFileSeesRemovedAndReplacedFiles) {
  const std::string path = dir_ + "/identity";
  std::unique_ptr<QueueMemory> memory = Open(path, SmallLayout());
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->CheckFile(), QueueMemory::FileState::kInPlace);
  ASSERT_EQ(unlink(path.c_str()), 0);
  EXPECT_EQ(memory->CheckFile(), QueueMemory::FileState::kRemoved);
  std::unique_ptr<QueueMemory> replacement = Open(path, SmallLayout());
  ASSERT_NE(replacement, nullptr);
  EXPECT_EQ(memory->CheckFile(), QueueMemory::FileState::kReplaced);
  EXPECT_EQ(replacement->CheckFile(), QueueMemory::FileState::kInPlace);
}

TEST_F(LocklessQueueTest, InvalidLayoutIsRefused) {
  QueueLayout layout = SmallLayout();
  layout.queue_size = 0;
  EXPECT_THAT(ErrorOpening(dir_ + "/q0", layout),
              AllOf(HasSubstr("queue_size"), HasSubstr(std::string(kChannel))));
  layout = SmallLayout();
  layout.num_watchers = 100000;
  EXPECT_THAT(ErrorOpening(dir_ + "/w", layout), HasSubstr("num_watchers"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/w"));
}

TEST_F(LocklessQueueTest, PermissionDeniedNamesFileAndMode) {
  // Under /tmp: an unprivileged user cannot even traverse Bazel's
  // TEST_TMPDIR (under /root/.cache), which would be a different error.
  char directory[] = "/tmp/aos_permission_test_XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  struct RemoveAtEnd {
    std::string path;
    ~RemoveAtEnd() { std::filesystem::remove_all(path); }
  } remove_at_end{directory};
  const std::string path = std::string(directory) + "/private";
  ASSERT_NE(Open(path, SmallLayout(), 0600), nullptr);
  ASSERT_EQ(chmod(directory, 0755), 0);
  std::string error;
  if (geteuid() != 0) {
    ASSERT_EQ(chmod(path.c_str(), 0000), 0);
    error = ErrorOpening(path, SmallLayout());
  } else {
    // Root ignores modes: try as nobody, in a child.
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    ScopedFd read_end(pipe_fds[0]);
    ScopedFd write_end(pipe_fds[1]);
    const pid_t child = testing::ForkTestChild();
    ASSERT_GE(child, 0);
    if (child == 0) {
      read_end.reset();
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
      auto memory = QueueMemory::Open(path, SmallLayout(), 0600, kChannel);
      const std::string text =
          memory.ok()
              ? "opened"
              : aos::StrCat(absl::StatusCodeToString(memory.status().code()),
                            ": ", std::string(memory.status().message()));
      if (write(write_end.get(), text.data(), text.size()) < 0) _exit(3);
      _exit(0);
    }
    write_end.reset();  // So the read below ends when the child does.
    char buffer[4096];
    ssize_t n;
    while ((n = read(read_end.get(), buffer, sizeof(buffer))) > 0) {
      error.append(buffer, n);
    }
    read_end.reset();
    int status;
    ASSERT_EQ(testing::WaitForChild(child, &status), "");
    ASSERT_TRUE(WIFEXITED(status)) << status;
    if (WEXITSTATUS(status) == 2) {
      GTEST_SKIP() << "running as root and cannot become nobody (uid 65534), "
                      "so modes cannot deny anything here";
    }
    ASSERT_EQ(WEXITSTATUS(status), 0);
    EXPECT_THAT(error, HasSubstr("PERMISSION_DENIED"));
  }
  EXPECT_THAT(error, AllOf(HasSubstr(path), HasSubstr("mode 0600"),
                           HasSubstr("Permission denied")));
}

// ------------------------------------------------------------- send, read

TEST_F(LocklessQueueTest, SendAndReadRoundTrip) {
  auto memory = Open(dir_ + "/q", SmallLayout());
  auto sender = MakeSender(memory.get());
  QueueReader reader(memory.get());
  EXPECT_EQ(reader.NextIndex(), 0u);
  std::vector<MessageInfo> sent(20);
  for (uint32_t i = 0; i < 20; ++i) {
    ASSERT_EQ(SendTest(sender.get(), 3, i, &sent[i]),
              QueueSender::Result::kGood);
    EXPECT_EQ(sent[i].queue_index, i);
    EXPECT_EQ(sent[i].size, TestMessageLength(i, 64));
    EXPECT_EQ(sent[i].remote_queue_index, i);
    EXPECT_EQ(sent[i].monotonic_remote_time, sent[i].monotonic_sent_time);
    EXPECT_EQ(sent[i].realtime_remote_time, sent[i].realtime_sent_time);
    if (i > 0) {
      EXPECT_GE(sent[i].monotonic_sent_time, sent[i - 1].monotonic_sent_time);
    }
    EXPECT_EQ(reader.NextIndex(), i + 1);
  }
  std::vector<char> buffer(64);
  MessageInfo info;
  for (uint32_t i = 0; i < 12; ++i) {
    EXPECT_EQ(reader.Read(i, &info, buffer.data()),
              QueueReader::Result::kTooOld)
        << i;
  }
  for (uint32_t i = 12; i < 20; ++i) {
    ASSERT_EQ(reader.Read(i, &info, buffer.data()), QueueReader::Result::kGood)
        << i;
    TestMessageHeader decoded;
    EXPECT_EQ(CheckTestMessage(buffer.data(), info.size, &decoded), "");
    EXPECT_EQ(decoded.sequence, i);
    EXPECT_EQ(info.queue_index, sent[i].queue_index);
    EXPECT_EQ(info.size, sent[i].size);
    EXPECT_EQ(info.monotonic_sent_time, sent[i].monotonic_sent_time);
    EXPECT_EQ(info.realtime_sent_time, sent[i].realtime_sent_time);
    EXPECT_EQ(info.monotonic_remote_time, sent[i].monotonic_remote_time);
    EXPECT_EQ(info.realtime_remote_time, sent[i].realtime_remote_time);
    EXPECT_EQ(info.remote_queue_index, sent[i].remote_queue_index);
  }
  for (uint64_t i : {20ull, 21ull, 27ull, 28ull, 1000ull, 1ull << 40}) {
    EXPECT_EQ(reader.Read(i, &info, buffer.data()),
              QueueReader::Result::kNothingNewYet)
        << i;
  }
  EXPECT_EQ(internal::CheckQueueInvariants(*memory), "");
}

TEST_F(LocklessQueueTest, RemoteFieldsAndEmptyAndFullMessages) {
  auto memory = Open(dir_ + "/q", SmallLayout());
  auto sender = MakeSender(memory.get());
  QueueReader reader(memory.get());
  const monotonic_clock::time_point monotonic_remote(
      std::chrono::nanoseconds(12345));
  const realtime_clock::time_point realtime_remote(
      std::chrono::nanoseconds(67890));
  MessageOrigin origin;
  origin.monotonic_remote_time = monotonic_remote;
  origin.realtime_remote_time = realtime_remote;
  origin.remote_queue_index = 99;
  origin.source_boot_uuid =
      UUID::Parse("01234567-89ab-cdef-0123-456789abcdef").value();
  MessageInfo sent;
  ASSERT_EQ(sender->Send(0, origin, &sent), QueueSender::Result::kGood);
  EXPECT_EQ(sent.source_boot_uuid, origin.source_boot_uuid);
  std::memset(sender->Data(), 0xab, sender->size());
  ASSERT_EQ(sender->Send(sender->size(), MessageOrigin(), &sent),
            QueueSender::Result::kGood);
  std::vector<unsigned char> buffer(64);
  MessageInfo info;
  ASSERT_EQ(reader.Read(0, &info, buffer.data()), QueueReader::Result::kGood);
  EXPECT_EQ(info.size, 0u);
  EXPECT_EQ(info.monotonic_remote_time, monotonic_remote);
  EXPECT_EQ(info.realtime_remote_time, realtime_remote);
  EXPECT_EQ(info.remote_queue_index, 99u);
  ASSERT_EQ(reader.Read(1, &info, buffer.data()), QueueReader::Result::kGood);
  EXPECT_EQ(info.size, 64u);
  EXPECT_EQ(buffer, std::vector<unsigned char>(64, 0xab));
  EXPECT_EQ(info.remote_queue_index, 1u);
}

// Path origins travel in the header, beside the message; a message sent
// without them has none, even in a slot that held some before.
TEST_F(LocklessQueueTest, PathOriginsTravelWithTheMessage) {
  QueueLayout layout = SmallLayout();
  layout.queue_size = 1;
  auto memory = Open(dir_ + "/q", layout);
  auto sender = MakeSender(memory.get());
  QueueReader reader(memory.get());
  PathOrigins origins;
  for (uint32_t id = 1; id <= kMaxPathOrigins + 1; ++id) {
    origins.Add(PathOrigin{.id = id,
                           .hops = static_cast<uint16_t>(id),
                           .monotonic_time_ns = 1000 * id});
  }
  ASSERT_EQ(origins.dropped(), 1u);
  MessageOrigin origin;
  origin.path_origins = &origins;
  MessageInfo sent;
  ASSERT_EQ(sender->Send(8, origin, &sent), QueueSender::Result::kGood);
  MessageInfo info;
  PathOrigins::Raw raw;
  ASSERT_EQ(reader.Read(0, &info, nullptr, &raw), QueueReader::Result::kGood);
  EXPECT_EQ(PathOrigins::FromRaw(raw, 1000000, nullptr), origins);
  // The next messages take the same slots in turn.
  for (uint64_t index = 1; index < 4; ++index) {
    ASSERT_EQ(sender->Send(8, MessageOrigin(), &sent),
              QueueSender::Result::kGood);
    ASSERT_EQ(reader.Read(index, &info, nullptr, &raw),
              QueueReader::Result::kGood);
    EXPECT_EQ(raw.count, 0u) << index;
    EXPECT_EQ(raw.dropped, 0u) << index;
  }
}

TEST_F(LocklessQueueTest, TooFastDependsOnStorageDuration) {
  QueueLayout layout = SmallLayout();
  layout.queue_size = 4;
  layout.channel_storage_duration_ns = 3600'000'000'000;  // An hour.
  auto slow = Open(dir_ + "/slow", layout);
  auto sender = MakeSender(slow.get());
  MessageInfo first;
  ASSERT_EQ(SendTest(sender.get(), 1, 0, &first), QueueSender::Result::kGood);
  for (uint32_t i = 1; i < 4; ++i) {
    ASSERT_EQ(SendTest(sender.get(), 1, i), QueueSender::Result::kGood);
  }
  const QueueSender::Result fifth = SendTest(sender.get(), 1, 4);
  // Send read the clock before this: if this says message 0 was sent less
  // than an hour ago, so did Send's, and it must refuse.
  const monotonic_clock::duration since_first =
      monotonic_clock::now() - first.monotonic_sent_time;
  if (since_first >= std::chrono::hours(1)) {
    GTEST_SKIP() << "the first four sends took an hour; cannot tell";
  }
  EXPECT_EQ(fifth, QueueSender::Result::kMessagesSentTooFast);
  QueueReader reader(slow.get());
  EXPECT_EQ(reader.NextIndex(), 4u) << "a refused message was sent";
  std::vector<char> buffer(64);
  MessageInfo info;
  EXPECT_EQ(reader.Read(0, &info, buffer.data()), QueueReader::Result::kGood);
  EXPECT_EQ(internal::CheckQueueInvariants(*slow), "");

  layout.channel_storage_duration_ns = 1;
  auto fast = Open(dir_ + "/fast", layout);
  auto fast_sender = MakeSender(fast.get());
  std::vector<MessageInfo> sent(100);
  for (uint32_t i = 0; i < 100; ++i) {
    if (i >= 4) {
      // Message i - 4 must be at least 1 ns old, whatever the clock's
      // resolution: wait for it to tick.
      const testing::HangGuard guard;
      while (monotonic_clock::now() <= sent[i - 4].monotonic_sent_time) {
        ASSERT_FALSE(guard.Expired()) << "the monotonic clock stopped";
      }
    }
    ASSERT_EQ(SendTest(fast_sender.get(), 1, i, &sent[i]),
              QueueSender::Result::kGood);
  }
}

TEST_F(LocklessQueueTest, RedzoneCorruptionIsRefusedAndRepaired) {
  auto memory = Open(dir_ + "/q", SmallLayout());
  auto sender = MakeSender(memory.get());
  QueueReader reader(memory.get());
  char* data = static_cast<char*>(sender->Data());
  data[-1] = 0;
  EXPECT_EQ(SendTest(sender.get(), 1, 0), QueueSender::Result::kInvalidRedzone);
  EXPECT_EQ(reader.NextIndex(), 0u);
  // Repaired: the next send goes out.
  EXPECT_EQ(SendTest(sender.get(), 1, 1), QueueSender::Result::kGood);
  data = static_cast<char*>(sender->Data());
  data[sender->size()] = 0;
  EXPECT_EQ(SendTest(sender.get(), 1, 2), QueueSender::Result::kInvalidRedzone);
  data = static_cast<char*>(sender->Data());
  data[-64] = 1;
  data[sender->size() + 63] = 1;
  EXPECT_EQ(SendTest(sender.get(), 1, 3), QueueSender::Result::kInvalidRedzone);
  EXPECT_EQ(SendTest(sender.get(), 1, 4), QueueSender::Result::kGood);
  EXPECT_EQ(reader.NextIndex(), 2u);
  EXPECT_EQ(internal::CheckQueueInvariants(*memory), "");
}

// ------------------------------------------------------------------ slots

TEST_F(LocklessQueueTest, SenderSlotsAreLimitedAndReleased) {
  auto memory = Open(dir_ + "/q", SmallLayout());
  std::vector<std::unique_ptr<QueueSender>> senders;
  for (int i = 0; i < 3; ++i) senders.push_back(MakeSender(memory.get()));
  auto extra = QueueSender::Make(memory.get());
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(extra.status().message()),
              AllOf(HasSubstr("num_senders 3"), HasSubstr(memory->path())));
  senders.erase(senders.begin() + 1);
  EXPECT_NE(MakeSender(memory.get()), nullptr);
}

// The child claims a slot and goes away without releasing it.
void ChildTakesSenderSlot(QueueMemory* memory, bool kill_it) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  ScopedFd read_end(pipe_fds[0]);
  ScopedFd write_end(pipe_fds[1]);
  const pid_t child = testing::ForkTestChild();
  ASSERT_GE(child, 0);
  if (child == 0) {
    read_end.reset();
    auto sender = QueueSender::Make(memory);
    if (!sender.ok()) _exit(1);
    (void)sender->release();  // Never released.
    char byte = 1;
    if (write(write_end.get(), &byte, 1) != 1) _exit(2);
    if (kill_it) pause();  // Until killed, by us or with us.
    _exit(0);
  }
  // Only the child writes: if it fails first, the read sees the end.
  write_end.reset();
  char byte;
  const ssize_t got = read(read_end.get(), &byte, 1);
  read_end.reset();
  if (kill_it) kill(child, SIGKILL);
  int status;
  ASSERT_EQ(testing::WaitForChild(child, &status), "");
  ASSERT_EQ(got, 1) << "the child could not take a slot: status " << status;
}

TEST_F(LocklessQueueTest, DeadSendersSlotsAreReclaimed) {
  for (bool kill_it : {false, true}) {
    auto memory = Open(aos::StrCat(dir_, "/q", kill_it), SmallLayout());
    auto first = MakeSender(memory.get());
    auto second = MakeSender(memory.get());
    ASSERT_NO_FATAL_FAILURE(ChildTakesSenderSlot(memory.get(), kill_it));
    // The only slot left is the dead child's.
    auto third = MakeSender(memory.get());
    ASSERT_NE(third, nullptr);
    EXPECT_FALSE(QueueSender::Make(memory.get()).ok());
    EXPECT_EQ(SendTest(third.get(), 1, 1), QueueSender::Result::kGood);
    EXPECT_EQ(internal::CheckQueueInvariants(*memory), "");
  }
}

// ------------------------------------------------------------ concurrency

// Senders on several threads while a reader follows: every message it gets
// is whole, indices are contiguous, and each sender's sequence increases.
TEST_F(LocklessQueueTest, ConcurrentSendersAndFollowingReader) {
  constexpr uint32_t kSenders = 4;
  constexpr uint32_t kPerSender = 20000;
  QueueLayout layout;
  layout.message_data_size = 256;
  layout.queue_size = 1024;
  layout.num_senders = kSenders;
  layout.num_watchers = 1;
  layout.channel_storage_duration_ns = 0;
  auto memory = Open(dir_ + "/q", layout);
  ASSERT_NE(memory, nullptr);
  // Senders that have stopped, having sent everything or failed.
  std::atomic<uint32_t> senders_done{0};
  const auto send_all = [&](uint32_t writer) {
    auto sender = QueueSender::Make(memory.get());
    ASSERT_TRUE(sender.ok()) << sender.status();
    for (uint32_t sequence = 0; sequence < kPerSender; ++sequence) {
      ASSERT_EQ(SendTest(sender->get(), writer, sequence),
                QueueSender::Result::kGood);
    }
  };

  std::vector<std::thread> threads;
  for (uint32_t writer = 0; writer < kSenders; ++writer) {
    threads.emplace_back([&, writer] {
      send_all(writer);  // An ASSERT there returns here.
      senders_done.fetch_add(1);
    });
  }

  QueueReader reader(memory.get());
  std::vector<char> buffer(layout.message_data_size);
  std::vector<int64_t> last_sequence(kSenders, -1);
  uint64_t index = 0, good = 0, too_old = 0, corrupt = 0, gaps = 0;
  monotonic_clock::time_point last_sent = monotonic_clock::min_time;
  uint64_t last_good_index = 0;
  bool have_good = false;
  const testing::HangGuard guard;
  while (true) {
    MessageInfo info;
    const QueueReader::Result result = reader.Read(index, &info, buffer.data());
    if (result == QueueReader::Result::kNothingNewYet) {
      // Every sender has stopped and everything sent was looked at.
      if (senders_done.load() == kSenders && index >= reader.NextIndex()) {
        break;
      }
      if (guard.Expired()) {
        ADD_FAILURE() << "no message " << index << " after "
                      << testing::kHangLimit.count() << " s; "
                      << senders_done.load() << " of " << kSenders
                      << " senders have stopped";
        break;
      }
      std::this_thread::yield();
      continue;
    }
    if (result == QueueReader::Result::kTooOld) {
      ++too_old;
      // Fell behind: skip to the oldest message still there.
      const uint64_t next = reader.NextIndex();
      index = std::max(index + 1, next - std::min<uint64_t>(next, 1024) + 1);
      continue;
    }
    TestMessageHeader decoded;
    const std::string error =
        CheckTestMessage(buffer.data(), info.size, &decoded);
    if (!error.empty() || decoded.writer >= kSenders ||
        info.queue_index != static_cast<uint32_t>(index)) {
      ++corrupt;
      ADD_FAILURE() << "index " << index << ": " << error;
    } else {
      if (static_cast<int64_t>(decoded.sequence) <=
          last_sequence[decoded.writer]) {
        ADD_FAILURE() << "writer " << decoded.writer << " went from "
                      << last_sequence[decoded.writer] << " to "
                      << decoded.sequence;
      }
      last_sequence[decoded.writer] = decoded.sequence;
      EXPECT_GE(info.monotonic_sent_time, last_sent);
      last_sent = info.monotonic_sent_time;
    }
    if (have_good && index != last_good_index + 1) ++gaps;
    have_good = true;
    last_good_index = index;
    ++good;
    ++index;
  }
  for (auto& thread : threads) thread.join();
  std::cout << "read " << good << " whole messages, " << too_old
            << " overwritten before or while being read, " << gaps << " skips, "
            << corrupt << " corrupt\n";
  EXPECT_EQ(corrupt, 0u);
  EXPECT_GT(good, 0u);
  ASSERT_EQ(reader.NextIndex(), uint64_t{kSenders} * kPerSender);
  // Quiet now: the last queue_size messages are all there, whole, with
  // every sender's last message among them.
  for (uint64_t i = reader.NextIndex() - 1024; i < reader.NextIndex(); ++i) {
    MessageInfo info;
    ASSERT_EQ(reader.Read(i, &info, buffer.data()), QueueReader::Result::kGood);
    ASSERT_EQ(CheckTestMessage(buffer.data(), info.size, nullptr), "");
  }
  EXPECT_EQ(internal::CheckQueueInvariants(*memory), "");
}

// A reader that always reads the oldest message of a two-message queue of
// big messages is overwritten mid-copy all the time: it must say so
// (kTooOld) rather than return a mix of two messages.
TEST_F(LocklessQueueTest, ReadsRacingOverwritesAreNeverTorn) {
  QueueLayout layout;
  layout.message_data_size = 4096;
  layout.queue_size = 2;
  layout.num_senders = 2;
  layout.num_watchers = 1;
  layout.channel_storage_duration_ns = 0;
  auto memory = Open(dir_ + "/q", layout);
  std::atomic<bool> stop{false};
  std::vector<std::thread> senders;
  for (uint32_t writer = 0; writer < 2; ++writer) {
    senders.emplace_back([&, writer] {
      auto sender = QueueSender::Make(memory.get());
      ASSERT_TRUE(sender.ok());
      for (uint32_t sequence = 0; !stop.load(); ++sequence) {
        // Long messages, so copies take a while.
        const size_t length = 2048 + (sequence * 8) % 2048;
        WriteTestMessage((*sender)->Data(), (*sender)->size(), writer, sequence,
                         length);
        MessageInfo sent;
        ASSERT_EQ((*sender)->Send(length, MessageOrigin(), &sent),
                  QueueSender::Result::kGood);
      }
    });
  }
  QueueReader reader(memory.get());
  std::vector<char> buffer(layout.message_data_size);
  uint64_t good = 0, too_old = 0, torn = 0;
  const testing::HangGuard guard;
  bool failed = false;
  while (good + too_old < 50000 && !failed) {
    const uint64_t next = reader.NextIndex();
    if (next < 2) {
      // The senders have not sent two messages yet.
      if (guard.Expired()) {
        ADD_FAILURE() << "only " << next << " messages sent after "
                      << testing::kHangLimit.count() << " s";
        break;
      }
      continue;
    }
    MessageInfo info;
    const QueueReader::Result result =
        reader.Read(next - 2, &info, buffer.data());
    switch (result) {
      case QueueReader::Result::kGood:
        ++good;
        if (!CheckTestMessage(buffer.data(), info.size, nullptr).empty()) {
          ++torn;
        }
        break;
      case QueueReader::Result::kTooOld:
        ++too_old;
        break;
      case QueueReader::Result::kNothingNewYet:
      case QueueReader::Result::kCorrupt:
        ADD_FAILURE() << "index " << next - 2 << " of " << next << ": "
                      << static_cast<int>(result);
        failed = true;
        break;
    }
  }
  stop = true;
  for (auto& thread : senders) thread.join();
  std::cout << good << " good reads, " << too_old << " too old, " << torn
            << " torn\n";
  EXPECT_EQ(torn, 0u);
  EXPECT_GT(good, 0u);
  EXPECT_EQ(internal::CheckQueueInvariants(*memory), "");
}

TEST_F(LocklessQueueTest, ChildProcessSendsParentReadsAll) {
  constexpr uint32_t kMessages = 3000;
  QueueLayout layout = SmallLayout();
  layout.queue_size = 4096;
  const std::string path = dir_ + "/q";
  auto memory = Open(path, layout);
  QueueReader reader(memory.get());
  const pid_t child = testing::ForkTestChild();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Its own mapping, as another program would have.
    auto child_memory = QueueMemory::Open(path, layout, 0600, kChannel);
    if (!child_memory.ok()) _exit(1);
    auto sender = QueueSender::Make(child_memory->get());
    if (!sender.ok()) _exit(2);
    for (uint32_t i = 0; i < kMessages; ++i) {
      const size_t length = TestMessageLength(i, (*sender)->size());
      WriteTestMessage((*sender)->Data(), (*sender)->size(), 42, i, length);
      MessageInfo sent;
      if ((*sender)->Send(length, MessageOrigin(), &sent) !=
          QueueSender::Result::kGood) {
        _exit(3);
      }
    }
    _exit(0);
  }
  std::vector<char> buffer(layout.message_data_size);
  // Reaped while reading: it stopped, and everything it sent is visible.
  bool child_ended = false;
  int status = 0;
  const testing::HangGuard guard;
  for (uint32_t i = 0; i < kMessages;) {
    MessageInfo info;
    const QueueReader::Result result = reader.Read(i, &info, buffer.data());
    if (result == QueueReader::Result::kNothingNewYet) {
      ASSERT_FALSE(child_ended) << "the child stopped before sending message "
                                << i << " (wait status " << status << ")";
      ASSERT_FALSE(guard.Expired()) << "message " << i << " not sent after "
                                    << testing::kHangLimit.count() << " s";
      child_ended = waitpid(child, &status, WNOHANG) == child;
      std::this_thread::yield();
      continue;
    }
    ASSERT_EQ(result, QueueReader::Result::kGood) << i;
    TestMessageHeader decoded;
    ASSERT_EQ(CheckTestMessage(buffer.data(), info.size, &decoded), "");
    ASSERT_EQ(decoded.writer, 42u);
    ASSERT_EQ(decoded.sequence, i);
    ++i;
  }
  if (!child_ended) {
    ASSERT_EQ(testing::WaitForChild(child, &status), "");
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(internal::CheckQueueInvariants(*memory), "");
}

// ---------------------------------------------------------------- watchers

TEST_F(LocklessQueueTest, WakeupOrderIsPriorityThenSlot) {
  internal::WatcherTarget targets[] = {
      {0, 1, 10, 5, 0},  {1, 1, 11, 50, 0}, {2, 1, 12, 5, 0},
      {3, 1, 13, 99, 0}, {4, 1, 14, 0, 0},
  };
  internal::OrderWatchersByPriority(targets, 5);
  std::vector<uint32_t> order;
  for (const auto& target : targets) order.push_back(target.slot);
  EXPECT_EQ(order, (std::vector<uint32_t>{3, 1, 0, 2, 4}));
}

// A thread waiting for WakeupSignal() on a signalfd, as ShmEventLoop does.
class WatcherThread {
 public:
  // Returns once the thread has registered, or failed to (a failure it
  // reports): see registered().
  WatcherThread(QueueMemory* memory, int priority) {
    thread_ = std::thread([this, memory, priority] {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, WakeupSignal());
      pthread_sigmask(SIG_BLOCK, &set, nullptr);
      const ScopedFd fd(signalfd(-1, &set, SFD_CLOEXEC));
      Watch(memory, priority, fd.get());  // An ASSERT there returns here.
      state_ = kDone;
    });
    const testing::HangGuard guard;
    while (state_ == kStarting) {
      if (guard.Expired()) {
        ADD_FAILURE() << "the watcher thread neither registered nor failed in "
                      << testing::kHangLimit.count() << " s";
        break;
      }
      std::this_thread::yield();
    }
  }
  ~WatcherThread() {
    stop_ = true;
    thread_.join();
  }

  bool registered() const { return state_ == kRegistered; }

  // Waits for `count` wakeups in all; whether there were exactly that many.
  bool WaitFor(int count) {
    const testing::HangGuard guard;
    while (wakeups_ < count && registered() && !guard.Expired()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return wakeups_ == count;
  }

 private:
  enum State { kStarting, kRegistered, kDone };

  void Watch(QueueMemory* memory, int priority, int fd) {
    ASSERT_GE(fd, 0) << strerror(errno);
    auto watcher = QueueWatcher::Make(memory, getpid(), gettid(), priority);
    ASSERT_TRUE(watcher.ok()) << watcher.status();
    state_ = kRegistered;
    while (!stop_) {
      pollfd poll_fd{fd, POLLIN, 0};
      if (poll(&poll_fd, 1, 10) == 1) {
        signalfd_siginfo info;
        ASSERT_EQ(read(fd, &info, sizeof(info)),
                  static_cast<ssize_t>(sizeof(info)));
        EXPECT_EQ(static_cast<int>(info.ssi_signo), WakeupSignal());
        EXPECT_EQ(static_cast<pid_t>(info.ssi_pid), getpid());
        ++wakeups_;
      }
    }
  }

  std::atomic<State> state_{kStarting};
  std::atomic<bool> stop_{false};
  std::atomic<int> wakeups_{0};
  std::thread thread_;
};

TEST_F(LocklessQueueTest, SendAndWakeupWakesWatchers) {
  auto memory = Open(dir_ + "/q", SmallLayout());
  auto sender = MakeSender(memory.get());
  QueueWakeUpper wake_upper(memory.get());
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  {
    WatcherThread low(memory.get(), 0), high(memory.get(), 30),
        middle(memory.get(), 10);
    ASSERT_TRUE(low.registered() && high.registered() && middle.registered());
    ASSERT_EQ(SendTest(sender.get(), 1, 1), QueueSender::Result::kGood);
    EXPECT_EQ(wake_upper.Wakeup(), 3);
    EXPECT_TRUE(low.WaitFor(1));
    EXPECT_TRUE(high.WaitFor(1));
    EXPECT_TRUE(middle.WaitFor(1));
    EXPECT_EQ(wake_upper.Wakeup(), 3);
    EXPECT_TRUE(low.WaitFor(2));
    // Every slot is taken by a live watcher.
    auto extra = QueueWatcher::Make(memory.get(), getpid(), gettid(), 0);
    ASSERT_FALSE(extra.ok());
    EXPECT_EQ(extra.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(extra.status().message()),
                AllOf(HasSubstr("num_watchers 3"), HasSubstr(memory->path())));
  }
  // Released.
  EXPECT_EQ(wake_upper.Wakeup(), 0);
}

TEST_F(LocklessQueueTest, WakeupReleasesSlotsOfGoneThreads) {
  auto memory = Open(dir_ + "/q", SmallLayout());
  // A thread of this process registers and exits without unregistering.
  std::unique_ptr<QueueWatcher> stale;
  ASSERT_GT(testing::RunOnThreadThatIsThenGone([&] {
              auto watcher =
                  QueueWatcher::Make(memory.get(), getpid(), gettid(), 5);
              ASSERT_TRUE(watcher.ok());
              stale = std::move(watcher).value();
            }),
            0);
  // A child process does the same.
  const pid_t child = testing::ForkTestChild();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto watcher = QueueWatcher::Make(memory.get(), getpid(), gettid(), 5);
    if (!watcher.ok()) _exit(1);
    (void)watcher->release();
    _exit(0);
  }
  int status;
  ASSERT_EQ(testing::WaitForChild(child, &status), "");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  QueueWakeUpper wake_upper(memory.get());
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  // Both slots are free again: all three can be claimed by live threads of
  // this process (Make alone never takes a live process's slot).
  std::vector<std::unique_ptr<WatcherThread>> watchers;
  for (int i = 0; i < 3; ++i) {
    watchers.push_back(std::make_unique<WatcherThread>(memory.get(), i));
    ASSERT_TRUE(watchers.back()->registered()) << i;
  }
  EXPECT_EQ(wake_upper.Wakeup(), 3);
  // The stale registration's slot now belongs to one of them: destroying it
  // must not free that slot.
  stale.reset();
  EXPECT_EQ(wake_upper.Wakeup(), 3);
}

// ---------------------------------------------------------- no allocation

TEST_F(LocklessQueueTest, SendReadAndWakeupNeverAllocate) {
  auto memory = Open(dir_ + "/q", SmallLayout());
  auto sender = MakeSender(memory.get());
  QueueReader reader(memory.get());
  QueueWakeUpper wake_upper(memory.get());
  sigset_t set, old_set;
  sigemptyset(&set);
  sigaddset(&set, WakeupSignal());
  pthread_sigmask(SIG_BLOCK, &set, &old_set);
  auto watcher = QueueWatcher::Make(memory.get(), getpid(), gettid(), 1);
  ASSERT_TRUE(watcher.ok());
  // A registration whose thread is gone: the first Wakeup below evicts it.
  ASSERT_GT(testing::RunOnThreadThatIsThenGone([&memory] {
              auto gone =
                  QueueWatcher::Make(memory.get(), getpid(), gettid(), 2);
              ASSERT_TRUE(gone.ok());
              (void)gone->release();
            }),
            0);
  std::vector<char> buffer(64);
  int good_reads = 0, wakeups = 0, too_old = 0;
  const uint64_t before = aos::testing::HeapAllocations();
  for (uint32_t i = 0; i < 100; ++i) {
    WriteTestMessage(sender->Data(), sender->size(), 1, i, 40);
    MessageInfo sent;
    if (sender->Send(40, MessageOrigin(), &sent) ==
        QueueSender::Result::kGood) {
      MessageInfo info;
      good_reads += reader.Read(sent.queue_index, &info, buffer.data()) ==
                    QueueReader::Result::kGood;
      good_reads += reader.Read(1 << 20, &info, buffer.data()) ==
                    QueueReader::Result::kGood;
      too_old += reader.Read(sent.queue_index - 8, &info, buffer.data()) ==
                 QueueReader::Result::kTooOld;
      wakeups += wake_upper.Wakeup();
    }
  }
  const uint64_t allocations = aos::testing::HeapAllocations() - before;
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(good_reads, 100);
  EXPECT_EQ(too_old, 92);
  EXPECT_EQ(wakeups, 100);
  const struct timespec zero = {0, 0};
  while (sigtimedwait(&set, nullptr, &zero) > 0) {
  }
  watcher->reset();
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
}

}  // namespace
}  // namespace aos::ipc_lib
