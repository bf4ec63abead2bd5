// The logger on real shared memory, when it falls behind: senders never
// wait for it; it counts the messages it missed and the log says so.
#include <atomic>
#include <chrono>
#include <thread>

#include "aos/configuration.h"
#include "aos/events/logging/log_file_reader.h"
#include "aos/events/logging/logger.h"
#include "aos/events/shm_event_loop.h"
#include "aos/testing/path.h"
#include "aos/testing/wait_until.h"
#include "gtest/gtest.h"

namespace aos::logging {
namespace {

// Keeps 100 ms of messages: 100 at 1 kHz.
constexpr char kConfig[] = R"({
  "channels": [
    {"name": "/fast", "type": "aos.testing.TestMessage", "frequency": 1000,
     "max_size": 64, "channel_storage_duration": 100000000}
  ]
})";

TEST(LoggerShmTest, CountsWhatItMissesWhenItFallsBehind) {
  FLAGS_shm_base = aos::testing::TestTempDir() + "/shm";
  auto config = configuration::ReadConfigFromJson(kConfig);
  ASSERT_TRUE(config.ok()) << config.status();
  const Channel* fast = config->message().channels()->Get(0);
  const std::string path = aos::testing::TestTempDir() + "/behind.mcap";

  ShmEventLoop loop(&config->message(), "aos_logger");
  loop.SkipTimingReport();
  auto writer = McapWriter::Create(path, {});
  ASSERT_TRUE(writer.ok());
  auto logger = Logger::Make(&loop, std::move(*writer), {});
  ASSERT_TRUE(logger.ok()) << logger.status();

  // The logger records message 0, then stalls in a callback of its own loop
  // while another thread sends 500 more, one every ~1.2 ms (over ten times
  // what the channel keeps): most are overwritten before it reads them. The
  // stall lasts until all are sent, however slow this machine is.
  std::unique_ptr<RawSender> first = loop.MakeRawSender(fast);
  const char payload[8] = {};
  std::atomic<bool> stalled = false;
  std::atomic<bool> sent_all = false;
  TimerHandler* stall = loop.AddTimer([&]() {
    stalled = true;
    aos::testing::WaitUntil([&]() { return sent_all.load(); },
                            std::chrono::seconds(60),
                            "the sender to send all 500 messages");
  });
  TimerHandler* done = loop.AddTimer([&]() {
    if (sent_all) loop.Exit();
  });
  loop.OnRun([&]() {
    ASSERT_EQ(first->Send(payload, sizeof(payload)), RawSender::Error::kOk);
    stall->Schedule(loop.monotonic_now() + std::chrono::milliseconds(50));
    done->Schedule(loop.monotonic_now() + std::chrono::milliseconds(100),
                   std::chrono::milliseconds(100));
  });

  ShmEventLoop sender_loop(&config->message(), "sender");
  sender_loop.SkipTimingReport();
  std::unique_ptr<RawSender> sender = sender_loop.MakeRawSender(fast);
  int send_errors = 0;
  std::thread thread([&]() {
    aos::testing::WaitUntil([&]() { return stalled.load(); },
                            std::chrono::seconds(60),
                            "the logger's loop to stall");
    for (int i = 0; i < 500; ++i) {
      if (sender->Send(payload, sizeof(payload)) != RawSender::Error::kOk) {
        ++send_errors;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(1200));
    }
    sent_all = true;
  });
  loop.Run();
  thread.join();
  ASSERT_TRUE(sent_all) << "the sender did not finish within 60 s";
  ASSERT_EQ(send_errors, 0);
  // The last sends may still be unwatched when `done` stops the loop: as
  // aos_logger does, they are delivered before the log is finished.
  loop.DeliverRemainingMessages();
  ASSERT_TRUE((*logger)->Finish().ok());

  // Every message is either recorded or counted as missed.
  EXPECT_GT((*logger)->lost_messages(), 0u);
  EXPECT_EQ((*logger)->recorded_messages() + (*logger)->lost_messages(), 501u);
  auto log = LogFileReader::Open(path);
  ASSERT_TRUE(log.ok()) << log.status();
  int read = 0;
  while ((*log)->Next().has_value()) ++read;
  EXPECT_EQ(static_cast<uint64_t>(read), (*logger)->recorded_messages());
  ASSERT_EQ((*log)->lost_messages().size(), 1u);
  EXPECT_EQ((*log)->lost_messages().begin()->second,
            (*logger)->lost_messages());
}

}  // namespace
}  // namespace aos::logging
