// Damaged shared memory, one field at a time: each damage is named (open
// fails naming the channel and the file) or counted (kCorrupt), never a
// crash, a hang, an access out of the mapping, or a signal to a process that
// did not register. queue_fuzz_test covers random damage.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "aos/ipc_lib/bounded_wait.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/ipc_lib/lockless_queue_internal.h"
#include "aos/ipc_lib/queue_test_util.h"
#include "aos/ipc_lib/robust_slots.h"
#include "aos/ipc_lib/shared_memory_layout.h"
#include "aos/ipc_lib/watcher_proof.h"
#include "aos/testing/path.h"
#include "aos/util/scoped_fd.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::ipc_lib {
namespace {

using internal::Entry;
using internal::QueueView;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::SendTest;

constexpr std::string_view kChannel = "/test aos.Hostile";

std::string ReadAll(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

class HostileMemoryTest : public ::testing::Test {
 protected:
  HostileMemoryTest() {
    layout_.message_data_size = 64;
    layout_.queue_size = 4;
    layout_.num_senders = 2;
    layout_.num_watchers = 2;
    auto memory = QueueMemory::Open(path_, layout_, 0600, kChannel);
    CHECK(memory.ok()) << memory.status();
    memory_ = std::move(memory).value();
    sender_ = std::move(QueueSender::Make(memory_.get()).value());
    for (uint32_t i = 0; i < 6; ++i) {
      CHECK(SendTest(sender_.get(), 1, i) == QueueSender::Result::kGood);
    }
  }

  QueueView view() const { return QueueView(memory_->base(), layout_); }
  QueueReader::Result Read(uint64_t index) {
    MessageInfo info;
    return QueueReader(memory_.get()).Read(index, &info, buffer_.data());
  }

  std::string path_ = aos::testing::TestTempDir() + "/queue";
  QueueLayout layout_;
  std::unique_ptr<QueueMemory> memory_;
  std::unique_ptr<QueueSender> sender_;
  std::vector<char> buffer_ = std::vector<char>(64);
};

TEST_F(HostileMemoryTest, RingEntryNamingNoMessageIsCorruptNotOutOfBounds) {
  // Index 4 is at position 0; its message index becomes 0xfffff, far past
  // the mapping.
  std::atomic<uint64_t>& entry = view().entry_for(4);
  entry.store(Entry::Pack(4, 0xfffff, Entry::Slot(entry.load())));
  EXPECT_EQ(Read(4), QueueReader::Result::kCorrupt);
  EXPECT_EQ(Read(4), QueueReader::Result::kCorrupt);  // Again, and logs once.
  EXPECT_EQ(Read(5), QueueReader::Result::kGood);
  // A sender that has to replace it (index 8) refuses, every time.
  ASSERT_EQ(SendTest(sender_.get(), 1, 6), QueueSender::Result::kGood);
  ASSERT_EQ(SendTest(sender_.get(), 1, 7), QueueSender::Result::kGood);
  EXPECT_EQ(SendTest(sender_.get(), 1, 8), QueueSender::Result::kCorrupt);
  EXPECT_EQ(SendTest(sender_.get(), 1, 8), QueueSender::Result::kCorrupt);
  EXPECT_EQ(QueueReader(memory_.get()).NextIndex(), 8u);
}

TEST_F(HostileMemoryTest, ImpossibleRingIndicesNeverHang) {
  // Position 1 (index 5) claims to hold index 77, which can never be there.
  std::atomic<uint64_t>& entry = view().entry_for(5);
  const uint64_t good = entry.load();
  entry.store(Entry::Pack(77, Entry::Message(good), Entry::Slot(good)));
  EXPECT_EQ(Read(5), QueueReader::Result::kCorrupt);
  // The next index claims to be far ahead of the ring.
  std::atomic<uint64_t>& next = view().header().next_queue_index;
  entry.store(good);
  next.store(uint64_t{1} << 40);
  QueueReader reader(memory_.get());
  EXPECT_EQ(reader.NextIndex(), uint64_t{1} << 40);
  // A message whose entry and header agree is still read by its index.
  EXPECT_EQ(Read(5), QueueReader::Result::kGood);
  EXPECT_EQ(Read((uint64_t{1} << 40) - 1), QueueReader::Result::kCorrupt);
  EXPECT_EQ(Read(uint64_t{1} << 40), QueueReader::Result::kNothingNewYet);
  EXPECT_EQ(SendTest(sender_.get(), 1, 6), QueueSender::Result::kCorrupt);
}

TEST_F(HostileMemoryTest, MessageThatDisagreesWithItsEntryIsCorrupt) {
  const uint32_t message = Entry::Message(view().entry_for(4).load());
  internal::MessageHeader& header = view().message_header(message);
  header.queue_index.store(12345);
  EXPECT_EQ(Read(4), QueueReader::Result::kCorrupt);
  header.queue_index.store(4);
  EXPECT_EQ(Read(4), QueueReader::Result::kGood);
  header.size.store(0xffffffff);
  EXPECT_EQ(Read(4), QueueReader::Result::kCorrupt);
}

// A damaged origins count reads at most kMaxPathOrigins origins, never past
// the header; what to believe of them is the event loop's to decide
// (PathOrigins::FromRaw).
TEST_F(HostileMemoryTest, DamagedPathOriginCountsReadNoFurtherThanTheHeader) {
  const uint32_t message = Entry::Message(view().entry_for(4).load());
  internal::MessageHeader& header = view().message_header(message);
  header.path_origins[0].store(0xdeadbeefffffffffull);
  MessageInfo info;
  PathOrigins::Raw raw;
  ASSERT_EQ(QueueReader(memory_.get()).Read(4, &info, buffer_.data(), &raw),
            QueueReader::Result::kGood);
  EXPECT_EQ(raw.count, 0xffffffffu);
  uint32_t invalid = 0;
  EXPECT_TRUE(
      PathOrigins::FromRaw(raw, std::numeric_limits<int64_t>::max(), &invalid)
          .empty());
  EXPECT_EQ(invalid, kMaxPathOrigins);
}

TEST_F(HostileMemoryTest, DamagedSenderSlotIsRefusedByName) {
  // Slot 1's scratch message index points far outside the queue.
  view().sender(1).state.store(internal::SenderState::Idle(0x7ffffff0));
  auto sender = QueueSender::Make(memory_.get());
  ASSERT_FALSE(sender.ok());
  EXPECT_EQ(sender.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(sender.status().message()),
              AllOf(HasSubstr(std::string(kChannel)), HasSubstr(path_),
                    HasSubstr("sender slot 1"), HasSubstr("corrupt"),
                    HasSubstr("delete it")));
  // And it did not keep the slot.
  EXPECT_EQ(view().sender(1).owner.load(), 0u);
  // A sender made before the damage never trusts the slot for its buffer.
  view().sender(0).state.store(internal::SenderState::Idle(0x7ffffff0));
  EXPECT_EQ(SendTest(sender_.get(), 1, 6), QueueSender::Result::kGood);
}

TEST_F(HostileMemoryTest, DamagedWatcherSlotsSignalNobody) {
  // A child that would die of the wakeup signal (its default action). It
  // waits to be killed: by us, or with us if this test fails first.
  const pid_t child = testing::ForkTestChild();
  ASSERT_GE(child, 0);
  if (child == 0) {
    while (true) pause();
  }
  // Slot 0: a "registration" of the child written by hand, with a live
  // owner word (ours) but no valid check.
  internal::WatcherSlot& slot = view().watcher(0);
  slot.owner.store(internal::OwnerWord(*internal::RobustListId(),
                                       static_cast<uint32_t>(child)));
  slot.pid.store(child);
  slot.priority.store(1);
  slot.check.store(12345);
  QueueWakeUpper wake_upper(memory_.get());
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  const std::string said = ::testing::internal::GetCapturedStderr();
  // Counted each time, named once.
  EXPECT_EQ(wake_upper.refused_wakeups(), 2u);
  EXPECT_THAT(said, HasSubstr("not signalling watcher slot 0 of"));
  EXPECT_THAT(said, HasSubstr("check word that does not match"));
  EXPECT_EQ(said.find("not signalling", said.find("not signalling") + 1),
            std::string::npos)
      << said;
  // Slot 1: a real registration of this thread, whose fields then change.
  sigset_t wakeup, old_mask;
  sigemptyset(&wakeup);
  sigaddset(&wakeup, WakeupSignal());
  pthread_sigmask(SIG_BLOCK, &wakeup, &old_mask);
  auto watcher = QueueWatcher::Make(memory_.get(), getpid(), gettid(), 5);
  ASSERT_TRUE(watcher.ok());
  EXPECT_EQ(wake_upper.Wakeup(), 1);
  view().watcher(1).pid.store(child);
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  view().watcher(1).pid.store(getpid());
  view().watcher(1).priority.store(6);
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  view().watcher(1).priority.store(5);
  EXPECT_EQ(wake_upper.Wakeup(), 1);
  // Slot 0 on every Wakeup, slot 1 on the two it was damaged.
  EXPECT_EQ(wake_upper.refused_wakeups(), 2u + 4u + 2u);

  int status;
  EXPECT_EQ(waitpid(child, &status, WNOHANG), 0) << "the child was signalled";
  kill(child, SIGKILL);
  ASSERT_EQ(testing::WaitForChild(child, &status), "");
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  slot.owner.store(0);
  watcher->reset();
  const struct timespec zero = {0, 0};
  while (sigtimedwait(&wakeup, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}

// Blocks the wakeup signal in this thread while alive, as a watching thread
// does; drains what arrived before unblocking it.
class WakeupSignalBlocked {
 public:
  WakeupSignalBlocked() {
    sigemptyset(&wakeup_);
    sigaddset(&wakeup_, WakeupSignal());
    pthread_sigmask(SIG_BLOCK, &wakeup_, &old_mask_);
  }
  ~WakeupSignalBlocked() {
    const struct timespec zero = {0, 0};
    while (sigtimedwait(&wakeup_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }

 private:
  sigset_t wakeup_;
  sigset_t old_mask_;
};

// An unrelated process: `sleep`, which maps no queue. With the wakeup signal
// blocked if asked (a mask survives exec), else at its default action, which
// kills. Returns once it runs sleep.
pid_t StartSleeper(bool block_wakeup_signal) {
  const pid_t child = testing::ForkTestChild();
  if (child == 0) {
    sigset_t wakeup;
    sigemptyset(&wakeup);
    sigaddset(&wakeup, WakeupSignal());
    sigprocmask(block_wakeup_signal ? SIG_BLOCK : SIG_UNBLOCK, &wakeup,
                nullptr);
    execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Until it has replaced our image (and dropped our mappings).
  testing::HangGuard guard;
  while (true) {
    std::ifstream comm("/proc/" + std::to_string(child) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "sleep") break;
    if (guard.Expired()) {
      ADD_FAILURE() << "child " << child << " never ran sleep";
      break;
    }
    usleep(1000);
  }
  return child;
}

// Ends a child of StartSleeper; expects it to have lived until now.
void StopSleeper(pid_t child) {
  int status;
  EXPECT_EQ(waitpid(child, &status, WNOHANG), 0)
      << "the unrelated process died (signalled by a sender?)";
  kill(child, SIGKILL);
  ASSERT_EQ(testing::WaitForChild(child, &status), "");
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "status " << status;
}

// What a writer of the file can do: a complete registration of any thread,
// whose check word matches.
void ForgeRegistration(const QueueView& view, uint32_t slot, uint32_t robust_id,
                       pid_t pid, pid_t tid, int32_t priority) {
  const uint64_t owner =
      internal::OwnerWord(robust_id, static_cast<uint32_t>(tid));
  internal::WatcherSlot& watcher = view.watcher(slot);
  watcher.pid.store(pid);
  watcher.priority.store(priority);
  watcher.check.store(internal::WatcherCheck(owner, pid, priority));
  watcher.owner.store(owner);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// The campaign's kill: a forged slot naming an unrelated process made every
// sender signal it with the wakeup signal, whose default action killed it.
TEST_F(HostileMemoryTest,
       ForgedRegistrationOfAnUnrelatedProcessIsNotSignalled) {
  const pid_t sleeper = StartSleeper(/*block_wakeup_signal=*/false);
  ForgeRegistration(view(), 0, static_cast<uint32_t>(sleeper), sleeper, sleeper,
                    1);
  QueueWakeUpper wake_upper(memory_.get());
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(wake_upper.refused_wakeups(), 2u);
  EXPECT_THAT(said, AllOf(HasSubstr(std::string(kChannel)), HasSubstr(path_),
                          HasSubstr("watcher slot 0"),
                          HasSubstr("process " + std::to_string(sleeper)),
                          HasSubstr("\"sleep\""),
                          HasSubstr("does not block the wakeup signal"),
                          HasSubstr("forged or stale")));
  EXPECT_EQ(Count(said, "not signalling"), 1u) << said;
  StopSleeper(sleeper);
}

// A process that blocks the signal is not a watcher for that alone: it
// must be an aos process.
TEST_F(HostileMemoryTest, ForgedRegistrationOfANonAosProcessIsRefused) {
  const pid_t sleeper = StartSleeper(/*block_wakeup_signal=*/true);
  ForgeRegistration(view(), 1, static_cast<uint32_t>(sleeper), sleeper, sleeper,
                    1);
  QueueWakeUpper wake_upper(memory_.get());
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(wake_upper.refused_wakeups(), 1u);
  EXPECT_THAT(said, HasSubstr("holds no aos slots"));
  StopSleeper(sleeper);
}

// An aos process that watches another queue (it blocks the signal and has
// its robust-list thread) but does not map this one passes the cheap proof,
// so it may get one harmless wakeup, and is refused by the audit.
TEST_F(HostileMemoryTest, AuditRefusesAnAosProcessWithoutTheFile) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const ScopedFd read_end(pipe_fds[0]);
  const ScopedFd write_end(pipe_fds[1]);
  const pid_t child = testing::ForkTestChild();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Drop our copy of the parent's queue, then watch a queue of its own.
    sender_.reset();
    memory_.reset();
    sigset_t wakeup;
    sigemptyset(&wakeup);
    sigaddset(&wakeup, WakeupSignal());
    sigprocmask(SIG_BLOCK, &wakeup, nullptr);
    auto other = QueueMemory::Open(path_ + ".other", layout_, 0600, kChannel);
    if (!other.ok()) _exit(2);
    auto watcher = QueueWatcher::Make(other->get(), getpid(), gettid(), 1);
    if (!watcher.ok()) _exit(3);
    const uint32_t id = *internal::RobustListId();
    if (write(pipe_fds[1], &id, sizeof(id)) != sizeof(id)) _exit(4);
    while (true) pause();
  }
  uint32_t child_robust_id = 0;
  ASSERT_EQ(read(pipe_fds[0], &child_robust_id, sizeof(child_robust_id)),
            static_cast<ssize_t>(sizeof(child_robust_id)));
  ForgeRegistration(view(), 1, child_robust_id, child, child, 1);
  QueueWakeUpper wake_upper(memory_.get());
  EXPECT_EQ(wake_upper.Wakeup(), 1);
  ::testing::internal::CaptureStderr();
  wake_upper.AuditRegistrations();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(said, AllOf(HasSubstr("watcher slot 1"),
                          HasSubstr("does not map the queue's file")));
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  EXPECT_EQ(wake_upper.refused_wakeups(), 1u);
  // Where maps may not be read, the cheap proof stands.
  internal::SetMapsUnreadableForTesting(true);
  QueueWakeUpper blind(memory_.get());
  EXPECT_EQ(blind.Wakeup(), 1);
  blind.AuditRegistrations();
  EXPECT_EQ(blind.Wakeup(), 1);
  internal::SetMapsUnreadableForTesting(false);
  int status;
  EXPECT_EQ(waitpid(child, &status, WNOHANG), 0) << "the child died";
  kill(child, SIGKILL);
  ASSERT_EQ(testing::WaitForChild(child, &status), "");
  view().watcher(1).owner.store(0);
}

// Real registrations pass the proof and the audit, and a registration's
// thread that goes away frees its slot as before.
TEST_F(HostileMemoryTest, RealRegistrationsAreProvenAndSignalled) {
  WakeupSignalBlocked blocked;
  auto watcher = QueueWatcher::Make(memory_.get(), getpid(), gettid(), 3);
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  QueueWakeUpper wake_upper(memory_.get());
  EXPECT_EQ(wake_upper.Wakeup(), 1);
  wake_upper.AuditRegistrations();
  EXPECT_EQ(wake_upper.Wakeup(), 1);
  EXPECT_EQ(wake_upper.refused_wakeups(), 0u);

  // A thread that registers and exits: its slot is freed by the next
  // Wakeup (which finds the thread gone), not signalled.
  std::unique_ptr<QueueWatcher> orphan;
  std::thread gone([this, &orphan]() {
    WakeupSignalBlocked blocked_here;
    auto other = QueueWatcher::Make(memory_.get(), getpid(), gettid(), 1);
    ASSERT_TRUE(other.ok());
    orphan = std::move(other).value();
  });
  gone.join();
  EXPECT_EQ(wake_upper.Wakeup(), 1);
  uint32_t registered = 0;
  for (uint32_t slot = 0; slot < layout_.num_watchers; ++slot) {
    registered += view().watcher(slot).owner.load() != 0;
  }
  EXPECT_EQ(registered, 1u);
  orphan.reset();  // Its slot is no longer its own: frees nothing.
}

// One 8-byte write made every later send fail as "sent too fast", silently:
// the rate limit trusted the sent time of the message being replaced.
TEST_F(HostileMemoryTest, SentTimeInTheFutureIsNotBelieved) {
  // Index 6 replaces index 2.
  const uint32_t replaced = Entry::Message(view().entry_for(2).load());
  const int64_t future = monotonic_clock::now().time_since_epoch().count() +
                         int64_t{3600} * 1000000000;
  view().message_header(replaced).monotonic_sent_time.store(future);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(SendTest(sender_.get(), 1, 6), QueueSender::Result::kGood);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(sender_->impossible_sent_times(), 1u);
  EXPECT_THAT(said, AllOf(HasSubstr(std::string(kChannel)), HasSubstr(path_),
                          HasSubstr("message 2"), HasSubstr("future"),
                          HasSubstr("delete it")));
  for (uint32_t i = 7; i < 20; ++i) {
    EXPECT_EQ(SendTest(sender_.get(), 1, i), QueueSender::Result::kGood);
  }
  EXPECT_EQ(sender_->impossible_sent_times(), 1u);

  // A reader does not deliver a message that claims to come from the
  // future either: it is damage, counted as lost.
  const uint32_t newest = Entry::Message(view().entry_for(19).load());
  view().message_header(newest).monotonic_sent_time.store(future);
  EXPECT_EQ(Read(19), QueueReader::Result::kCorrupt);
  EXPECT_EQ(Read(18), QueueReader::Result::kGood);
}

TEST_F(HostileMemoryTest, FileFromAnotherVersionIsRefusedByName) {
  sender_.reset();
  memory_.reset();
  // What version 1 wrote: the same magic, another version, other fields.
  std::fstream file(path_, std::ios::in | std::ios::out | std::ios::binary);
  const uint32_t version = 1;
  file.seekp(offsetof(internal::QueueHeader, layout_version));
  file.write(reinterpret_cast<const char*>(&version), sizeof(version));
  file.close();
  auto opened = QueueMemory::Open(path_, layout_, 0600, kChannel);
  ASSERT_FALSE(opened.ok());
  EXPECT_THAT(
      std::string(opened.status().message()),
      AllOf(HasSubstr(std::string(kChannel)), HasSubstr(path_),
            HasSubstr("layout version 1"),
            HasSubstr("layout version " + std::to_string(kLayoutVersion)),
            HasSubstr("delete " + path_)));
}

// A file written by a build of layout version 2 from before its release,
// which kept num_readers (sizing nothing) in the header:
// testdata/old_v2_queue_with_num_readers, made by that build for max_size 8,
// queue 2, senders 1, watchers 1, readers 10, storage 2 s. Its version,
// fields and hash all differ from this build's for those fields (and, since
// version 4's longer message headers, its size), and the message says so
// without touching it.
TEST(StaleFileTest, FileFromAnEarlierBuildOfVersion2IsRefusedByName) {
  const std::string path = aos::testing::TestTempDir() + "/old_v2_queue";
  std::filesystem::copy_file(
      aos::testing::ArtifactPath(
          "aos/ipc_lib/testdata/old_v2_queue_with_num_readers"),
      path);
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write);
  const std::string before = ReadAll(path);
  QueueLayout layout;
  layout.message_data_size = 8;
  layout.queue_size = 2;
  layout.num_senders = 1;
  layout.num_watchers = 1;
  layout.channel_storage_duration_ns = 2000000000;
  ASSERT_LT(before.size(), layout.MemorySize());

  auto opened = QueueMemory::Open(path, layout, 0600, kChannel);
  ASSERT_FALSE(opened.ok());
  const std::string message(opened.status().message());
  std::cout << message << "\n";
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message,
              AllOf(HasSubstr(std::string(kChannel)), HasSubstr(path),
                    HasSubstr("was made for another queue layout"),
                    HasSubstr("layout version 2, hash 5153d95a583fd703"),
                    HasSubstr("program wants: " + layout.ToString()),
                    HasSubstr("delete " + path)));
  EXPECT_EQ(ReadAll(path), before);
}

TEST_F(HostileMemoryTest, MappingIsFencedByInaccessiblePages) {
  const char* const base = static_cast<const char*>(memory_->base());
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t end = (layout_.MemorySize() + page - 1) / page * page;
  EXPECT_DEATH({ [[maybe_unused]] volatile char c = base[-1]; }, "");
  EXPECT_DEATH({ [[maybe_unused]] volatile char c = base[end]; }, "");
}

}  // namespace
}  // namespace aos::ipc_lib
