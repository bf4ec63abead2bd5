// Every queue operation, SIGKILLed before each one of its stores to shared
// memory (reads, which store nothing, after each instruction): the queue
// stays consistent, no published message is lost or duplicated, and the next
// sender and watcher work at once. write_stepper.h says why stopping before
// each store covers every kill point.
//
// Each kill point starts from a fresh queue brought to the same state, so the
// k-th store is the same store every time; the operation's run to the end
// (one more than its last kill point) is checked too.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "aos/ipc_lib/bounded_wait.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/ipc_lib/lockless_queue_internal.h"
#include "aos/ipc_lib/process_robust_list.h"
#include "aos/ipc_lib/queue_test_util.h"
#include "aos/ipc_lib/write_stepper.h"
#include "aos/testing/path.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

namespace aos::ipc_lib {
namespace {

using internal::CrashPoint;
using testing::CheckTestMessage;
using testing::RunStepped;
using testing::SendTest;
using testing::StepOutcome;
using testing::StepUnit;
using testing::TestMessageHeader;
using testing::ValidateQueue;

constexpr std::string_view kChannel = "/test aos.KillPoint";
// Writers of the test messages, by who sends them.
constexpr uint32_t kLiveWriter = 0;
constexpr uint32_t kDeadWriter = 8;
constexpr uint32_t kSteppedWriter = 9;

QueueLayout Layout(uint32_t queue_size, uint32_t senders, uint32_t watchers) {
  QueueLayout layout;
  layout.message_data_size = 64;
  layout.queue_size = queue_size;
  layout.num_senders = senders;
  layout.num_watchers = watchers;
  layout.channel_storage_duration_ns = 0;
  return layout;
}

// The queue as the test process sees it, for one kill point.
struct Fixture {
  std::unique_ptr<QueueMemory> memory;
  // Sender slot 0, held by the test process throughout.
  std::unique_ptr<QueueSender> live;
  uint32_t live_sequence = 0;

  void SendLive(int count) {
    for (int i = 0; i < count; ++i) {
      CHECK(SendTest(live.get(), kLiveWriter, live_sequence++) ==
            QueueSender::Result::kGood);
    }
  }
};

// A child that dies at `point` while sending (writer kDeadWriter) or, with
// kWatcherAfterClaim, while registering a watcher.
void KillChildAt(QueueMemory* memory, CrashPoint point) {
  const pid_t child = testing::ForkTestChild();
  CHECK_GE(child, 0);
  if (child == 0) {
    internal::SetCrashPointForTesting(point);
    if (point == CrashPoint::kWatcherAfterClaim) {
      auto watcher = QueueWatcher::Make(memory, getpid(), gettid(), 3);
    } else {
      auto sender = QueueSender::Make(memory);
      if (sender.ok() && SendTest(sender->get(), kDeadWriter, 0) !=
                             QueueSender::Result::kGood) {
        _exit(2);
      }
    }
    _exit(1);
  }
  int status;
  CHECK_EQ(testing::WaitForChild(child, &status), "");
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the child meant to die at crash point " << static_cast<int>(point)
      << " did not (status " << status << ")";
}

struct Scenario {
  // The summary groups kill points by operation.
  std::string operation;
  std::string name;
  QueueLayout layout;
  StepUnit unit = StepUnit::kStores;
  // Brings the fresh queue to the state the operation starts from.
  std::function<void(Fixture&)> setup = [](Fixture&) {};
  // In the stepped child: sets up (not stepped) and returns the operation.
  std::function<std::function<void()>(QueueMemory*)> child;
  // The operation may publish one message (writer kSteppedWriter).
  bool publishes = false;
  // Fewer steps than this means the harness is broken.
  uint64_t min_steps = 1;
};

// What the queue held before the operation.
struct Snapshot {
  uint64_t next = 0;
  // index -> (writer, sequence)
  std::map<uint64_t, std::pair<uint32_t, uint32_t>> messages;
  std::string bytes;
};

Snapshot Take(const QueueMemory& memory) {
  Snapshot snapshot;
  QueueReader reader(const_cast<QueueMemory*>(&memory));
  snapshot.next = reader.NextIndex();
  const uint64_t queue_size = memory.layout().queue_size;
  std::vector<char> buffer(memory.layout().message_data_size);
  for (uint64_t index = snapshot.next > queue_size ? snapshot.next - queue_size
                                                   : 0;
       index < snapshot.next; ++index) {
    MessageInfo info;
    TestMessageHeader decoded;
    CHECK(reader.Read(index, &info, buffer.data()) ==
          QueueReader::Result::kGood);
    CHECK_EQ(CheckTestMessage(buffer.data(), info.size, &decoded), "");
    snapshot.messages[index] = {decoded.writer, decoded.sequence};
  }
  snapshot.bytes.assign(static_cast<const char*>(memory.base()),
                        memory.layout().MemorySize());
  return snapshot;
}

// After the stepped child died (or finished): "" or what is wrong.
std::string CheckAfter(const Scenario& scenario, Fixture& fixture,
                       const Snapshot& before, bool finished) {
  QueueMemory* const memory = fixture.memory.get();
  const QueueLayout& layout = memory->layout();
  std::string problems = internal::CheckQueueInvariants(*memory);
  if (!problems.empty()) return "inconsistent: " + problems;
  if (problems = ValidateQueue(*memory); !problems.empty()) return problems;
  if (scenario.unit == StepUnit::kInstructions &&
      std::memcmp(before.bytes.data(), memory->base(), before.bytes.size()) !=
          0) {
    return "a reader changed the shared memory";
  }

  // Nothing published is lost or duplicated; at most the operation's own
  // message is new, at the next index.
  const Snapshot after = Take(*memory);
  const uint64_t grew = after.next - before.next;
  if (after.next < before.next || grew > (scenario.publishes ? 1u : 0u) ||
      (finished && scenario.publishes && grew != 1)) {
    return aos::StrCat("next index went from ", before.next, " to ",
                       after.next);
  }
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (const auto& [index, message] : after.messages) {
    if (!seen.insert(message).second) {
      return aos::StrCat("message ", message.first, "/", message.second,
                         " is in the queue twice");
    }
    const auto old = before.messages.find(index);
    if (old != before.messages.end() ? old->second != message
                                     : message.first != kSteppedWriter) {
      return aos::StrCat("index ", index, " holds ", message.first, "/",
                         message.second, ", not what was published there");
    }
  }
  for (const auto& [index, message] : before.messages) {
    if (index + layout.queue_size >= after.next &&
        !after.messages.contains(index)) {
      return aos::StrCat("index ", index, " was lost");
    }
  }

  // Every slot the test process does not hold can be claimed now: the dead
  // child's are reclaimed at once.
  std::vector<std::unique_ptr<QueueSender>> senders;
  for (uint32_t i = 1; i < layout.num_senders; ++i) {
    auto sender = QueueSender::Make(memory);
    if (!sender.ok()) {
      return aos::StrCat("sender ", i, ": ", sender.status().ToString());
    }
    senders.push_back(std::move(sender).value());
  }
  for (uint32_t i = 0; i < 2 * layout.queue_size + 1; ++i) {
    const bool live = i % 2 == 0 || senders.empty();
    const QueueSender::Result result =
        live
            ? SendTest(fixture.live.get(), kLiveWriter, fixture.live_sequence++)
            : SendTest(senders[i % senders.size()].get(),
                       1 + i % senders.size(), i);
    if (result != QueueSender::Result::kGood) {
      return aos::StrCat("send ", i, " afterwards failed");
    }
    if (problems = ValidateQueue(*memory); !problems.empty()) {
      return aos::StrCat("after send ", i, ": ", problems);
    }
  }
  senders.clear();
  std::vector<std::unique_ptr<QueueWatcher>> watchers;
  for (uint32_t i = 0; i < layout.num_watchers; ++i) {
    auto watcher = QueueWatcher::Make(memory, getpid(), gettid(), 1);
    if (!watcher.ok()) {
      return aos::StrCat("watcher ", i, ": ", watcher.status().ToString());
    }
    watchers.push_back(std::move(watcher).value());
  }
  const int woken = QueueWakeUpper(memory).Wakeup();
  if (woken != static_cast<int>(layout.num_watchers)) {
    return aos::StrCat("Wakeup woke ", woken, " of ", layout.num_watchers);
  }
  return "";
}

std::vector<Scenario> Scenarios() {
  std::vector<Scenario> scenarios;
  const auto steppedSend = [](QueueMemory* memory) -> std::function<void()> {
    auto made = QueueSender::Make(memory);
    if (!made.ok()) _exit(2);
    std::shared_ptr<QueueSender> sender = std::move(made).value();
    const size_t length = testing::TestMessageLength(0, sender->size());
    testing::WriteTestMessage(sender->Data(), sender->size(), kSteppedWriter, 0,
                              length);
    return [sender, length] {
      MessageInfo sent;
      // Run to the end, it publishes (CheckAfter checks the message).
      if (sender->Send(length, MessageOrigin(), &sent) !=
          QueueSender::Result::kGood) {
        _exit(4);
      }
    };
  };
  // Claims are kept (leaked) to the end: releasing is its own scenario.
  const auto makeSender = [](QueueMemory* memory) -> std::function<void()> {
    CHECK(internal::RobustListId().ok());
    return [memory] {
      auto sender = QueueSender::Make(memory);
      if (sender.ok()) (void)sender->release();
    };
  };
  const auto makeWatcher = [](QueueMemory* memory) -> std::function<void()> {
    CHECK(internal::RobustListId().ok());
    return [memory] {
      auto watcher = QueueWatcher::Make(memory, getpid(), gettid(), 5);
      if (watcher.ok()) (void)watcher->release();
    };
  };
  // Run to the end, a read of `index` gives `expected`.
  const auto read = [](uint64_t index, QueueReader::Result expected) {
    return [index, expected](QueueMemory* memory) -> std::function<void()> {
      auto reader = std::make_shared<QueueReader>(memory);
      auto buffer = std::make_shared<std::vector<char>>(
          memory->layout().message_data_size);
      return [reader, buffer, index, expected] {
        MessageInfo info;
        if (reader->Read(index, &info, buffer->data()) != expected) _exit(5);
      };
    };
  };

  scenarios.push_back({.operation = "send",
                       .name = "send, replacing the oldest message",
                       .layout = Layout(4, 2, 2),
                       .setup = [](Fixture& f) { f.SendLive(6); },
                       .child = steppedSend,
                       .publishes = true,
                       .min_steps = 10});
  // The previous publisher (slot 2) died between its ring CAS and the rest:
  // this send advances `next` for it, finishes its publish, and publishes.
  scenarios.push_back(
      {.operation = "send",
       .name = "send, helping a publisher that died mid-publish",
       .layout = Layout(1, 3, 2),
       .setup =
           [](Fixture& f) {
             f.SendLive(1);
             auto placeholder = QueueSender::Make(f.memory.get());  // slot 1
             CHECK(placeholder.ok());
             KillChildAt(f.memory.get(), CrashPoint::kSendAfterPublish);
           },
       .child = steppedSend,
       .publishes = true,
       .min_steps = 12});
  scenarios.push_back({.operation = "register",
                       .name = "sender registration, into a free slot",
                       .layout = Layout(4, 2, 2),
                       .setup = [](Fixture& f) { f.SendLive(2); },
                       .child = makeSender,
                       .min_steps = 2});
  scenarios.push_back(
      {.operation = "register",
       .name = "sender registration, repairing a sender that died mid-publish",
       .layout = Layout(4, 2, 2),
       .setup =
           [](Fixture& f) {
             f.SendLive(5);
             KillChildAt(f.memory.get(), CrashPoint::kSendAfterPublish);
           },
       .child = makeSender,
       .min_steps = 3});
  scenarios.push_back({.operation = "register",
                       .name = "watcher registration, into a free slot",
                       .layout = Layout(4, 2, 2),
                       .child = makeWatcher,
                       .min_steps = 5});
  scenarios.push_back(
      {.operation = "register",
       .name = "watcher registration, over one that died registering",
       .layout = Layout(4, 2, 2),
       .setup =
           [](Fixture& f) {
             KillChildAt(f.memory.get(), CrashPoint::kWatcherAfterClaim);
           },
       .child = makeWatcher,
       .min_steps = 5});
  scenarios.push_back(
      {.operation = "release and wakeup",
       .name = "sender release",
       .layout = Layout(4, 2, 2),
       .setup = [](Fixture& f) { f.SendLive(5); },
       .child = [](QueueMemory* memory) -> std::function<void()> {
         auto made = QueueSender::Make(memory);
         if (!made.ok()) _exit(2);
         std::shared_ptr<std::unique_ptr<QueueSender>> sender =
             std::make_shared<std::unique_ptr<QueueSender>>(
                 std::move(made).value());
         return [sender] { sender->reset(); };
       }});
  scenarios.push_back(
      {.operation = "release and wakeup",
       .name = "watcher release",
       .layout = Layout(4, 2, 2),
       .child = [](QueueMemory* memory) -> std::function<void()> {
         auto made = QueueWatcher::Make(memory, getpid(), gettid(), 1);
         if (!made.ok()) _exit(2);
         std::shared_ptr<std::unique_ptr<QueueWatcher>> watcher =
             std::make_shared<std::unique_ptr<QueueWatcher>>(
                 std::move(made).value());
         return [watcher] { watcher->reset(); };
       }});
  // Wakeup frees the slot of a registered thread that has exited.
  scenarios.push_back(
      {.operation = "release and wakeup",
       .name = "wakeup, evicting a thread that is gone",
       .layout = Layout(4, 2, 2),
       .child = [](QueueMemory* memory) -> std::function<void()> {
         const pid_t gone = testing::RunOnThreadThatIsThenGone([memory] {
           auto watcher = QueueWatcher::Make(memory, getpid(), gettid(), 1);
           if (!watcher.ok()) _exit(2);
           (void)watcher->release();
         });
         if (gone < 0) _exit(3);
         return [memory] { QueueWakeUpper(memory).Wakeup(); };
       }});
  scenarios.push_back({.operation = "read",
                       .name = "read of a message in the queue",
                       .layout = Layout(4, 2, 2),
                       .unit = StepUnit::kInstructions,
                       .setup = [](Fixture& f) { f.SendLive(6); },
                       .child = read(4, QueueReader::Result::kGood),
                       .min_steps = 40});
  scenarios.push_back({.operation = "read",
                       .name = "read of a message already overwritten",
                       .layout = Layout(4, 2, 2),
                       .unit = StepUnit::kInstructions,
                       .setup = [](Fixture& f) { f.SendLive(6); },
                       .child = read(1, QueueReader::Result::kTooOld),
                       .min_steps = 10});
  return scenarios;
}

TEST(LocklessQueueKillPointTest, EveryOperationSurvivesDeathAtEveryStore) {
  if (!testing::SteppingSupported()) {
    GTEST_SKIP() << "stepping by stores needs the x86-64 trap flag";
  }
  const std::string path = aos::testing::TestTempDir() + "/queue";
  // Watchers registered by this thread are signalled; keep the signals
  // pending and drop them.
  sigset_t wakeup, old_mask;
  sigemptyset(&wakeup);
  sigaddset(&wakeup, WakeupSignal());
  pthread_sigmask(SIG_BLOCK, &wakeup, &old_mask);

  std::map<std::string, uint64_t> kill_points;
  uint64_t total = 0;
  for (const Scenario& scenario : Scenarios()) {
    SCOPED_TRACE(scenario.name);
    uint64_t steps = 0;
    for (int64_t k = scenario.unit == StepUnit::kInstructions ? 1 : 0;; ++k) {
      Fixture fixture;
      unlink(path.c_str());
      auto memory = QueueMemory::Open(path, scenario.layout, 0600, kChannel);
      ASSERT_TRUE(memory.ok()) << memory.status();
      fixture.memory = std::move(memory).value();
      auto live = QueueSender::Make(fixture.memory.get());
      ASSERT_TRUE(live.ok()) << live.status();
      fixture.live = std::move(live).value();
      scenario.setup(fixture);
      const Snapshot before = Take(*fixture.memory);

      QueueMemory* const queue = fixture.memory.get();
      const StepOutcome outcome =
          RunStepped(queue->base(), queue->layout().MemorySize(), scenario.unit,
                     k, [&] { return scenario.child(queue); });
      ASSERT_EQ(outcome.error, "") << "kill point " << k;
      if (scenario.unit == StepUnit::kInstructions) {
        ASSERT_EQ(outcome.stores, 0u) << "a reader stored into the queue";
      }
      const std::string problem =
          CheckAfter(scenario, fixture, before, !outcome.killed);
      ASSERT_EQ(problem, "")
          << (outcome.killed ? aos::StrCat("killed before step ", k)
                             : std::string("after running to the end"));
      if (!outcome.killed) {
        steps = scenario.unit == StepUnit::kStores ? outcome.stores
                                                   : outcome.instructions;
        break;
      }
      const uint64_t done = scenario.unit == StepUnit::kStores
                                ? outcome.stores
                                : outcome.instructions;
      ASSERT_EQ(done, static_cast<uint64_t>(k));
      kill_points[scenario.operation] += 1;
      ++total;
      const struct timespec zero = {0, 0};
      while (sigtimedwait(&wakeup, nullptr, &zero) > 0) {
      }
    }
    std::cout << "  " << scenario.name << ": " << steps
              << (scenario.unit == StepUnit::kStores ? " stores"
                                                     : " instructions")
              << ", each a kill point, and the run to the end\n";
    EXPECT_GE(steps, scenario.min_steps)
        << "too few steps: the stepping harness is not seeing the stores";
  }
  std::cout << "covered " << total << " kill points: send "
            << kill_points["send"] << ", read " << kill_points["read"]
            << ", register " << kill_points["register"]
            << ", release and wakeup " << kill_points["release and wakeup"]
            << "\n";
  EXPECT_GE(kill_points["send"], 20u);
  EXPECT_GE(kill_points["register"], 15u);
  EXPECT_GE(kill_points["read"], 50u);
  EXPECT_GE(kill_points["release and wakeup"], 3u);

  const struct timespec zero = {0, 0};
  while (sigtimedwait(&wakeup, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}

}  // namespace
}  // namespace aos::ipc_lib
