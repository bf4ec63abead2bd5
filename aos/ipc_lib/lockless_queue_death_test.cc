// Processes SIGKILLed in the middle of queue operations: at each step of the
// protocol deterministically, then at random instants in a campaign.

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <vector>

#include "aos/ipc_lib/bounded_wait.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/ipc_lib/lockless_queue_internal.h"
#include "aos/ipc_lib/queue_test_util.h"
#include "aos/ipc_lib/robust_slots.h"
#include "aos/ipc_lib/shared_memory_layout.h"
#include "aos/testing/path.h"
#include "aos/util/scoped_fd.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

DEFINE_int32(campaign_iterations, 300,
             "Children the SIGKILL campaign forks and kills at random "
             "instants (each iteration also checks the whole queue).");

namespace aos::ipc_lib {
namespace {

using internal::CrashPoint;
using testing::CheckTestMessage;
using testing::SendTest;
using testing::TestMessageHeader;
using testing::TestMessageLength;
using testing::ValidateQueue;
using testing::WriteTestMessage;

constexpr std::string_view kChannel = "/test aos.Death";

// Forks; the child runs `body` (which should die at its armed crash point)
// and the parent waits for it. Returns whether it died by SIGKILL.
bool RunChild(const std::function<void()>& body) {
  const pid_t child = testing::ForkTestChild();
  if (child < 0) return false;
  if (child == 0) {
    body();
    _exit(0);  // Should not get here.
  }
  int status;
  const std::string error = testing::WaitForChild(child, &status);
  EXPECT_EQ(error, "");
  return error.empty() && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

class LocklessQueueDeathTest : public ::testing::Test {
 protected:
  LocklessQueueDeathTest() {
    layout_.message_data_size = 64;
    layout_.queue_size = 4;
    layout_.num_senders = 2;
    layout_.num_watchers = 2;
    layout_.channel_storage_duration_ns = 0;
    auto memory = QueueMemory::Open(dir_ + "/queue", layout_, 0600, kChannel);
    CHECK(memory.ok()) << memory.status();
    memory_ = std::move(memory).value();
  }

  std::unique_ptr<QueueSender> MakeSender() {
    auto sender = QueueSender::Make(memory_.get());
    EXPECT_TRUE(sender.ok()) << sender.status();
    return sender.ok() ? std::move(sender).value() : nullptr;
  }

  // A child that makes a sender and sends with `point` armed.
  static std::function<void()> DyingSend(QueueMemory* memory,
                                         CrashPoint point) {
    return [memory, point] {
      internal::SetCrashPointForTesting(point);
      auto sender = QueueSender::Make(memory);
      if (!sender.ok()) _exit(1);
      // Killed inside; a send that returns means the point never came.
      if (SendTest(sender->get(), 9, 0) != QueueSender::Result::kGood) {
        _exit(2);
      }
    };
  }

  std::string dir_ = aos::testing::TestTempDir();
  QueueLayout layout_;
  std::unique_ptr<QueueMemory> memory_;
};

struct StepCase {
  CrashPoint point;
  bool published;
  // Whether the live sender goes once round the ring before the slot is
  // reclaimed (so it finishes the dead sender's publish itself).
  bool others_send_first;
};

std::string StepName(const ::testing::TestParamInfo<StepCase>& info) {
  static const char* const kNames[] = {"None", "AfterClaim", "BeforePublish",
                                       "AfterPublish", "BeforeAdvance"};
  return aos::StrCat(
      kNames[static_cast<int>(info.param.point)],
      info.param.others_send_first ? "_OthersSendFirst" : "_ReclaimedAtOnce");
}

class SendKilledAtStep : public LocklessQueueDeathTest,
                         public ::testing::WithParamInterface<StepCase> {};

TEST_P(SendKilledAtStep, QueueStaysConsistentAndSlotIsReclaimed) {
  const StepCase& step = GetParam();
  auto live = MakeSender();
  uint32_t sequence = 0;
  for (; sequence < 6; ++sequence) {
    ASSERT_EQ(SendTest(live.get(), 0, sequence), QueueSender::Result::kGood);
  }
  ASSERT_TRUE(RunChild(DyingSend(memory_.get(), step.point)));
  EXPECT_EQ(internal::CheckQueueInvariants(*memory_), "");
  QueueReader reader(memory_.get());
  ASSERT_EQ(reader.NextIndex(), 6u + step.published);
  EXPECT_EQ(ValidateQueue(*memory_), "");
  if (step.published) {
    std::vector<char> buffer(64);
    MessageInfo info;
    ASSERT_EQ(reader.Read(6, &info, buffer.data()), QueueReader::Result::kGood);
    TestMessageHeader decoded;
    ASSERT_EQ(CheckTestMessage(buffer.data(), info.size, &decoded), "");
    EXPECT_EQ(decoded.writer, 9u);
  }
  if (step.others_send_first) {
    for (uint32_t i = 0; i < 2 * layout_.queue_size; ++i, ++sequence) {
      ASSERT_EQ(SendTest(live.get(), 0, sequence), QueueSender::Result::kGood);
      ASSERT_EQ(internal::CheckQueueInvariants(*memory_), "");
    }
  }
  // Two slots: the live sender's and the dead child's.
  auto reclaimed = MakeSender();
  ASSERT_NE(reclaimed, nullptr);
  EXPECT_EQ(internal::CheckQueueInvariants(*memory_), "");
  for (uint32_t i = 0; i < 3 * layout_.queue_size; ++i, ++sequence) {
    ASSERT_EQ(SendTest((i % 2 ? live : reclaimed).get(), i % 2, sequence),
              QueueSender::Result::kGood);
    ASSERT_EQ(ValidateQueue(*memory_), "") << "after send " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Steps, SendKilledAtStep,
    ::testing::Values(StepCase{CrashPoint::kSendBeforePublish, false, false},
                      StepCase{CrashPoint::kSendBeforePublish, false, true},
                      StepCase{CrashPoint::kSendAfterPublish, true, false},
                      StepCase{CrashPoint::kSendAfterPublish, true, true},
                      StepCase{CrashPoint::kSendBeforeAdvance, true, false},
                      StepCase{CrashPoint::kSendBeforeAdvance, true, true}),
    StepName);

// A sender dies mid-publish; the process that reclaims its slot dies before
// repairing it; the next one repairs it.
TEST_F(LocklessQueueDeathTest, ReclaimerKilledBeforeRepair) {
  auto live = MakeSender();
  for (uint32_t i = 0; i < 5; ++i) {
    ASSERT_EQ(SendTest(live.get(), 0, i), QueueSender::Result::kGood);
  }
  ASSERT_TRUE(
      RunChild(DyingSend(memory_.get(), CrashPoint::kSendAfterPublish)));
  ASSERT_TRUE(
      RunChild(DyingSend(memory_.get(), CrashPoint::kSenderAfterClaim)));
  EXPECT_EQ(internal::CheckQueueInvariants(*memory_), "");
  auto reclaimed = MakeSender();
  ASSERT_NE(reclaimed, nullptr);
  for (uint32_t i = 0; i < 12; ++i) {
    ASSERT_EQ(SendTest((i % 2 ? live : reclaimed).get(), 1 + i % 2, i),
              QueueSender::Result::kGood);
  }
  EXPECT_EQ(ValidateQueue(*memory_), "");
}

// A watcher dies between claiming its slot and finishing its registration.
TEST_F(LocklessQueueDeathTest, WatcherKilledWhileRegistering) {
  ASSERT_TRUE(RunChild([this] {
    internal::SetCrashPointForTesting(CrashPoint::kWatcherAfterClaim);
    auto watcher = QueueWatcher::Make(memory_.get(), getpid(), gettid(), 10);
    (void)watcher;
  }));
  QueueWakeUpper wake_upper(memory_.get());
  EXPECT_EQ(wake_upper.Wakeup(), 0);  // And releases the slot.
  std::vector<std::unique_ptr<QueueWatcher>> watchers;
  for (uint32_t i = 0; i < layout_.num_watchers; ++i) {
    auto watcher = QueueWatcher::Make(memory_.get(), getpid(), gettid(), 1);
    ASSERT_TRUE(watcher.ok()) << watcher.status();
    watchers.push_back(std::move(watcher).value());
  }
}

// ------------------------------------------------------------ the campaign

static_assert(testing::kHangLimit == std::chrono::minutes(1),
              "WatchdogFired says a minute");

void WatchdogFired(int) {
  static const char kMessage[] =
      "\nlockless_queue_death_test: WATCHDOG: reclaiming a slot, sending or "
      "reading after killing a sender took more than a minute. Something is "
      "blocked on the dead process: the queue is not robust to this kill.\n";
  if (write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1) < 0) {
  }
  abort();
}

// Sends as fast as it can until killed. Short messages, so that a good part
// of its time is spent inside Send. If `sent_fd` is not -1, writes one byte
// to it once the first message is sent.
[[noreturn]] void SendForever(QueueMemory* memory, uint32_t writer,
                              int sent_fd) {
  auto sender = QueueSender::Make(memory);
  if (!sender.ok()) _exit(1);
  for (uint32_t sequence = 0;; ++sequence) {
    if (SendTest(sender->get(), writer, sequence, 40) !=
        QueueSender::Result::kGood) {
      _exit(2);
    }
    if (sequence == 0 && sent_fd != -1) {
      const char sent = 1;
      if (write(sent_fd, &sent, 1) != 1) _exit(3);
    }
  }
}

// Waits, at most kHangLimit, until `fd` has data to read. False if it does
// not (a pipe whose writer closed without writing is not data).
bool ReadableWithinLimit(int fd) {
  pollfd poll_fd{fd, POLLIN, 0};
  const int timeout_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(testing::kHangLimit)
          .count());
  int ready;
  while ((ready = poll(&poll_fd, 1, timeout_ms)) < 0 && errno == EINTR) {
  }
  return ready > 0 && (poll_fd.revents & POLLIN) != 0;
}

// Whether sender slot `slot` has a publish in flight, and whose it is.
bool PendingIn(const QueueMemory& memory, uint32_t slot) {
  const internal::QueueView view(memory.base(), memory.layout());
  return internal::SenderState::Pending(
      view.sender(slot).state.load(std::memory_order_acquire));
}

bool OwnedBy(const QueueMemory& memory, uint32_t slot, pid_t pid) {
  const internal::QueueView view(memory.base(), memory.layout());
  return internal::OwnerExtra(view.sender(slot).owner.load(
             std::memory_order_acquire)) == static_cast<uint32_t>(pid);
}

TEST_F(LocklessQueueDeathTest, SigkillCampaign) {
  QueueLayout layout;
  layout.message_data_size = 256;
  layout.queue_size = 64;
  layout.num_senders = 2;
  layout.num_watchers = 1;
  layout.channel_storage_duration_ns = 0;
  auto opened = QueueMemory::Open(dir_ + "/campaign", layout, 0600, kChannel);
  ASSERT_TRUE(opened.ok()) << opened.status();
  QueueMemory* const memory = opened->get();
  auto live = QueueSender::Make(memory);
  ASSERT_TRUE(live.ok());
  QueueReader reader(memory);

  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = WatchdogFired;
  ASSERT_EQ(sigaction(SIGALRM, &action, nullptr), 0);

  std::mt19937 random(971);
  // Delays up to 2 ms; one kill in four within 100 us of the fork, while
  // the child is starting up or claiming its slot. Sleeping (not spinning)
  // lets the child run on this CPU; no timer slack makes short sleeps short.
  // On a loaded machine a child may not get to send at all in that time, so
  // one in 16 (never an early one) is first waited for until it has sent a
  // message: those are surely killed after sending, in the middle of later
  // sends.
  std::uniform_int_distribution<int> delay_ns(0, 2'000'000);
  std::uniform_int_distribution<int> early_delay_ns(0, 100'000);
  const int timer_slack = prctl(PR_GET_TIMERSLACK);
  prctl(PR_SET_TIMERSLACK, 1);
  const int iterations = FLAGS_campaign_iterations;
  int corrupt = 0, killed_mid_publish = 0, children_that_sent = 0,
      killed_holding_slot = 0, waited_for = 0;
  uint64_t child_messages = 0;
  uint32_t live_sequence = 0, reclaimed_sequence = 0;
  for (int iteration = 0; iteration < iterations && corrupt == 0; ++iteration) {
    const uint32_t child_writer = 2 + iteration;
    const uint64_t next_before = reader.NextIndex();
    const bool wait_for_send = iteration % 16 == 1;
    // Both empty unless this child says when it sent.
    ScopedFd sent_read;
    ScopedFd sent_write;
    if (wait_for_send) {
      int sent_pipe[2];
      ASSERT_EQ(pipe(sent_pipe), 0);
      sent_read.reset(sent_pipe[0]);
      sent_write.reset(sent_pipe[1]);
    }
    const pid_t child = testing::ForkTestChild();
    ASSERT_GE(child, 0);
    if (child == 0) {
      sent_read.reset();
      SendForever(memory, child_writer, sent_write.get());
    }
    if (wait_for_send) {
      sent_write.reset();
      const bool sent_one = ReadableWithinLimit(sent_read.get());
      sent_read.reset();
      if (!sent_one) kill(child, SIGKILL);
      ASSERT_TRUE(sent_one) << "child " << iteration << " sent nothing in "
                            << testing::kHangLimit.count() << " s";
      ++waited_for;
    }
    const struct timespec delay = {
        0, iteration % 4 == 0 ? early_delay_ns(random) : delay_ns(random)};
    nanosleep(&delay, nullptr);
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status;
    ASSERT_EQ(testing::WaitForChild(child, &status), "");
    ASSERT_TRUE(WIFSIGNALED(status))
        << "child " << iteration << " exited by itself with "
        << WEXITSTATUS(status);

    alarm(static_cast<unsigned>(testing::kHangLimit.count()));
    const uint64_t sent = reader.NextIndex() - next_before;
    child_messages += sent;
    children_that_sent += sent > 0;
    for (uint32_t slot = 0; slot < layout.num_senders; ++slot) {
      killed_mid_publish += PendingIn(*memory, slot);
      killed_holding_slot += OwnedBy(*memory, slot, child);
    }
    // Odd iterations: the live sender goes round the ring first, finishing
    // any publish the child left half done.
    if (iteration % 2 == 1) {
      for (uint32_t i = 0; i < layout.queue_size + 1; ++i) {
        ASSERT_EQ(SendTest(live->get(), 0, live_sequence++),
                  QueueSender::Result::kGood);
      }
    }
    {
      auto reclaimed = QueueSender::Make(memory);
      ASSERT_TRUE(reclaimed.ok())
          << "iteration " << iteration
          << ": the killed child's slot was not reclaimed: "
          << reclaimed.status();
      std::string problem = ValidateQueue(*memory);
      if (problem.empty() &&
          SendTest(reclaimed->get(), 1, reclaimed_sequence++) !=
              QueueSender::Result::kGood) {
        problem = "the reclaimed sender could not send";
      }
      if (problem.empty() && SendTest(live->get(), 0, live_sequence++) !=
                                 QueueSender::Result::kGood) {
        problem = "the live sender could not send";
      }
      if (problem.empty()) problem = ValidateQueue(*memory);
      if (!problem.empty()) {
        ++corrupt;
        ADD_FAILURE() << "iteration " << iteration << " (child sent " << sent
                      << "): " << problem;
      }
    }
    alarm(0);
  }
  std::cout << "SIGKILL campaign: " << iterations << " children killed, "
            << iterations - killed_holding_slot << " before they held a slot, "
            << children_that_sent << " after sending (" << child_messages
            << " messages in all), " << killed_mid_publish
            << " in the middle of a publish; corrupt=" << corrupt << "\n";
  EXPECT_EQ(corrupt, 0);
  // At least the children waited for: each had sent before it was killed.
  EXPECT_GE(children_that_sent, waited_for);
  EXPECT_GT(children_that_sent, 0);
  signal(SIGALRM, SIG_DFL);
  prctl(PR_SET_TIMERSLACK, timer_slack);
}

}  // namespace
}  // namespace aos::ipc_lib
