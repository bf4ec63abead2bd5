// Queue files on a filesystem with no room: Open says so by name and leaves
// nothing behind, never a sparse file that kills whoever touches it later.

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "aos/ipc_lib/lockless_queue.h"
#include "aos/ipc_lib/queue_test_util.h"
#include "aos/testing/path.h"
#include "aos/testing/small_filesystem.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::ipc_lib {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr std::string_view kChannel = "/test aos.Big";
constexpr size_t kFilesystemBytes = 512 * 1024;

// About 45 KB: several fit in the filesystem, none in a full one.
QueueLayout BigLayout() {
  QueueLayout layout;
  layout.message_data_size = 4096;
  layout.queue_size = 8;
  layout.num_senders = 2;
  layout.num_watchers = 2;
  layout.channel_storage_duration_ns = 0;
  return layout;
}

class FullFilesystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::Status mounted =
        aos::testing::MountSmallTmpfs(dir_, kFilesystemBytes);
    if (!mounted.ok()) GTEST_SKIP() << mounted.message();
  }

  absl::StatusOr<std::unique_ptr<QueueMemory>> Open(const std::string& name) {
    return QueueMemory::Open(dir_ + "/" + name, BigLayout(), 0600, kChannel);
  }

  // Every message of the queue written: every page of the file touched.
  void FillQueue(QueueMemory* memory) {
    auto sender = QueueSender::Make(memory);
    ASSERT_TRUE(sender.ok()) << sender.status();
    for (uint32_t i = 0; i < 2 * BigLayout().queue_size; ++i) {
      ASSERT_EQ(testing::SendTest(sender->get(), 1, i),
                QueueSender::Result::kGood);
    }
  }

  std::string dir_ = aos::testing::TestTempDir() + "/small";
};

TEST_F(FullFilesystemTest, NoRoomIsOneErrorNamingFileAndSizesAndNoFile) {
  aos::testing::FillFilesystem(dir_, 0);
  const std::string path = dir_ + "/full";
  auto memory = Open("full");
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(
      std::string(memory.status().message()),
      AllOf(HasSubstr(std::string(kChannel)), HasSubstr(path),
            HasSubstr(std::to_string(BigLayout().MemorySize()) + " bytes"),
            HasSubstr("bytes free in " + dir_ + "/"),
            HasSubstr("No space left on device")));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(FullFilesystemTest, NearlyFullHoldsWhatFitsAndFreedAgainHoldsMore) {
  // Room for one queue and a page, not two.
  aos::testing::FillFilesystem(dir_, BigLayout().MemorySize() + 4096);
  ASSERT_LT(aos::testing::FreeBytes(dir_), 2 * BigLayout().MemorySize());
  auto first = Open("first");
  ASSERT_TRUE(first.ok()) << first.status();
  FillQueue(first->get());
  auto second = Open("second");
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("cannot reserve"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/second"));
  // The first queue still works.
  FillQueue(first->get());

  aos::testing::RemoveFiller(dir_);
  auto again = Open("second");
  ASSERT_TRUE(again.ok()) << again.status();
  FillQueue(again->get());
}

}  // namespace
}  // namespace aos::ipc_lib
