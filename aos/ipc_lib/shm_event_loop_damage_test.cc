// Damage to a queue file, end to end: what lockless_queue_hostile_test proves
// of the queue alone reaches a running ShmEventLoop's timing report, and the
// sends go on. A writer of the file forges a watcher registration naming an
// unrelated process and writes a far-future sent time into the message the
// loop's next send replaces; the loop's report must count both, the
// unrelated process must live, and the send must succeed.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aos/configuration.h"
#include "aos/events/event_loop_generated.h"
#include "aos/events/queue_layout_for_channel.h"
#include "aos/events/shm_event_loop.h"
#include "aos/ipc_lib/bounded_wait.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/ipc_lib/queue_memory.h"
#include "aos/ipc_lib/robust_slots.h"
#include "aos/ipc_lib/shared_memory_layout.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_generated.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

DECLARE_int32(timing_report_ms);

namespace aos::ipc_lib {
namespace {

using ::testing::HasSubstr;

// /damaged keeps 2 messages (2 a second for a second), so the third send
// replaces the first.
constexpr char kConfig[] = R"({
  "channels": [
    { "name": "/aos", "type": "aos.timing.Report", "frequency": 50,
      "max_size": 16384, "num_senders": 20 },
    { "name": "/damaged", "type": "aos.testing.TestMessage", "frequency": 2,
      "max_size": 64, "channel_storage_duration": 1000000000 }
  ]
})";

bool Send(Sender<aos::testing::TestMessage>* sender, int value) {
  auto builder = sender->MakeBuilder();
  aos::testing::TestMessage::Builder message =
      builder.MakeBuilder<aos::testing::TestMessage>();
  message.add_value(value);
  return builder.Send(message.Finish()) == RawSender::Error::kOk;
}

TEST(ShmEventLoopDamageTest, ForgedWatcherAndFutureTimeAreCountedAndSent) {
  gflags::FlagSaver saver;
  FLAGS_shm_base = aos::testing::TestTempDir() + "/shm";
  FLAGS_timing_report_ms = 50;
  auto config = configuration::ReadConfigFromJson(kConfig);
  ASSERT_TRUE(config.ok()) << config.status();

  // An unrelated process that the wakeup signal would kill (its default
  // action), as the `sleep` of the campaign was.
  const pid_t unrelated = testing::ForkTestChild();
  ASSERT_GE(unrelated, 0);
  if (unrelated == 0) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, nullptr);
    while (true) pause();
  }

  ShmEventLoop loop(&config->message(), "sending");
  Sender<aos::testing::TestMessage> sender =
      loop.MakeSender<aos::testing::TestMessage>("/damaged");
  ASSERT_TRUE(Send(&sender, 1));
  ASSERT_TRUE(Send(&sender, 2));

  // The writer of the file: its own mapping of the channel's queue.
  const Channel& channel = *sender.channel();
  const QueueLayout layout = QueueLayoutForChannel(config->message(), channel);
  auto memory = QueueMemory::Open(ShmEventLoop::ShmPath(&channel), layout, 0600,
                                  "/damaged (the test's writer)");
  ASSERT_TRUE(memory.ok()) << memory.status();
  const internal::QueueView view((*memory)->base(), layout);
  // A complete registration of the unrelated process, check word and all.
  const uint64_t owner = internal::OwnerWord(static_cast<uint32_t>(unrelated),
                                             static_cast<uint32_t>(unrelated));
  internal::WatcherSlot& slot = view.watcher(0);
  slot.pid.store(unrelated);
  slot.priority.store(1);
  slot.check.store(internal::WatcherCheck(owner, unrelated, 1));
  slot.owner.store(owner);
  // The message that the next send replaces, sent an hour from now.
  const uint32_t replaced = internal::Entry::Message(view.entry_for(0).load());
  view.message_header(replaced).monotonic_sent_time.store(
      monotonic_clock::now().time_since_epoch().count() +
      int64_t{3600} * 1000000000);

  bool sent = false;
  uint32_t refused = 0;
  uint32_t impossible = 0;
  int damaged_channel = -1;
  for (int i = 0; i < static_cast<int>(config->message().channels()->size());
       ++i) {
    if (config->message().channels()->Get(i) == &channel) damaged_channel = i;
  }
  ASSERT_GE(damaged_channel, 0);
  TimerHandler* send = loop.AddTimer([&]() { sent = Send(&sender, 3); });
  loop.MakeWatcher("/aos", [&](const timing::Report& report) {
    if (report.name()->string_view() != "sending" ||
        report.senders() == nullptr) {
      return;
    }
    for (const timing::Sender* entry : *report.senders()) {
      if (entry->channel_index() != damaged_channel) continue;
      refused += entry->refused_wakeups();
      impossible += entry->impossible_sent_times();
    }
    if (refused > 0 && impossible > 0) loop.Exit();
  });
  bool gave_up = false;
  TimerHandler* give_up = loop.AddTimer([&]() {
    gave_up = true;
    loop.Exit();
  });
  loop.OnRun([&]() {
    send->Schedule(loop.monotonic_now());
    give_up->Schedule(loop.monotonic_now() + std::chrono::seconds(60));
  });
  ::testing::internal::CaptureStderr();
  (void)loop.Run();
  const std::string said = ::testing::internal::GetCapturedStderr();

  EXPECT_FALSE(gave_up) << "no report counted the damage in 60 s: refused "
                        << refused << ", impossible " << impossible;
  EXPECT_TRUE(sent) << "the send over the damaged message failed";
  EXPECT_GE(refused, 1u);
  EXPECT_EQ(impossible, 1u);
  EXPECT_THAT(said, HasSubstr("not signalling watcher slot 0"));
  EXPECT_THAT(said, HasSubstr("future"));
  int status;
  EXPECT_EQ(waitpid(unrelated, &status, WNOHANG), 0)
      << "the unrelated process died (signalled by the sender?)";
  kill(unrelated, SIGKILL);
  ASSERT_EQ(testing::WaitForChild(unrelated, &status), "");
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  slot.owner.store(0);
}

}  // namespace
}  // namespace aos::ipc_lib
