#include "aos/events/event_loop_param_test.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "aos/events/event_loop_bfbs_generated.h"
#include "aos/events/event_loop_generated.h"
#include "aos/testing/path.h"
#include "aos/testing/test_message_bfbs_generated.h"
#include "aos/testing/test_message_generated.h"
#include "aos/testing/test_reply_bfbs_generated.h"
#include "aos/testing/test_reply_generated.h"
#include "gflags/gflags.h"
#include "gmock/gmock.h"

DECLARE_bool(die_on_malloc);
DECLARE_int32(timing_report_ms);

namespace aos::testing {
namespace {

using aos::testing::TestMessage;
using aos::testing::TestReply;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kConfig = R"({
  "channels": [
    { "name": "/aos", "type": "aos.timing.Report", "frequency": 50,
      "max_size": 16384, "num_senders": 20 },
    { "name": "/test", "type": "aos.testing.TestMessage", "frequency": 1000, "max_size": 64 },
    { "name": "/test", "type": "aos.testing.TestReply", "frequency": 1000, "max_size": 64 },
    { "name": "/slow", "type": "aos.testing.TestMessage", "frequency": 2, "max_size": 64,
      "channel_storage_duration": 1000000000 },
    { "name": "/lossy", "type": "aos.testing.TestMessage", "frequency": 20, "max_size": 64,
      "channel_storage_duration": 100000000 },
    { "name": "/odd", "type": "aos.testing.TestMessage", "frequency": 1000, "max_size": 29 },
    { "name": "/long", "type": "aos.testing.TestMessage", "frequency": 100, "max_size": 64,
      "channel_storage_duration": 10000000000 }
  ]
})";

// Two nodes, as AOS's suite has them: "me" sends /test; "them" sends
// /test_forward, forwarded to "me", and /test_noforward, read only there.
constexpr std::string_view kTwoNodeConfig = R"({
  "channels": [
    { "name": "/me/aos", "type": "aos.timing.Report", "source_node": "me",
      "frequency": 50, "max_size": 16384, "num_senders": 20 },
    { "name": "/them/aos", "type": "aos.timing.Report", "source_node": "them",
      "frequency": 50, "max_size": 16384, "num_senders": 20 },
    { "name": "/test", "type": "aos.testing.TestMessage", "source_node": "me",
      "frequency": 1000, "max_size": 64 },
    { "name": "/test_forward", "type": "aos.testing.TestMessage",
      "source_node": "them", "frequency": 1000, "max_size": 64,
      "destination_nodes": [ { "name": "me" } ] },
    { "name": "/test_noforward", "type": "aos.testing.TestMessage",
      "source_node": "them", "frequency": 1000, "max_size": 64 }
  ],
  "maps": [
    { "match": { "name": "/aos*", "source_node": "me" },
      "rename": { "name": "/me/aos" } },
    { "match": { "name": "/aos*", "source_node": "them" },
      "rename": { "name": "/them/aos" } }
  ],
  "nodes": [
    { "name": "me", "hostname": "myhostname" },
    { "name": "them", "hostname": "themhostname" }
  ]
})";

// `json` flattened with the suite's types' schemas embedded, as aos_config
// makes configs (SendJson needs them).
FlatbufferDetachedBuffer<Configuration> SuiteConfig(std::string_view json) {
  const std::string directory = TestTempDir();
  auto write = [&](const std::string& name, const void* data, size_t size) {
    const std::string path = directory + "/" + name;
    std::ofstream(path, std::ios::binary)
        .write(static_cast<const char*>(data),
               static_cast<std::streamsize>(size));
    return path;
  };
  configuration::ReadConfigOptions options;
  options.embed_schemas = true;
  options.schema_paths = {
      write("test_message.bfbs", TestMessageBinarySchema::data(),
            TestMessageBinarySchema::size()),
      write("test_reply.bfbs", TestReplyBinarySchema::data(),
            TestReplyBinarySchema::size()),
      write("report.bfbs", timing::ReportBinarySchema::data(),
            timing::ReportBinarySchema::size())};
  const std::string path =
      write("event_loop_param_test.json", json.data(), json.size());
  auto config = configuration::ReadConfig(path, options);
  CHECK(config.ok()) << config.status().message();
  return std::move(config).value();
}

// Sends a TestMessage with `value`.
RawSender::Error SendPing(Sender<TestMessage>* sender, int value) {
  auto builder = sender->MakeBuilder();
  TestMessage::Builder ping = builder.MakeBuilder<TestMessage>();
  ping.add_value(value);
  return builder.Send(ping.Finish());
}

// A finished TestMessage with `value`, to send raw.
FlatbufferDetachedBuffer<TestMessage> Ping(int value) {
  flatbuffers::FlatBufferBuilder fbb;
  TestMessage::Builder ping(fbb);
  ping.add_value(value);
  fbb.Finish(ping.Finish());
  return FlatbufferDetachedBuffer<TestMessage>(fbb.Release());
}

// How many messages `channel` keeps: frequency x storage duration.
int QueueSize(const Configuration& config, const Channel& channel) {
  return static_cast<int>(
      configuration::ChannelStorageDurationNs(config, channel) *
      channel.frequency() / 1000000000);
}

monotonic_clock::duration StorageDuration(const Configuration& config,
                                          const Channel& channel) {
  return std::chrono::nanoseconds(
      configuration::ChannelStorageDurationNs(config, channel));
}

// The context where there is no message: outside callbacks (with the
// loop's boot), or a fetcher's before its first fetch (no boot), as AOS
// leaves them.
void ExpectNoMessage(const Context& context, const UUID& boot) {
  EXPECT_EQ(context.monotonic_event_time, monotonic_clock::min_time);
  EXPECT_EQ(context.realtime_event_time, realtime_clock::min_time);
  EXPECT_EQ(context.monotonic_remote_time, monotonic_clock::min_time);
  EXPECT_EQ(context.realtime_remote_time, realtime_clock::min_time);
  EXPECT_EQ(context.monotonic_remote_transmit_time, monotonic_clock::min_time);
  EXPECT_EQ(context.queue_index, Context::kInvalidQueueIndex);
  EXPECT_EQ(context.remote_queue_index, Context::kInvalidQueueIndex);
  EXPECT_EQ(context.source_boot_uuid, boot);
  EXPECT_EQ(context.size, 0u);
  EXPECT_EQ(context.data, nullptr);
  EXPECT_EQ(context.buffer_index, -1);
  EXPECT_TRUE(context.origins.empty());
  EXPECT_EQ(context.origins.dropped(), 0u);
}

// The context of a timer or phased loop call, or of OnRun, without its
// event time.
void ExpectTimerEvent(const Context& context, const UUID& boot) {
  Context without_time = context;
  EXPECT_NE(context.monotonic_event_time, monotonic_clock::min_time);
  without_time.monotonic_event_time = monotonic_clock::min_time;
  ExpectNoMessage(without_time, boot);
}

// The context of a message sent on this node (not forwarded): its remote
// fields are its own, and `data` is null only for a no-arg watcher.
void ExpectLocalMessage(const Context& context, const UUID& boot,
                        bool with_data = true) {
  EXPECT_NE(context.monotonic_event_time, monotonic_clock::min_time);
  EXPECT_NE(context.realtime_event_time, realtime_clock::min_time);
  EXPECT_EQ(context.monotonic_remote_time, context.monotonic_event_time);
  EXPECT_EQ(context.realtime_remote_time, context.realtime_event_time);
  EXPECT_EQ(context.monotonic_remote_transmit_time, monotonic_clock::min_time);
  EXPECT_NE(context.queue_index, Context::kInvalidQueueIndex);
  EXPECT_EQ(context.remote_queue_index, context.queue_index);
  EXPECT_EQ(context.source_boot_uuid, boot);
  EXPECT_GT(context.size, 0u);
  EXPECT_EQ(context.data != nullptr, with_data);
  EXPECT_EQ(context.buffer_index, -1);
}

}  // namespace

EventLoopTestFactory::EventLoopTestFactory() : config_(SuiteConfig(kConfig)) {}
EventLoopTestFactory::~EventLoopTestFactory() = default;

void EventLoopTestFactory::EnableNodes(std::string_view my_node) {
  config_ = SuiteConfig(kTwoNodeConfig);
  my_node_ = configuration::GetNode(config_.message(), my_node);
  CHECK(my_node_ != nullptr) << "no node " << my_node << " in the suite";
  OnConfigurationChanged();
}

namespace {

TEST_P(AbstractEventLoopTest, FetchGetsTheLatestMessageOnce) {
  auto loop = Make("sender");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  EXPECT_FALSE(fetcher.Fetch());
  EXPECT_EQ(fetcher.get(), nullptr);
  for (int i = 1; i <= 3; ++i)
    ASSERT_EQ(SendPing(&sender, i), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 3);
  EXPECT_FALSE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 3);
}

// AOS: FetchNext
TEST_P(AbstractEventLoopTest, FetchNextReadsEveryMessageInOrder) {
  auto loop = Make("sender");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  for (int i = 1; i <= 5; ++i)
    ASSERT_EQ(SendPing(&sender, i), RawSender::Error::kOk);
  std::vector<int> values;
  std::vector<uint32_t> indices;
  while (fetcher.FetchNext()) {
    values.push_back(fetcher->value());
    indices.push_back(fetcher.context().queue_index);
  }
  EXPECT_THAT(values, ElementsAre(1, 2, 3, 4, 5));
  for (size_t i = 1; i < indices.size(); ++i)
    EXPECT_EQ(indices[i], indices[i - 1] + 1);
  // A message sent later is next; Fetch after FetchNext gets nothing newer.
  ASSERT_EQ(SendPing(&sender, 6), RawSender::Error::kOk);
  EXPECT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 6);
  EXPECT_FALSE(fetcher.Fetch());
}

TEST_P(AbstractEventLoopTest, FetchNextAfterFetchContinuesFromThere) {
  auto loop = Make("sender");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  for (int i = 1; i <= 3; ++i)
    EXPECT_EQ(SendPing(&sender, i), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 3);
  EXPECT_FALSE(fetcher.FetchNext());
  EXPECT_EQ(SendPing(&sender, 4), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 4);
}

TEST_P(AbstractEventLoopTest, WatcherFiresOncePerMessageInOrder) {
  auto sender_loop = Make("sender");
  auto watcher_loop = Make("watcher");
  Sender<TestMessage> sender = sender_loop->MakeSender<TestMessage>("/test");
  std::vector<int> seen;
  // Real loops start in their own threads: send once the watcher runs.
  std::atomic<bool> watching{false};
  watcher_loop->OnRun([&]() { watching = true; });
  watcher_loop->MakeWatcher("/test", [&](const TestMessage& ping) {
    seen.push_back(ping.value());
    if (ping.value() == 10) watcher_loop->Exit();
  });
  // Exactly 10, so that the last one is the one that exits.
  int next = 0;
  TimerHandler* timer = nullptr;
  timer = sender_loop->AddTimer([&]() {
    if (!watching) return;
    ASSERT_EQ(SendPing(&sender, ++next), RawSender::Error::kOk);
    if (next == 10) timer->Disable();
  });
  sender_loop->OnRun([&]() {
    timer->Schedule(sender_loop->monotonic_now(), milliseconds(1));
  });
  Run();
  EXPECT_THAT(seen, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
}

// Exit() from a watcher ends Run() once that handler returns: messages
// already waiting in the same wakeup are not delivered in that run.
TEST_P(AbstractEventLoopTest, ExitFromAWatcherStopsDeliveryAtOnce) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  std::vector<int> seen;
  seen.reserve(8);
  loop->MakeWatcher("/test", [&](const TestMessage& ping) {
    seen.push_back(ping.value());
    if (ping.value() == 2) loop->Exit();
  });
  // All five wait together: sent in one callback of the watcher's loop.
  TimerHandler* send = loop->AddTimer([&]() {
    for (int value = 1; value <= 5; ++value) {
      ASSERT_EQ(SendPing(&sender, value), RawSender::Error::kOk);
    }
  });
  loop->OnRun([&]() { send->Schedule(loop->monotonic_now()); });
  Run();
  EXPECT_THAT(seen, ElementsAre(1, 2));
}

TEST_P(AbstractEventLoopTest, WatcherGetsOnlyMessagesSentOnceRunning) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  ASSERT_EQ(SendPing(&sender, 1), RawSender::Error::kOk);
  std::vector<int> seen;
  loop->MakeWatcher("/test", [&](const TestMessage& ping) {
    seen.push_back(ping.value());
    loop->Exit();
  });
  loop->OnRun(
      [&]() { EXPECT_EQ(SendPing(&sender, 2), RawSender::Error::kOk); });
  Run();
  EXPECT_THAT(seen, ElementsAre(2));
}

// Messages of several channels waiting together are delivered in the order
// they were sent, not channel by channel (and not in the order the watchers
// were made), as AOS does: every implementation agrees.
TEST_P(AbstractEventLoopTest, WatchersOfSeveralChannelsGetMessagesInSendOrder) {
  auto loop = Make("loop");
  Sender<TestMessage> message_sender = loop->MakeSender<TestMessage>("/test");
  Sender<TestReply> reply_sender = loop->MakeSender<TestReply>("/test");
  std::vector<std::string> seen;
  // The TestReply watcher is made first.
  loop->MakeWatcher("/test", [&](const TestReply& reply) {
    seen.push_back("reply " + std::to_string(reply.value()));
  });
  loop->MakeWatcher("/test", [&](const TestMessage& message) {
    seen.push_back("message " + std::to_string(message.value()));
    if (message.value() == 2) loop->Exit();
  });
  auto send_reply = [&](int value) {
    auto builder = reply_sender.MakeBuilder();
    TestReply::Builder reply = builder.MakeBuilder<TestReply>();
    reply.add_value(value);
    builder.CheckOk(builder.Send(reply.Finish()));
  };
  // All sent before the loop delivers anything.
  loop->OnRun([&]() {
    EXPECT_EQ(SendPing(&message_sender, 1), RawSender::Error::kOk);
    send_reply(1);
    EXPECT_EQ(SendPing(&message_sender, 2), RawSender::Error::kOk);
  });
  Run();
  EXPECT_THAT(seen, ElementsAre("message 1", "reply 1", "message 2"));
}

TEST_P(AbstractEventLoopTest, NoArgAndRawWatchers) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Sender<TestReply> pong_sender = loop->MakeSender<TestReply>("/test");
  int no_arg_calls = 0;
  size_t raw_size = 0;
  loop->MakeNoArgWatcher<TestMessage>("/test", [&]() { ++no_arg_calls; });
  loop->MakeRawWatcher(loop->GetChannel<TestReply>("/test"),
                       [&](const Context& context, const void* data) {
                         raw_size = context.size;
                         EXPECT_EQ(data, context.data);
                         loop->Exit();
                       });
  loop->OnRun([&]() {
    EXPECT_EQ(SendPing(&sender, 1), RawSender::Error::kOk);
    auto builder = pong_sender.MakeBuilder();
    builder.CheckOk(builder.Send(builder.MakeBuilder<TestReply>().Finish()));
  });
  Run();
  EXPECT_EQ(no_arg_calls, 1);
  EXPECT_GT(raw_size, 0u);
}

TEST_P(AbstractEventLoopTest, ContextDescribesTheMessage) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Context seen;
  loop->MakeWatcher("/test", [&](const TestMessage&) {
    seen = loop->context();
    loop->Exit();
  });
  loop->OnRun(
      [&]() { EXPECT_EQ(SendPing(&sender, 7), RawSender::Error::kOk); });
  Run();
  RawSender* raw = sender.raw();
  EXPECT_EQ(seen.monotonic_event_time, raw->monotonic_sent_time());
  EXPECT_EQ(seen.realtime_event_time, raw->realtime_sent_time());
  EXPECT_EQ(seen.monotonic_remote_time, seen.monotonic_event_time);
  EXPECT_EQ(seen.realtime_remote_time, seen.realtime_event_time);
  EXPECT_EQ(seen.queue_index, raw->sent_queue_index());
  EXPECT_EQ(seen.remote_queue_index, seen.queue_index);
  EXPECT_GT(seen.size, 0u);
  EXPECT_LE(seen.size, 64u);
  EXPECT_NE(seen.monotonic_event_time, monotonic_clock::min_time);
  EXPECT_EQ(seen.source_boot_uuid, loop->boot_uuid());
  EXPECT_FALSE(seen.source_boot_uuid.IsZero());
}

// A timer called after a watcher gets a timer's context: nothing of the
// message the watcher had (its path origins included) is left in it, nor
// in the context once the timer returned.
TEST_P(AbstractEventLoopTest, ATimerAfterAWatcherHasNothingOfTheMessage) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Context in_watcher, in_timer;
  monotonic_clock::time_point scheduled;
  TimerHandler* after = loop->AddTimer([&]() {
    in_timer = loop->context();
    loop->Exit();
  });
  loop->MakeWatcher("/test", [&](const TestMessage&) {
    in_watcher = loop->context();
    scheduled = loop->monotonic_now() + milliseconds(1);
    after->Schedule(scheduled);
  });
  // Sent from a timer: the message carries that timer as its origin.
  TimerHandler* send = loop->AddTimer(
      [&]() { EXPECT_EQ(SendPing(&sender, 3), RawSender::Error::kOk); });
  loop->OnRun(
      [&]() { send->Schedule(loop->monotonic_now() + milliseconds(1)); });
  Run();
  ASSERT_FALSE(in_watcher.origins.empty());
  ASSERT_NE(in_watcher.queue_index, Context::kInvalidQueueIndex);
  EXPECT_EQ(in_timer.monotonic_event_time, scheduled);
  ExpectTimerEvent(in_timer, loop->boot_uuid());
  ExpectNoMessage(loop->context(), loop->boot_uuid());
}

// What the message bridge does: a message re-sent with where it was first
// sent keeps that, for watchers and fetchers alike; once the watcher
// returned, the loop's context is empty again.
// AOS: RawRemoteTimes (its remote transmit time is always min_time here)
TEST_P(AbstractEventLoopTest, ForwardedMessageKeepsItsRemoteOrigin) {
  auto loop = Make("loop");
  std::unique_ptr<RawSender> sender =
      loop->MakeRawSender(loop->GetChannel<TestMessage>("/test"));
  std::unique_ptr<RawFetcher> fetcher =
      loop->MakeRawFetcher(loop->GetChannel<TestMessage>("/test"));
  RemoteOrigin origin;
  origin.monotonic_remote_time =
      monotonic_clock::time_point(std::chrono::seconds(1234));
  origin.realtime_remote_time =
      realtime_clock::time_point(std::chrono::seconds(5678));
  origin.remote_queue_index = 41;
  origin.source_boot_uuid =
      UUID::Parse("00112233-4455-6677-8899-aabbccddeeff").value();
  Context seen;
  loop->MakeRawWatcher(loop->GetChannel<TestMessage>("/test"),
                       [&](const Context& context, const void*) {
                         seen = context;
                         loop->Exit();
                       });
  const uint8_t payload[8] = {8, 0, 0, 0, 4, 0, 4, 0};
  loop->OnRun([&]() {
    EXPECT_EQ(sender->Send(payload, sizeof(payload), origin),
              RawSender::Error::kOk);
  });
  Run();
  EXPECT_EQ(seen.monotonic_remote_time, origin.monotonic_remote_time);
  EXPECT_EQ(seen.realtime_remote_time, origin.realtime_remote_time);
  EXPECT_EQ(seen.remote_queue_index, 41u);
  EXPECT_EQ(seen.source_boot_uuid, origin.source_boot_uuid);
  EXPECT_EQ(seen.queue_index, sender->sent_queue_index());
  EXPECT_EQ(seen.monotonic_event_time, sender->monotonic_sent_time());
  EXPECT_EQ(seen.size, sizeof(payload));
  ASSERT_TRUE(fetcher->Fetch());
  EXPECT_EQ(fetcher->context().source_boot_uuid, origin.source_boot_uuid);
  EXPECT_EQ(fetcher->context().remote_queue_index, 41u);
  EXPECT_EQ(fetcher->context().monotonic_remote_time,
            origin.monotonic_remote_time);
  EXPECT_EQ(fetcher->context().realtime_remote_time,
            origin.realtime_remote_time);
  EXPECT_EQ(sender->timing().count, 1u);
  ExpectNoMessage(loop->context(), loop->boot_uuid());
}

// AOS: CheckTimerDisabled
TEST_P(AbstractEventLoopTest, OneShotTimerFiresOnceAtItsTime) {
  auto loop = Make("loop");
  int calls = 0;
  monotonic_clock::time_point scheduled;
  TimerHandler* timer = loop->AddTimer([&]() {
    ++calls;
    EXPECT_EQ(loop->context().monotonic_event_time, scheduled);
    EXPECT_GE(loop->monotonic_now(), scheduled);
  });
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  loop->OnRun([&]() {
    EXPECT_TRUE(timer->IsDisabled());
    scheduled = loop->monotonic_now() + milliseconds(5);
    timer->Schedule(scheduled);
    EXPECT_FALSE(timer->IsDisabled());
    stop->Schedule(loop->monotonic_now() + milliseconds(50));
  });
  Run();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(timer->IsDisabled());
}

// Timers that are due together (the loop was busy when they came due) run
// in the order they came due, not the order they were made or scheduled;
// the tests below that end on a timer rely on it.
TEST_P(AbstractEventLoopTest, TimersDueTogetherRunInTheOrderTheyCameDue) {
  auto loop = Make("loop");
  std::vector<std::string> calls;
  calls.reserve(4);
  TimerHandler* later = loop->AddTimer([&]() {
    calls.push_back("later");
    loop->Exit();
  });
  TimerHandler* sooner = loop->AddTimer([&]() { calls.push_back("sooner"); });
  // Keeps a real loop busy past both due times (no effect on simulated
  // time, where they come due one after the other anyway).
  TimerHandler* busy = loop->AddTimer([&]() {
    calls.push_back("busy");
    std::this_thread::sleep_for(milliseconds(30));
  });
  loop->OnRun([&]() {
    const monotonic_clock::time_point now = loop->monotonic_now();
    later->Schedule(now + milliseconds(20));
    sooner->Schedule(now + milliseconds(10));
    busy->Schedule(now);
  });
  Run();
  EXPECT_THAT(calls, ElementsAre("busy", "sooner", "later"));
}

// Long enough for anything a test waits for, however loaded the machine.
constexpr monotonic_clock::duration kDeadline = seconds(60);

// Ends Run() with a failure naming `what` if the test has not ended it
// kDeadline after `loop` started: a behaviour that never comes fails the
// test instead of hanging it.
void FailUnlessDoneWithinTheDeadline(EventLoop* loop, std::string what) {
  TimerHandler* give_up = loop->AddTimer([loop, what]() {
    ADD_FAILURE() << "not within " << kDeadline.count() / 1000000000
                  << " s: " << what;
    loop->Exit();
  });
  loop->OnRun([loop, give_up]() {
    give_up->Schedule(loop->monotonic_now() + kDeadline);
  });
}

// A timer's calls as its handler saw them.
struct TimerCalls {
  // Records the call running now, checking it did not come early.
  void Record(EventLoop* loop, const TimerHandler* timer) {
    times.push_back(loop->context().monotonic_event_time);
    missed.push_back(timer->timing().missed_cycles);
    EXPECT_GE(loop->monotonic_now(), times.back()) << "called early";
  }

  // The time each call was scheduled for.
  std::vector<monotonic_clock::time_point> times;
  // The timer's missed_cycles during each call.
  std::vector<uint32_t> missed;
};

// The first point of the grid `base` + k * `period`, k >= 0, at or after
// `time`. For a `time` after a call's own grid point, that is where a
// repeating timer whose handler returned at `time` continues.
monotonic_clock::time_point FirstGridPointFrom(
    monotonic_clock::time_point time, monotonic_clock::time_point base,
    monotonic_clock::duration period) {
  if (time <= base) return base;
  return base + ((time - base + period - nanoseconds(1)) / period) * period;
}

// Checks what holds of a repeating timer's calls however late the loop ran:
// the first is at `base`, each is on the grid `base` + k * `period` and
// after the one before, and (unless `missed_kept` is false: timing reports
// reset the figures while the calls ran) missed_cycles counted exactly the
// grid points skipped before each call.
void ExpectCallsOnTheGrid(const TimerCalls& calls,
                          monotonic_clock::time_point base,
                          monotonic_clock::duration period,
                          bool missed_kept = true) {
  ASSERT_FALSE(calls.times.empty());
  EXPECT_EQ(calls.times[0], base);
  for (size_t i = 0; i < calls.times.size(); ++i) {
    const monotonic_clock::duration since = calls.times[i] - base;
    EXPECT_EQ(since % period, monotonic_clock::duration::zero())
        << "call " << i << " is off the grid";
    if (i > 0) {
      EXPECT_GT(calls.times[i], calls.times[i - 1]) << "call " << i;
    }
    if (missed_kept) {
      EXPECT_EQ(static_cast<int64_t>(calls.missed[i]),
                since / period - static_cast<int64_t>(i))
          << "call " << i;
    }
  }
}

// Bounds when a handler of a repeating timer or phased loop returned,
// however late the loop ran, and so where its next call must be.
class ReturnWitness {
 public:
  // Before the loop runs.
  explicit ReturnWitness(EventLoop* loop)
      : loop_(loop), timer_(loop->AddTimer([this]() {
          returned_before_ = loop_->monotonic_now();
        })) {}
  // Its timer holds `this`.
  ReturnWitness(const ReturnWitness&) = delete;
  ReturnWitness& operator=(const ReturnWitness&) = delete;

  // Last in the handler: it returns after now, and before a timer due now
  // runs (which is before any timer due later).
  void Note() {
    returned_after_ = loop_->monotonic_now();
    timer_->Schedule(returned_after_);
  }

  // Checks that `call`, on the grid `base` + k * `period`, is the first
  // grid point at or after the noted handler returned, the grid point of
  // that handler's own call having passed before Note(). The two bounds are
  // normally microseconds apart, and the same in simulation.
  void ExpectFirstGridPointAfterTheReturn(
      monotonic_clock::time_point call, monotonic_clock::time_point base,
      monotonic_clock::duration period) const {
    ASSERT_LE(returned_after_, returned_before_) << "the witness did not run";
    EXPECT_GE(call, FirstGridPointFrom(returned_after_, base, period))
        << "a grid point passed during the handler was not skipped";
    EXPECT_LE(call, FirstGridPointFrom(returned_before_, base, period))
        << "a grid point not yet passed was skipped";
  }

 private:
  EventLoop* const loop_;
  TimerHandler* const timer_;
  monotonic_clock::time_point returned_after_;
  monotonic_clock::time_point returned_before_;
};

TEST_P(AbstractEventLoopTest, RepeatingTimerServesEachPeriodInTurn) {
  constexpr monotonic_clock::duration kPeriod = milliseconds(10);
  auto loop = Make("loop");
  TimerCalls calls;
  monotonic_clock::time_point base;
  TimerHandler* timer = nullptr;
  timer = loop->AddTimer([&]() {
    calls.Record(loop.get(), timer);
    if (calls.times.size() == 5) loop->Exit();
  });
  FailUnlessDoneWithinTheDeadline(loop.get(), "5 calls");
  loop->OnRun([&]() {
    base = loop->monotonic_now() + milliseconds(1);
    timer->Schedule(base, kPeriod);
  });
  Run();
  ASSERT_EQ(calls.times.size(), 5u);
  // A real loop may be late for some periods: they are skipped and counted.
  ExpectCallsOnTheGrid(calls, base, kPeriod);
  EXPECT_EQ(timer->timing().count, 5u);
  if (time_is_simulated()) {
    for (size_t i = 0; i < calls.times.size(); ++i) {
      EXPECT_EQ(calls.times[i], base + i * kPeriod);
    }
  }
}

TEST_P(AbstractEventLoopTest, TimerCanBeRescheduledAndDisabledInItsHandler) {
  auto loop = Make("loop");
  TimerCalls calls;
  monotonic_clock::time_point one_shot_time;
  monotonic_clock::time_point new_base;
  TimerHandler* timer = nullptr;
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  timer = loop->AddTimer([&]() {
    calls.Record(loop.get(), timer);
    if (calls.times.size() == 1) {
      // Replace the 1 ms period with a one-shot 2 ms later.
      one_shot_time = loop->monotonic_now() + milliseconds(2);
      timer->Schedule(one_shot_time);
    } else if (calls.times.size() == 2) {
      new_base = loop->monotonic_now() + milliseconds(1);
      timer->Schedule(new_base, milliseconds(1));
    } else if (calls.times.size() == 4) {
      timer->Disable();
      EXPECT_TRUE(timer->IsDisabled());
      // Were the timer still on, its next call (due within 1 ms of this
      // handler's return) would come before the stop.
      stop->Schedule(loop->monotonic_now() + milliseconds(20));
    }
  });
  FailUnlessDoneWithinTheDeadline(loop.get(), "4 calls");
  loop->OnRun(
      [&]() { timer->Schedule(loop->monotonic_now(), milliseconds(1)); });
  Run();
  ASSERT_EQ(calls.times.size(), 4u);
  // Each new schedule replaced the one before, however late the calls were.
  EXPECT_EQ(calls.times[1], one_shot_time);
  EXPECT_EQ(calls.times[2], new_base);
  EXPECT_EQ((calls.times[3] - new_base) % milliseconds(1),
            monotonic_clock::duration::zero());
  EXPECT_GT(calls.times[3], calls.times[2]);
}

// A handler that reschedules its own timer for a time already passed is
// called again at once: the new schedule's waking is not taken for the one
// just handled.
TEST_P(AbstractEventLoopTest, TimerRescheduledInItsHandlerForAPassedTimeRuns) {
  // Far longer than the deadline: a call a period later never comes.
  constexpr monotonic_clock::duration kPeriod = std::chrono::hours(1);
  auto loop = Make("loop");
  int one_shot_calls = 0;
  int repeating_calls = 0;
  TimerHandler* one_shot = nullptr;
  TimerHandler* repeating = nullptr;
  // Once both have had their 3 calls, an extra call (due at once) would
  // still come before the stop.
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  auto stop_when_done = [&]() {
    if (one_shot_calls == 3 && repeating_calls == 3) {
      stop->Schedule(loop->monotonic_now() + milliseconds(20));
    }
  };
  // The call's own scheduled time has passed (times before the clock's
  // epoch may not be given).
  one_shot = loop->AddTimer([&]() {
    if (++one_shot_calls < 3) {
      one_shot->Schedule(loop->context().monotonic_event_time);
    }
    stop_when_done();
  });
  repeating = loop->AddTimer([&]() {
    if (++repeating_calls < 3) {
      repeating->Schedule(loop->context().monotonic_event_time, kPeriod);
    }
    stop_when_done();
  });
  FailUnlessDoneWithinTheDeadline(loop.get(),
                                  "3 calls of the one-shot and the repeating");
  loop->OnRun([&]() {
    one_shot->Schedule(loop->monotonic_now());
    repeating->Schedule(loop->monotonic_now(), kPeriod);
  });
  Run();
  EXPECT_EQ(one_shot_calls, 3);
  EXPECT_EQ(repeating_calls, 3);
}

// A timer that came due while the loop was busy, then was rescheduled by
// another handler before its own turn, waits for its new time.
TEST_P(AbstractEventLoopTest, TimerRescheduledAfterItFiredWaitsForItsNewTime) {
  auto loop = Make("loop");
  TimerCalls calls;
  monotonic_clock::time_point base;
  TimerHandler* timer = nullptr;
  timer = loop->AddTimer([&]() {
    calls.Record(loop.get(), timer);
    loop->Exit();
  });
  TimerHandler* rescheduler =
      loop->AddTimer([&]() { timer->Schedule(base + milliseconds(30)); });
  TimerHandler* hog =
      loop->AddTimer([&]() { factory_->Stall(milliseconds(10)); });
  loop->OnRun([&]() {
    base = loop->monotonic_now() + milliseconds(5);
    // Both come due during the hog's stall, the rescheduler first.
    hog->Schedule(base);
    rescheduler->Schedule(base + milliseconds(1));
    timer->Schedule(base + milliseconds(2));
  });
  Run();
  EXPECT_THAT(calls.times, ElementsAre(base + milliseconds(30)));
}

// The handler overruns 3.5 periods: the periods that pass meanwhile are
// missed, and the next call comes at the first one after the handler
// returned, never before.
TEST_P(AbstractEventLoopTest, RepeatingTimerMissesThePeriodsItsHandlerOverran) {
  constexpr monotonic_clock::duration kPeriod = milliseconds(20);
  auto loop = Make("loop");
  TimerCalls calls;
  monotonic_clock::time_point base;
  ReturnWitness second_call(loop.get());
  TimerHandler* timer = nullptr;
  timer = loop->AddTimer([&]() {
    calls.Record(loop.get(), timer);
    if (calls.times.size() == 2) {
      factory_->Stall(milliseconds(70));
      second_call.Note();
    }
    if (calls.times.size() == 3) loop->Exit();
  });
  FailUnlessDoneWithinTheDeadline(loop.get(), "3 calls");
  loop->OnRun([&]() {
    base = loop->monotonic_now() + milliseconds(1);
    timer->Schedule(base, kPeriod);
  });
  Run();
  ASSERT_EQ(calls.times.size(), 3u);
  ExpectCallsOnTheGrid(calls, base, kPeriod);
  // The stall spans at least 3 grid points, however late the loop ran.
  EXPECT_GE(calls.missed[2] - calls.missed[1], 3u);
  second_call.ExpectFirstGridPointAfterTheReturn(calls.times[2], base, kPeriod);
  if (time_is_simulated()) {
    // Calls at 0 and 20 ms; 40, 60 and 80 ms pass during the stall.
    EXPECT_THAT(calls.times, ElementsAre(base, base + milliseconds(20),
                                         base + milliseconds(100)));
    EXPECT_EQ(timer->timing().missed_cycles, 3u);
  }
}

// Another handler keeps the loop busy: the timer's call comes late, the
// periods that passed meanwhile are missed, the next call is at the first
// one after the late call returned.
TEST_P(AbstractEventLoopTest, RepeatingTimerMissesThePeriodsTheLoopWasBusy) {
  constexpr monotonic_clock::duration kPeriod = milliseconds(20);
  auto loop = Make("loop");
  TimerCalls calls;
  monotonic_clock::time_point base;
  ReturnWitness second_call(loop.get());
  TimerHandler* timer = nullptr;
  timer = loop->AddTimer([&]() {
    calls.Record(loop.get(), timer);
    if (calls.times.size() == 2) second_call.Note();
    if (calls.times.size() == 3) loop->Exit();
  });
  // Due before the second call whenever the first ran, so it runs first.
  TimerHandler* hog =
      loop->AddTimer([&]() { factory_->Stall(milliseconds(75)); });
  FailUnlessDoneWithinTheDeadline(loop.get(), "3 calls");
  loop->OnRun([&]() {
    base = loop->monotonic_now() + milliseconds(1);
    timer->Schedule(base, kPeriod);
    hog->Schedule(base + milliseconds(10));
  });
  Run();
  ASSERT_EQ(calls.times.size(), 3u);
  ExpectCallsOnTheGrid(calls, base, kPeriod);
  // The hog runs from 10 ms at the earliest until 85 ms at the earliest:
  // the grid points 40, 60 and 80 ms are missed however late the loop ran.
  EXPECT_GE(calls.times[2], base + milliseconds(100));
  EXPECT_GE(calls.missed[2], 3u);
  second_call.ExpectFirstGridPointAfterTheReturn(calls.times[2], base, kPeriod);
  if (time_is_simulated()) {
    // The 20 ms call runs at 85 ms; 40, 60 and 80 ms are missed.
    EXPECT_THAT(calls.times, ElementsAre(base, base + milliseconds(20),
                                         base + milliseconds(100)));
    EXPECT_EQ(timer->timing().missed_cycles, 3u);
  }
}

// A phased loop's calls as its handler saw them.
struct PhasedCalls {
  void Record(EventLoop* loop, const PhasedLoopHandler* phased,
              int cycles_elapsed) {
    cycles.push_back(cycles_elapsed);
    times.push_back(loop->context().monotonic_event_time);
    nows.push_back(loop->monotonic_now());
    missed.push_back(phased->timing().missed_cycles);
  }

  std::vector<int> cycles;
  // The boundary each call was scheduled for.
  std::vector<monotonic_clock::time_point> times;
  // When each handler ran.
  std::vector<monotonic_clock::time_point> nows;
  // The phased loop's missed_cycles during each call (its own included).
  std::vector<uint32_t> missed;
};

// Checks what holds of a phased loop's calls however late the loop ran:
// each call counts at least one cycle, and all but one of each call's are
// missed cycles (unless `missed_kept` is false: timing reports reset the
// figures while the calls ran). If `interval` is given, all calls were on
// its grid: each is on a boundary after the one before, and the cycles
// counted so far are the boundaries from the first call's to the last one
// passed when the handler was called, at least up to its own.
void ExpectCyclesAddUp(
    const PhasedCalls& calls,
    std::optional<monotonic_clock::duration> interval = std::nullopt,
    bool missed_kept = true) {
  int64_t total = 0;
  for (size_t i = 0; i < calls.cycles.size(); ++i) {
    EXPECT_GE(calls.cycles[i], 1) << "call " << i;
    total += calls.cycles[i];
    if (missed_kept) {
      EXPECT_EQ(static_cast<int64_t>(calls.missed[i]),
                total - static_cast<int64_t>(i + 1))
          << "call " << i;
    }
    if (!interval.has_value()) continue;
    const monotonic_clock::duration since = calls.times[i] - calls.times[0];
    EXPECT_EQ(since % *interval, monotonic_clock::duration::zero())
        << "call " << i << " is off the grid";
    if (i > 0) {
      EXPECT_GT(calls.times[i], calls.times[i - 1]) << "call " << i;
    }
    EXPECT_GE(total, since / *interval + 1) << "call " << i;
    EXPECT_LE(total, (calls.nows[i] - calls.times[0]) / *interval + 1)
        << "call " << i;
  }
}

TEST_P(AbstractEventLoopTest, PhasedLoopRunsOnItsPhase) {
  auto loop = Make("loop");
  PhasedCalls calls;
  PhasedLoopHandler* phased = nullptr;
  phased = loop->AddPhasedLoop(
      [&](int cycles_elapsed) {
        calls.Record(loop.get(), phased, cycles_elapsed);
        const int64_t ns = calls.times.back().time_since_epoch().count();
        EXPECT_EQ(ns % 10000000, 3000000) << "not on the 10 ms phase + 3 ms";
        if (calls.cycles.size() == 4) loop->Exit();
      },
      milliseconds(10), milliseconds(3));
  phased->set_name("phased");
  FailUnlessDoneWithinTheDeadline(loop.get(), "4 calls");
  Run();
  ASSERT_EQ(calls.cycles.size(), 4u);
  // A real loop late for a boundary counts it in the next call's cycles.
  ExpectCyclesAddUp(calls, milliseconds(10));
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 1, 1, 1));
  }
  EXPECT_EQ(phased->name(), "phased");
}

TEST_P(AbstractEventLoopTest, RepeatingTimerIsEnabledInsideItsHandler) {
  auto loop = Make("loop");
  std::vector<bool> disabled;
  TimerHandler* timer = nullptr;
  timer = loop->AddTimer([&]() {
    disabled.push_back(timer->IsDisabled());
    if (disabled.size() == 2) loop->Exit();
  });
  TimerHandler* one_shot = nullptr;
  bool one_shot_disabled = false;
  one_shot =
      loop->AddTimer([&]() { one_shot_disabled = one_shot->IsDisabled(); });
  loop->OnRun([&]() {
    timer->Schedule(loop->monotonic_now(), milliseconds(1));
    one_shot->Schedule(loop->monotonic_now());
  });
  Run();
  EXPECT_THAT(disabled, ElementsAre(false, false));
  EXPECT_TRUE(one_shot_disabled);
}

// set_interval_and_offset from the handler with a time (AOS's way of
// keeping the rhythm): the next call is on the new grid, after that time.
TEST_P(AbstractEventLoopTest, PhasedLoopMovesToANewIntervalOnItsGrid) {
  auto loop = Make("loop");
  PhasedCalls calls;
  PhasedLoopHandler* phased = nullptr;
  phased = loop->AddPhasedLoop(
      [&](int cycles_elapsed) {
        calls.Record(loop.get(), phased, cycles_elapsed);
        if (calls.cycles.size() == 2) {
          phased->set_interval_and_offset(milliseconds(30), milliseconds(7),
                                          loop->monotonic_now());
        }
        if (calls.cycles.size() == 4) loop->Exit();
      },
      milliseconds(10));
  FailUnlessDoneWithinTheDeadline(loop.get(), "4 calls");
  Run();
  ASSERT_EQ(calls.times.size(), 4u);
  ExpectCyclesAddUp(calls);
  std::vector<int64_t> ns;
  for (const monotonic_clock::time_point time : calls.times) {
    ns.push_back(time.time_since_epoch().count());
  }
  EXPECT_EQ(ns[0] % 10000000, 0);
  EXPECT_EQ(ns[1] % 10000000, 0);
  EXPECT_GT(ns[1], ns[0]);
  EXPECT_EQ(ns[2] % 30000000, 7000000);
  EXPECT_GT(calls.times[2], calls.nows[1]);
  EXPECT_EQ(ns[3] % 30000000, 7000000);
  EXPECT_GT(ns[3], ns[2]);
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 1, 1, 1));
    EXPECT_EQ(ns[3] - ns[2], 30000000);
  }
}

// Outside the handler a new grid takes effect at Reschedule(), AOS's way:
// the next call is at the first new boundary after the time given.
// (Without a time in set_interval_and_offset, AOS's arithmetic may count 0
// for that call: PhasedScheduleTest.)
TEST_P(AbstractEventLoopTest, PhasedLoopRescheduleAppliesANewGridNow) {
  auto loop = Make("loop");
  PhasedCalls calls;
  PhasedLoopHandler* phased = nullptr;
  monotonic_clock::time_point rescheduled_at = monotonic_clock::min_time;
  phased = loop->AddPhasedLoop(
      [&](int cycles_elapsed) {
        // A loop started just before a 50 ms boundary has a call on the old
        // grid before the change: not what this test is about.
        if (rescheduled_at == monotonic_clock::min_time) return;
        calls.Record(loop.get(), phased, cycles_elapsed);
        if (calls.cycles.size() == 3) loop->Exit();
      },
      milliseconds(50));
  TimerHandler* change = loop->AddTimer([&]() {
    rescheduled_at = loop->monotonic_now();
    // The same time to both: the next call counts 1 (AOS's recipe).
    phased->set_interval_and_offset(milliseconds(20), milliseconds(3),
                                    rescheduled_at);
    phased->Reschedule(rescheduled_at);
  });
  loop->OnRun([&]() {
    change->Schedule(loop->context().monotonic_event_time + milliseconds(1));
  });
  FailUnlessDoneWithinTheDeadline(loop.get(), "3 calls");
  Run();
  ASSERT_EQ(calls.times.size(), 3u);
  for (const monotonic_clock::time_point time : calls.times) {
    EXPECT_EQ(time.time_since_epoch().count() % 20000000, 3000000);
  }
  EXPECT_GT(calls.times[0], rescheduled_at);
  EXPECT_LE(calls.times[0], rescheduled_at + milliseconds(20));
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 1, 1));
    EXPECT_EQ(calls.times[1] - calls.times[0], milliseconds(20));
  }
}

// A handler that runs past the next boundary is called again at once for
// it, with every boundary passed meanwhile counted (AOS's phased loop).
TEST_P(AbstractEventLoopTest, PhasedLoopCountsCyclesElapsedAfterAStall) {
  constexpr monotonic_clock::duration kInterval = milliseconds(20);
  auto loop = Make("loop");
  PhasedCalls calls;
  PhasedLoopHandler* phased = nullptr;
  phased = loop->AddPhasedLoop(
      [&](int cycles_elapsed) {
        calls.Record(loop.get(), phased, cycles_elapsed);
        // Stall 3.5 intervals in the second call.
        if (calls.cycles.size() == 2) factory_->Stall(milliseconds(70));
        if (calls.cycles.size() == 3) loop->Exit();
      },
      kInterval);
  FailUnlessDoneWithinTheDeadline(loop.get(), "3 calls");
  Run();
  ASSERT_EQ(calls.cycles.size(), 3u);
  ExpectCyclesAddUp(calls, kInterval);
  // The third call serves the first boundary after the second call started
  // (at most one interval after it), and counts every boundary from it to
  // the one after the stall: at least 3, however late the loop ran.
  EXPECT_GT(calls.times[2], calls.times[1]);
  EXPECT_LE(calls.times[2], calls.nows[1] + kInterval);
  EXPECT_GE(calls.cycles[2], 3);
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 1, 3));
    EXPECT_EQ(calls.times[2], calls.times[1] + kInterval);
    EXPECT_EQ(calls.nows[2], calls.nows[1] + milliseconds(70));
    EXPECT_EQ(phased->timing().missed_cycles, 2u);
  }
}

TEST_P(AbstractEventLoopTest, OnRunCallbacksRunFirstInOrder) {
  auto loop = Make("loop");
  std::vector<std::string> order;
  TimerHandler* timer = loop->AddTimer([&]() {
    order.push_back("timer");
    loop->Exit();
  });
  loop->OnRun([&]() {
    EXPECT_TRUE(loop->is_running());
    order.push_back("first");
    timer->Schedule(loop->monotonic_now());
  });
  loop->OnRun([&]() { order.push_back("second"); });
  EXPECT_FALSE(loop->is_running());
  Run();
  EXPECT_THAT(order, ElementsAre("first", "second", "timer"));
}

TEST_P(AbstractEventLoopTest, ExitReturnsFromRun) {
  auto loop = Make("loop");
  int calls = 0;
  TimerHandler* timer = loop->AddTimer([&]() {
    if (++calls == 3) loop->Exit();
  });
  loop->OnRun(
      [&]() { timer->Schedule(loop->monotonic_now(), milliseconds(1)); });
  Run();
  EXPECT_EQ(calls, 3);
}

TEST_P(AbstractEventLoopTest,
       AFetcherThatFellBehindLearnsExactlyHowManyItLost) {
  auto loop = Make("loop");
  // /lossy keeps 2 messages for 100 ms.
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/lossy");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/lossy");
  ASSERT_EQ(SendPing(&sender, 1), RawSender::Error::kOk);
  ASSERT_EQ(SendPing(&sender, 2), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 1);
  for (int value = 3; value <= 6; value += 2) {
    factory_->Stall(milliseconds(150));
    ASSERT_EQ(SendPing(&sender, value), RawSender::Error::kOk);
    ASSERT_EQ(SendPing(&sender, value + 1), RawSender::Error::kOk);
  }
  // 2, 3 and 4 were overwritten before the fetcher got to them.
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 5);
  EXPECT_EQ(fetcher.context().queue_index, 4u);
  const RawFetcher* raw = loop->fetchers()[0];
  EXPECT_EQ(raw->timing().lost_messages, 3u);
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 6);
  EXPECT_EQ(raw->timing().lost_messages, 3u);
}

TEST_P(AbstractEventLoopTest, SendingTooFastIsRefusedAndCounted) {
  auto loop = Make("loop");
  // /slow keeps 2 messages per 1 s storage duration.
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/slow");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/slow");
  EXPECT_EQ(SendPing(&sender, 1), RawSender::Error::kOk);
  const monotonic_clock::time_point first_sent =
      sender.raw()->monotonic_sent_time();
  EXPECT_EQ(SendPing(&sender, 2), RawSender::Error::kOk);
  // The third would replace the first, sent less than 1 s before.
  const RawSender::Error third = SendPing(&sender, 3);
  if (loop->monotonic_now() - first_sent >= seconds(1)) {
    GTEST_SKIP() << "the machine held this thread for the whole storage "
                    "duration between the sends: nothing was too fast";
  }
  EXPECT_EQ(third, RawSender::Error::kMessagesSentTooFast);
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 2) << "the refused message must not be visible";
  const auto& timing = sender.raw()->timing();
  EXPECT_EQ(timing.count, 2u);
  EXPECT_EQ(timing.error_counts[static_cast<size_t>(
                timing::SendError::MESSAGE_SENT_TOO_FAST)],
            1u);
}

// AOS accepts any positive max_size: a channel of 29 bytes gets a 32-byte
// buffer, so messages built backwards from its end are 8-byte aligned, and
// still carries messages of up to 29 bytes.
TEST_P(AbstractEventLoopTest, AnOddMaxSizeStillBuildsAlignedMessages) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/odd");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/odd");
  RawSender* raw = sender.raw();
  EXPECT_EQ(raw->size(), 32u);
  EXPECT_EQ((reinterpret_cast<uintptr_t>(raw->data()) + raw->size()) % 8, 0u);
  ASSERT_EQ(SendPing(&sender, 42), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 42);
  // A raw message of exactly max_size bytes arrives whole.
  std::vector<uint8_t> bytes(29);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i);
  ASSERT_EQ(raw->Send(bytes.data(), bytes.size()), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.FetchNext());
  ASSERT_EQ(fetcher.context().size, 29u);
  EXPECT_EQ(memcmp(fetcher.context().data, bytes.data(), bytes.size()), 0);
  EXPECT_DEATH((void)raw->Send(bytes.data(), 30),
               "a 30 byte message on .*/odd.* is larger than its max_size 29");
}

TEST_P(AbstractEventLoopTest, WritingOutsideTheBufferIsCaughtByTheRedzone) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  RawSender* raw = sender.raw();
  // A buggy writer scribbles just before the buffer.
  static_cast<uint8_t*>(raw->data())[-1] ^= 0xff;
  EXPECT_EQ(raw->Send(8), RawSender::Error::kInvalidRedzone);
  EXPECT_FALSE(fetcher.Fetch());
  EXPECT_EQ(raw->timing().error_counts[static_cast<size_t>(
                timing::SendError::INVALID_REDZONE)],
            1u);
  // The sender recovers.
  EXPECT_EQ(SendPing(&sender, 1), RawSender::Error::kOk);
}

// ---------------------------------------------------------------- AOS's
// behaviour where a name is AOS's (docs/porting_from_aos.md).

// A new fetcher's FetchNext() (and FetchNextIf()) reads only what is sent
// after it was made; Fetch() still gets the latest message whenever it was
// sent, once.
// AOS: FetchNextAfterSend, FetchNextIfAfterSend, FetchDataFromBeforeCreation
TEST_P(AbstractEventLoopTest, FetchNextStartsAfterTheFetcherWasMade) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  ASSERT_EQ(SendPing(&sender, 1), RawSender::Error::kOk);
  ASSERT_EQ(SendPing(&sender, 2), RawSender::Error::kOk);
  Fetcher<TestMessage> next = loop->MakeFetcher<TestMessage>("/test");
  Fetcher<TestMessage> latest = loop->MakeFetcher<TestMessage>("/test");
  EXPECT_FALSE(next.FetchNext());
  EXPECT_FALSE(next.FetchNextIf([](const Context&) { return true; }));
  EXPECT_EQ(next.get(), nullptr);
  ASSERT_TRUE(latest.Fetch());
  EXPECT_EQ(latest->value(), 2);
  EXPECT_FALSE(latest.Fetch());
  ASSERT_EQ(SendPing(&sender, 3), RawSender::Error::kOk);
  ASSERT_EQ(SendPing(&sender, 4), RawSender::Error::kOk);
  ASSERT_TRUE(next.FetchNext());
  EXPECT_EQ(next->value(), 3);
  ASSERT_TRUE(next.FetchNext());
  EXPECT_EQ(next->value(), 4);
  EXPECT_FALSE(next.FetchNext());
  // After a Fetch(), FetchNext() continues after the fetched message.
  ASSERT_TRUE(latest.FetchNext());
  EXPECT_EQ(latest->value(), 3);
}

// During OnRun the context is a timer event at the time the loop started,
// so Schedule(context().monotonic_event_time + x) works there.
TEST_P(AbstractEventLoopTest, OnRunContextIsATimerEventAtTheStart) {
  auto loop = Make("loop");
  std::optional<Context> on_run;
  monotonic_clock::time_point now_in_on_run = monotonic_clock::min_time;
  monotonic_clock::time_point scheduled = monotonic_clock::min_time;
  monotonic_clock::time_point called = monotonic_clock::min_time;
  TimerHandler* timer = loop->AddTimer([&]() {
    called = loop->context().monotonic_event_time;
    loop->Exit();
  });
  loop->OnRun([&]() {
    on_run = loop->context();
    now_in_on_run = loop->monotonic_now();
    scheduled = loop->context().monotonic_event_time + milliseconds(10);
    timer->Schedule(scheduled);
  });
  Run();
  ASSERT_TRUE(on_run.has_value());
  EXPECT_NE(on_run->monotonic_event_time, monotonic_clock::min_time);
  EXPECT_LE(on_run->monotonic_event_time, now_in_on_run);
  if (time_is_simulated()) {
    EXPECT_EQ(on_run->monotonic_event_time, now_in_on_run);
  }
  EXPECT_EQ(on_run->data, nullptr);
  EXPECT_EQ(on_run->queue_index, Context::kInvalidQueueIndex);
  EXPECT_EQ(on_run->source_boot_uuid, loop->boot_uuid());
  EXPECT_EQ(called, scheduled);
}

// A timer's and a phased loop's context: AOS's fields.
TEST_P(AbstractEventLoopTest, TimerAndPhasedLoopContextsAreAos) {
  auto loop = Make("loop");
  std::vector<Context> contexts;
  contexts.reserve(4);
  monotonic_clock::time_point scheduled = monotonic_clock::min_time;
  TimerHandler* timer =
      loop->AddTimer([&]() { contexts.push_back(loop->context()); });
  loop->AddPhasedLoop(
      [&](int) {
        if (contexts.size() == 1) {
          contexts.push_back(loop->context());
          loop->Exit();
        }
      },
      milliseconds(20));
  loop->OnRun([&]() {
    scheduled = loop->monotonic_now() + milliseconds(5);
    timer->Schedule(scheduled);
  });
  Run();
  ASSERT_EQ(contexts.size(), 2u);
  EXPECT_EQ(contexts[0].monotonic_event_time, scheduled);
  for (const Context& context : contexts) {
    EXPECT_EQ(context.monotonic_remote_time, monotonic_clock::min_time);
    EXPECT_EQ(context.realtime_event_time, realtime_clock::min_time);
    EXPECT_EQ(context.realtime_remote_time, realtime_clock::min_time);
    EXPECT_EQ(context.monotonic_remote_transmit_time,
              monotonic_clock::min_time);
    EXPECT_EQ(context.queue_index, Context::kInvalidQueueIndex);
    EXPECT_EQ(context.remote_queue_index, Context::kInvalidQueueIndex);
    EXPECT_EQ(context.source_boot_uuid, loop->boot_uuid());
    EXPECT_EQ(context.data, nullptr);
    EXPECT_EQ(context.size, 0u);
    EXPECT_EQ(context.buffer_index, -1);
  }
}

// AOS's non-fatal probes: GetChannel is null for a channel the config
// lacks; TryMake* give invalid objects instead of ending the program.
TEST_P(AbstractEventLoopTest, ProbingForChannelsDoesNotEndTheProgram) {
  auto loop = Make("loop");
  EXPECT_EQ(loop->GetChannel<TestMessage>("/nope"), nullptr);
  EXPECT_FALSE(loop->HasChannel<TestMessage>("/nope"));
  EXPECT_NE(loop->GetChannel<TestMessage>("/test"), nullptr);
  EXPECT_TRUE(loop->HasChannel<TestMessage>("/test"));
  EXPECT_FALSE(loop->HasChannel<TestReply>("/slow"));
  Sender<TestMessage> missing = loop->TryMakeSender<TestMessage>("/nope");
  EXPECT_FALSE(missing.valid());
  Fetcher<TestMessage> no_fetcher = loop->TryMakeFetcher<TestMessage>("/nope");
  EXPECT_FALSE(no_fetcher.valid());
  Sender<TestMessage> sender = loop->TryMakeSender<TestMessage>("/test");
  ASSERT_TRUE(sender.valid());
  Fetcher<TestMessage> fetcher = loop->TryMakeFetcher<TestMessage>("/test");
  ASSERT_TRUE(fetcher.valid());
  ASSERT_EQ(SendPing(&sender, 7), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 7);
}

// Builders write fields equal to their default (AOS's ForceDefaults), are
// movable and default-constructible, and the sender remembers its last
// send.
TEST_P(AbstractEventLoopTest, BuildersAreAosBuilders) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  Sender<TestMessage>::Builder builder;
  builder = sender.MakeBuilder();
  Sender<TestMessage>::Builder moved = std::move(builder);
  TestMessage::Builder message = moved.MakeBuilder<TestMessage>();
  message.add_value(0);
  ASSERT_EQ(moved.Send(message.Finish()), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_TRUE(reinterpret_cast<const flatbuffers::Table*>(fetcher.get())
                  ->GetOptionalFieldOffset(TestMessage::VT_VALUE) != 0)
      << "a value equal to the default was left out";
  EXPECT_EQ(sender.monotonic_sent_time(),
            fetcher.context().monotonic_event_time);
  EXPECT_EQ(sender.realtime_sent_time(), fetcher.context().realtime_event_time);
  EXPECT_EQ(sender.sent_queue_index(), fetcher.context().queue_index);
  // A new builder once the first has sent.
  ASSERT_EQ(SendPing(&sender, 5), RawSender::Error::kOk);
  sender.CheckOk(RawSender::Error::kOk);
}

// A prebuilt flatbuffer is copied; one a Builder of this sender detached is
// sent in place.
TEST_P(AbstractEventLoopTest, SendingPrebuiltAndDetachedMessages) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  flatbuffers::FlatBufferBuilder fbb;
  TestMessage::Builder prebuilt(fbb);
  prebuilt.add_value(11);
  fbb.Finish(prebuilt.Finish());
  const FlatbufferDetachedBuffer<TestMessage> copy(fbb.Release());
  ASSERT_EQ(sender.Send(copy), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 11);
  FlatbufferDetachedBuffer<TestMessage> detached = [&]() {
    auto builder = sender.MakeBuilder();
    TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
    message.add_value(12);
    return builder.Detach(message.Finish());
  }();
  EXPECT_EQ(detached.message().value(), 12);
  ASSERT_EQ(sender.SendDetached(std::move(detached)), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 12);
  // The buffer is free again.
  ASSERT_EQ(SendPing(&sender, 13), RawSender::Error::kOk);
}

// JSON with the channel's schema; bad JSON is an error naming the channel,
// never a crash.
// AOS: BasicSendJson, InvalidSendJson (AOS's SendJson dies on bad JSON; ours
// returns the error: docs/event_loop.md)
TEST_P(AbstractEventLoopTest, SendJsonParsesWithTheChannelsSchema) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  const absl::Status sent = sender.SendJson(R"({ "value": 971 })");
  ASSERT_TRUE(sent.ok()) << sent.message();
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 971);
  const absl::Status malformed = sender.SendJson(R"({ "value": )");
  EXPECT_FALSE(malformed.ok());
  EXPECT_THAT(std::string(malformed.message()),
              HasSubstr("/test (type aos.testing.TestMessage)"));
  const absl::Status unknown = sender.SendJson(R"({ "colour": 1 })");
  EXPECT_FALSE(unknown.ok());
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("colour"));
  EXPECT_FALSE(fetcher.FetchNext());
}

// is_running() may be read from another thread while the loop runs.
TEST_P(AbstractEventLoopTest, IsRunningIsReadableFromAnotherThread) {
  auto loop = Make("loop");
  std::atomic<bool> seen_running{false};
  std::atomic<bool> stop{false};
  EXPECT_FALSE(loop->is_running());
  std::thread observer([&]() {
    while (!stop) {
      if (loop->is_running()) seen_running = true;
      std::this_thread::yield();
    }
  });
  TimerHandler* check = loop->AddTimer([&]() {
    if (seen_running || time_is_simulated()) loop->Exit();
  });
  loop->OnRun(
      [&]() { check->Schedule(loop->monotonic_now(), milliseconds(1)); });
  Run();
  stop = true;
  observer.join();
  EXPECT_TRUE(seen_running || time_is_simulated());
}

// FetchIf/FetchNextIf take a message only if the predicate, shown its
// context without the data, says so; otherwise it stays next.
TEST_P(AbstractEventLoopTest, FetchIfAndFetchNextIfAskFirst) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  ASSERT_EQ(SendPing(&sender, 1), RawSender::Error::kOk);
  ASSERT_EQ(SendPing(&sender, 2), RawSender::Error::kOk);
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  Fetcher<TestMessage> latest = loop->MakeFetcher<TestMessage>("/test");
  std::vector<uint32_t> asked;
  auto refuse = [&](const Context& context) {
    asked.push_back(context.queue_index);
    EXPECT_EQ(context.data, nullptr);
    EXPECT_GT(context.size, 0u);
    return false;
  };
  EXPECT_FALSE(latest.FetchIf(refuse));
  EXPECT_EQ(latest.get(), nullptr);
  EXPECT_TRUE(latest.FetchIf([](const Context&) { return true; }));
  EXPECT_EQ(latest->value(), 2);
  ASSERT_EQ(SendPing(&sender, 3), RawSender::Error::kOk);
  ASSERT_EQ(SendPing(&sender, 4), RawSender::Error::kOk);
  EXPECT_FALSE(fetcher.FetchNextIf(refuse));
  EXPECT_FALSE(fetcher.FetchNextIf(refuse));  // The same one, still next.
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[1], asked[2]);
  EXPECT_TRUE(fetcher.FetchNextIf([](const Context&) { return true; }));
  EXPECT_EQ(fetcher->value(), 3);
  EXPECT_TRUE(fetcher.FetchNextIf([&](const Context& context) {
    return context.queue_index == fetcher.context().queue_index + 1;
  }));
  EXPECT_EQ(fetcher->value(), 4);
  EXPECT_FALSE(fetcher.FetchNextIf([](const Context&) { return true; }));
  // A copy outlives the next fetch.
  const FlatbufferDetachedBuffer<TestMessage> copy = fetcher.CopyFlatBuffer();
  ASSERT_EQ(SendPing(&sender, 5), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(copy.message().value(), 4);
}

// An ExitHandle ends Run() with its status; the first status wins.
// AOS: ExitHandleExitFailure
TEST_P(AbstractEventLoopTest, ExitHandleEndsRunWithItsStatus) {
  auto loop = Make("loop");
  std::unique_ptr<ExitHandle> handle = factory_->MakeExitHandle();
  loop->OnRun([&]() {
    handle->Exit(absl::InternalError("it broke"));
    handle->Exit();
  });
  const absl::Status failed = Run().status();
  EXPECT_EQ(failed.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(failed.message(), "it broke");
}

// AOS: ExitHandleExitSuccessful
TEST_P(AbstractEventLoopTest, ExitHandleSuccessIsOk) {
  auto loop = Make("loop");
  std::unique_ptr<ExitHandle> handle = factory_->MakeExitHandle();
  TimerHandler* timer = loop->AddTimer([&]() { handle->Exit(); });
  loop->OnRun([&]() { timer->Schedule(loop->monotonic_now()); });
  EXPECT_TRUE(Run().ok());
}

// Loops made after SetDefaultVersionString start with that version; their
// own SetVersionString wins.
TEST_P(AbstractEventLoopTest, DefaultVersionStringAppliesToLaterLoops) {
  auto before = Make("before");
  EventLoop::SetDefaultVersionString("default_version");
  auto after = Make("after");
  auto own = Make("own");
  own->SetVersionString("own_version");
  EventLoop::SetDefaultVersionString("");
  EXPECT_EQ(before->version_string(), "");
  EXPECT_EQ(after->version_string(), "default_version");
  EXPECT_EQ(own->version_string(), "own_version");
}

// Two messages under construction in one sender's buffer would overwrite
// each other: the second builder dies naming the channel.
TEST_P(AbstractEventLoopDeathTest, ASecondLiveBuilderDiesNamingTheChannel) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  EXPECT_DEATH(
      {
        auto first = sender.MakeBuilder();
        first.MakeBuilder<TestMessage>().Finish();
        auto second = sender.MakeBuilder();
        second.MakeBuilder<TestMessage>().Finish();
      },
      "a second message is being built on /test \\(type "
      "aos.testing.TestMessage\\)");
}

// An invalid Sender or Fetcher from TryMake* says why when used.
TEST_P(AbstractEventLoopDeathTest, UsingWhatTryMakeCouldNotMakeSaysWhy) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->TryMakeSender<TestMessage>("/nope");
  EXPECT_DEATH((void)SendPing(&sender, 1),
               "using a Sender that was not made: channel /nope of type "
               "aos.testing.TestMessage is not in the config");
  Fetcher<TestMessage> fetcher = loop->TryMakeFetcher<TestMessage>("/nope");
  EXPECT_DEATH(fetcher.Fetch(), "using a Fetcher that was not made");
}

// CheckOk's failure names the channel and the error, and allocates
// nothing on the way: inside a realtime callback the allocation guard
// would otherwise abort first, blaming an allocation.
TEST_P(AbstractEventLoopDeathTest, CheckOkNamesTheChannelAndTheError) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/slow");
  EXPECT_DEATH(sender.CheckOk(RawSender::Error::kMessagesSentTooFast),
               "/slow aos.testing.TestMessage: kMessagesSentTooFast: more "
               "than 2 messages in 1 s \\(the channel's frequency .+ "
               "channel_storage_duration\\); raise its \"frequency\"");
  EXPECT_DEATH(sender.CheckOk(RawSender::Error::kInvalidRedzone),
               "/slow aos.testing.TestMessage: kInvalidRedzone: something "
               "wrote outside the message buffer \\(past max_size 64\\)");
}

// The documented idiom in a realtime timer sending faster than the
// channel's frequency: the death names the channel, the error, the rate it
// tried and the config's limit, not an allocation the failure message made.
TEST_P(AbstractEventLoopDeathTest, CheckOkInARealtimeTimerSaysTheRealError) {
  if (!AllocationGuardAvailable()) {
    GTEST_SKIP() << "a sanitizer build owns malloc: allocations are not seen";
  }
  auto loop = Make("fast");
  loop->SkipTimingReport();
  loop->SetRuntimeRealtimePriority(1);
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/slow");
  TimerHandler* tick = loop->AddTimer([&]() {
    auto builder = sender.MakeBuilder();
    builder.CheckOk(builder.Send(builder.MakeBuilder<TestMessage>().Finish()));
  });
  tick->set_name("tick");
  loop->OnRun(
      [&]() { tick->Schedule(loop->monotonic_now(), milliseconds(5)); });
  EXPECT_DEATH(Run(),
               "/slow aos.testing.TestMessage: kMessagesSentTooFast: more "
               "than 2 messages in 1 s \\(the channel's frequency .+ "
               "channel_storage_duration\\); this sender sent [0-9.]+ a "
               "second \\([0-9.]+ ms after its previous message\\); raise "
               "its \"frequency\" in the config, or send less often");
}

// The same for a message too big for the channel, sent or built in a
// realtime callback: the size is said, not an allocation.
TEST_P(AbstractEventLoopDeathTest, OversizeInARealtimeTimerSaysTheSize) {
  if (!AllocationGuardAvailable()) {
    GTEST_SKIP() << "a sanitizer build owns malloc: allocations are not seen";
  }
  for (const bool build : {false, true}) {
    auto loop = Make(build ? "builder" : "sender");
    loop->SkipTimingReport();
    loop->SetRuntimeRealtimePriority(1);
    Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
    std::vector<uint8_t> big(65);
    const std::string text(100, 'x');
    TimerHandler* tick = loop->AddTimer([&]() {
      if (build) {
        auto builder = sender.MakeBuilder();
        builder.fbb()->CreateString(text);
      } else {
        (void)sender.Send(big.data(), big.size());
      }
    });
    loop->OnRun([&]() { tick->Schedule(loop->monotonic_now()); });
    EXPECT_DEATH(Run(),
                 "on /test \\(type aos.testing.TestMessage\\).*max_size 64; "
                 "raise max_size in the config");
  }
}

TEST_P(AbstractEventLoopDeathTest, OversizeMessagesAbortNamingTheChannel) {
  auto loop = Make("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  std::vector<uint8_t> big(65);
  EXPECT_DEATH(
      (void)sender.Send(big.data(), big.size()),
      "a 65 byte message on /test \\(type aos.testing.TestMessage\\) is "
      "larger than its max_size 64");
  EXPECT_DEATH(
      {
        auto builder = sender.MakeBuilder();
        builder.fbb()->CreateString(std::string(100, 'x'));
      },
      "on /test \\(type aos.testing.TestMessage\\).*max_size 64");
}

TEST_P(AbstractEventLoopDeathTest, UnknownChannelNamesItAndTheClosestOnes) {
  auto loop = Make("pinger");
  EXPECT_DEATH(
      loop->MakeSender<TestMessage>("/tset"),
      "channel /tset of type aos.testing.TestMessage is not in the config.*"
      "application pinger.*closest channels in the config: /test "
      "\\(aos.testing.TestMessage\\); /long");
}

TEST_P(AbstractEventLoopDeathTest, DestroyingALoopBeforeItsSenderAborts) {
  EXPECT_DEATH(
      {
        auto loop = Make("loop");
        Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
        loop.reset();
      },
      "event loop loop destroyed before its senders and fetchers; destroy "
      "them first: sender:/test \\(type aos.testing.TestMessage\\)");
}

// AOS: SenderInOnRun, WatcherInOnRun, NoArgWatcherInOnRun, FetcherInOnRun
TEST_P(AbstractEventLoopDeathTest, SetupAfterRunningAborts) {
  auto loop = Make("loop");
  loop->OnRun([&]() {
    EXPECT_DEATH(loop->AddTimer([]() {}),
                 "AddTimer must be called before the loop runs");
    EXPECT_DEATH(loop->MakeFetcher<TestMessage>("/test"),
                 "MakeFetcher must be called before");
    EXPECT_DEATH(loop->MakeSender<TestMessage>("/test"),
                 "MakeSender must be called before");
    EXPECT_DEATH(loop->MakeWatcher("/test", [](const TestMessage&) {}),
                 "MakeWatcher must be called before");
    EXPECT_DEATH(loop->MakeNoArgWatcher<TestMessage>("/test", []() {}),
                 "MakeWatcher must be called before");
    loop->Exit();
  });
  Run();
}

TEST_P(AbstractEventLoopTest, TimingReportDescribesTheLoop) {
  auto loop = Make("ping");
  auto reader = Make("reader");
  loop->SetVersionString("ping_version");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  loop->MakeWatcher("/test", [&](const TestReply&) {});
  int sent = 0;
  TimerHandler* timer = loop->AddTimer([&]() {
    EXPECT_EQ(SendPing(&sender, ++sent), RawSender::Error::kOk);
    fetcher.Fetch();
  });
  timer->set_name("ping");
  PhasedLoopHandler* phased =
      loop->AddPhasedLoop([](int) {}, milliseconds(100));
  phased->set_name("slow_phase");
  std::vector<std::string> report_names;
  std::vector<uint8_t> ping_report;
  // Made before anything runs, so it reads ping's first report however late
  // the reader starts (its watcher gets only reports sent once it runs, and
  // only wakes it).
  Fetcher<timing::Report> reports = reader->MakeFetcher<timing::Report>("/aos");
  reader->MakeNoArgWatcher<timing::Report>("/aos", [&]() {
    while (ping_report.empty() && reports.FetchNext()) {
      report_names.push_back(reports->name()->str());
      if (reports->name()->string_view() == "ping") {
        const auto* data = static_cast<const uint8_t*>(reports.context().data);
        ping_report.assign(data, data + reports.context().size);
        reader->Exit();
      }
    }
  });
  loop->OnRun(
      [&]() { timer->Schedule(loop->monotonic_now(), milliseconds(10)); });
  Run();

  ASSERT_FALSE(ping_report.empty());
  flatbuffers::Verifier verifier(ping_report.data(), ping_report.size());
  ASSERT_TRUE(verifier.VerifyBuffer<timing::Report>(nullptr));
  const timing::Report& report =
      *flatbuffers::GetRoot<timing::Report>(ping_report.data());
  EXPECT_EQ(report.name()->str(), "ping");
  EXPECT_EQ(report.version()->str(), "ping_version");
  EXPECT_EQ(report.pid(), loop->pid());
  EXPECT_LT(report.monotonic_start_time(), report.monotonic_end_time());
  EXPECT_EQ(report.dropped_entries(), 0u);
  EXPECT_EQ(report.dropped_histograms(), 0u);

  ASSERT_EQ(report.watchers()->size(), 1u);
  const Channel* pong = loop->GetChannel<TestReply>("/test");
  EXPECT_EQ(factory_->configuration()->channels()->Get(
                report.watchers()->Get(0)->channel_index()),
            pong);

  // Senders: /test TestMessage and the report's own /aos sender, whose send of
  // this report counts in the next one: this is the first, so none yet.
  ASSERT_EQ(report.senders()->size(), 2u);
  EXPECT_EQ(report.senders()->Get(1)->count(), 0u);
  const timing::Sender* ping_sender = report.senders()->Get(0);
  EXPECT_GT(ping_sender->count(), 0u);
  EXPECT_EQ(ping_sender->error_counts()->size(), timing::kSendErrorCount);
  EXPECT_EQ(ping_sender->size()->min(), ping_sender->size()->max());

  ASSERT_EQ(report.fetchers()->size(), 1u);
  EXPECT_EQ(report.fetchers()->Get(0)->count(), ping_sender->count());
  ASSERT_NE(report.fetchers()->Get(0)->latency_histogram(), nullptr);

  ASSERT_EQ(report.timers()->size(), 2u);
  EXPECT_EQ(report.timers()->Get(0)->name()->str(), "ping");
  EXPECT_EQ(report.timers()->Get(0)->count(), ping_sender->count());
  EXPECT_EQ(report.timers()->Get(1)->name()->str(), "timing_reports");
  EXPECT_EQ(report.timers()->Get(1)->count(), 1u);
  ASSERT_NE(report.timers()->Get(0)->wakeup_latency_histogram(), nullptr);
  EXPECT_EQ(report.timers()->Get(0)->wakeup_latency_histogram()->layout(), 1);

  ASSERT_EQ(report.phased_loops()->size(), 1u);
  EXPECT_EQ(report.phased_loops()->Get(0)->name()->str(), "slow_phase");
  EXPECT_GT(report.phased_loops()->Get(0)->count(), 0u);

  // The reader reports too, unless it ran too briefly; either way it is
  // named correctly.
  for (const std::string& name : report_names) {
    EXPECT_TRUE(name == "ping" || name == "reader") << name;
  }
}

TEST_P(AbstractEventLoopTest,
       AVersionTooLongForTheChannelMeansNoReportsNotACrash) {
  auto loop = Make("loop");
  loop->SetVersionString(std::string(20000, 'v'));
  int reports = 0;
  loop->MakeWatcher("/aos", [&](const timing::Report&) { ++reports; });
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  loop->OnRun(
      [&]() { stop->Schedule(loop->monotonic_now() + milliseconds(1200)); });
  Run();
  EXPECT_EQ(reports, 0);
}

TEST_P(AbstractEventLoopTest, SkipTimingReportSilencesOneLoop) {
  auto quiet = Make("quiet");
  auto reader = Make("reader");
  quiet->SkipTimingReport();
  // Made before anything runs: it sees every report, however late either
  // loop starts.
  Fetcher<timing::Report> reports = reader->MakeFetcher<timing::Report>("/aos");
  // Each loop is done 1.5 s after it started, after its first report would
  // have been sent (that timer came due first); the second one done ends
  // the test.
  std::atomic<int> done{0};
  for (EventLoop* loop : {quiet.get(), reader.get()}) {
    TimerHandler* timer = loop->AddTimer([loop, &done]() {
      if (++done == 2) loop->Exit();
    });
    loop->OnRun([loop, timer]() {
      timer->Schedule(loop->monotonic_now() + milliseconds(1500));
    });
  }
  Run();
  std::vector<std::string> names;
  while (reports.FetchNext()) names.push_back(reports->name()->str());
  EXPECT_THAT(names, Contains("reader"));
  EXPECT_THAT(names, Each("reader"));
}

// ---------------------------------------------------------------- AOS's
// conformance suite (its event_loop_param_test.cc), in our words: each test
// names the AOS cases it checks. Where AOS's used a loop it never ran
// (Make() beside MakePrimary()), so do these (MakeIdle()).

// Allocates on the heap in a way the compiler cannot leave out.
[[gnu::noinline]] void AllocateOnce() {
  static void* volatile kept;
  kept = malloc(24);
  free(kept);
}

// Calls `done` with every report published on /aos from before anything
// runs, in order, and its bytes, in `reader`'s callbacks; ends the run once
// it returns true, and fails it at the deadline. Made before anything runs,
// and destroyed before `reader`.
class ReportReader {
 public:
  using Done = std::function<bool(const timing::Report& report,
                                  std::span<const uint8_t> bytes)>;

  ReportReader(EventLoop* reader, Done done)
      : reports_(reader->MakeFetcher<timing::Report>("/aos")),
        done_(std::move(done)) {
    reader->MakeNoArgWatcher<timing::Report>("/aos", [this, reader]() {
      while (!finished_ && reports_.FetchNext()) {
        const auto* data = static_cast<const uint8_t*>(reports_.context().data);
        if (done_(*reports_, {data, reports_.context().size})) {
          finished_ = true;
          reader->Exit();
        }
      }
    });
    FailUnlessDoneWithinTheDeadline(reader, "the reports the test waits for");
  }

 private:
  Fetcher<timing::Report> reports_;
  Done done_;
  bool finished_ = false;
};

// A report kept after its fetcher moved on.
class KeptReport {
 public:
  void Keep(std::span<const uint8_t> bytes) {
    bytes_.assign(bytes.begin(), bytes.end());
  }
  bool empty() const { return bytes_.empty(); }
  const timing::Report& operator*() const {
    return *flatbuffers::GetRoot<timing::Report>(bytes_.data());
  }
  const timing::Report* operator->() const { return &**this; }

 private:
  std::vector<uint8_t> bytes_;
};

// The first report of the loop called `name` that `wanted` accepts, read as
// ReportReader reads them: the run ends when it comes.
class FirstReport : public KeptReport {
 public:
  FirstReport(EventLoop* reader, std::string name,
              std::function<bool(const timing::Report&)> wanted)
      : reader_(
            reader,
            [this, name = std::move(name), wanted = std::move(wanted)](
                const timing::Report& report, std::span<const uint8_t> bytes) {
              if (report.name()->string_view() != name || !wanted(report)) {
                return false;
              }
              Keep(bytes);
              return true;
            }) {}

 private:
  ReportReader reader_;
};

uint32_t TooFastCount(const timing::Sender& sender) {
  return sender.error_counts()
      ->Get(static_cast<size_t>(timing::SendError::MESSAGE_SENT_TOO_FAST))
      ->count();
}

// One sender of TestMessage on /test, in a loop the test never runs:
// AOS's cases send from such a loop (their Make()).
class IdleSender {
 public:
  explicit IdleSender(EventLoopTestFactory* factory)
      : loop_(factory->MakeIdleEventLoop("sender")),
        sender_(loop_->MakeSender<TestMessage>("/test")) {}

  // Sends a TestMessage with `value`.
  RawSender::Error Send(int value) { return SendPing(&sender_, value); }
  Sender<TestMessage>* operator->() { return &sender_; }

 private:
  std::unique_ptr<EventLoop> loop_;
  Sender<TestMessage> sender_;
};

// --- Watchers and senders.

// AOS: Basic
TEST_P(AbstractEventLoopTest, WatcherGetsWhatAnotherLoopSentInOnRun) {
  IdleSender sender(factory_.get());
  auto loop = Make("primary");
  bool on_run_ran = false;
  int seen = 0;
  loop->OnRun([&]() {
    on_run_ran = true;
    EXPECT_EQ(sender.Send(200), RawSender::Error::kOk);
  });
  loop->MakeWatcher("/test", [&](const TestMessage& message) {
    EXPECT_EQ(message.value(), 200);
    ++seen;
    loop->Exit();
  });
  EXPECT_FALSE(on_run_ran);
  Run();
  EXPECT_TRUE(on_run_ran);
  EXPECT_EQ(seen, 1);
}

// AOS: BasicFunction
TEST_P(AbstractEventLoopTest, WatcherMayBeAStdFunction) {
  IdleSender sender(factory_.get());
  auto loop = Make("primary");
  int value = 0;
  loop->MakeWatcher("/test", std::function<void(const TestMessage&)>(
                                 [&](const TestMessage& message) {
                                   value = message.value();
                                   loop->Exit();
                                 }));
  loop->OnRun([&]() { EXPECT_EQ(sender.Send(200), RawSender::Error::kOk); });
  Run();
  EXPECT_EQ(value, 200);
}

// A no-arg watcher sees the message's context without its data; a fetcher
// reads the message if it is wanted after all.
// AOS: NoArgNoData, BasicNoArg
TEST_P(AbstractEventLoopTest, NoArgWatcherHasNoDataAndAFetcherReadsIt) {
  IdleSender sender(factory_.get());
  auto loop = Make("primary");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  int value = 0;
  loop->MakeNoArgWatcher<TestMessage>("/test", [&]() {
    ExpectLocalMessage(loop->context(), loop->boot_uuid(), false);
    ASSERT_TRUE(fetcher.Fetch());
    value = fetcher->value();
    EXPECT_EQ(fetcher.context().queue_index, loop->context().queue_index);
    EXPECT_EQ(fetcher.context().size, loop->context().size);
    loop->Exit();
  });
  loop->OnRun([&]() { EXPECT_EQ(sender.Send(200), RawSender::Error::kOk); });
  Run();
  EXPECT_EQ(value, 200);
}

// Two senders of one channel reach its watcher. (AOS's Exit() from the
// first message still lets the second, waiting in the same wakeup, be
// delivered; ours ends delivery at once: docs/event_loop.md.)
// AOS: BasicTwoSenders
TEST_P(AbstractEventLoopTest, TwoSendersOfOneChannelReachItsWatcher) {
  auto sender_loop = MakeIdle("sender");
  auto loop = Make("primary");
  Sender<TestMessage> first = sender_loop->MakeSender<TestMessage>("/test");
  Sender<TestMessage> second = sender_loop->MakeSender<TestMessage>("/test");
  std::vector<int> values;
  loop->OnRun([&]() {
    EXPECT_EQ(SendPing(&first, 200), RawSender::Error::kOk);
    EXPECT_EQ(SendPing(&second, 201), RawSender::Error::kOk);
  });
  loop->MakeWatcher("/test", [&](const TestMessage& message) {
    values.push_back(message.value());
    if (values.size() == 2) loop->Exit();
  });
  Run();
  EXPECT_THAT(values, ElementsAre(200, 201));
}

// A detached message may be dropped, and another detached and sent later.
// AOS: BasicSendDetached
TEST_P(AbstractEventLoopTest, DetachedMessageSentLaterIsFetched) {
  IdleSender sender(factory_.get());
  auto loop = MakeIdle("fetcher");
  auto detach = [&](int value) {
    auto builder = sender->MakeBuilder();
    TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
    message.add_value(value);
    return builder.Detach(message.Finish());
  };
  FlatbufferDetachedBuffer<TestMessage> detached = detach(100);
  // Dropped unsent: its buffer is the sender's again.
  detached =
      FlatbufferDetachedBuffer<TestMessage>(flatbuffers::DetachedBuffer());
  detached = detach(200);
  sender->CheckOk(sender->SendDetached(std::move(detached)));
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 200);
}

// A message sent after the watcher was made but before its loop runs is
// not delivered; those sent in OnRun are.
// AOS: DoubleSendAtStartup
TEST_P(AbstractEventLoopTest, WatcherIgnoresWhatWasSentBeforeItsLoopRan) {
  IdleSender sender(factory_.get());
  auto loop = Make("primary");
  std::vector<int> values;
  loop->MakeWatcher("/test", [&](const TestMessage& message) {
    values.push_back(message.value());
    if (values.size() == 2) loop->Exit();
  });
  ASSERT_EQ(sender.Send(199), RawSender::Error::kOk);
  loop->OnRun([&]() {
    EXPECT_EQ(sender.Send(200), RawSender::Error::kOk);
    EXPECT_EQ(sender.Send(201), RawSender::Error::kOk);
  });
  Run();
  EXPECT_THAT(values, ElementsAre(200, 201));
}

// AOS: DoubleSendAfterStartup
TEST_P(AbstractEventLoopTest, WatcherIgnoresWhatWasSentBeforeItWasMade) {
  IdleSender sender(factory_.get());
  auto loop = Make("primary");
  ASSERT_EQ(sender.Send(200), RawSender::Error::kOk);
  ASSERT_EQ(sender.Send(201), RawSender::Error::kOk);
  std::vector<int> values;
  loop->MakeWatcher("/test", [&](const TestMessage& message) {
    values.push_back(message.value());
  });
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  loop->OnRun(
      [&]() { stop->Schedule(loop->monotonic_now() + milliseconds(20)); });
  Run();
  EXPECT_THAT(values, ::testing::IsEmpty());
}

// AOS: MultipleWatcherQuit
TEST_P(AbstractEventLoopTest, ExitFromOneOfSeveralWatchers) {
  IdleSender sender(factory_.get());
  auto loop = Make("primary");
  int replies = 0;
  int messages = 0;
  loop->MakeWatcher("/test", [&](const TestReply&) { ++replies; });
  loop->MakeWatcher("/test", [&](const TestMessage& message) {
    EXPECT_EQ(message.value(), 200);
    ++messages;
    loop->Exit();
  });
  loop->OnRun([&]() { EXPECT_EQ(sender.Send(200), RawSender::Error::kOk); });
  Run();
  EXPECT_EQ(messages, 1);
  EXPECT_EQ(replies, 0);
}

// AOS: FetcherAndWatcher, TwoFetcher
TEST_P(AbstractEventLoopTest, FetchersAndAWatcherMayShareAChannel) {
  auto loop = Make("loop");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  Fetcher<TestMessage> another = loop->MakeFetcher<TestMessage>("/test");
  loop->MakeWatcher("/test", [](const TestMessage&) {});
  EXPECT_TRUE(fetcher.valid());
  EXPECT_TRUE(another.valid());
  EXPECT_EQ(loop->watchers().size(), 1u);
}

// Raw senders, watchers and fetchers see the same bytes.
// AOS: RawBasic
TEST_P(AbstractEventLoopTest, RawSenderWatcherAndFetcherAgreeOnTheBytes) {
  auto sender_loop = MakeIdle("sender");
  auto loop = Make("primary");
  auto fetcher_loop = MakeIdle("fetcher");
  const FlatbufferDetachedBuffer<TestMessage> message = Ping(7);
  const std::span<const uint8_t> bytes = message.span();
  const Channel* channel = loop->GetChannel<TestMessage>("/test");
  std::unique_ptr<RawSender> sender = sender_loop->MakeRawSender(channel);
  std::unique_ptr<RawFetcher> fetcher = fetcher_loop->MakeRawFetcher(channel);
  auto same_bytes = [&](const void* data, size_t size) {
    return size == bytes.size() && memcmp(data, bytes.data(), size) == 0;
  };
  bool happened = false;
  loop->OnRun([&]() {
    EXPECT_EQ(sender->Send(bytes.data(), bytes.size()), RawSender::Error::kOk);
  });
  loop->MakeRawWatcher(channel, [&](const Context& context, const void* data) {
    happened = true;
    EXPECT_EQ(data, context.data);
    EXPECT_TRUE(same_bytes(data, context.size));
    EXPECT_TRUE(fetcher->Fetch());
    EXPECT_TRUE(same_bytes(fetcher->context().data, fetcher->context().size));
    loop->Exit();
  });
  Run();
  EXPECT_TRUE(happened);
}

// --- Fetchers.

// AOS: FetchWithoutRun
TEST_P(AbstractEventLoopTest, FetcherContextBeforeAndAfterItsFirstFetch) {
  IdleSender sender(factory_.get());
  auto loop = MakeIdle("fetcher");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  EXPECT_FALSE(fetcher.Fetch());
  EXPECT_EQ(fetcher.get(), nullptr);
  ExpectNoMessage(fetcher.context(), UUID());
  const monotonic_clock::time_point before = loop->monotonic_now();
  ASSERT_EQ(sender.Send(200), RawSender::Error::kOk);
  const monotonic_clock::time_point after = loop->monotonic_now();
  ASSERT_TRUE(fetcher.Fetch());
  ASSERT_NE(fetcher.get(), nullptr);
  EXPECT_EQ(fetcher->value(), 200);
  const Context& context = fetcher.context();
  ExpectLocalMessage(context, loop->boot_uuid());
  EXPECT_GE(context.monotonic_event_time, before);
  EXPECT_LE(context.monotonic_event_time, after);
  EXPECT_EQ(context.queue_index, 0u);
  EXPECT_LE(context.size, 64u);
}

// A FetchIf() that declines, or finds nothing, changes nothing.
// AOS: FetchIfWithoutRun
TEST_P(AbstractEventLoopTest, FetchIfThatDeclinesChangesNothing) {
  IdleSender sender(factory_.get());
  auto loop = MakeIdle("fetcher");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  for (const bool take : {true, false}) {
    EXPECT_FALSE(fetcher.FetchIf([take](const Context&) { return take; }));
    EXPECT_EQ(fetcher.get(), nullptr);
    ExpectNoMessage(fetcher.context(), UUID());
  }
  const monotonic_clock::time_point before = loop->monotonic_now();
  ASSERT_EQ(sender.Send(200), RawSender::Error::kOk);
  const monotonic_clock::time_point after = loop->monotonic_now();
  EXPECT_FALSE(fetcher.FetchIf([](const Context&) { return false; }));
  EXPECT_EQ(fetcher.get(), nullptr);
  ExpectNoMessage(fetcher.context(), UUID());
  ASSERT_TRUE(fetcher.FetchIf([](const Context&) { return true; }));
  EXPECT_EQ(fetcher->value(), 200);
  ExpectLocalMessage(fetcher.context(), loop->boot_uuid());
  EXPECT_GE(fetcher.context().monotonic_event_time, before);
  EXPECT_LE(fetcher.context().monotonic_event_time, after);
  EXPECT_EQ(fetcher.context().queue_index, 0u);
}

// Calls `fn` from a timer of `loop` once it runs, then ends the run (AOS's
// cases fetch inside a running loop).
void InATimerOnceRunning(EventLoop* loop, std::function<void()> fn) {
  TimerHandler* timer = loop->AddTimer([loop, fn = std::move(fn)]() {
    fn();
    loop->Exit();
  });
  loop->OnRun([loop, timer]() { timer->Schedule(loop->monotonic_now()); });
}

// FetchIf() takes the latest message sent before the fetcher was made,
// once; one it declines is not taken.
// AOS: FetchIfDataFromBeforeCreation
TEST_P(AbstractEventLoopTest, FetchIfTakesTheLatestMessageOnce) {
  IdleSender sender(factory_.get());
  auto loop = Make("primary");
  ASSERT_EQ(sender.Send(200), RawSender::Error::kOk);
  ASSERT_EQ(sender.Send(201), RawSender::Error::kOk);
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  std::vector<int> values;
  InATimerOnceRunning(loop.get(), [&]() {
    for (const bool take : {true, false, true}) {
      if (fetcher.FetchIf([take](const Context&) { return take; })) {
        values.push_back(fetcher->value());
      }
    }
  });
  Run();
  EXPECT_THAT(values, ElementsAre(201));
}

// Inside a running loop: Fetch() gets the latest of the messages sent
// before the fetcher was made, FetchNext() the first sent after, Fetch()
// the latest again. With `declining`, conditional fetches that decline
// come in between and change nothing, and the last is a FetchIf().
void ExpectFetchesInterleave(EventLoopTestFactory* factory, bool declining) {
  IdleSender sender(factory);
  auto loop = factory->MakeEventLoop("primary");
  ASSERT_EQ(sender.Send(200), RawSender::Error::kOk);
  ASSERT_EQ(sender.Send(201), RawSender::Error::kOk);
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  const auto decline = [](const Context&) { return false; };
  std::vector<int> values;
  InATimerOnceRunning(loop.get(), [&]() {
    if (fetcher.Fetch()) values.push_back(fetcher->value());
    for (int value = 202; value < 205; ++value) {
      EXPECT_EQ(sender.Send(value), RawSender::Error::kOk);
    }
    if (declining) {
      EXPECT_FALSE(fetcher.FetchNextIf(decline));
    }
    if (fetcher.FetchNext()) values.push_back(fetcher->value());
    if (declining) {
      EXPECT_FALSE(fetcher.FetchNextIf(decline));
      EXPECT_FALSE(fetcher.FetchIf(decline));
    }
    if (declining ? fetcher.FetchIf([](const Context&) { return true; })
                  : fetcher.Fetch()) {
      values.push_back(fetcher->value());
    }
  });
  (void)factory->Run();
  EXPECT_THAT(values, ElementsAre(201, 202, 204));
}

// AOS: FetchAndFetchNextTogether
TEST_P(AbstractEventLoopTest, FetchAndFetchNextInterleave) {
  ExpectFetchesInterleave(factory_.get(), false);
}

// AOS: FetchAndFetchNextIfTogether
TEST_P(AbstractEventLoopTest, FetchIfAndFetchNextIfInterleave) {
  ExpectFetchesInterleave(factory_.get(), true);
}

// AOS: FetchNextTest
TEST_P(AbstractEventLoopTest, FetchNextPastTheEndKeepsTheLastMessage) {
  IdleSender sender(factory_.get());
  auto loop = MakeIdle("fetcher");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  ASSERT_EQ(sender.Send(100), RawSender::Error::kOk);
  ASSERT_EQ(sender.Send(200), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 100);
  ASSERT_TRUE(fetcher.FetchNext());
  EXPECT_EQ(fetcher->value(), 200);
  EXPECT_FALSE(fetcher.FetchNext());
  ASSERT_NE(fetcher.get(), nullptr);
  EXPECT_EQ(fetcher->value(), 200);
}

// The predicate is asked once per message offered, and not at all when
// there is none.
// AOS: FetchNextIfTest
TEST_P(AbstractEventLoopTest, FetchNextIfAsksOncePerMessageOffered) {
  IdleSender sender(factory_.get());
  auto loop = MakeIdle("fetcher");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  ASSERT_EQ(sender.Send(100), RawSender::Error::kOk);
  ASSERT_EQ(sender.Send(200), RawSender::Error::kOk);
  int asked = 0;
  auto answer = [&asked](bool take) {
    return [&asked, take](const Context&) {
      ++asked;
      return take;
    };
  };
  ASSERT_TRUE(fetcher.FetchNextIf(answer(true)));
  EXPECT_EQ(fetcher->value(), 100);
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(fetcher.FetchNextIf(answer(false)));
  EXPECT_EQ(asked, 2);
  ASSERT_TRUE(fetcher.FetchNextIf(answer(true)));
  EXPECT_EQ(fetcher->value(), 200);
  EXPECT_EQ(asked, 3);
  EXPECT_FALSE(fetcher.FetchNextIf(answer(false)));
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(fetcher->value(), 200);
}

// A fetcher's message stays while the channel moves on past it.
// AOS: FetcherBehindData
TEST_P(AbstractEventLoopTest, AFetcherKeepsItsMessageWhileTheChannelMovesOn) {
  IdleSender sender(factory_.get());
  auto loop = MakeIdle("fetcher");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  ASSERT_EQ(sender.Send(1), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.Fetch());
  for (int value = 2; value < 302; ++value) {
    ASSERT_EQ(sender.Send(value), RawSender::Error::kOk);
  }
  EXPECT_EQ(fetcher->value(), 1);
}

// Ten fetchers, each fetching at its own moments: each keeps what it
// fetched, however many messages follow.
// AOS: FetcherPermutations
TEST_P(AbstractEventLoopTest, FetchersKeepWhatEachFetched) {
  constexpr int kFetchers = 10;
  for (int max_save = 0; max_save < 5; ++max_save) {
    SCOPED_TRACE("max_save=" + std::to_string(max_save));
    IdleSender sender(factory_.get());
    auto loop = MakeIdle("fetcher");
    std::vector<Fetcher<TestMessage>> fetchers;
    for (int i = 0; i < kFetchers; ++i) {
      fetchers.push_back(loop->MakeFetcher<TestMessage>("/test"));
    }
    ASSERT_EQ(sender.Send(1), RawSender::Error::kOk);
    for (Fetcher<TestMessage>& fetcher : fetchers) {
      ASSERT_TRUE(fetcher.Fetch());
      EXPECT_EQ(fetcher->value(), 1);
    }
    // Fetcher i last fetched 100 + (kFetchers - 1 - i) if that is at most
    // 100 + max_save, else 100 + max_save; the last one keeps 1.
    auto expected = [&](int i) {
      if (i == kFetchers - 1) return 1;
      return 100 + std::min(max_save, kFetchers - 1 - i);
    };
    for (int save = 1; save <= max_save; ++save) {
      ASSERT_EQ(sender.Send(100 + save), RawSender::Error::kOk);
      for (int i = 0; i < kFetchers - save; ++i) {
        ASSERT_TRUE(fetchers[i].Fetch());
        EXPECT_EQ(fetchers[i]->value(), 100 + save);
      }
    }
    for (int value = 200; value < 500; ++value) {
      ASSERT_EQ(sender.Send(value), RawSender::Error::kOk);
    }
    for (int i = 0; i < kFetchers; ++i) {
      SCOPED_TRACE("fetcher " + std::to_string(i));
      EXPECT_EQ(fetchers[i]->value(), max_save == 0 ? 1 : expected(i));
    }
  }
}

// --- Timers.

// A timer scheduled from another timer for a time already passed runs
// once, and is disabled after.
// AOS: CheckTimerRunInPastDisabled
TEST_P(AbstractEventLoopTest, TimerScheduledInThePastRunsOnceThenIsDisabled) {
  auto loop = Make("primary");
  int late_calls = 0;
  TimerHandler* late = loop->AddTimer([&]() {
    ++late_calls;
    loop->Exit();
  });
  TimerHandler* scheduler = loop->AddTimer(
      [&]() { late->Schedule(loop->monotonic_now() - nanoseconds(1)); });
  loop->OnRun([&]() {
    scheduler->Schedule(loop->monotonic_now() + milliseconds(10));
    EXPECT_FALSE(scheduler->IsDisabled());
  });
  Run();
  EXPECT_EQ(late_calls, 1);
  EXPECT_TRUE(late->IsDisabled());
}

// Run() ended by the timer's own handler leaves it scheduled; a second
// Run() (whose OnRun schedules it again, as AOS's do on a real loop) gets
// its calls.
// AOS: CheckTimerRepeatOnCountDisabled
TEST_P(AbstractEventLoopTest, RepeatingTimerStaysScheduledAcrossRuns) {
  auto loop = Make("primary");
  int calls = 0;
  TimerHandler* timer = loop->AddTimer([&]() {
    if (++calls == 5) loop->Exit();
  });
  loop->OnRun([&]() {
    timer->Schedule(loop->monotonic_now() + milliseconds(10), milliseconds(10));
    EXPECT_FALSE(timer->IsDisabled());
  });
  FailUnlessDoneWithinTheDeadline(loop.get(), "5 calls");
  Run();
  EXPECT_EQ(calls, 5);
  EXPECT_FALSE(timer->IsDisabled());
  calls = 0;
  Run();
  EXPECT_EQ(calls, 5);
  timer->Disable();
  EXPECT_TRUE(timer->IsDisabled());
}

// AOS: CheckTimerRepeatTillEndTimerDisabled
TEST_P(AbstractEventLoopTest, RepeatingTimerIsStillScheduledAfterRun) {
  auto loop = Make("primary");
  TimerHandler* timer = loop->AddTimer([]() {});
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  loop->OnRun([&]() {
    const monotonic_clock::time_point now = loop->monotonic_now();
    timer->Schedule(now + milliseconds(10), milliseconds(10));
    EXPECT_FALSE(timer->IsDisabled());
    stop->Schedule(now + milliseconds(50));
  });
  Run();
  EXPECT_FALSE(timer->IsDisabled());
  timer->Disable();
  EXPECT_TRUE(timer->IsDisabled());
}

// A repeating timer scheduled before Run() keeps its grid, each call has a
// timer's context, and the loop's report names it.
// AOS: TimerIntervalAndDuration
TEST_P(AbstractEventLoopTest,
       TimerScheduledBeforeRunKeepsItsGridAndIsReported) {
  constexpr monotonic_clock::duration kPeriod = milliseconds(50);
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 100;
  auto loop = Make("primary");
  auto reader = Make("reader");
  TimerCalls calls;
  std::atomic<bool> done{false};
  TimerHandler* timer = nullptr;
  timer = loop->AddTimer([&]() {
    ExpectTimerEvent(loop->context(), loop->boot_uuid());
    calls.Record(loop.get(), timer);
    if (calls.times.size() == 5) {
      timer->Disable();
      done = true;
    }
  });
  timer->set_name("Test loop");
  const monotonic_clock::time_point start = loop->monotonic_now();
  timer->Schedule(start + kPeriod, kPeriod);
  KeptReport report;
  ReportReader reports(reader.get(), [&](const timing::Report& candidate,
                                         std::span<const uint8_t> bytes) {
    if (candidate.name()->string_view() == "primary" &&
        candidate.timers() != nullptr &&
        candidate.timers()->Get(0)->count() > 0) {
      report.Keep(bytes);
    }
    return done && !report.empty();
  });
  Run();
  ASSERT_EQ(calls.times.size(), 5u);
  ExpectCallsOnTheGrid(calls, start + kPeriod, kPeriod, false);
  if (time_is_simulated()) {
    for (size_t i = 0; i < calls.times.size(); ++i) {
      EXPECT_EQ(calls.times[i], start + (i + 1) * kPeriod);
    }
  }
  ASSERT_FALSE(report.empty());
  // The timing report's own sender (AOS's loops also send their log).
  ASSERT_NE(report->senders(), nullptr);
  EXPECT_EQ(report->senders()->size(), 1u);
  ASSERT_NE(report->timers(), nullptr);
  ASSERT_EQ(report->timers()->size(), 2u);
  EXPECT_EQ(report->timers()->Get(0)->name()->string_view(), "Test loop");
  EXPECT_GE(report->timers()->Get(0)->count(), 1u);
  EXPECT_EQ(report->timers()->Get(1)->name()->string_view(), "timing_reports");
  EXPECT_EQ(report->timers()->Get(1)->count(), 1u);
  EXPECT_EQ(report->phased_loops(), nullptr);
}

// Another timer reschedules a repeating timer: its calls move to the new
// grid at once.
// AOS: TimerChangeParameters
TEST_P(AbstractEventLoopTest, AnotherTimerReschedulesARepeatingTimer) {
  auto loop = Make("primary");
  std::vector<monotonic_clock::time_point> times;
  TimerHandler* timer = loop->AddTimer(
      [&]() { times.push_back(loop->context().monotonic_event_time); });
  monotonic_clock::time_point s;
  TimerHandler* modifier = loop->AddTimer(
      [&]() { timer->Schedule(s + milliseconds(175), milliseconds(60)); });
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  loop->OnRun([&]() {
    s = loop->monotonic_now();
    timer->Schedule(s, milliseconds(50));
    modifier->Schedule(s + milliseconds(125));
    stop->Schedule(s + milliseconds(395));
  });
  Run();
  if (time_is_simulated()) {
    EXPECT_THAT(times,
                ElementsAre(s, s + milliseconds(50), s + milliseconds(100),
                            s + milliseconds(175), s + milliseconds(235),
                            s + milliseconds(295), s + milliseconds(355)));
  }
  // However late: calls on the old grid until the change (those due before
  // it), then on the new one from its base.
  ASSERT_FALSE(times.empty());
  EXPECT_EQ(times[0], s);
  size_t i = 0;
  for (; i < times.size() && times[i] < s + milliseconds(175); ++i) {
    EXPECT_EQ((times[i] - s) % milliseconds(50), nanoseconds(0));
    EXPECT_LE(times[i], s + milliseconds(100));
  }
  ASSERT_LT(i, times.size());
  EXPECT_EQ(times[i], s + milliseconds(175));
  for (; i < times.size(); ++i) {
    EXPECT_EQ((times[i] - s - milliseconds(175)) % milliseconds(60),
              nanoseconds(0));
    if (i > 0) {
      EXPECT_GT(times[i], times[i - 1]);
    }
  }
}

// AOS: TimerDisable
TEST_P(AbstractEventLoopTest, AnotherTimerDisablesARepeatingTimer) {
  auto loop = Make("primary");
  std::vector<monotonic_clock::time_point> times;
  TimerHandler* timer = loop->AddTimer(
      [&]() { times.push_back(loop->context().monotonic_event_time); });
  TimerHandler* disabler = loop->AddTimer([&]() { timer->Disable(); });
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  monotonic_clock::time_point s;
  loop->OnRun([&]() {
    s = loop->monotonic_now();
    timer->Schedule(s, milliseconds(50));
    disabler->Schedule(s + milliseconds(125));
    stop->Schedule(s + milliseconds(200));
  });
  Run();
  if (time_is_simulated()) {
    EXPECT_THAT(times,
                ElementsAre(s, s + milliseconds(50), s + milliseconds(100)));
  }
  ASSERT_FALSE(times.empty());
  EXPECT_EQ(times[0], s);
  for (const monotonic_clock::time_point time : times) {
    EXPECT_LE(time, s + milliseconds(100));
  }
  EXPECT_TRUE(timer->IsDisabled());
}

// AOS: TimerDisableSelf
TEST_P(AbstractEventLoopTest, RepeatingTimerDisablesItselfInItsFirstCall) {
  auto loop = Make("primary");
  int calls = 0;
  TimerHandler* timer = nullptr;
  timer = loop->AddTimer([&]() {
    ++calls;
    timer->Disable();
  });
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  loop->OnRun([&]() {
    timer->Schedule(loop->monotonic_now(), milliseconds(20));
    stop->Schedule(loop->monotonic_now() + milliseconds(80));
  });
  Run();
  EXPECT_EQ(calls, 1);
}

// Disabling a timer due at the same moment as the one that disables it,
// whatever the order they were made and scheduled in, among other timers
// that reorder the loop's pending events.
// AOS: TimerDisableOther
TEST_P(AbstractEventLoopTest, DisablingATimerDueTogetherWithItsDisabler) {
  for (const bool made_first : {true, false}) {
    for (const bool scheduled_first : {true, false}) {
      for (int others = 0; others < 5; ++others) {
        auto loop = Make("primary");
        TimerHandler* timer = nullptr;
        TimerHandler* disabler = nullptr;
        auto make_timer = [&]() { timer = loop->AddTimer([]() {}); };
        auto make_disabler = [&]() {
          disabler = loop->AddTimer([&]() { timer->Disable(); });
        };
        if (made_first) {
          make_timer();
          make_disabler();
        } else {
          make_disabler();
          make_timer();
        }
        TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
        std::vector<TimerHandler*> extra;
        for (int i = 0; i < others; ++i) {
          extra.push_back(loop->AddTimer([]() {}));
        }
        loop->OnRun([&]() {
          const monotonic_clock::time_point start = loop->monotonic_now();
          for (TimerHandler* other : extra) {
            other->Schedule(start + milliseconds(1));
          }
          if (scheduled_first) {
            timer->Schedule(start + milliseconds(2));
            disabler->Schedule(start + milliseconds(2));
          } else {
            disabler->Schedule(start + milliseconds(2));
            timer->Schedule(start + milliseconds(2));
          }
          stop->Schedule(start + milliseconds(4));
        });
        Run();
        EXPECT_TRUE(timer->IsDisabled());
      }
    }
  }
}

// --- Phased loops.

// A phased loop that starts late (its loop was made long before it ran)
// counts no missed cycle for it, keeps its phase, has a timer's context,
// and its loop's report names it.
// AOS: PhasedLoopTest
TEST_P(AbstractEventLoopTest, PhasedLoopStartedLateKeepsItsPhaseAndIsReported) {
  constexpr monotonic_clock::duration kInterval = milliseconds(50);
  constexpr monotonic_clock::duration kOffset = milliseconds(20);
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 100;
  auto loop = Make("primary");
  auto reader = Make("reader");
  PhasedCalls calls;
  std::atomic<bool> done{false};
  PhasedLoopHandler* phased = nullptr;
  phased = loop->AddPhasedLoop(
      [&](int cycles_elapsed) {
        if (done) return;
        ExpectTimerEvent(loop->context(), loop->boot_uuid());
        calls.Record(loop.get(), phased, cycles_elapsed);
        EXPECT_EQ(calls.times.back().time_since_epoch() % kInterval, kOffset);
        if (calls.cycles.size() == 5) done = true;
      },
      kInterval, kOffset);
  phased->set_name("Test loop");
  KeptReport report;
  ReportReader reports(reader.get(), [&](const timing::Report& candidate,
                                         std::span<const uint8_t> bytes) {
    if (candidate.name()->string_view() == "primary" &&
        candidate.phased_loops() != nullptr &&
        candidate.phased_loops()->Get(0)->count() > 0) {
      report.Keep(bytes);
    }
    return done && !report.empty();
  });
  // Time passes between making the phased loop and running it.
  factory_->Stall(milliseconds(100));
  Run();
  ASSERT_EQ(calls.cycles.size(), 5u);
  ExpectCyclesAddUp(calls, kInterval, false);
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 1, 1, 1, 1));
    for (size_t i = 1; i < calls.times.size(); ++i) {
      EXPECT_EQ(calls.times[i], calls.times[i - 1] + kInterval);
    }
  }
  ASSERT_FALSE(report.empty());
  ASSERT_NE(report->senders(), nullptr);
  EXPECT_EQ(report->senders()->size(), 1u);
  ASSERT_NE(report->timers(), nullptr);
  EXPECT_EQ(report->timers()->size(), 1u);
  ASSERT_NE(report->phased_loops(), nullptr);
  ASSERT_EQ(report->phased_loops()->size(), 1u);
  EXPECT_EQ(report->phased_loops()->Get(0)->name()->string_view(), "Test loop");
  EXPECT_GE(report->phased_loops()->Get(0)->count(), 1u);
}

// An offset changed in the handler, without a time, takes effect at the
// next call: each call is on the offset the call before set.
// AOS: PhasedLoopChangingOffsetTest
TEST_P(AbstractEventLoopTest, PhasedLoopFollowsAnOffsetChangedInItsHandler) {
  constexpr monotonic_clock::duration kInterval = milliseconds(50);
  constexpr monotonic_clock::duration kOffset = milliseconds(40);
  auto loop = Make("primary");
  // Reports would reset missed_cycles while the calls run.
  loop->SkipTimingReport();
  PhasedCalls calls;
  PhasedLoopHandler* phased = nullptr;
  phased = loop->AddPhasedLoop(
      [&](int cycles_elapsed) {
        calls.Record(loop.get(), phased, cycles_elapsed);
        const auto count = static_cast<int>(calls.times.size());
        phased->set_interval_and_offset(kInterval,
                                        kOffset - milliseconds(count));
        if (count == 5) loop->Exit();
      },
      kInterval, kOffset);
  FailUnlessDoneWithinTheDeadline(loop.get(), "5 calls");
  factory_->Stall(milliseconds(100));
  Run();
  ASSERT_EQ(calls.times.size(), 5u);
  ExpectCyclesAddUp(calls);
  for (size_t i = 0; i < calls.times.size(); ++i) {
    EXPECT_EQ(calls.times[i].time_since_epoch() % kInterval,
              kOffset - milliseconds(i))
        << "call " << i;
    if (i > 0) {
      EXPECT_GT(calls.times[i], calls.times[i - 1]);
    }
  }
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 1, 1, 1, 1));
    for (size_t i = 1; i < calls.times.size(); ++i) {
      EXPECT_EQ(calls.times[i] - calls.times[i - 1],
                kInterval - milliseconds(1));
    }
  }
}

// Every pair of offsets, changed in the handler without a time: the next
// call is never more than an interval after the last.
// AOS: PhasedLoopChangingOffsetSweep
TEST_P(AbstractEventLoopTest, PhasedLoopOffsetChangesNeverWaitAnExtraInterval) {
  constexpr monotonic_clock::duration kInterval = milliseconds(10);
  constexpr int kOffsets = 5;
  auto loop = Make("primary");
  std::vector<monotonic_clock::duration> sweep;
  for (int first = 0; first < kOffsets; ++first) {
    for (int second = 0; second < kOffsets; ++second) {
      sweep.push_back(first * kInterval / kOffsets);
      sweep.push_back(second * kInterval / kOffsets);
    }
  }
  PhasedCalls calls;
  calls.times.reserve(sweep.size());
  PhasedLoopHandler* phased = nullptr;
  phased = loop->AddPhasedLoop(
      [&](int cycles_elapsed) {
        calls.Record(loop.get(), phased, cycles_elapsed);
        if (calls.times.size() == sweep.size()) {
          loop->Exit();
          return;
        }
        phased->set_interval_and_offset(kInterval, sweep[calls.times.size()]);
      },
      kInterval, sweep[0]);
  FailUnlessDoneWithinTheDeadline(loop.get(), "every offset");
  Run();
  ASSERT_EQ(calls.times.size(), sweep.size());
  for (size_t i = 0; i < calls.times.size(); ++i) {
    EXPECT_EQ(calls.times[i].time_since_epoch() % kInterval, sweep[i])
        << "call " << i;
    if (i == 0) continue;
    EXPECT_GT(calls.times[i], calls.times[i - 1]) << "call " << i;
    // A late call moves the next by the intervals it was late.
    if (time_is_simulated()) {
      EXPECT_LE(calls.times[i] - calls.times[i - 1], kInterval) << "call " << i;
      EXPECT_EQ(calls.cycles[i], 1) << "call " << i;
    }
  }
}

// A phased loop whose first call schedules a timer at the call's own time;
// the timer calls `reschedule(phased, that time)` once and the phased
// loop's second call ends the run. The two calls' times and cycles.
struct RescheduledPhasedLoop {
  std::vector<monotonic_clock::time_point> times;
  std::vector<int> cycles;
};
RescheduledPhasedLoop RunRescheduledPhasedLoop(
    EventLoopTestFactory* factory, monotonic_clock::duration interval,
    monotonic_clock::duration offset,
    const std::function<void(PhasedLoopHandler*, monotonic_clock::time_point)>&
        reschedule) {
  auto loop = factory->MakeEventLoop("primary");
  RescheduledPhasedLoop result;
  PhasedLoopHandler* phased = nullptr;
  bool rescheduled = false;
  TimerHandler* manager = loop->AddTimer([&]() {
    if (rescheduled) {
      loop->Exit();
      return;
    }
    reschedule(phased, loop->context().monotonic_event_time);
    rescheduled = true;
  });
  manager->set_name("Manager timer");
  phased = loop->AddPhasedLoop(
      [&](int cycles_elapsed) {
        result.times.push_back(loop->context().monotonic_event_time);
        result.cycles.push_back(cycles_elapsed);
        manager->Schedule(loop->context().monotonic_event_time);
      },
      interval, offset);
  phased->set_name("Test loop");
  FailUnlessDoneWithinTheDeadline(loop.get(), "two calls");
  (void)factory->Run();
  return result;
}

constexpr monotonic_clock::duration kRescheduleInterval = milliseconds(20);
constexpr monotonic_clock::duration kRescheduleOffset = milliseconds(8);

// Rescheduled to just before the boundary it was called for: called for
// that boundary again, counting no cycle.
// AOS: PhasedLoopRescheduleInPast
TEST_P(AbstractEventLoopTest,
       PhasedLoopRescheduledInThePastRepeatsItsBoundary) {
  const RescheduledPhasedLoop calls = RunRescheduledPhasedLoop(
      factory_.get(), kRescheduleInterval, kRescheduleOffset,
      [](PhasedLoopHandler* phased, monotonic_clock::time_point time) {
        phased->Reschedule(time - nanoseconds(1));
      });
  ASSERT_EQ(calls.times.size(), 2u);
  EXPECT_EQ(calls.times[0], calls.times[1]);
  EXPECT_GE(calls.cycles[1], 0);
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 0));
  }
}

// Rescheduled at the boundary it was called for: nothing changes.
// AOS: PhasedLoopRescheduleNow
TEST_P(AbstractEventLoopTest, PhasedLoopRescheduledNowKeepsItsNextBoundary) {
  const RescheduledPhasedLoop calls = RunRescheduledPhasedLoop(
      factory_.get(), kRescheduleInterval, kRescheduleOffset,
      [](PhasedLoopHandler* phased, monotonic_clock::time_point time) {
        phased->Reschedule(time);
      });
  ASSERT_EQ(calls.times.size(), 2u);
  EXPECT_EQ(calls.times[1], calls.times[0] + kRescheduleInterval);
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 1));
  }
}

// Rescheduled to just before the 10th boundary after: called there,
// counting the 10.
// AOS: PhasedLoopRescheduleFuture
TEST_P(AbstractEventLoopTest, PhasedLoopRescheduledInTheFutureCountsTheWait) {
  const RescheduledPhasedLoop calls = RunRescheduledPhasedLoop(
      factory_.get(), kRescheduleInterval, kRescheduleOffset,
      [](PhasedLoopHandler* phased, monotonic_clock::time_point time) {
        phased->Reschedule(time + 10 * kRescheduleInterval - nanoseconds(1));
      });
  ASSERT_EQ(calls.times.size(), 2u);
  EXPECT_EQ(calls.times[1], calls.times[0] + 10 * kRescheduleInterval);
  EXPECT_GE(calls.cycles[1], 10);
  if (time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 10));
  }
}

// The offset moved by `change` (less than an interval), applied at half
// an interval after the first call, AOS's recipe for keeping the rate: the
// second call is an interval plus the change after the first, counting 1.
void ExpectAMovedOffsetKeepsTheRate(EventLoopTestFactory* factory,
                                    monotonic_clock::duration change) {
  const RescheduledPhasedLoop calls = RunRescheduledPhasedLoop(
      factory, kRescheduleInterval, kRescheduleOffset,
      [change](PhasedLoopHandler* phased, monotonic_clock::time_point time) {
        const monotonic_clock::time_point half = time + kRescheduleInterval / 2;
        phased->set_interval_and_offset(kRescheduleInterval,
                                        kRescheduleOffset + change, half);
        phased->Reschedule(half);
      });
  ASSERT_EQ(calls.times.size(), 2u);
  EXPECT_EQ(calls.times[1], calls.times[0] + kRescheduleInterval + change);
  if (factory->time_is_simulated()) {
    EXPECT_THAT(calls.cycles, ElementsAre(1, 1));
  }
}

// AOS: PhasedLoopRescheduleWithLaterOffset
TEST_P(AbstractEventLoopTest, PhasedLoopMovedToALaterOffsetKeepsItsRate) {
  ExpectAMovedOffsetKeepsTheRate(factory_.get(), nanoseconds(1));
}

// AOS: PhasedLoopRescheduleWithEarlierOffset
TEST_P(AbstractEventLoopTest, PhasedLoopMovedToAnEarlierOffsetKeepsItsRate) {
  ExpectAMovedOffsetKeepsTheRate(factory_.get(), -nanoseconds(1));
}

// --- Contexts.

// Outside callbacks the context is empty (with the loop's boot), before
// Run() and after it; in OnRun it is a timer event at the start.
// AOS: SetContextOnRun
TEST_P(AbstractEventLoopTest, ContextIsEmptyOutsideCallbacks) {
  auto loop = Make("primary");
  ExpectNoMessage(loop->context(), loop->boot_uuid());
  monotonic_clock::time_point on_run_time = monotonic_clock::min_time;
  TimerHandler* stop = loop->AddTimer([&]() { loop->Exit(); });
  loop->OnRun([&]() {
    on_run_time = loop->context().monotonic_event_time;
    EXPECT_LE(on_run_time, loop->monotonic_now());
    ExpectTimerEvent(loop->context(), loop->boot_uuid());
    stop->Schedule(loop->monotonic_now() + milliseconds(20));
  });
  const monotonic_clock::time_point before_run = loop->monotonic_now();
  Run();
  EXPECT_GE(on_run_time, before_run);
  ExpectNoMessage(loop->context(), loop->boot_uuid());
}

// A watcher's context describes its message, sent by another loop: the
// message lies in `data`, the remote fields are its own, and it was sent
// when the sender sent it; a fetcher sees the same.
// AOS: MessageSendTime
TEST_P(AbstractEventLoopTest, WatcherContextDescribesTheMessage) {
  auto loop = Make("primary");
  auto sender_loop = MakeIdle("sender");
  Sender<TestMessage> sender = sender_loop->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = sender_loop->MakeFetcher<TestMessage>("/test");
  monotonic_clock::time_point sent_after;
  monotonic_clock::time_point sent_before;
  TimerHandler* send = loop->AddTimer([&]() {
    sent_after = loop->monotonic_now();
    EXPECT_EQ(SendPing(&sender, 200), RawSender::Error::kOk);
    sent_before = loop->monotonic_now();
  });
  std::optional<Context> seen;
  loop->MakeWatcher("/test", [&](const TestMessage& message) {
    const Context& context = loop->context();
    seen = context;
    const auto* data = static_cast<const uint8_t*>(context.data);
    EXPECT_GT(reinterpret_cast<const uint8_t*>(&message), data);
    EXPECT_LT(reinterpret_cast<const uint8_t*>(&message), data + context.size);
    ExpectLocalMessage(context, loop->boot_uuid());
    EXPECT_LE(context.monotonic_event_time, loop->monotonic_now());
    EXPECT_LE(context.realtime_event_time, loop->realtime_now());
    if (time_is_simulated()) {
      EXPECT_EQ(context.monotonic_event_time, loop->monotonic_now());
    }
    loop->Exit();
  });
  loop->OnRun(
      [&]() { send->Schedule(loop->monotonic_now() + milliseconds(10)); });
  Run();
  ASSERT_TRUE(seen.has_value());
  EXPECT_GE(seen->monotonic_event_time, sent_after);
  EXPECT_LE(seen->monotonic_event_time, sent_before);
  ASSERT_TRUE(fetcher.Fetch());
  const Context& fetched = fetcher.context();
  ExpectLocalMessage(fetched, loop->boot_uuid());
  EXPECT_GT(static_cast<const void*>(fetcher.get()), fetched.data);
  EXPECT_LT(static_cast<const void*>(fetcher.get()),
            static_cast<const uint8_t*>(fetched.data) + fetched.size);
  EXPECT_EQ(fetched.monotonic_event_time, seen->monotonic_event_time);
  EXPECT_EQ(fetched.realtime_event_time, seen->realtime_event_time);
  EXPECT_EQ(fetched.queue_index, seen->queue_index);
}

// The same for a no-arg watcher, which reads the message with a fetcher.
// AOS: MessageSendTimeNoArg
TEST_P(AbstractEventLoopTest, NoArgWatcherContextAgreesWithItsFetcher) {
  auto loop = Make("primary");
  IdleSender sender(factory_.get());
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  monotonic_clock::time_point sent_after;
  monotonic_clock::time_point sent_before;
  TimerHandler* send = loop->AddTimer([&]() {
    sent_after = loop->monotonic_now();
    EXPECT_EQ(sender.Send(200), RawSender::Error::kOk);
    sent_before = loop->monotonic_now();
  });
  bool triggered = false;
  loop->MakeNoArgWatcher<TestMessage>("/test", [&]() {
    ASSERT_TRUE(fetcher.Fetch());
    const Context& context = loop->context();
    ExpectLocalMessage(context, loop->boot_uuid(), false);
    EXPECT_LE(context.monotonic_event_time, loop->monotonic_now());
    EXPECT_GE(context.monotonic_event_time, sent_after);
    EXPECT_LE(context.monotonic_event_time, sent_before);
    EXPECT_EQ(fetcher.context().monotonic_event_time,
              context.monotonic_event_time);
    EXPECT_EQ(fetcher.context().queue_index, context.queue_index);
    triggered = true;
    loop->Exit();
  });
  loop->OnRun(
      [&]() { send->Schedule(loop->monotonic_now() + milliseconds(10)); });
  Run();
  ASSERT_TRUE(triggered);
  ExpectLocalMessage(fetcher.context(), loop->boot_uuid());
  EXPECT_EQ(fetcher->value(), 200);
  EXPECT_GT(static_cast<const void*>(fetcher.get()), fetcher.context().data);
}

// AOS: RawSenderSentData
TEST_P(AbstractEventLoopTest, RawSenderRemembersItsLastSend) {
  auto loop = MakeIdle("primary");
  std::unique_ptr<RawSender> sender =
      loop->MakeRawSender(loop->GetChannel<TestMessage>("/test"));
  const FlatbufferDetachedBuffer<TestMessage> message = Ping(1);
  for (uint32_t index = 0; index < 2; ++index) {
    const monotonic_clock::time_point before = loop->monotonic_now();
    ASSERT_EQ(sender->Send(message.span().data(), message.span().size()),
              RawSender::Error::kOk);
    const monotonic_clock::time_point after = loop->monotonic_now();
    EXPECT_GE(sender->monotonic_sent_time(), before);
    EXPECT_LE(sender->monotonic_sent_time(), after);
    EXPECT_NE(sender->realtime_sent_time(), realtime_clock::min_time);
    EXPECT_EQ(sender->sent_queue_index(), index);
  }
}

// --- Sending too fast.

// Once the oldest message kept is older than the storage duration, one
// message more than the queue holds fits; the next would replace one that
// is not.
// AOS: SendingMessagesTooFast
TEST_P(AbstractEventLoopTest, OneMoreMessageFitsOnceTheOldestAged) {
  auto loop = Make("primary");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/lossy");
  const int queue_size = QueueSize(*configuration(), *sender.channel());
  const monotonic_clock::duration storage =
      StorageDuration(*configuration(), *sender.channel());
  ASSERT_EQ(SendPing(&sender, 0), RawSender::Error::kOk);
  const monotonic_clock::time_point oldest = sender.monotonic_sent_time();
  std::vector<RawSender::Error> results;
  monotonic_clock::duration burst = monotonic_clock::duration::zero();
  TimerHandler* send = loop->AddTimer([&]() {
    const monotonic_clock::time_point start = loop->monotonic_now();
    for (int i = 1; i <= queue_size + 1; ++i) {
      results.push_back(SendPing(&sender, i));
    }
    burst = loop->monotonic_now() - start;
    loop->Exit();
  });
  loop->OnRun([&]() { send->Schedule(oldest + storage + milliseconds(1)); });
  Run();
  if (burst >= storage) {
    GTEST_SKIP() << "the machine held this thread for a storage duration "
                    "between the sends: nothing was too fast";
  }
  ASSERT_EQ(results.size(), static_cast<size_t>(queue_size + 1));
  for (int i = 0; i < queue_size; ++i) {
    EXPECT_EQ(results[i], RawSender::Error::kOk) << "send " << i;
  }
  EXPECT_EQ(results.back(), RawSender::Error::kMessagesSentTooFast);
}

// A sender that keeps trying succeeds again once the first message it sent
// is older than the storage duration, and not before; SendFailureCounter
// counts the failures on the way.
// AOS: SendingAfterSendingTooFast
TEST_P(AbstractEventLoopTest, SendsSucceedAgainOnceTheFirstMessageAged) {
  auto loop = Make("primary");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/lossy");
  const int queue_size = QueueSize(*configuration(), *sender.channel());
  const monotonic_clock::duration storage =
      StorageDuration(*configuration(), *sender.channel());
  SendFailureCounter counter;
  monotonic_clock::time_point first_sent = monotonic_clock::min_time;
  int attempts = 0;
  bool recovered = false;
  loop->AddPhasedLoop(
      [&](int) {
        for (int i = 0; i < 4 && !recovered; ++i) {
          const RawSender::Error error = SendPing(&sender, attempts);
          counter.Count(error);
          ++attempts;
          const bool ok = error == RawSender::Error::kOk;
          if (first_sent == monotonic_clock::min_time) {
            first_sent = sender.monotonic_sent_time();
          }
          EXPECT_EQ(counter.just_failed(), !ok);
          if (attempts <= queue_size) {
            EXPECT_TRUE(ok) << "attempt " << attempts;
            EXPECT_EQ(counter.failures(), 0u);
            continue;
          }
          EXPECT_EQ(counter.failures(),
                    static_cast<size_t>(attempts - queue_size - (ok ? 1 : 0)));
          if (ok) {
            EXPECT_GE(sender.monotonic_sent_time(), first_sent + storage);
            recovered = true;
            loop->Exit();
          } else {
            EXPECT_EQ(error, RawSender::Error::kMessagesSentTooFast);
          }
        }
      },
      milliseconds(10));
  FailUnlessDoneWithinTheDeadline(loop.get(),
                                  "a send after the storage duration");
  Run();
  EXPECT_TRUE(recovered);
}

// Fills the queue of `senders`' channel with sends they take in turn, then
// checks that one more is refused as too fast (unless the machine held the
// test for a storage duration meanwhile: then nothing was too fast).
void ExpectRefusedOnceTheQueueIsFull(
    const EventLoop& clock, const Configuration& config,
    const std::vector<Sender<TestMessage>*>& senders) {
  const Channel& channel = *senders.front()->channel();
  const int queue_size = QueueSize(config, channel);
  const monotonic_clock::time_point start = clock.monotonic_now();
  for (int i = 0; i < queue_size; ++i) {
    ASSERT_EQ(SendPing(senders[i % senders.size()], i), RawSender::Error::kOk)
        << "send " << i;
  }
  const RawSender::Error one_more = SendPing(senders.back(), queue_size);
  if (clock.monotonic_now() - start >= StorageDuration(config, channel)) {
    GTEST_SKIP() << "the sends took a storage duration: nothing was too fast";
  }
  EXPECT_EQ(one_more, RawSender::Error::kMessagesSentTooFast);
}

// Senders of different loops share the channel's limit.
// AOS: SendingTooFastWithMultipleLoops
TEST_P(AbstractEventLoopTest, SendersOfTwoLoopsShareTheRateLimit) {
  auto first_loop = MakeIdle("first");
  auto second_loop = MakeIdle("second");
  Sender<TestMessage> first = first_loop->MakeSender<TestMessage>("/test");
  Sender<TestMessage> second = second_loop->MakeSender<TestMessage>("/test");
  ExpectRefusedOnceTheQueueIsFull(*first_loop, *configuration(),
                                  {&first, &second});
}

// A channel kept longer holds more messages: frequency x storage duration.
// AOS: SendingTooFastWithLongDuration
TEST_P(AbstractEventLoopTest, ALongerStorageDurationHoldsMoreMessages) {
  auto loop = MakeIdle("primary");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/long");
  EXPECT_EQ(QueueSize(*configuration(), *sender.channel()), 100 * 10);
  ExpectRefusedOnceTheQueueIsFull(*loop, *configuration(), {&sender});
}

// --- Timing reports.

// Every send is counted, and every send refused as too fast, in the window
// they happened in; a loop with no watchers or phased loops reports none.
// AOS: SenderTimingReport
TEST_P(AbstractEventLoopTest, ReportCountsSendsAndSendsRefusedAsTooFast) {
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 100;
  auto loop = Make("primary");
  auto reader = Make("reader");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  const int queue_size = QueueSize(*configuration(), *sender.channel());
  int sent = 0;
  int refused = 0;
  monotonic_clock::duration burst = monotonic_clock::duration::zero();
  TimerHandler* send = loop->AddTimer([&]() {
    const monotonic_clock::time_point start = loop->monotonic_now();
    for (int i = 0; i < 2 * queue_size; ++i) {
      const RawSender::Error error = SendPing(&sender, i);
      if (error == RawSender::Error::kOk) {
        ++sent;
      } else {
        EXPECT_EQ(error, RawSender::Error::kMessagesSentTooFast);
        ++refused;
      }
    }
    burst = loop->monotonic_now() - start;
  });
  loop->OnRun(
      [&]() { send->Schedule(loop->monotonic_now() + milliseconds(150)); });
  FirstReport report(reader.get(), "primary", [](const timing::Report& report) {
    return report.senders()->Get(0)->count() > 0;
  });
  Run();
  ASSERT_FALSE(report.empty());
  if (burst < StorageDuration(*configuration(), *sender.channel())) {
    EXPECT_EQ(sent, queue_size);
    EXPECT_EQ(refused, queue_size);
  }
  // /test and the report's own /aos (AOS's loops also send their log).
  ASSERT_NE(report->senders(), nullptr);
  ASSERT_EQ(report->senders()->size(), 2u);
  const timing::Sender& test = *report->senders()->Get(0);
  EXPECT_EQ(configuration()->channels()->Get(test.channel_index()),
            sender.channel());
  EXPECT_EQ(test.count(), static_cast<uint32_t>(sent));
  ASSERT_NE(test.error_counts(), nullptr);
  ASSERT_EQ(test.error_counts()->size(), 2u);
  EXPECT_EQ(TooFastCount(test), static_cast<uint32_t>(refused));
  EXPECT_EQ(test.error_counts()
                ->Get(static_cast<size_t>(timing::SendError::INVALID_REDZONE))
                ->count(),
            0u);
  EXPECT_EQ(configuration()
                ->channels()
                ->Get(report->senders()->Get(1)->channel_index())
                ->name()
                ->string_view(),
            "/aos");
  // The sending timer and timing_reports.
  ASSERT_NE(report->timers(), nullptr);
  EXPECT_EQ(report->timers()->size(), 2u);
  EXPECT_EQ(report->phased_loops(), nullptr);
  EXPECT_EQ(report->watchers(), nullptr);
}

// A raw sender's copying Send() counts its refusals too.
// AOS: CopySenderTimingReport
TEST_P(AbstractEventLoopTest, ReportCountsARawCopyRefusedAsTooFast) {
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 100;
  auto reader = Make("reader");
  auto loop = Make("primary");
  const Channel* channel = loop->GetChannel<TestMessage>("/slow");
  std::unique_ptr<RawSender> sender = loop->MakeRawSender(channel);
  const FlatbufferDetachedBuffer<TestMessage> message = Ping(1);
  const int queue_size = QueueSize(*configuration(), *channel);
  bool in_time = true;
  loop->OnRun([&]() {
    const monotonic_clock::time_point start = loop->monotonic_now();
    for (int i = 0; i < queue_size; ++i) {
      EXPECT_EQ(sender->Send(message.span().data(), message.span().size()),
                RawSender::Error::kOk);
    }
    const RawSender::Error one_more =
        sender->Send(message.span().data(), message.span().size());
    in_time = loop->monotonic_now() - start <
              StorageDuration(*configuration(), *channel);
    if (in_time) {
      EXPECT_EQ(one_more, RawSender::Error::kMessagesSentTooFast);
    }
  });
  FirstReport report(reader.get(), "primary",
                     [](const timing::Report&) { return true; });
  Run();
  ASSERT_FALSE(report.empty());
  if (!in_time) GTEST_SKIP() << "the sends took a storage duration";
  ASSERT_NE(report->senders(), nullptr);
  ASSERT_EQ(report->senders()->size(), 2u);
  EXPECT_EQ(report->senders()->Get(0)->count(),
            static_cast<uint32_t>(queue_size));
  EXPECT_EQ(TooFastCount(*report->senders()->Get(0)), 1u);
}

// AOS: WatcherTimingReport
TEST_P(AbstractEventLoopTest, ReportCountsWatcherCalls) {
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 100;
  auto loop = Make("primary");
  IdleSender sender(factory_.get());
  auto reader = Make("reader");
  loop->MakeWatcher("/test", [](const TestMessage&) {});
  TimerHandler* send = loop->AddTimer([&]() {
    for (int i = 0; i < 10; ++i) {
      EXPECT_EQ(sender.Send(200 + i), RawSender::Error::kOk);
    }
  });
  loop->OnRun(
      [&]() { send->Schedule(loop->monotonic_now() + milliseconds(150)); });
  // The calls may straddle two windows: add them up.
  uint32_t calls = 0;
  KeptReport report;
  ReportReader reports(reader.get(), [&](const timing::Report& candidate,
                                         std::span<const uint8_t> bytes) {
    if (candidate.name()->string_view() != "primary") return false;
    EXPECT_EQ(candidate.phased_loops(), nullptr);
    // The sending timer and timing_reports.
    EXPECT_EQ(candidate.timers()->size(), 2u);
    EXPECT_EQ(candidate.watchers()->size(), 1u);
    calls += candidate.watchers()->Get(0)->count();
    if (candidate.watchers()->Get(0)->count() > 0) report.Keep(bytes);
    return calls >= 10;
  });
  Run();
  EXPECT_EQ(calls, 10u);
  ASSERT_FALSE(report.empty());
  EXPECT_EQ(configuration()->channels()->Get(
                report->watchers()->Get(0)->channel_index()),
            sender->channel());
}

// Each fetch that got a message counts, with its latency from the send.
// AOS: FetcherTimingReport
TEST_P(AbstractEventLoopTest, ReportCountsFetchesAndTheirLatency) {
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 100;
  auto loop = Make("primary");
  IdleSender sender(factory_.get());
  auto reader = Make("reader");
  Fetcher<TestMessage> latest = loop->MakeFetcher<TestMessage>("/test");
  Fetcher<TestMessage> every = loop->MakeFetcher<TestMessage>("/test");
  EXPECT_FALSE(latest.Fetch());
  EXPECT_FALSE(every.Fetch());
  monotonic_clock::duration least_latency = monotonic_clock::duration::zero();
  TimerHandler* send = loop->AddTimer([&]() {
    for (int i = 0; i < 10; ++i) {
      EXPECT_EQ(sender.Send(200 + i), RawSender::Error::kOk);
    }
  });
  TimerHandler* fetch = loop->AddTimer([&]() {
    least_latency = loop->monotonic_now() - sender->monotonic_sent_time();
    EXPECT_TRUE(latest.Fetch());
    while (every.FetchNext()) {
    }
  });
  loop->OnRun([&]() {
    send->Schedule(loop->monotonic_now() + milliseconds(140));
    fetch->Schedule(loop->monotonic_now() + milliseconds(160));
  });
  FirstReport report(reader.get(), "primary", [](const timing::Report& report) {
    return report.fetchers()->Get(1)->count() > 0;
  });
  Run();
  ASSERT_FALSE(report.empty());
  // Only the report's own sender: the sending loop is another.
  ASSERT_NE(report->senders(), nullptr);
  EXPECT_EQ(report->senders()->size(), 1u);
  ASSERT_NE(report->timers(), nullptr);
  EXPECT_EQ(report->timers()->size(), 3u);
  EXPECT_EQ(report->phased_loops(), nullptr);
  EXPECT_EQ(report->watchers(), nullptr);
  ASSERT_NE(report->fetchers(), nullptr);
  ASSERT_EQ(report->fetchers()->size(), 2u);
  const timing::Fetcher& one = *report->fetchers()->Get(0);
  EXPECT_EQ(one.count(), 1u);
  const double least = std::chrono::duration<double>(least_latency).count();
  EXPECT_GE(one.latency()->min(), least * (1 - 1e-6));
  EXPECT_GE(one.latency()->average(), least * (1 - 1e-6));
  EXPECT_EQ(one.latency()->min(), one.latency()->max());
  EXPECT_EQ(one.latency()->standard_deviation(), 0.0);
  if (time_is_simulated()) {
    EXPECT_NEAR(one.latency()->min(), 0.02, 1e-6);
  }
  EXPECT_EQ(report->fetchers()->Get(1)->count(), 10u);
}

// A loop's reports carry the default version string set when it was made,
// or its own.
// AOS: DefaultVersionStringInTimingReport, OverrideDersionStringInTimingReport
TEST_P(AbstractEventLoopTest, ReportsCarryTheDefaultOrTheLoopsOwnVersion) {
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 100;
  EventLoop::SetDefaultVersionString("default_version_string");
  auto by_default = Make("default");
  auto overridden = Make("override");
  EventLoop::SetDefaultVersionString("");
  overridden->SetVersionString("override_version");
  auto reader = Make("reader");
  std::map<std::string, std::string> versions;
  ReportReader reports(reader.get(), [&](const timing::Report& report,
                                         std::span<const uint8_t>) {
    versions[report.name()->str()] =
        report.version() == nullptr ? "" : report.version()->str();
    return versions.contains("default") && versions.contains("override");
  });
  Run();
  EXPECT_EQ(versions["default"], "default_version_string");
  EXPECT_EQ(versions["override"], "override_version");
}

// --- Nodes.

// AOS: NoNode
TEST_P(AbstractEventLoopTest, LoopsHaveNoNodeInASingleNodeConfig) {
  auto running = Make("primary");
  auto idle = MakeIdle("idle");
  EXPECT_EQ(running->node(), nullptr);
  EXPECT_EQ(idle->node(), nullptr);
}

// AOS: Node
TEST_P(AbstractEventLoopTest, LoopsAreOnTheirNodeInAMultiNodeConfig) {
  EnableNodes("me");
  auto running = Make("primary");
  auto idle = MakeIdle("idle");
  ASSERT_NE(running->node(), nullptr);
  ASSERT_NE(idle->node(), nullptr);
  EXPECT_EQ(running->node()->name()->string_view(), "me");
  EXPECT_EQ(idle->node(), running->node());
}

// Watchers, fetchers and senders of the node's own channels, typed and raw.
// AOS: NodeWatcher, NodeNoArgWatcher, NodeFetcher, NodeSender
TEST_P(AbstractEventLoopTest, LoopsUseTheirNodesChannels) {
  EnableNodes("me");
  auto watching = Make("watching");
  auto raw_watching = Make("raw_watching");
  auto no_arg_watching = Make("no_arg_watching");
  const Channel* test = watching->GetChannel<TestMessage>("/test");
  ASSERT_NE(test, nullptr);
  watching->MakeWatcher("/test", [](const TestMessage&) {});
  raw_watching->MakeRawWatcher(test, [](const Context&, const void*) {});
  no_arg_watching->MakeRawNoArgWatcher(test, [](const Context&) {});
  Fetcher<TestMessage> fetcher = watching->MakeFetcher<TestMessage>("/test");
  std::unique_ptr<RawFetcher> raw_fetcher = watching->MakeRawFetcher(test);
  Sender<TestMessage> sender =
      no_arg_watching->MakeSender<TestMessage>("/test");
  ASSERT_EQ(SendPing(&sender, 5), RawSender::Error::kOk);
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), 5);
  EXPECT_TRUE(raw_fetcher->Fetch());
}

// --- Realtime.

// A loop at normal priority runs its callbacks unguarded: they may
// allocate (with --die_on_malloc, a guarded one would abort).
// AOS: NonRealtimeEventLoopTimer, NonRealtimeEventLoopPhasedLoop,
// NonRealtimeEventLoopWatcher
TEST_P(AbstractEventLoopTest, CallbacksOfALoopAtNormalPriorityMayAllocate) {
  auto loop = Make("primary");
  IdleSender sender(factory_.get());
  std::set<std::string> ran;
  auto note = [&](std::string what) {
    AllocateOnce();
    ran.insert(std::move(what));
    if (ran.size() == 3) loop->Exit();
  };
  TimerHandler* timer = loop->AddTimer([&]() { note("timer"); });
  loop->AddPhasedLoop([&](int) { note("phased loop"); }, milliseconds(10));
  loop->MakeWatcher("/test", [&](const TestMessage&) { note("watcher"); });
  loop->OnRun([&]() {
    AllocateOnce();
    timer->Schedule(loop->monotonic_now());
    EXPECT_EQ(sender.Send(1), RawSender::Error::kOk);
  });
  FailUnlessDoneWithinTheDeadline(loop.get(), "every callback");
  Run();
  EXPECT_THAT(ran, ElementsAre("phased loop", "timer", "watcher"));
  EXPECT_EQ(loop->realtime_allocations(), 0u);
}

// A loop at realtime priority runs its callbacks under the allocation
// guard, in simulation too; OnRun is setup, not guarded (AOS's OnRun is
// realtime: docs/event_loop.md). Counted here (--die_on_malloc=false)
// rather than fatal.
// AOS: RealtimeEventLoopTimer, RealtimeEventLoopPhasedLoop,
// RealtimeEventLoopWatcher
TEST_P(AbstractEventLoopTest, CallbacksOfARealtimeLoopMayNotAllocate) {
  if (!AllocationGuardAvailable()) {
    GTEST_SKIP() << "a sanitizer build owns malloc: allocations are not seen";
  }
  gflags::FlagSaver saver;
  FLAGS_die_on_malloc = false;
  auto loop = Make("primary");
  loop->SetRuntimeRealtimePriority(1);
  IdleSender sender(factory_.get());
  bool timer_ran = false;
  bool phased_ran = false;
  bool watcher_ran = false;
  // Each allocates once, in its first call, and nothing else does.
  auto first_call = [&](bool* ran) {
    if (*ran) return;
    AllocateOnce();
    *ran = true;
    if (timer_ran && phased_ran && watcher_ran) loop->Exit();
  };
  TimerHandler* timer = loop->AddTimer([&]() { first_call(&timer_ran); });
  loop->AddPhasedLoop([&](int) { first_call(&phased_ran); }, milliseconds(10));
  loop->MakeWatcher("/test",
                    [&](const TestMessage&) { first_call(&watcher_ran); });
  loop->OnRun([&]() {
    AllocateOnce();
    timer->Schedule(loop->monotonic_now());
    EXPECT_EQ(sender.Send(1), RawSender::Error::kOk);
  });
  FailUnlessDoneWithinTheDeadline(loop.get(), "every callback");
  Run();
  EXPECT_TRUE(timer_ran && phased_ran && watcher_ran);
  EXPECT_EQ(loop->realtime_allocations(), 3u);
}

// --- Misuse that ends the program, as in AOS (with our messages).

// AOS: InvalidChannelName
TEST_P(AbstractEventLoopDeathTest, WatchingAChannelTheConfigLacksNamesIt) {
  auto loop = MakeIdle("primary");
  EXPECT_DEATH(loop->MakeWatcher("/test/invalid", [](const TestMessage&) {}),
               "channel /test/invalid of type aos.testing.TestMessage is not "
               "in the config");
  EXPECT_DEATH(loop->MakeNoArgWatcher<TestMessage>("/test/invalid", []() {}),
               "channel /test/invalid of type aos.testing.TestMessage is not "
               "in the config");
}

// AOS: NegativeTimeTimer
TEST_P(AbstractEventLoopDeathTest, SchedulingBeforeTheClocksEpochDies) {
  auto loop = MakeIdle("primary");
  TimerHandler* timer = loop->AddTimer([]() {});
  timer->set_name("early");
  EXPECT_DEATH(timer->Schedule(monotonic_clock::epoch() - seconds(1)),
               "timer \"early\" of event loop primary scheduled for "
               "-1\\.000000000 s, before the monotonic clock's epoch");
}

// AOS: TwoWatcher, TwoNoArgWatcher
TEST_P(AbstractEventLoopDeathTest, ASecondWatcherOfAChannelDies) {
  auto loop = MakeIdle("primary");
  auto no_arg_loop = MakeIdle("no_arg");
  loop->MakeWatcher("/test", [](const TestMessage&) {});
  no_arg_loop->MakeNoArgWatcher<TestMessage>("/test", []() {});
  for (EventLoop* watching : {loop.get(), no_arg_loop.get()}) {
    EXPECT_DEATH(watching->MakeWatcher("/test", [](const TestMessage&) {}),
                 "already watches /test \\(type aos.testing.TestMessage\\)");
    EXPECT_DEATH(watching->MakeNoArgWatcher<TestMessage>("/test", []() {}),
                 "already watches /test \\(type aos.testing.TestMessage\\)");
  }
}

// AOS: SetRuntimeRealtimePriority
TEST_P(AbstractEventLoopDeathTest, SetRuntimeRealtimePriorityWhileRunningDies) {
  auto loop = Make("primary");
  EXPECT_EQ(loop->runtime_realtime_priority(), 0);
  loop->SetRuntimeRealtimePriority(5);
  EXPECT_EQ(loop->runtime_realtime_priority(), 5);
  // Runs at normal priority: only the call while running matters here.
  loop->SetRuntimeRealtimePriority(0);
  loop->OnRun([&]() {
    EXPECT_DEATH(loop->SetRuntimeRealtimePriority(5),
                 "SetRuntimeRealtimePriority must be called before the loop "
                 "first runs");
    loop->Exit();
  });
  Run();
}

// AOS: SetRuntimeAffinity
TEST_P(AbstractEventLoopDeathTest, SetRuntimeAffinityWhileRunningDies) {
  cpu_set_t available;
  ASSERT_EQ(sched_getaffinity(0, sizeof(available), &available), 0);
  int first_cpu = 0;
  while (!CPU_ISSET(first_cpu, &available)) ++first_cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first_cpu, &one);
  auto loop = Make("primary");
  const cpu_set_t all = EventLoop::DefaultAffinity();
  EXPECT_TRUE(CPU_EQUAL(&all, &loop->runtime_affinity()));
  EXPECT_FALSE(loop->pinned());
  loop->SetRuntimeAffinity(one);
  EXPECT_TRUE(CPU_EQUAL(&one, &loop->runtime_affinity()));
  EXPECT_TRUE(loop->pinned());
  // Runs unpinned: only the call while running matters here.
  loop->SetRuntimeAffinity(all);
  EXPECT_FALSE(loop->pinned());
  loop->OnRun([&]() {
    EXPECT_DEATH(
        loop->SetRuntimeAffinity(one),
        "SetRuntimeAffinity must be called before the loop first runs");
    loop->Exit();
  });
  Run();
}

// A message of exactly max_size fits; a byte more dies naming the channel.
// AOS: SenderRespectsMaxSize
TEST_P(AbstractEventLoopDeathTest, AMessageOfExactlyMaxSizeFits) {
  auto loop = MakeIdle("primary");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  const int max_size = sender.channel()->max_size();
  ASSERT_EQ(max_size % 4, 0);
  auto builder = sender.MakeBuilder();
  // With its 4-byte length, exactly max_size bytes.
  builder.fbb()->CreateVector(std::vector<uint32_t>(max_size / 4 - 1));
  EXPECT_EQ(builder.fbb()->GetSize(), static_cast<size_t>(max_size));
  EXPECT_DEATH(builder.fbb()->CreateVector(std::vector<uint32_t>()),
               "a message on /test \\(type aos.testing.TestMessage\\) grew to "
               "[0-9]+ bytes, more than its max_size 64");
}

// Senders and fetchers live as long as their loop runs.
// AOS: DestroyFetcherInOnRun
TEST_P(AbstractEventLoopDeathTest, DestroyingASenderOrFetcherWhileRunningDies) {
  auto loop = Make("primary");
  Fetcher<TestMessage> fetcher = loop->MakeFetcher<TestMessage>("/test");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  loop->OnRun([&]() {
    EXPECT_DEATH(fetcher = Fetcher<TestMessage>(),
                 "destroying the fetcher on /test \\(type "
                 "aos.testing.TestMessage\\) while the loop runs");
    EXPECT_DEATH(sender = Sender<TestMessage>(),
                 "destroying the sender on /test \\(type "
                 "aos.testing.TestMessage\\) while the loop runs");
    loop->Exit();
  });
  Run();
}

// A channel that is not the config's own (a copy), or not in it at all.
// AOS: InvalidChannel
TEST_P(AbstractEventLoopDeathTest, AChannelNotFromTheConfigDies) {
  auto loop = MakeIdle("primary");
  const FlatbufferDetachedBuffer<Configuration> other = SuiteConfig(kConfig);
  const Channel* copy = configuration::GetChannel(
      other.message(), "/test", "aos.testing.TestMessage", "primary", nullptr,
      nullptr, configuration::ChannelAccess::kExists);
  ASSERT_NE(copy, nullptr);
  const std::string not_ours =
      "channel /test \\(type aos.testing.TestMessage\\) is not from event "
      "loop primary's configuration";
  const std::string missing =
      "channel /testbad of type aos.testing.TestMessage is not in the config";
  EXPECT_DEATH(loop->MakeRawSender(copy), not_ours);
  EXPECT_DEATH(loop->MakeSender<TestMessage>("/testbad"), missing);
  EXPECT_FALSE(loop->TryMakeSender<TestMessage>("/testbad").valid());
  EXPECT_DEATH(loop->MakeRawFetcher(copy), not_ours);
  EXPECT_DEATH(loop->MakeFetcher<TestMessage>("/testbad"), missing);
  EXPECT_FALSE(loop->TryMakeFetcher<TestMessage>("/testbad").valid());
  EXPECT_DEATH(loop->MakeRawWatcher(copy, [](const Context&, const void*) {}),
               not_ours);
  EXPECT_DEATH(loop->MakeWatcher("/testbad", [](const TestMessage&) {}),
               missing);
}

// On node "me": /test_forward is readable (forwarded here) but only "them"
// sends it; /test_noforward is not readable here at all. Making what the
// node may not use dies naming the channel and the node; TryMake* give an
// invalid object that says the same when used.
// AOS: InaccessibleChannel
TEST_P(AbstractEventLoopDeathTest, ChannelsANodeMayNotUseAreNamed) {
  EnableNodes("me");
  auto loop = MakeIdle("them");
  EXPECT_DEATH(loop->MakeSender<TestMessage>("/test_forward"),
               "channel /test_forward of type aos.testing.TestMessage cannot "
               "be sent on node me");
  Sender<TestMessage> sender =
      loop->TryMakeSender<TestMessage>("/test_forward");
  EXPECT_FALSE(sender.valid());
  EXPECT_DEATH((void)SendPing(&sender, 1),
               "using a Sender that was not made: channel /test_forward of "
               "type aos.testing.TestMessage cannot be sent on node me");
  // Readable here: fetching it is fine.
  Fetcher<TestMessage> forwarded =
      loop->TryMakeFetcher<TestMessage>("/test_forward");
  EXPECT_TRUE(forwarded.valid());
  EXPECT_FALSE(forwarded.Fetch());

  const Channel* noforward = loop->GetChannel<TestMessage>("/test_noforward");
  ASSERT_NE(noforward, nullptr);
  const std::string unreadable =
      "/test_noforward \\(type aos.testing.TestMessage\\): it is not readable "
      "on node me";
  const std::string unreadable_by_name =
      "channel /test_noforward of type aos.testing.TestMessage is not "
      "readable on node me";
  EXPECT_DEATH(loop->MakeRawFetcher(noforward), "MakeFetcher on " + unreadable);
  EXPECT_DEATH(loop->MakeFetcher<TestMessage>("/test_noforward"),
               unreadable_by_name);
  EXPECT_FALSE(loop->TryMakeFetcher<TestMessage>("/test_noforward").valid());
  EXPECT_DEATH(
      loop->MakeRawWatcher(noforward, [](const Context&, const void*) {}),
      "MakeWatcher on " + unreadable);
  EXPECT_DEATH(loop->MakeWatcher("/test_noforward", [](const TestMessage&) {}),
               unreadable_by_name);
}

// On node "them", /test (sent by "me", forwarded nowhere) may be neither
// watched, fetched nor sent.
// AOS: NodeWatcher, NodeFetcher, NodeSender (the death tests)
TEST_P(AbstractEventLoopDeathTest, AnotherNodesChannelDiesNamingTheNode) {
  EnableNodes("them");
  auto loop = MakeIdle("primary");
  const Channel* test = loop->GetChannel<TestMessage>("/test");
  ASSERT_NE(test, nullptr);
  const std::string unreadable = "is not readable on node them";
  EXPECT_DEATH(loop->MakeWatcher("/test", [](const TestMessage&) {}),
               unreadable);
  EXPECT_DEATH(loop->MakeRawWatcher(test, [](const Context&, const void*) {}),
               unreadable);
  EXPECT_DEATH(loop->MakeNoArgWatcher<TestMessage>("/test", []() {}),
               unreadable);
  EXPECT_DEATH(loop->MakeRawNoArgWatcher(test, [](const Context&) {}),
               unreadable);
  EXPECT_DEATH(loop->MakeFetcher<TestMessage>("/test"), unreadable);
  EXPECT_DEATH(loop->MakeRawFetcher(test), unreadable);
  EXPECT_DEATH(loop->MakeSender<TestMessage>("/test"),
               "cannot be sent on node them");
}

// One message under construction per sender: a builder that allocated, or
// a detached buffer not yet sent or dropped, holds the sender's buffer.
// AOS: MultipleBuilders
TEST_P(AbstractEventLoopDeathTest, OneBuilderOrDetachedBufferAtATime) {
  auto loop = MakeIdle("primary");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  const std::string second = "a second message is being built on /test";
  { auto unused = sender.MakeBuilder(); }
  {
    auto builder = sender.MakeBuilder();
    builder.MakeBuilder<TestMessage>().Finish();
  }
  {
    auto builder = sender.MakeBuilder();
    builder.MakeBuilder<TestMessage>().Finish();
    EXPECT_DEATH(sender.MakeBuilder().MakeBuilder<TestMessage>().Finish(),
                 second);
  }
  auto detach = [&]() {
    auto builder = sender.MakeBuilder();
    return builder.Detach(builder.MakeBuilder<TestMessage>().Finish());
  };
  FlatbufferDetachedBuffer<TestMessage> detached = detach();
  EXPECT_DEATH(sender.MakeBuilder().MakeBuilder<TestMessage>().Finish(),
               second);
  detached =
      FlatbufferDetachedBuffer<TestMessage>(flatbuffers::DetachedBuffer());
  {
    auto builder = sender.MakeBuilder();
    builder.MakeBuilder<TestMessage>().Finish();
  }
  detached = detach();
}

// AOS: WrongDetachedBuffer
TEST_P(AbstractEventLoopDeathTest, SendingAnotherSendersDetachedBufferDies) {
  auto loop = MakeIdle("primary");
  Sender<TestMessage> first = loop->MakeSender<TestMessage>("/test");
  Sender<TestMessage> second = loop->MakeSender<TestMessage>("/test");
  auto builder = first.MakeBuilder();
  FlatbufferDetachedBuffer<TestMessage> detached =
      builder.Detach(builder.MakeBuilder<TestMessage>().Finish());
  EXPECT_DEATH(second.CheckOk(second.SendDetached(std::move(detached))),
               "SendDetached on /test \\(type aos.testing.TestMessage\\) with "
               "a buffer another sender's Builder detached");
}

// AOS: SetVersionWhileRunning
TEST_P(AbstractEventLoopDeathTest, SetVersionStringWhileRunningDies) {
  auto loop = Make("primary");
  loop->OnRun([&]() {
    EXPECT_DEATH(loop->SetVersionString("abcdef"),
                 "SetVersionString must be called before the loop first runs");
    loop->Exit();
  });
  Run();
}

// --- Path latency (docs/timing_reports.md, "Path latency") -----------------

// Sends a TestReply with `value`.
RawSender::Error SendReply(Sender<TestReply>* sender, int value) {
  auto builder = sender->MakeBuilder();
  TestReply::Builder reply = builder.MakeBuilder<TestReply>();
  reply.add_value(value);
  return builder.Send(reply.Finish());
}

// The origins of `context` as a list, for comparisons.
std::vector<PathOrigin> OriginsOf(const Context& context) {
  return std::vector<PathOrigin>(context.origins.begin(),
                                 context.origins.end());
}

PathOrigin OriginAt(uint32_t id, uint16_t hops,
                    monotonic_clock::time_point time) {
  return PathOrigin{.id = id,
                    .hops = hops,
                    .monotonic_time_ns = time.time_since_epoch().count()};
}

// A timer's send carries the timer as its origin, at the time it was
// scheduled for; a watcher that sends passes it on with one hop more. Exact
// on both loops: the origin's time is a schedule, not a measurement. (The
// sensor reads every 10 ms until the chain is through: the other loops may
// start watching late.)
TEST_P(AbstractEventLoopTest, PathOriginsFollowTheDataHopByHop) {
  auto sensor = Make("sensor");
  auto filter = Make("filter");
  auto actor = Make("actor");
  for (EventLoop* loop : {sensor.get(), filter.get(), actor.get()}) {
    // No report windows: the figures stay until the test reads them.
    loop->SkipTimingReport();
  }
  Sender<TestMessage> readings = sensor->MakeSender<TestMessage>("/test");
  Sender<TestReply> commands = filter->MakeSender<TestReply>("/test");
  std::vector<int64_t> scheduled;
  TimerHandler* read = sensor->AddTimer([&]() {
    scheduled.push_back(
        sensor->context().monotonic_event_time.time_since_epoch().count());
    ASSERT_EQ(SendPing(&readings, 1), RawSender::Error::kOk);
  });
  read->set_name("read");
  scheduled.reserve(10000);
  std::vector<PathOrigin> at_filter;
  filter->MakeWatcher("/test", [&](const TestMessage&) {
    at_filter = OriginsOf(filter->context());
    ASSERT_EQ(SendReply(&commands, 2), RawSender::Error::kOk);
  });
  std::vector<PathOrigin> at_actor;
  monotonic_clock::time_point actor_start = monotonic_clock::min_time;
  actor->MakeWatcher("/test", [&](const TestReply&) {
    at_actor = OriginsOf(actor->context());
    actor_start = actor->monotonic_now();
    actor->Exit();
  });
  sensor->OnRun([&]() {
    read->Schedule(sensor->monotonic_now() + milliseconds(10),
                   milliseconds(10));
  });
  FailUnlessDoneWithinTheDeadline(actor.get(), "a command");
  Run();

  const uint32_t id = PathOriginId(
      sensor->node() == nullptr ? "" : sensor->node()->name()->string_view(),
      "sensor", "timer", "read");
  EXPECT_EQ(read->timing().origin_id, id);
  auto was_scheduled = [&](const PathOrigin& origin) {
    return std::find(scheduled.begin(), scheduled.end(),
                     origin.monotonic_time_ns) != scheduled.end();
  };
  ASSERT_EQ(at_filter.size(), 1u);
  EXPECT_EQ(at_filter[0].id, id);
  EXPECT_EQ(at_filter[0].hops, 1);
  EXPECT_TRUE(was_scheduled(at_filter[0]));
  ASSERT_EQ(at_actor.size(), 1u);
  EXPECT_EQ(at_actor[0].id, id);
  EXPECT_EQ(at_actor[0].hops, 2);
  EXPECT_TRUE(was_scheduled(at_actor[0]));
  EXPECT_EQ(at_actor[0].uncertainty_us, 0);
  // What each measured: the age at its callback's start, under its path.
  const timing::PathTimings& paths = actor->watchers()[0]->timing().paths;
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths.begin()->origin_id, id);
  EXPECT_EQ(paths.begin()->hops, 2u);
  EXPECT_EQ(paths.begin()->count(), 1u);
  // Taken at the callback's start, before the handler read the clock.
  EXPECT_GE(paths.begin()->age.histogram().min_ns(), 0);
  EXPECT_LE(
      paths.begin()->age.histogram().max_ns(),
      actor_start.time_since_epoch().count() - at_actor[0].monotonic_time_ns);
  EXPECT_EQ(filter->watchers()[0]->timing().paths.begin()->hops, 1u);
  // What each sender passed on.
  const timing::SentOrigins& sent = filter->senders()[0]->timing().sent_origins;
  ASSERT_GE(sent.size(), 1u);
  EXPECT_EQ(sent.begin()->origin_id, id);
  EXPECT_EQ(sent.begin()->hops, 2u);
  if (time_is_simulated()) {
    // Nothing took time: the command was as old as the reading.
    EXPECT_EQ(paths.begin()->age.histogram().max_ns(), 0);
  }
}

// A timer that fetches passes on what it fetched, not itself; one that gets
// nothing is the origin. Fetchers measure ages at the callback's start.
TEST_P(AbstractEventLoopTest, AFetchPassesItsOriginsOn) {
  auto sensor = Make("sensor");
  auto control = Make("control");
  auto actor = Make("actor");
  for (EventLoop* loop : {sensor.get(), control.get(), actor.get()}) {
    loop->SkipTimingReport();
  }
  Sender<TestMessage> readings = sensor->MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> latest = control->MakeFetcher<TestMessage>("/test");
  Sender<TestReply> commands = control->MakeSender<TestReply>("/test");
  monotonic_clock::time_point read_at = monotonic_clock::min_time;
  monotonic_clock::time_point control_at = monotonic_clock::min_time;
  // One reading, taken once the actor watches (it has seen a command), so
  // that a loop started late cannot miss the command that carries it.
  std::atomic<bool> actor_watches = false;
  TimerHandler* read = sensor->AddTimer([&]() {
    if (!actor_watches.load()) return;
    read_at = sensor->context().monotonic_event_time;
    read->Disable();
    ASSERT_EQ(SendPing(&readings, 1), RawSender::Error::kOk);
  });
  read->set_name("read");
  // Every step sends a command: after a step that fetched the new reading,
  // with the reading's origin; after the others (nothing new to read),
  // with the step itself as the origin.
  TimerHandler* step = control->AddTimer([&]() {
    (void)latest.Fetch();
    ASSERT_EQ(SendReply(&commands, 0), RawSender::Error::kOk);
  });
  step->set_name("step");
  auto id_of = [&](std::string_view loop, std::string_view name) {
    return PathOriginId(
        sensor->node() == nullptr ? "" : sensor->node()->name()->string_view(),
        loop, "timer", name);
  };
  // The actor may start watching after the first commands: it waits until
  // it has seen both kinds.
  std::vector<std::vector<PathOrigin>> at_actor;
  bool saw_step = false;
  bool saw_read = false;
  actor->MakeWatcher("/test", [&](const TestReply&) {
    actor_watches.store(true);
    at_actor.push_back(OriginsOf(actor->context()));
    for (const PathOrigin& origin : actor->context().origins) {
      saw_step |= origin.id == id_of("control", "step");
      saw_read |= origin.id == id_of("sensor", "read");
    }
    if (saw_step && saw_read) actor->Exit();
  });
  sensor->OnRun([&]() {
    read->Schedule(sensor->monotonic_now() + milliseconds(5), milliseconds(5));
  });
  control->OnRun([&]() {
    control_at = control->monotonic_now();
    step->Schedule(control_at, milliseconds(20));
  });
  FailUnlessDoneWithinTheDeadline(actor.get(), "commands of both kinds");
  Run();

  EXPECT_TRUE(saw_step && saw_read);
  int from_the_reading = 0;
  for (const std::vector<PathOrigin>& origins : at_actor) {
    ASSERT_EQ(origins.size(), 1u);
    const PathOrigin& origin = origins[0];
    if (origin.id == id_of("sensor", "read")) {
      // The reading, fetched once, two hops on.
      ++from_the_reading;
      EXPECT_EQ(origin, OriginAt(id_of("sensor", "read"), 2, read_at));
    } else {
      // A step itself, on its 20 ms grid.
      EXPECT_EQ(origin.id, id_of("control", "step"));
      EXPECT_EQ(origin.hops, 1);
      EXPECT_EQ(
          (origin.monotonic_time_ns - control_at.time_since_epoch().count()) %
              20000000,
          0);
    }
  }
  EXPECT_EQ(from_the_reading, 1);
  const timing::PathTimings& fetched = control->fetchers()[0]->timing().paths;
  ASSERT_EQ(fetched.size(), 1u);
  EXPECT_EQ(fetched.begin()->hops, 1u);
  EXPECT_EQ(fetched.begin()->count(), 1u);
  if (time_is_simulated()) {
    // Fetched by the step at 20 ms of a reading scheduled at 5 ms.
    EXPECT_EQ(fetched.begin()->age.histogram().max_ns(),
              (control_at + milliseconds(20) - read_at).count());
  }
}

// Code that keeps messages and sends later says what the send carries:
// every kept message's origins, one hop on, not the timer that sends.
TEST_P(AbstractEventLoopTest, SetOriginsCarriesKeptOriginsToALaterSend) {
  auto sensors = Make("sensors");
  auto batcher = Make("batcher");
  auto actor = Make("actor");
  for (EventLoop* loop : {sensors.get(), batcher.get(), actor.get()}) {
    loop->SkipTimingReport();
  }
  Sender<TestMessage> readings = sensors->MakeSender<TestMessage>("/test");
  Sender<TestReply> batches = batcher->MakeSender<TestReply>("/test");
  std::vector<int64_t> left_at;
  std::vector<int64_t> right_at;
  left_at.reserve(10000);
  right_at.reserve(10000);
  auto reading = [&](std::vector<int64_t>* times, int value) {
    times->push_back(
        sensors->context().monotonic_event_time.time_since_epoch().count());
    ASSERT_EQ(SendPing(&readings, value), RawSender::Error::kOk);
  };
  TimerHandler* left = sensors->AddTimer([&]() { reading(&left_at, 1); });
  left->set_name("left");
  TimerHandler* right = sensors->AddTimer([&]() { reading(&right_at, 2); });
  right->set_name("right");
  // Keeps the origins of what it reads; once it kept both sensors', sends
  // them from a timer a millisecond later.
  PathOrigins kept;
  bool flushing = false;
  TimerHandler* flush = batcher->AddTimer([&]() {
    batches.SetOrigins(kept);
    ASSERT_EQ(SendReply(&batches, 3), RawSender::Error::kOk);
  });
  flush->set_name("flush");
  batcher->MakeWatcher("/test", [&](const TestMessage&) {
    if (flushing) return;
    kept.Merge(batcher->context().origins);
    if (kept.size() == 2) {
      flushing = true;
      flush->Schedule(batcher->monotonic_now() + milliseconds(1));
    }
  });
  std::vector<PathOrigin> at_actor;
  actor->MakeWatcher("/test", [&](const TestReply&) {
    at_actor = OriginsOf(actor->context());
    actor->Exit();
  });
  sensors->OnRun([&]() {
    const monotonic_clock::time_point now = sensors->monotonic_now();
    left->Schedule(now + milliseconds(2), milliseconds(10));
    right->Schedule(now + milliseconds(5), milliseconds(10));
  });
  FailUnlessDoneWithinTheDeadline(actor.get(), "the batch");
  Run();

  auto id_of = [&](std::string_view name) {
    return PathOriginId(sensors->node() == nullptr
                            ? ""
                            : sensors->node()->name()->string_view(),
                        "sensors", "timer", name);
  };
  ASSERT_EQ(at_actor.size(), 2u);
  for (const PathOrigin& origin : at_actor) {
    EXPECT_EQ(origin.hops, 2);
    const std::vector<int64_t>& times =
        origin.id == id_of("left") ? left_at : right_at;
    EXPECT_TRUE(origin.id == id_of("left") || origin.id == id_of("right"));
    EXPECT_NE(std::find(times.begin(), times.end(), origin.monotonic_time_ns),
              times.end());
  }
  EXPECT_NE(at_actor[0].id, at_actor[1].id);
}

}  // namespace
}  // namespace aos::testing
