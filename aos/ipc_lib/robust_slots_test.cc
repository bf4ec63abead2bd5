// Slot ownership that the kernel settles at death: dead owners are seen as
// dead even after their pid is reused, and nothing else is.

#include "aos/ipc_lib/robust_slots.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "aos/ipc_lib/bounded_wait.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/testing/path.h"
#include "aos/util/scoped_fd.h"
#include "gtest/gtest.h"

namespace aos::ipc_lib::internal {
namespace {

// The shape RobustSlots wants: owner word, then its link word.
struct alignas(64) TestSlot {
  std::atomic<uint64_t> owner;
  std::atomic<uint64_t> link;
};

// Slots in memory shared with forked children.
class SharedSlots {
 public:
  explicit SharedSlots(uint32_t count)
      : size_(sizeof(TestSlot) * count),
        memory_(mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0)),
        slots_(&static_cast<TestSlot*>(memory_)->owner, sizeof(TestSlot),
               count) {}
  ~SharedSlots() {
    ReleaseAllListedIn(memory_, static_cast<char*>(memory_) + size_);
    munmap(memory_, size_);
  }
  const RobustSlots& slots() const { return slots_; }

 private:
  const size_t size_;
  void* const memory_;
  const RobustSlots slots_;
};

// Runs `body` in a forked child and returns its wait status (-1, after a
// failure, if there is none).
template <typename Body>
int InChild(Body body) {
  const pid_t child = testing::ForkTestChild();
  if (child == 0) {
    body();
    _exit(0);
  }
  int status = -1;
  if (child < 0) {
    ADD_FAILURE() << "fork: " << strerror(errno);
  } else {
    EXPECT_EQ(testing::WaitForChild(child, &status), "");
  }
  return status;
}

// In a child made by clone3 or fork: sleeps until killed, by the test or
// when the test process dies. Plain system calls only: a raw clone3 child
// must not take glibc's locks or allocate.
[[noreturn]] void SleepUntilKilled(pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  while (true) pause();
}

TEST(RobustSlotsTest, ClaimReleaseAndLimits) {
  SharedSlots shared(3);
  const RobustSlots& slots = shared.slots();
  const size_t listed_before = ListedWords();
  auto first = slots.Claim(7);
  auto second = slots.Claim(8, /*registering=*/true);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->slot, 0u);
  EXPECT_EQ(second->slot, 1u);
  EXPECT_EQ(OwnerId(first->owner), *RobustListId());
  EXPECT_EQ(OwnerExtra(first->owner), 7u);
  EXPECT_TRUE(OwnerRegistering(second->owner));
  EXPECT_EQ(ListedWords(), listed_before + 2);
  // Releasing with the wrong word frees nothing.
  EXPECT_FALSE(slots.Release(0, second->owner));
  EXPECT_TRUE(slots.Release(0, first->owner));
  EXPECT_EQ(slots.owner(0).load(), 0u);
  EXPECT_EQ(ListedWords(), listed_before + 1);
  // Live owners (this process) are never reclaimed.
  ASSERT_TRUE(slots.Claim(1).ok());
  ASSERT_TRUE(slots.Claim(2).ok());
  const auto full = slots.Claim(3);
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.status().message().find("all 3 slots are held by live"),
            std::string_view::npos)
      << full.status();
}

TEST(RobustSlotsTest, TheKernelMarksSlotsOfProcessesThatDie) {
  SharedSlots shared(2);
  const RobustSlots& slots = shared.slots();
  // One child exits without releasing, one is killed; a thread of each
  // claimed a slot and exited first (ownership is per process, so those
  // slots stay owned until the process goes).
  for (const bool kill_it : {false, true}) {
    uint64_t owner = 0;
    const int status = InChild([&] {
      uint64_t claimed = 0;
      std::thread([&] {
        auto claim = slots.Claim(static_cast<uint32_t>(getpid()));
        if (!claim.ok()) _exit(1);
        claimed = claim->owner;
      }).join();
      if (OwnerDied(slots.owner(0).load()) ||
          slots.owner(0).load() != claimed) {
        _exit(2);
      }
      if (kill_it) raise(SIGKILL);
    });
    if (kill_it) {
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    } else {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    }
    owner = slots.owner(0).load();
    EXPECT_TRUE(OwnerDied(owner)) << std::hex << owner;
    EXPECT_TRUE(Claimable(owner));
    // The rest of the word is left as it was.
    EXPECT_NE(OwnerExtra(owner), 0u);
    // And the slot is claimed again at once.
    auto reclaimed = slots.Claim(99);
    ASSERT_TRUE(reclaimed.ok()) << reclaimed.status();
    EXPECT_EQ(reclaimed->slot, 0u);
    EXPECT_TRUE(slots.Release(0, reclaimed->owner));
  }
}

TEST(RobustSlotsTest, ForkedChildNeitherOwnsNorFreesItsParentsSlots) {
  SharedSlots shared(2);
  const RobustSlots& slots = shared.slots();
  auto mine = slots.Claim(1);
  ASSERT_TRUE(mine.ok());
  const int status = InChild([&] {
    // Inherited, but not the child's to free.
    if (slots.Release(0, mine->owner)) _exit(1);
    // The child's own claim gets the other slot, under its own id.
    auto child = slots.Claim(2);
    if (!child.ok() || child->slot != 1) _exit(2);
    if (OwnerId(child->owner) == OwnerId(mine->owner)) _exit(3);
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(slots.owner(0).load(), mine->owner);
  EXPECT_TRUE(OwnerDied(slots.owner(1).load()));
  EXPECT_TRUE(slots.Release(0, mine->owner));
}

TEST(RobustSlotsTest, ANonProcessOwnerCanBeEvictedOnlyFromItsExactWord) {
  SharedSlots shared(1);
  const RobustSlots& slots = shared.slots();
  auto mine = slots.Claim(5);
  ASSERT_TRUE(mine.ok());
  EXPECT_FALSE(slots.Evict(0, mine->owner + 1));
  EXPECT_TRUE(slots.Evict(0, mine->owner));
  // Evicted words are not ours any more: our own release is a no-op, and
  // the slot can be claimed again (by us, too) without listing it twice.
  EXPECT_FALSE(slots.Release(0, mine->owner));
  const size_t listed = ListedWords();
  auto again = slots.Claim(6);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ListedWords(), listed + 1);
  EXPECT_TRUE(slots.Release(0, again->owner));
  EXPECT_EQ(ListedWords(), listed);
}

TEST(RobustSlotsTest, AProcessOwnsAtMostWhatTheKernelCanMark) {
  SharedSlots shared(kMaxOwnedWords + 1);
  const RobustSlots& slots = shared.slots();
  const size_t listed_before = ListedWords();
  for (size_t i = listed_before; i < kMaxOwnedWords; ++i) {
    ASSERT_TRUE(slots.Claim(1).ok()) << i;
  }
  const auto refused = slots.Claim(1);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("kernel"), std::string_view::npos)
      << refused.status();
  // SharedSlots's destructor releases them all.
}

TEST(RobustSlotsTest, TheOwnerThreadBlocksEverySignal) {
  const uint32_t id = *RobustListId();
  std::ifstream status("/proc/self/task/" + std::to_string(id) + "/status");
  ASSERT_TRUE(status.good()) << "no thread " << id << " in this process";
  std::string line, blocked;
  while (std::getline(status, line)) {
    if (line.rfind("SigBlk:", 0) == 0) blocked = line.substr(7);
  }
  // Every signal but SIGKILL and SIGSTOP, which cannot be blocked; so no
  // process-directed signal (SIGTERM, a wakeup) is ever delivered there.
  EXPECT_NE(blocked.find("fffffffe7ffbfeff"), std::string::npos) << blocked;
}

// --------------------------------------------------------------- pid reuse

// Makes a child with exactly pid `pid` that sleeps until killed, using
// clone3's set_tid (or, failing that, /proc/sys/kernel/ns_last_pid). Returns
// the child's pid, or -1 with `*why` set.
pid_t ChildWithPid(pid_t pid, std::string* why) {
  const pid_t parent = getpid();
  pid_t wanted[1] = {pid};
  struct clone_args args;
  std::memset(&args, 0, sizeof(args));
  args.exit_signal = SIGCHLD;
  args.set_tid = reinterpret_cast<uint64_t>(wanted);
  args.set_tid_size = 1;
  // Raw clone3: the child must only make raw syscalls and async-signal-safe
  // calls (no malloc, no locks).
  const long child = syscall(SYS_clone3, &args, sizeof(args));
  if (child == 0) SleepUntilKilled(parent);
  if (child > 0) return static_cast<pid_t>(child);
  *why = std::string("clone3 with set_tid: ") + strerror(errno);
  // Not allowed to choose: ask for the pid after pid - 1, a few times (other
  // processes may fork in between).
  for (int attempt = 0; attempt < 20; ++attempt) {
    ScopedFd fd(open("/proc/sys/kernel/ns_last_pid", O_WRONLY));
    if (!fd.valid()) {
      *why += std::string("; /proc/sys/kernel/ns_last_pid: ") + strerror(errno);
      return -1;
    }
    const std::string last = std::to_string(pid - 1);
    const bool written = write(fd.get(), last.data(), last.size()) ==
                         static_cast<ssize_t>(last.size());
    fd.reset();  // Keeps errno.
    if (!written) {
      *why += std::string("; writing ns_last_pid: ") + strerror(errno);
      return -1;
    }
    const pid_t forked = fork();
    if (forked == 0) SleepUntilKilled(parent);
    if (forked < 0) {
      *why += std::string("; fork: ") + strerror(errno);
      return -1;
    }
    if (forked == pid) return forked;
    kill(forked, SIGKILL);
    int status;
    if (const std::string error = testing::WaitForChild(forked, &status);
        !error.empty()) {
      *why += "; " + error;
      return -1;
    }
  }
  *why += "; ns_last_pid never gave the pid back (other processes forking)";
  return -1;
}

// A process registers a sender and a watcher and is killed; another process
// gets its pid. The old code judged owners by kill(pid, 0): the slots looked
// alive, Make failed, and Wakeup sent the newcomer a realtime signal whose
// default action kills it.
TEST(RobustSlotsTest, SlotsOfADeadProcessAreReclaimedAfterItsPidIsReused) {
  QueueLayout layout;
  layout.message_data_size = 64;
  layout.queue_size = 4;
  layout.num_senders = 1;
  layout.num_watchers = 1;
  auto memory = QueueMemory::Open(aos::testing::TestTempDir() + "/reuse",
                                  layout, 0600, "/test pid reuse");
  ASSERT_TRUE(memory.ok()) << memory.status();
  QueueMemory* const queue = memory->get();

  const pid_t dead = testing::ForkTestChild();
  ASSERT_GE(dead, 0);
  if (dead == 0) {
    auto sender = QueueSender::Make(queue);
    // From the main thread: its tid is its pid, as the newcomer's will be.
    auto watcher = QueueWatcher::Make(queue, getpid(), gettid(), 10);
    if (!sender.ok() || !watcher.ok()) _exit(1);
    raise(SIGKILL);
  }
  int status;
  ASSERT_EQ(testing::WaitForChild(dead, &status), "");
  ASSERT_TRUE(WIFSIGNALED(status)) << status;

  std::string why;
  const pid_t newcomer = ChildWithPid(dead, &why);
  if (newcomer < 0) {
    GTEST_SKIP() << "cannot make a process with the dead one's pid " << dead
                 << " here: " << why;
  }
  ASSERT_EQ(newcomer, dead);

  sigset_t wakeup, old_mask;
  sigemptyset(&wakeup);
  sigaddset(&wakeup, WakeupSignal());
  pthread_sigmask(SIG_BLOCK, &wakeup, &old_mask);
  QueueWakeUpper wake_upper(queue);
  // Nobody is signalled: the registration's owner is dead.
  EXPECT_EQ(wake_upper.Wakeup(), 0);
  // The only sender slot and the only watcher slot are free to take.
  auto sender = QueueSender::Make(queue);
  EXPECT_TRUE(sender.ok()) << sender.status();
  auto watcher = QueueWatcher::Make(queue, getpid(), gettid(), 1);
  EXPECT_TRUE(watcher.ok()) << watcher.status();
  EXPECT_EQ(wake_upper.Wakeup(), 1);  // This thread, now.

  // The newcomer was never signalled.
  EXPECT_EQ(waitpid(newcomer, &status, WNOHANG), 0)
      << "the newcomer died: "
      << (WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited");
  kill(newcomer, SIGKILL);
  ASSERT_EQ(testing::WaitForChild(newcomer, &status), "");
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  watcher->reset();
  sender->reset();
  const struct timespec zero = {0, 0};
  while (sigtimedwait(&wakeup, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}

}  // namespace
}  // namespace aos::ipc_lib::internal
