#include "aos/events/shm_event_loop.h"

#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "aos/events/event_loop_generated.h"
#include "aos/events/event_loop_param_test.h"
#include "aos/events/timing_report_codec.h"
#include "aos/testing/allocation_counter.h"
#include "aos/testing/path.h"
#include "aos/testing/processes.h"
#include "aos/testing/small_filesystem.h"
#include "aos/testing/test_message_generated.h"
#include "aos/testing/test_reply_generated.h"
#include "aos/testing/wait_until.h"
#include "aos/tracing/event_ring.h"
#include "aos/tracing/ring_reader.h"
#include "aos/util/cpu_set.h"
#include "aos/util/scoped_fd.h"
#include "gmock/gmock.h"

DECLARE_int32(timing_report_ms);

namespace aos::testing {
namespace {

using aos::testing::TestMessage;
using std::chrono::milliseconds;

// Runs each loop in a thread of its own; when one returns (Exit), all stop.
// Each factory has a fresh --shm_base of its own (removed with it), so every
// test starts with empty channels, as in simulation.
class ShmTestFactory : public EventLoopTestFactory {
 public:
  ShmTestFactory() {
    static std::atomic<int> made{0};
    shm_base_ = TestTempDir() + "/shm-" + std::to_string(getpid()) + "-" +
                std::to_string(made++);
    FLAGS_shm_base = shm_base_;
    FLAGS_permissions = "0600";
  }
  ~ShmTestFactory() override {
    CHECK(loops_.empty()) << "destroy the loops before their factory";
    std::error_code ignored;
    std::filesystem::remove_all(shm_base_, ignored);
  }

  std::unique_ptr<EventLoop> MakeEventLoop(std::string_view name) override {
    auto loop = std::make_unique<FactoryLoop>(this, name);
    loops_.push_back(loop.get());
    return loop;
  }
  std::unique_ptr<EventLoop> MakeIdleEventLoop(std::string_view name) override {
    return std::make_unique<FactoryLoop>(this, name);
  }

  RunStatus Run() override { return RunLoops(std::nullopt); }
  std::unique_ptr<ExitHandle> MakeExitHandle() override {
    return std::make_unique<AllLoopsExitHandle>(this);
  }
  void RunFor(monotonic_clock::duration duration) override {
    (void)RunLoops(duration);
  }
  void Stall(monotonic_clock::duration duration) override {
    std::this_thread::sleep_for(duration);
  }
  bool time_is_simulated() const override { return false; }

 private:
  // Forgets itself when destroyed: a test may make and destroy loops
  // between runs.
  class FactoryLoop : public ShmEventLoop {
   public:
    FactoryLoop(ShmTestFactory* factory, std::string_view name)
        : ShmEventLoop(factory->configuration(), name, factory->my_node()),
          factory_(factory) {}
    ~FactoryLoop() override { std::erase(factory_->loops_, this); }

   private:
    ShmTestFactory* const factory_;
  };

  // Ends every loop with a status: the first status wins.
  class AllLoopsExitHandle : public ExitHandle {
   public:
    explicit AllLoopsExitHandle(ShmTestFactory* factory) : factory_(factory) {}
    void Exit(absl::Status status) override {
      {
        std::lock_guard<std::mutex> lock(factory_->mutex_);
        if (!factory_->status_.has_value()) factory_->status_ = status;
      }
      factory_->ExitUnfinished();
    }

   private:
    ShmTestFactory* const factory_;
  };

  // Exits the loops of this run whose Run() has not returned. (A loop whose
  // Run() returned, and that did not say so yet, may get an Exit() that ends
  // its next Run() at once: the suite runs a loop twice only alone.)
  void ExitUnfinished() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < running_.size(); ++i) {
      if (!finished_[i]) running_[i]->Exit();
    }
  }

  absl::Status RunLoops(std::optional<monotonic_clock::duration> duration) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = loops_;
      finished_.assign(running_.size(), false);
    }
    std::vector<std::thread> threads;
    for (size_t i = 0; i < running_.size(); ++i) {
      threads.emplace_back([this, i]() {
        (void)running_[i]->Run();
        {
          std::lock_guard<std::mutex> lock(mutex_);
          finished_[i] = true;
        }
        ExitUnfinished();
      });
    }
    if (duration.has_value()) {
      std::this_thread::sleep_for(*duration);
      ExitUnfinished();
    }
    for (std::thread& thread : threads) thread.join();
    std::lock_guard<std::mutex> lock(mutex_);
    running_.clear();
    finished_.clear();
    absl::Status status = status_.value_or(absl::OkStatus());
    status_.reset();
    return status;
  }

  std::string shm_base_;
  std::vector<ShmEventLoop*> loops_;
  std::mutex mutex_;
  // The loops of the run under way, and whether each one's Run() returned.
  std::vector<ShmEventLoop*> running_;
  std::vector<bool> finished_;
  std::optional<absl::Status> status_;
};

std::unique_ptr<EventLoopTestFactory> MakeShmTestFactory() {
  return std::make_unique<ShmTestFactory>();
}

INSTANTIATE_TEST_SUITE_P(Shm, AbstractEventLoopTest,
                         ::testing::Values(MakeShmTestFactory));
INSTANTIATE_TEST_SUITE_P(Shm, AbstractEventLoopDeathTest,
                         ::testing::Values(MakeShmTestFactory));

// Each test has a fresh --shm_base: the factory's.
class ShmEventLoopTest : public ::testing::Test {
 protected:
  ShmTestFactory factory_;
};

TEST_F(ShmEventLoopTest, ChannelFilesLiveUnderShmBaseWithThePermissions) {
  FLAGS_permissions = "0640";
  const mode_t old_umask = umask(0);
  auto loop = factory_.MakeEventLoop("loop");
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  umask(old_umask);
  FLAGS_permissions = "0600";
  const std::string path = ShmEventLoop::ShmPath(sender.channel());
  EXPECT_EQ(path, FLAGS_shm_base + "/test/aos.testing.TestMessage.v4");
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0) << path;
  EXPECT_EQ(info.st_mode & 0777, 0640u);
}

// Read when the loop is made, as AOS reads it.
TEST_F(ShmEventLoopTest, BadPermissionsFlagIsNamed) {
  FLAGS_permissions = "rw-r--r--";
  EXPECT_DEATH(ShmEventLoop(factory_.configuration(), "loop"),
               "--permissions=rw-r--r-- is not an octal file mode");
  FLAGS_permissions = "0600";
}

// --shm_base too: a loop keeps the one it was made with.
TEST_F(ShmEventLoopTest, ShmBaseIsTheOneTheLoopWasMadeWith) {
  const std::string made_with = FLAGS_shm_base;
  ShmEventLoop loop(factory_.configuration(), "loop");
  FLAGS_shm_base = made_with + "/elsewhere";
  Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
  FLAGS_shm_base = made_with;
  EXPECT_EQ(loop.shm_base(), made_with);
  EXPECT_TRUE(std::filesystem::exists(
      ShmEventLoop::ShmPath(made_with, sender.channel())));
  EXPECT_FALSE(std::filesystem::exists(made_with + "/elsewhere"));
}

// A sender in a child process, a watcher and a fetcher in this one.
TEST_F(ShmEventLoopTest, MessagesCrossProcessesInOrder) {
  constexpr int kMessages = 200;
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  ScopedFd go_read(go[0]);
  ScopedFd go_write(go[1]);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child waits for the parent's watcher, then sends every 500 us.
    char byte;
    if (read(go_read.get(), &byte, 1) != 1) _exit(2);
    ShmEventLoop loop(factory_.configuration(), "child");
    loop.SkipTimingReport();
    Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
    int value = 0;
    TimerHandler* timer = loop.AddTimer([&]() {
      auto builder = sender.MakeBuilder();
      TestMessage::Builder ping = builder.MakeBuilder<TestMessage>();
      ping.add_value(++value);
      if (builder.Send(ping.Finish()) != RawSender::Error::kOk) _exit(3);
      if (value == kMessages) loop.Exit();
    });
    loop.OnRun([&]() {
      timer->Schedule(loop.monotonic_now(), std::chrono::microseconds(500));
    });
    loop.Run();
    _exit(0);
  }

  ShmEventLoop loop(factory_.configuration(), "parent");
  Fetcher<TestMessage> fetcher = loop.MakeFetcher<TestMessage>("/test");
  std::vector<int> values;
  std::vector<uint32_t> queue_indices;
  loop.MakeWatcher("/test", [&](const TestMessage& ping) {
    values.push_back(ping.value());
    queue_indices.push_back(loop.context().queue_index);
    EXPECT_LE(loop.context().monotonic_event_time, loop.monotonic_now());
    if (ping.value() == kMessages) loop.Exit();
  });
  TimerHandler* give_up = loop.AddTimer([&]() {
    ADD_FAILURE() << "no message " << kMessages << " within 60 s";
    loop.Exit();
  });
  loop.OnRun([&]() {
    give_up->Schedule(loop.monotonic_now() + std::chrono::seconds(60));
    ASSERT_EQ(write(go_write.get(), "g", 1), 1);
  });
  loop.Run();
  // If the parent failed before saying go, the child now reads end of file
  // and exits instead of waiting forever.
  go_read.reset();
  go_write.reset();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child status " << status;

  ASSERT_EQ(values.size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(values[i], i + 1);
  for (size_t i = 1; i < queue_indices.size(); ++i) {
    EXPECT_EQ(queue_indices[i], queue_indices[i - 1] + 1);
  }
  ASSERT_TRUE(fetcher.Fetch());
  EXPECT_EQ(fetcher->value(), kMessages);
  const timing::WatcherTiming& timing = loop.watchers()[0]->timing();
  EXPECT_EQ(timing.lost_messages, 0u);
}

// Realtime refused (an unprivileged user with rtprio 0): one clear warning
// and normal priority, or death with --die_on_rt_failure.
class ShmEventLoopRealtimeTest : public ShmEventLoopTest {
 protected:
  // In a forked child: become nobody (root can always get SCHED_FIFO) with a
  // shm base nobody may write, then run a loop asking for priority 5.
  static void RunAsNobodyAskingForRealtime(const Configuration* config) {
    char directory[] = "/tmp/aos_rt_test_XXXXXX";
    CHECK(mkdtemp(directory) != nullptr);
    CHECK_EQ(chmod(directory, 0777), 0);
    FLAGS_shm_base = directory;
    struct rlimit none = {0, 0};
    CHECK_EQ(setrlimit(RLIMIT_RTPRIO, &none), 0);
    if (setgid(65534) != 0 || setuid(65534) != 0) {
      fprintf(stderr, "cannot become nobody\n");
      _exit(42);
    }
    ShmEventLoop loop(config, "rt");
    loop.SkipTimingReport();
    loop.SetRuntimeRealtimePriority(5);
    loop.OnRun([&]() {
      struct sched_param param;
      int policy = sched_getscheduler(0);
      sched_getparam(0, &param);
      fprintf(stderr, "running with policy %d\n", policy);
      loop.Exit();
    });
    loop.Run();
  }
};

TEST_F(ShmEventLoopRealtimeTest, RefusedRealtimeWarnsOnceAndRunsNormally) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to become an unprivileged user";
  FLAGS_die_on_rt_failure = false;
  EXPECT_EXIT(
      {
        RunAsNobodyAskingForRealtime(factory_.configuration());
        exit(0);
      },
      ::testing::ExitedWithCode(0),
      "could not run at SCHED_FIFO priority 5: Operation not permitted; allow "
      "it "
      "with a line like '\\* - rtprio 99' in /etc/security/limits.conf.*"
      "continuing without it.*running with policy 0");
}

TEST_F(ShmEventLoopRealtimeTest, DieOnRtFailureAborts) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to become an unprivileged user";
  FLAGS_die_on_rt_failure = true;
  EXPECT_DEATH(RunAsNobodyAskingForRealtime(factory_.configuration()),
               "could not run at SCHED_FIFO priority 5");
  FLAGS_die_on_rt_failure = false;
}

// The loop runs the watchers before it reads its signalfd. A message a
// handler sends during that pass, whose wakeup signal the following read
// consumes, must still be delivered without waiting for another signal.
TEST_F(ShmEventLoopTest, MessageWhoseWakeupWasReadAfterItsTurnIsDelivered) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  Sender<TestMessage> ping_sender = loop.MakeSender<TestMessage>("/test");
  Sender<testing::TestReply> pong_sender =
      loop.MakeSender<testing::TestReply>("/test");
  bool got_pong = false;
  loop.MakeWatcher("/test", [&](const testing::TestReply&) {
    got_pong = true;
    loop.Exit();
  });
  loop.MakeWatcher("/test", [&](const TestMessage&) {
    auto builder = pong_sender.MakeBuilder();
    builder.CheckOk(
        builder.Send(builder.MakeBuilder<testing::TestReply>().Finish()));
  });
  // From a timer, so the TestMessage's wakeup arrives through epoll.
  TimerHandler* send_ping = loop.AddTimer([&]() {
    auto builder = ping_sender.MakeBuilder();
    builder.CheckOk(builder.Send(builder.MakeBuilder<TestMessage>().Finish()));
  });
  TimerHandler* give_up = loop.AddTimer([&]() {
    ADD_FAILURE() << "the TestReply was not delivered within 60 s";
    loop.Exit();
  });
  loop.OnRun([&]() {
    send_ping->Schedule(loop.monotonic_now() + milliseconds(10));
    give_up->Schedule(loop.monotonic_now() + std::chrono::seconds(60));
  });
  loop.Run();
  EXPECT_TRUE(got_pong);
}

// How many file descriptors this process has open.
size_t OpenFds() {
  size_t count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++count;
  }
  return count;
}

// The loop's two kernel timers serve every timer: making 100 timers opens
// no file descriptor,
// and 100 timers due at one instant run in one wakeup, in the order they
// were scheduled, each measured against its own scheduled time (its wakeup
// latency is its own start minus that time, not the wakeup's).
// The loop's own check of its queue files runs on a track of its own in the
// flight recorder's ring, under its name; it once ran unnamed on the track
// of the loop's first callback (index 0), here the watcher.
TEST_F(ShmEventLoopTest, SharedMemoryCheckHasItsOwnTraceTrack) {
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 10;
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.MakeWatcher("/test", [](const TestMessage&) {});
  TimerHandler* stop = loop.AddTimer([&]() { loop.Exit(); });
  loop.OnRun([&]() {
    stop->Schedule(loop.monotonic_now() + std::chrono::milliseconds(100));
  });
  loop.Run();
  const tracing::EventRing* ring = loop.trace_ring();
  ASSERT_NE(ring, nullptr);
  absl::StatusOr<tracing::RingCopy> copy =
      tracing::CopyRing({static_cast<const std::byte*>(ring->memory()),
                         tracing::RingBytes(ring->capacity())});
  ASSERT_TRUE(copy.ok()) << copy.status();
  int check = -1;
  int watcher = -1;
  for (const tracing::TrackName& name : copy->names) {
    if (name.name == "shared_memory_check") {
      EXPECT_EQ(name.kind, tracing::TrackKind::kTimer);
      check = name.index;
    }
    if (name.kind == tracing::TrackKind::kWatcher) watcher = name.index;
  }
  ASSERT_GE(check, 0) << "no shared_memory_check in the ring's names";
  ASSERT_GE(watcher, 0);
  EXPECT_NE(check, watcher);
  int check_runs = 0;
  for (const tracing::Event& event : copy->events) {
    if (event.kind == tracing::EventKind::kTimerStart) {
      EXPECT_NE(event.index, watcher) << "a timer ran on the watcher's track";
      if (event.index == check) ++check_runs;
    }
  }
  EXPECT_GE(check_runs, 2);
}

// A loop named "loop" that reports every 50 ms, and a fetcher of every
// report on /aos.
class ShmEventLoopReportTest : public ShmEventLoopTest {
 protected:
  gflags::FlagSaver saver_;
  const std::string report_period_ =
      gflags::SetCommandLineOption("timing_report_ms", "50");
  ShmEventLoop reader_{factory_.configuration(), "reader"};
  Fetcher<timing::Report> reports_ =
      reader_.MakeFetcher<timing::Report>("/aos");
  ShmEventLoop loop_{factory_.configuration(), "loop"};
};

// The reports of the loop named `name` that `reports` has not read yet,
// decoded; fails the test on one that does not decode.
std::vector<timing::ReportContents> NextReportsOf(
    Fetcher<timing::Report>* reports, std::string_view name) {
  std::vector<timing::ReportContents> decoded;
  while (reports->FetchNext()) {
    if ((*reports)->name()->string_view() != name) continue;
    absl::StatusOr<timing::ReportContents> contents =
        timing::DecodeTimingReport(*reports->get());
    EXPECT_TRUE(contents.ok()) << contents.status();
    if (contents.ok()) decoded.push_back(std::move(contents).value());
  }
  return decoded;
}

// A sender another thread sends on while the loop runs
// (AllowSendsFromAnotherThread): every send is in the loop's timing reports,
// none lost to a report reading or resetting the figures at the same time,
// and none is in the loop's trace ring, which only the loop's thread writes
// (the loop's own send on /test is).
TEST_F(ShmEventLoopReportTest,
       SendsFromAnotherThreadAreReportedAndLeftOutOfTheRing) {
  Sender<TestMessage> from_other = loop_.MakeSender<TestMessage>("/test");
  from_other.raw()->AllowSendsFromAnotherThread();
  Sender<testing::TestReply> from_loop =
      loop_.MakeSender<testing::TestReply>("/test");
  flatbuffers::FlatBufferBuilder fbb;
  TestMessage::Builder message(fbb);
  message.add_value(1);
  fbb.Finish(message.Finish());
  constexpr int kSends = 400;
  std::atomic<bool> sent_all{false};
  // Written by the other thread, read after it is joined.
  uint64_t sent_ok = 0;
  uint64_t sent_failed = 0;
  std::thread other;
  int ticks_after = 0;
  // Ends the loop 120 ms after the last send: a report (every 50 ms) came
  // between, so the last sends are in one.
  TimerHandler* done = loop_.AddTimer([&]() {
    if (sent_all && ++ticks_after >= 12) loop_.Exit();
  });
  loop_.OnRun([&]() {
    auto builder = from_loop.MakeBuilder();
    testing::TestReply::Builder reply =
        builder.MakeBuilder<testing::TestReply>();
    reply.add_value(2);
    ASSERT_EQ(builder.Send(reply.Finish()), RawSender::Error::kOk);
    other = std::thread([&]() {
      for (int i = 0; i < kSends; ++i) {
        if (from_other.raw()->Send(fbb.GetBufferPointer(), fbb.GetSize()) ==
            RawSender::Error::kOk) {
          ++sent_ok;
        } else {
          ++sent_failed;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      sent_all = true;
    });
    done->Schedule(loop_.monotonic_now(), milliseconds(10));
  });
  loop_.Run();
  other.join();

  const int other_channel = from_other.raw()->timing().channel_index;
  const int loop_channel = from_loop.raw()->timing().channel_index;
  uint64_t reported_ok = 0;
  uint64_t reported_failed = 0;
  for (const timing::ReportContents& contents :
       NextReportsOf(&reports_, "loop")) {
    for (const timing::SenderTiming& sender : contents.senders) {
      if (sender.channel_index != other_channel) continue;
      reported_ok += sender.count;
      for (const uint64_t errors : sender.error_counts) {
        reported_failed += errors;
      }
    }
  }
  EXPECT_EQ(sent_ok + sent_failed, static_cast<uint64_t>(kSends));
  EXPECT_GT(sent_ok, 0u);
  EXPECT_EQ(reported_ok, sent_ok);
  EXPECT_EQ(reported_failed, sent_failed);

  const tracing::EventRing* ring = loop_.trace_ring();
  ASSERT_NE(ring, nullptr);
  absl::StatusOr<tracing::RingCopy> copy =
      tracing::CopyRing({static_cast<const std::byte*>(ring->memory()),
                         tracing::RingBytes(ring->capacity())});
  ASSERT_TRUE(copy.ok()) << copy.status();
  int sends_from_other = 0;
  int sends_from_loop = 0;
  for (const tracing::Event& event : copy->events) {
    if (event.kind != tracing::EventKind::kSend) continue;
    if (event.index == other_channel) ++sends_from_other;
    if (event.index == loop_channel) ++sends_from_loop;
  }
  EXPECT_EQ(sends_from_other, 0);
  EXPECT_EQ(sends_from_loop, 1);
}

TEST_F(ShmEventLoopTest, TimersDueTogetherRunInOneWakeup) {
  constexpr int kTimers = 100;
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  TimerHandler* give_up = loop.AddTimer([&]() {
    ADD_FAILURE() << "not every timer ran within 60 s";
    loop.Exit();
  });
  const size_t fds = OpenFds();
  std::vector<TimerHandler*> timers;
  std::vector<int> order;
  order.reserve(kTimers);
  std::vector<int> wakeup_of(kTimers, -1);
  std::vector<monotonic_clock::time_point> event_time(kTimers);
  std::vector<monotonic_clock::time_point> returning(kTimers);
  int wakeups = 0;
  // Per call after the first: whether the timer before it in the wakeup
  // was counted but had its samples not yet recorded.
  std::vector<bool> samples_deferred;
  for (int i = 0; i < kTimers; ++i) {
    timers.push_back(loop.AddTimer([&, i]() {
      if (!order.empty()) {
        const timing::TimerTiming& before = timers[order.back()]->timing();
        samples_deferred.push_back(
            before.count == 1 &&
            before.wakeup_latency.histogram().count() == 0 &&
            before.handler_time.statistic().count() == 0);
      }
      order.push_back(i);
      wakeup_of[i] = wakeups;
      event_time[i] = loop.context().monotonic_event_time;
      returning[i] = loop.monotonic_now();
      if (order.size() == kTimers) loop.Exit();
    }));
  }
  EXPECT_EQ(OpenFds(), fds);
  loop.OnWakeupEnd([&]() { ++wakeups; });
  monotonic_clock::time_point due;
  loop.OnRun([&]() {
    due = loop.monotonic_now() + milliseconds(20);
    // Last made first: the order they were scheduled in counts.
    for (int i = kTimers - 1; i >= 0; --i) timers[i]->Schedule(due);
    give_up->Schedule(loop.monotonic_now() + std::chrono::seconds(60));
  });
  loop.Run();
  ASSERT_EQ(order.size(), static_cast<size_t>(kTimers));
  // The wakeup that ended OnRun, then the one of the timers.
  EXPECT_EQ(wakeups, 2);
  EXPECT_EQ(samples_deferred, std::vector<bool>(kTimers - 1, true));
  monotonic_clock::time_point previous = due;
  for (int k = 0; k < kTimers; ++k) {
    const int i = order[k];
    SCOPED_TRACE(i);
    EXPECT_EQ(i, kTimers - 1 - k);
    EXPECT_EQ(wakeup_of[i], 1);
    EXPECT_EQ(event_time[i], due);
    const auto& latency = timers[i]->timing().wakeup_latency.histogram();
    ASSERT_EQ(latency.count(), 1u);
    // It started after the timer before it returned, and before it
    // returned itself.
    const monotonic_clock::time_point start =
        due + std::chrono::nanoseconds(latency.min_ns());
    EXPECT_GE(start, previous);
    EXPECT_LE(start, returning[i]);
    previous = returning[i];
    // Each call's samples were recorded after the wakeup's last call.
    EXPECT_EQ(latency.bucket_count(
                  timing::LatencyHistogram::BucketIndex(latency.min_ns())),
              1u);
    const auto& handler = timers[i]->timing().handler_time.histogram();
    EXPECT_EQ(handler.bucket_count(
                  timing::LatencyHistogram::BucketIndex(handler.min_ns())),
              1u);
  }
}

// Timers due together record their samples after the wakeup's last call
// (deferred_samples.h); a timing report due in the same wakeup, after them,
// still reports every one of their samples.
TEST_F(ShmEventLoopReportTest, AReportAmongTimersDueTogetherHasEverySample) {
  constexpr int kTimers = 20;
  std::vector<TimerHandler*> timers;
  for (int i = 0; i < kTimers; ++i) timers.push_back(loop_.AddTimer([]() {}));
  // Holds the loop past the report's first time: the report and the
  // timers, all due by then, run in the next wakeup, the timers first
  // (due earlier).
  TimerHandler* blocker =
      loop_.AddTimer([]() { std::this_thread::sleep_for(milliseconds(120)); });
  TimerHandler* done = loop_.AddTimer([&]() { loop_.Exit(); });
  loop_.OnRun([&]() {
    const monotonic_clock::time_point now = loop_.monotonic_now();
    blocker->Schedule(now + milliseconds(5));
    for (TimerHandler* timer : timers) timer->Schedule(now + milliseconds(10));
    done->Schedule(now + milliseconds(200));
  });
  loop_.Run();
  int reports_with_the_timers = 0;
  for (const timing::ReportContents& contents :
       NextReportsOf(&reports_, "loop")) {
    int called_once = 0;
    for (const timing::TimerTiming& timer : contents.timers) {
      SCOPED_TRACE(timer.name);
      EXPECT_EQ(timer.wakeup_latency.histogram().count(), timer.count);
      // The statistic (average and all) has every sample too: a report
      // carries no count for it, and decodes one with no samples as 0.
      EXPECT_EQ(timer.wakeup_latency.statistic().count(), timer.count);
      // The report's own handler ends after it is built: its handler time
      // is in the next window's report.
      if (timer.name != "timing_reports") {
        EXPECT_EQ(timer.handler_time.histogram().count(), timer.count);
      }
      called_once += timer.count == 1 ? 1 : 0;
    }
    // The 20 timers and the blocker, in the report of their wakeup.
    if (called_once >= kTimers + 1) ++reports_with_the_timers;
  }
  EXPECT_EQ(reports_with_the_timers, 1);
}

// A handler that schedules its own timer at a time already passed does not
// keep its wakeup going: the call comes at once, but in the next wakeup,
// after what else was due (as when each timer had its own timerfd).
TEST_F(ShmEventLoopTest, ATimerAHandlerSchedulesInThePastRunsInTheNextWakeup) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  int wakeups = 0;
  std::vector<std::string> calls;
  calls.reserve(16);
  TimerHandler* again = nullptr;
  again = loop.AddTimer([&]() {
    calls.push_back("again " + std::to_string(wakeups));
    if (calls.size() == 6) {
      loop.Exit();
      return;
    }
    again->Schedule(loop.context().monotonic_event_time);
  });
  TimerHandler* other = loop.AddTimer(
      [&]() { calls.push_back("other " + std::to_string(wakeups)); });
  TimerHandler* give_up = loop.AddTimer([&]() {
    ADD_FAILURE() << "not every call came within 60 s";
    loop.Exit();
  });
  loop.OnWakeupEnd([&]() { ++wakeups; });
  loop.OnRun([&]() {
    const monotonic_clock::time_point due =
        loop.monotonic_now() + milliseconds(5);
    again->Schedule(due);
    other->Schedule(due);
    give_up->Schedule(loop.monotonic_now() + std::chrono::seconds(60));
  });
  loop.Run();
  EXPECT_THAT(calls, ::testing::ElementsAre("again 1", "other 1", "again 2",
                                            "again 3", "again 4", "again 5"));
}

// A timer and a message that wait together (a handler ran while both came)
// are served in the order they came, as when epoll reported each timer's
// own timerfd and the senders' wakeup signal: a timer from when it was
// scheduled for, the messages from when the first of them was sent. Here
// the message comes before a timer, and between two timers due in the same
// wakeup. (The margins only order the events; nothing is timed.)
TEST_F(ShmEventLoopTest,
       TimersAndMessagesWaitingTogetherRunInTheOrderTheyCame) {
  for (const bool message_first : {true, false}) {
    SCOPED_TRACE(message_first ? "message first" : "message between timers");
    ShmEventLoop loop(factory_.configuration(), "loop");
    loop.SkipTimingReport();
    Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
    const size_t expected = message_first ? 3 : 4;
    std::vector<std::string> calls;
    calls.reserve(8);
    auto record = [&](std::string call) {
      calls.push_back(std::move(call));
      if (calls.size() == expected) loop.Exit();
    };
    loop.MakeWatcher("/test", [&](const TestMessage&) { record("message"); });
    TimerHandler* first = loop.AddTimer([&]() { record("first timer"); });
    TimerHandler* second = loop.AddTimer([&]() { record("second timer"); });
    auto send = [&]() {
      auto builder = sender.MakeBuilder();
      builder.CheckOk(
          builder.Send(builder.MakeBuilder<TestMessage>().Finish()));
    };
    // Everything comes while it sleeps.
    TimerHandler* busy = loop.AddTimer([&]() {
      record("busy");
      if (message_first) {
        send();
        first->Schedule(loop.monotonic_now() + milliseconds(1));
        std::this_thread::sleep_for(milliseconds(10));
        return;
      }
      first->Schedule(loop.monotonic_now() + milliseconds(1));
      second->Schedule(loop.monotonic_now() + milliseconds(50));
      std::this_thread::sleep_for(milliseconds(5));
      send();
      std::this_thread::sleep_for(milliseconds(60));
    });
    TimerHandler* give_up = loop.AddTimer([&]() {
      ADD_FAILURE() << "not every call came within 60 s";
      loop.Exit();
    });
    loop.OnRun([&]() {
      busy->Schedule(loop.monotonic_now());
      give_up->Schedule(loop.monotonic_now() + std::chrono::seconds(60));
    });
    loop.Run();
    if (message_first) {
      EXPECT_THAT(calls,
                  ::testing::ElementsAre("busy", "message", "first timer"));
    } else {
      EXPECT_THAT(calls, ::testing::ElementsAre("busy", "first timer",
                                                "message", "second timer"));
    }
  }
}

// Once running, the real loop allocates nothing either: timers, sends and
// wakeups to its own watchers, fetches, path origins passed on hop by hop
// (timer -> watcher -> watcher) and their ages recorded, and timing reports
// every 100 ms. At realtime priority, so the allocation guard watches every
// callback too.
TEST_F(ShmEventLoopTest, NothingAllocatesOnceRunning) {
  FLAGS_timing_report_ms = 100;
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SetRuntimeRealtimePriority(1);
  Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
  Sender<TestReply> replies = loop.MakeSender<TestReply>("/test");
  Fetcher<TestMessage> fetcher = loop.MakeFetcher<TestMessage>("/test");
  int watched = 0;
  int replied = 0;
  int value = 0;
  uint64_t before = 0;
  uint64_t after = 0;
  // Once stopping, nothing more is sent, and the test ends as soon as the
  // watcher has had every message, however late the loop ran.
  bool stopping = false;
  auto end_once_all_watched = [&]() {
    if (stopping && watched == value) {
      after = HeapAllocations();
      loop.Exit();
    }
  };
  loop.MakeWatcher("/test", [&](const TestMessage& message) {
    ++watched;
    // A second hop: the reply carries the timer's origin, one hop on.
    auto builder = replies.MakeBuilder();
    TestReply::Builder reply = builder.MakeBuilder<TestReply>();
    reply.add_value(message.value());
    builder.CheckOk(builder.Send(reply.Finish()));
    end_once_all_watched();
  });
  loop.MakeWatcher("/test", [&](const TestReply&) {
    if (!loop.context().origins.empty()) ++replied;
  });
  TimerHandler* timer = loop.AddTimer([&]() {
    auto builder = sender.MakeBuilder();
    TestMessage::Builder ping = builder.MakeBuilder<TestMessage>();
    ping.add_value(++value);
    builder.CheckOk(builder.Send(ping.Finish()));
    fetcher.FetchNext();
  });
  loop.AddPhasedLoop([](int) {}, std::chrono::milliseconds(7));
  // Timers due together, run in one wakeup and moved in the schedule.
  std::vector<TimerHandler*> together;
  for (int i = 0; i < 20; ++i) together.push_back(loop.AddTimer([]() {}));
  TimerHandler* start = loop.AddTimer([&]() { before = HeapAllocations(); });
  TimerHandler* stop = loop.AddTimer([&]() {
    timer->Disable();
    for (TimerHandler* each : together) each->Disable();
    stopping = true;
    end_once_all_watched();
  });
  TimerHandler* give_up = loop.AddTimer([&]() {
    ADD_FAILURE() << "the watcher did not get all " << value
                  << " messages within 60 s";
    loop.Exit();
  });
  loop.OnRun([&]() {
    timer->Schedule(loop.monotonic_now(), std::chrono::milliseconds(1));
    for (TimerHandler* each : together) {
      each->Schedule(loop.monotonic_now() + std::chrono::milliseconds(3),
                     std::chrono::milliseconds(3));
    }
    start->Schedule(loop.monotonic_now() + std::chrono::milliseconds(200));
    stop->Schedule(loop.monotonic_now() + std::chrono::milliseconds(1200));
    give_up->Schedule(loop.monotonic_now() + std::chrono::seconds(60));
  });
  loop.Run();
  FLAGS_timing_report_ms = 1000;
  EXPECT_EQ(after - before, 0u);
  // Every message sent reached the watcher, so the measured stretch did
  // exercise the paths.
  EXPECT_GT(value, 0);
  EXPECT_EQ(watched, value);
  EXPECT_EQ(loop.watchers()[0]->timing().lost_messages, 0u);
  // Replies with their origins came back (the last few may still be in
  // flight when the loop stops).
  EXPECT_GT(replied, 0);
}

TEST_F(ShmEventLoopTest, SigtermMakesRunReturn) {
  auto loop = std::make_unique<ShmEventLoop>(factory_.configuration(), "loop");
  bool ran_on_run = false;
  loop->OnRun([&]() {
    ran_on_run = true;
    // Process-directed, like `kill -TERM <pid>`; the loop reads it through
    // its signalfd.
    kill(getpid(), SIGTERM);
  });
  loop->Run();
  EXPECT_TRUE(ran_on_run);
}

// Exit() is async-signal-safe, as AOS's: a handler of a signal the loop does
// not take itself may call it.
ShmEventLoop* loop_to_exit = nullptr;
void ExitFromSignalHandler(int) { loop_to_exit->Exit(); }

TEST_F(ShmEventLoopTest, ExitFromASignalHandlerEndsRun) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  loop_to_exit = &loop;
  struct sigaction action = {};
  action.sa_handler = ExitFromSignalHandler;
  struct sigaction old_action;
  ASSERT_EQ(sigaction(SIGUSR1, &action, &old_action), 0);
  loop.OnRun([&]() { raise(SIGUSR1); });
  EXPECT_TRUE(loop.Run().ok());
  EXPECT_FALSE(loop.is_running());
  sigaction(SIGUSR1, &old_action, nullptr);
  loop_to_exit = nullptr;
}

// One Ctrl-C ends Run(), as in AOS; the program goes on (a second one
// while a handler is stuck would end it: ASecondCtrlCKillsAStuckLoop).
TEST_F(ShmEventLoopTest, OneSigintMakesRunReturn) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  int on_run_calls = 0;
  loop.OnRun([&]() {
    ++on_run_calls;
    kill(getpid(), SIGINT);
  });
  loop.Run();
  EXPECT_EQ(on_run_calls, 1);
  EXPECT_FALSE(loop.is_running());
}

// ShmEventLoop(config) as AOS makes one: named by --application_name (or
// the program), on no node in a single-node config.
TEST_F(ShmEventLoopTest, OneArgumentConstructorNamesTheLoopAsAos) {
  {
    gflags::FlagSaver saver;
    FLAGS_application_name = "from_the_flag";
    ShmEventLoop loop(factory_.configuration());
    EXPECT_EQ(loop.name(), "from_the_flag");
    EXPECT_EQ(loop.node(), nullptr);
  }
  ShmEventLoop loop(factory_.configuration());
  EXPECT_EQ(loop.name(), gflags::ProgramInvocationShortName());
}

// SIGHUP ends Run() too, as in AOS.
TEST_F(ShmEventLoopTest, SighupMakesRunReturn) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  loop.OnRun([&]() { kill(getpid(), SIGHUP); });
  loop.Run();
  EXPECT_FALSE(loop.is_running());
}

// One signal ends every running loop of the process (each in its thread).
TEST_F(ShmEventLoopTest, OneSignalStopsEveryLoop) {
  ShmEventLoop first(factory_.configuration(), "first");
  ShmEventLoop second(factory_.configuration(), "second");
  first.SkipTimingReport();
  second.SkipTimingReport();
  std::atomic<int> started{0};
  first.OnRun([&]() { ++started; });
  second.OnRun([&]() { ++started; });
  std::thread a([&]() { first.Run(); });
  std::thread b([&]() { second.Run(); });
  // Both must run before the signal, which would otherwise kill the test.
  ASSERT_TRUE(WaitUntil([&]() { return started == 2; },
                        std::chrono::seconds(60), "both loops to run"));
  kill(getpid(), SIGTERM);
  a.join();
  b.join();
  EXPECT_FALSE(first.is_running());
  EXPECT_FALSE(second.is_running());
}

// SIGINT, SIGHUP and SIGTERM are never left blocked, and the process's own
// handlers are back once no loop runs.
TEST_F(ShmEventLoopTest, StopSignalsAreNotBlockedAndHandlersComeBack) {
  auto blocked = []() {
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    return sigismember(&mask, SIGINT) || sigismember(&mask, SIGTERM) ||
           sigismember(&mask, SIGHUP);
  };
  auto handler = [](int signal) {
    struct sigaction action;
    sigaction(signal, nullptr, &action);
    return action.sa_handler;
  };
  const auto before = handler(SIGINT);
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  EXPECT_FALSE(blocked()) << "blocked by the constructor";
  bool blocked_while_running = true;
  bool handled_while_running = false;
  loop.OnRun([&]() {
    blocked_while_running = blocked();
    handled_while_running = handler(SIGINT) != before;
    loop.Exit();
  });
  loop.Run();
  EXPECT_FALSE(blocked_while_running);
  EXPECT_TRUE(handled_while_running);
  EXPECT_FALSE(blocked()) << "left blocked after Run()";
  EXPECT_EQ(handler(SIGINT), before);
}

// A second Ctrl-C while the loop cannot stop (its handler is stuck) finds
// the default action, as in AOS (SA_RESETHAND).
TEST_F(ShmEventLoopTest, ASecondCtrlCKillsAStuckLoop) {
  EXPECT_EXIT(
      {
        ShmEventLoop loop(factory_.configuration(), "stuck");
        loop.SkipTimingReport();
        loop.OnRun([&]() {
          raise(SIGINT);  // Asks the loop to stop once this returns...
          raise(SIGINT);  // ...which it never does.
          while (true) pause();
        });
        loop.Run();
      },
      ::testing::KilledBySignal(SIGINT), "");
}

// Messages sent in the wakeup that stopped the loop reach its watchers
// only through DeliverRemainingMessages(): in order, each once, also those
// another sender (here, the same process) sent after Run() returned.
TEST_F(ShmEventLoopTest, DeliverRemainingMessagesAfterRunReturned) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
  auto send = [&](int value) {
    auto builder = sender.MakeBuilder();
    TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
    message.add_value(value);
    builder.CheckOk(builder.Send(message.Finish()));
  };
  std::vector<int> watched;
  watched.reserve(8);
  loop.MakeWatcher("/test", [&](const TestMessage& message) {
    watched.push_back(message.value());
  });
  // Sent in the callback that stops the loop: Run() returns before its
  // watcher could have them.
  TimerHandler* send_and_stop = loop.AddTimer([&]() {
    send(1);
    send(2);
    loop.Exit();
  });
  loop.OnRun([&]() { send_and_stop->Schedule(loop.monotonic_now()); });
  loop.Run();
  send(3);
  // As another thread's late Exit() might: no effect on what follows.
  loop.Exit();
  loop.DeliverRemainingMessages();
  EXPECT_THAT(watched, ::testing::ElementsAre(1, 2, 3));
  loop.DeliverRemainingMessages();
  EXPECT_EQ(watched.size(), 3u);
}

// SIGTERM ends Run() after the watchers had what was sent before it.
TEST_F(ShmEventLoopTest, SigtermDeliversWhatWasSentBeforeIt) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
  std::vector<int> watched;
  watched.reserve(8);
  loop.MakeWatcher("/test", [&](const TestMessage& message) {
    watched.push_back(message.value());
  });
  TimerHandler* send_and_terminate = loop.AddTimer([&]() {
    for (int value = 1; value <= 3; ++value) {
      auto builder = sender.MakeBuilder();
      TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
      message.add_value(value);
      builder.CheckOk(builder.Send(message.Finish()));
    }
    kill(getpid(), SIGTERM);
  });
  loop.OnRun([&]() { send_and_terminate->Schedule(loop.monotonic_now()); });
  loop.Run();
  EXPECT_THAT(watched, ::testing::ElementsAre(1, 2, 3));
}

// Another thread's eventfd wakes the loop, which calls the callback in its
// own thread until the fd is drained.
TEST_F(ShmEventLoopTest, OnReadableServesAnotherThreadsFd) {
  auto loop = std::make_unique<ShmEventLoop>(factory_.configuration(), "loop");
  const int event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(event_fd, 0);
  const std::thread::id loop_thread = std::this_thread::get_id();
  uint64_t total = 0;
  loop->OnReadable(event_fd, [&]() {
    EXPECT_EQ(std::this_thread::get_id(), loop_thread);
    uint64_t value = 0;
    ASSERT_EQ(read(event_fd, &value, sizeof(value)),
              static_cast<ssize_t>(sizeof(value)));
    total += value;
    if (total == 5) loop->Exit();
  });
  std::thread writer([event_fd]() {
    for (uint64_t value : {2, 3}) {
      ASSERT_EQ(write(event_fd, &value, sizeof(value)),
                static_cast<ssize_t>(sizeof(value)));
    }
  });
  loop->Run();
  writer.join();
  EXPECT_EQ(total, 5u);
  loop.reset();
  close(event_fd);
}

// The hook runs after every callback of a wakeup: after the OnRun
// callbacks, after the timer, and after all three messages the timer sent
// (delivered together in the next wakeup), never between them.
TEST_F(ShmEventLoopTest, OnWakeupEndRunsAfterEachWakeupsCallbacks) {
  auto loop = std::make_unique<ShmEventLoop>(factory_.configuration(), "loop");
  std::vector<std::string> calls;
  Sender<TestMessage> sender = loop->MakeSender<TestMessage>("/test");
  loop->MakeWatcher("/test", [&](const TestMessage& message) {
    calls.push_back("watcher " + std::to_string(message.value()));
    if (message.value() == 3) loop->Exit();
  });
  TimerHandler* timer = loop->AddTimer([&]() {
    calls.push_back("timer");
    for (int value : {1, 2, 3}) {
      auto builder = sender.MakeBuilder();
      TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
      message.add_value(value);
      ASSERT_EQ(builder.Send(message.Finish()), RawSender::Error::kOk);
    }
  });
  loop->OnRun([&]() {
    calls.push_back("on run");
    timer->Schedule(loop->monotonic_now());
  });
  loop->OnWakeupEnd([&]() { calls.push_back("end"); });
  loop->Run();
  EXPECT_THAT(calls, ::testing::ElementsAre("on run", "end", "timer", "end",
                                            "watcher 1", "watcher 2",
                                            "watcher 3", "end"));
}

TEST_F(ShmEventLoopTest, OnWakeupEndOnlyOnce) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.OnWakeupEnd([]() {});
  EXPECT_DEATH(loop.OnWakeupEnd([]() {}), "OnWakeupEnd called twice");
}

// What owned the first function (a message bridge destroyed before the
// loop ran) forgets it; it is never called, and another may take its place.
TEST_F(ShmEventLoopTest, StopWakeupEndForgetsTheFunction) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  std::vector<std::string> calls;
  loop.OnWakeupEnd([&]() { calls.push_back("first"); });
  loop.StopWakeupEnd();
  loop.OnWakeupEnd([&]() { calls.push_back("second"); });
  TimerHandler* timer = loop.AddTimer([&]() { loop.Exit(); });
  loop.OnRun([&]() { timer->Schedule(loop.monotonic_now()); });
  loop.Run();
  EXPECT_THAT(calls, ::testing::ElementsAre("second", "second"));
}

// Runs `loop` until its first timer call, and returns what it held then.
struct HeldWhileRunning {
  bool dma_latency_open = false;
  int32_t limit_us = -2;
  std::string cpus;
};
HeldWhileRunning RunOnce(ShmEventLoop* loop) {
  HeldWhileRunning held;
  TimerHandler* look = loop->AddTimer([&]() {
    held.dma_latency_open = HasOpenFile(getpid(), "/dev/cpu_dma_latency");
    held.limit_us = loop->cpu_latency_limit_us();
    held.cpus = loop->cpu_latency_limit_cpus();
    loop->Exit();
  });
  loop->OnRun([&]() { look->Schedule(loop->monotonic_now()); });
  loop->Run();
  return held;
}

// The threads of this process named `name`.
int ThreadsNamed(std::string_view name) {
  int count = 0;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    std::getline(comm, line);
    if (line == name) ++count;
  }
  return count;
}

// --idle_poll runs a poller per CPU the loop may use only while it runs;
// both it and --busy_poll_us are what the loop's reports say.
TEST_F(ShmEventLoopTest, WakeupPollingOnlyWhileRunning) {
  gflags::FlagSaver saver;
  gflags::SetCommandLineOption("idle_poll", "true");
  gflags::SetCommandLineOption("busy_poll_us", "100");
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  int pollers = -1;
  std::string polled, polled_before = loop.idle_poll_cpus();
  int32_t busy_poll_us = -1;
  TimerHandler* look = loop.AddTimer([&]() {
    pollers = ThreadsNamed("aos_idle_poll");
    polled = loop.idle_poll_cpus();
    busy_poll_us = loop.busy_poll_us();
    loop.Exit();
  });
  loop.OnRun([&]() { look->Schedule(loop.monotonic_now()); });
  loop.Run();
  EXPECT_EQ(polled_before, "");
  EXPECT_EQ(pollers, CPU_COUNT(&cpus));
  EXPECT_EQ(polled, FormatCpuList(cpus));
  EXPECT_EQ(busy_poll_us, 100);
  EXPECT_EQ(ThreadsNamed("aos_idle_poll"), 0);
}

// What a wait may overrun the time it waited for: the last clock read.
constexpr uint64_t kClockReadSlackNs = 50'000;

// A loop that arms its kernel timers lead_us early (--timer_anticipation_us;
// the caller holds a gflags::FlagSaver), with no timing report, asking for
// SCHED_FIFO 1 so that the kernel's timer wakes it within the lead (where
// the OS refuses, it warns and runs on: see RunsAtFifo).
std::unique_ptr<ShmEventLoop> AnticipatingLoop(
    const aos::Configuration* configuration, const char* lead_us) {
  gflags::SetCommandLineOption("timer_anticipation_us", lead_us);
  FLAGS_die_on_malloc = false;
  auto loop = std::make_unique<ShmEventLoop>(configuration, "loop");
  loop->SkipTimingReport();
  loop->SetRuntimeRealtimePriority(1);
  return loop;
}

// Whether the calling thread runs at SCHED_FIFO (called from a handler).
bool RunsAtFifo() {
  return (sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO;
}

// Why a test leaves the early wakeups unchecked.
void SayFifoWasRefused() {
  std::cout << "not checking that wakeups came early: SCHED_FIFO was "
               "refused\n";
}

// --timer_anticipation_us: the kernel timer is armed early, the loop waits
// for each timer's time, and no handler ever starts before it. The counts
// are the report's.
TEST_F(ShmEventLoopTest, AnticipatedTimersNeverStartEarly) {
  gflags::FlagSaver saver;
  const std::unique_ptr<ShmEventLoop> owned =
      AnticipatingLoop(factory_.configuration(), "1000");
  ShmEventLoop& loop = *owned;
  constexpr int kCalls = 20;
  int calls = 0;
  int early = 0;
  TimerHandler* timer = nullptr;
  bool fifo = false;
  timer = loop.AddTimer([&]() {
    if (loop.monotonic_now() < loop.context().monotonic_event_time) ++early;
    fifo = RunsAtFifo();
    if (++calls == kCalls) loop.Exit();
  });
  // A one-shot a handler schedules is anticipated too.
  int one_shots = 0;
  TimerHandler* one_shot = loop.AddTimer([&]() {
    if (loop.monotonic_now() < loop.context().monotonic_event_time) ++early;
    ++one_shots;
  });
  TimerHandler* again = loop.AddTimer(
      [&]() { one_shot->Schedule(loop.monotonic_now() + milliseconds(15)); });
  loop.OnRun([&]() {
    timer->Schedule(loop.monotonic_now() + milliseconds(20), milliseconds(20));
    again->Schedule(loop.monotonic_now() + milliseconds(5), milliseconds(40));
  });
  loop.Run();
  EXPECT_EQ(calls, kCalls);
  EXPECT_GT(one_shots, 0);
  EXPECT_EQ(early, 0);
  const TimerAnticipationCounters& counters =
      loop.timing_entries()->timer_anticipation;
  EXPECT_EQ(counters.lead_ns, 1'000'000);
  EXPECT_FALSE(counters.automatic);
  EXPECT_GE(counters.wakeups, static_cast<uint64_t>(kCalls + one_shots));
  EXPECT_LE(counters.early_wakeups, counters.wakeups);
  // A wait is never longer than the lead.
  EXPECT_LE(counters.spin_ns,
            counters.early_wakeups * (1'000'000u + kClockReadSlackNs));
  // At realtime priority the kernel woke the loop less than 1 ms late at
  // least once in 30 wakeups, and the loop spun until the timer's time.
  if (fifo) {
    EXPECT_GT(counters.early_wakeups, 0u);
    EXPECT_GT(counters.spin_ns, 0u);
  } else {
    SayFifoWasRefused();
  }
}

// The spin's budget (a lead per wakeup, at most a tenth of the time between
// wakeups) counts from when the last wakeup was due, not from when its
// handlers returned: a handler that runs for a quarter of the period does
// not cost the next wakeup its lead. Here the period (12 ms) is 12 leads,
// and what is left of it after the handler (9 ms) only 9.
TEST_F(ShmEventLoopTest, ALongHandlerKeepsTheNextWakeupsLead) {
  gflags::FlagSaver saver;
  const std::unique_ptr<ShmEventLoop> owned =
      AnticipatingLoop(factory_.configuration(), "1000");
  ShmEventLoop& loop = *owned;
  constexpr int kCalls = 12;
  int calls = 0;
  bool fifo = false;
  TimerHandler* timer = loop.AddTimer([&]() {
    fifo = RunsAtFifo();
    const monotonic_clock::time_point end =
        loop.monotonic_now() + milliseconds(3);
    while (monotonic_clock::now() < end) {
    }
    if (++calls == kCalls) loop.Exit();
  });
  loop.OnRun([&]() {
    timer->Schedule(loop.monotonic_now() + milliseconds(12), milliseconds(12));
  });
  loop.Run();
  EXPECT_EQ(calls, kCalls);
  const TimerAnticipationCounters& counters =
      loop.timing_entries()->timer_anticipation;
  if (fifo) {
    // A wait is never longer than the lead (at normal priority a
    // preemption in the spin would count in it).
    EXPECT_LE(counters.spin_ns,
              counters.early_wakeups * (1'000'000u + kClockReadSlackNs));
    // The first wakeup's arming came from OnRun (12 ms ahead): early; the
    // later ones only if the budget counts from when a wakeup was due.
    EXPECT_GT(counters.early_wakeups, 1u);
  } else {
    SayFifoWasRefused();
  }
}

// Two timers due 1 ns apart: both timerfds fire in one epoll_wait, and the
// first wakeup runs both and re-arms both. The second fd's event, left from
// before that, must not make the loop wait for the next period's timer (a
// wait of most of a period): every wait stays within the lead.
TEST_F(ShmEventLoopTest, ALeftOverTimerEventWaitsForNothing) {
  gflags::FlagSaver saver;
  const std::unique_ptr<ShmEventLoop> owned =
      AnticipatingLoop(factory_.configuration(), "50");
  ShmEventLoop& loop = *owned;
  int calls = 0;
  TimerHandler* first = loop.AddTimer([&]() { ++calls; });
  TimerHandler* second = loop.AddTimer([&]() {
    if (++calls >= 200) loop.Exit();
  });
  loop.OnRun([&]() {
    const monotonic_clock::time_point base =
        loop.monotonic_now() + milliseconds(2);
    first->Schedule(base, milliseconds(1));
    second->Schedule(base + std::chrono::nanoseconds(1), milliseconds(1));
  });
  loop.Run();
  const TimerAnticipationCounters& counters =
      loop.timing_entries()->timer_anticipation;
  EXPECT_LE(counters.spin_ns,
            counters.early_wakeups * (50'000u + kClockReadSlackNs));
}

// By default a realtime loop chooses its lead itself and a normal-priority
// loop arms its timers for their times; 0 turns it off for every loop.
TEST_F(ShmEventLoopTest, TimerAnticipationIsAutomaticForRealtimeLoopsOnly) {
  gflags::FlagSaver saver;
  FLAGS_die_on_malloc = false;
  auto run_one_timer = [&](ShmEventLoop* loop) {
    loop->SkipTimingReport();
    TimerHandler* timer = loop->AddTimer([loop]() { loop->Exit(); });
    loop->OnRun(
        [&]() { timer->Schedule(loop->monotonic_now() + milliseconds(5)); });
    loop->Run();
    return loop->timing_entries()->timer_anticipation;
  };
  {
    ShmEventLoop loop(factory_.configuration(), "normal");
    const TimerAnticipationCounters counters = run_one_timer(&loop);
    EXPECT_FALSE(counters.automatic);
    EXPECT_EQ(counters.lead_ns, 0);
    EXPECT_EQ(counters.wakeups, 0u);
  }
  {
    ShmEventLoop loop(factory_.configuration(), "realtime");
    loop.SetRuntimeRealtimePriority(1);
    const TimerAnticipationCounters counters = run_one_timer(&loop);
    EXPECT_TRUE(counters.automatic);
    EXPECT_EQ(counters.wakeups, 1u);
  }
  gflags::SetCommandLineOption("timer_anticipation_us", "0");
  ShmEventLoop loop(factory_.configuration(), "off");
  loop.SetRuntimeRealtimePriority(1);
  const TimerAnticipationCounters counters = run_one_timer(&loop);
  EXPECT_FALSE(counters.automatic);
  EXPECT_EQ(counters.wakeups, 0u);
}

TEST_F(ShmEventLoopTest, HoldsTheCpuLatencyLimitOnlyWhileRunning) {
  if (access("/dev/cpu_dma_latency", W_OK) != 0) {
    GTEST_SKIP() << "cannot write /dev/cpu_dma_latency here ("
                 << strerror(errno) << "): RefusedCpuLatencyLimitWarns "
                 << "covers this case";
  }
  gflags::FlagSaver saver;
  // Given explicitly, a normal-priority loop holds it too.
  gflags::SetCommandLineOption("cpu_dma_latency_us", "0");
  gflags::SetCommandLineOption("cpu_dma_latency_scope", "all");
  ShmEventLoop loop(factory_.configuration(), "loop");
  ASSERT_FALSE(HasOpenFile(getpid(), "/dev/cpu_dma_latency"));
  const HeldWhileRunning held = RunOnce(&loop);
  EXPECT_TRUE(held.dma_latency_open);
  EXPECT_EQ(held.limit_us, 0);
  EXPECT_EQ(held.cpus, "all");
  // Released when Run() returns: the kernel drops the request with the file.
  EXPECT_FALSE(HasOpenFile(getpid(), "/dev/cpu_dma_latency"));
}

TEST_F(ShmEventLoopTest, NormalPriorityLoopsAndMinusOneHoldNothing) {
  {
    ShmEventLoop loop(factory_.configuration(), "loop");
    const HeldWhileRunning held = RunOnce(&loop);
    EXPECT_FALSE(held.dma_latency_open);
    EXPECT_EQ(held.limit_us, -1);
    EXPECT_EQ(held.cpus, "");
  }
  gflags::FlagSaver saver;
  gflags::SetCommandLineOption("cpu_dma_latency_us", "-1");
  // RunOnce's look at /proc allocates; at realtime priority, count it.
  FLAGS_die_on_malloc = false;
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SetRuntimeRealtimePriority(1);
  const HeldWhileRunning held = RunOnce(&loop);
  EXPECT_FALSE(held.dma_latency_open);
  EXPECT_EQ(held.limit_us, -1);
}

// Without permission the loop says so once, naming the file and the fix,
// and runs on.
TEST_F(ShmEventLoopTest, RefusedCpuLatencyLimitWarnsAndTheLoopRuns) {
  // Under /tmp: nobody cannot traverse Bazel's TEST_TMPDIR.
  char directory[] = "/tmp/aos_cpu_latency_test_XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  ASSERT_EQ(chmod(directory, 0777), 0);
  constexpr int kAllowed = 3;
  const ChildResult child = RunAsNobody([&]() {
    if (access("/dev/cpu_dma_latency", W_OK) == 0) return kAllowed;
    FLAGS_shm_base = std::string(directory) + "/shm";
    gflags::SetCommandLineOption("cpu_dma_latency_us", "0");
    gflags::SetCommandLineOption("cpu_dma_latency_scope", "all");
    ShmEventLoop loop(factory_.configuration(), "refused");
    const HeldWhileRunning held = RunOnce(&loop);
    return held.limit_us == -1 && !held.dma_latency_open ? 0 : 4;
  });
  std::filesystem::remove_all(directory);
  if (!child.skip_reason.empty()) GTEST_SKIP() << child.skip_reason;
  if (child.exit_code == kAllowed) {
    GTEST_SKIP() << "this machine lets nobody write /dev/cpu_dma_latency";
  }
  EXPECT_EQ(child.exit_code, 0) << "the loop did not run on:\n" << child.output;
  EXPECT_THAT(child.output,
              ::testing::HasSubstr(
                  "event loop refused: cannot open /dev/cpu_dma_latency "
                  "to limit CPU wakeup latency: Permission denied; run "
                  "as root, or have an administrator let this user "
                  "write it"));
  EXPECT_THAT(child.output, ::testing::HasSubstr("--cpu_dma_latency_us=-1"));
}

// A queue file another user made with 0600: one line naming the file, the
// mode and the way out (--permissions=0660), exit 1.
TEST_F(ShmEventLoopTest, AnotherUsersQueueFileIsOneLineWithTheFix) {
  char directory[] = "/tmp/aos_owned_test_XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  ASSERT_EQ(chmod(directory, 0777), 0);
  FLAGS_shm_base = std::string(directory) + "/shm";
  {
    ShmEventLoop loop(factory_.configuration(), "owner");
    Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
  }
  ASSERT_EQ(chmod(FLAGS_shm_base.c_str(), 0777), 0);
  ASSERT_EQ(chmod((FLAGS_shm_base + "/test").c_str(), 0777), 0);
  const ChildResult child = RunAsNobody([&]() {
    ShmEventLoop loop(factory_.configuration(), "intruder");
    Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
    return 0;
  });
  std::filesystem::remove_all(directory);
  if (!child.skip_reason.empty()) GTEST_SKIP() << child.skip_reason;
  if (geteuid() != 0) {
    GTEST_SKIP() << "not root: the file is this user's own, so nothing is "
                    "refused";
  }
  EXPECT_EQ(child.exit_code, 1) << child.output;
  EXPECT_EQ(std::count(child.output.begin(), child.output.end(), '\n'), 1)
      << child.output;
  EXPECT_THAT(
      child.output,
      ::testing::AllOf(::testing::HasSubstr("event loop intruder: "),
                       ::testing::HasSubstr("/test/aos.testing.TestMessage.v"),
                       ::testing::HasSubstr("Permission denied"),
                       ::testing::HasSubstr("--permissions=0660")));
}

// A queue file deleted while loops use it (rm, or a cleanup of the shm
// directory) split the system silently: a process started afterwards made a
// new file, while running loops kept the old one. Now a running loop finds
// out within a report window, says so, and moves its watcher, fetcher and
// sender to the new file; its timing report counts it. At realtime
// priority, so re-opening (which allocates) must not trip the allocation
// guard.
TEST_F(ShmEventLoopTest, DeletedQueueFileIsReopenedByRunningLoops) {
  gflags::FlagSaver saver;
  FLAGS_timing_report_ms = 50;
  ShmEventLoop watching(factory_.configuration(), "watching");
  watching.SetRuntimeRealtimePriority(1);
  Sender<TestMessage> answer = watching.MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> fetcher = watching.MakeFetcher<TestMessage>("/test");
  std::atomic<bool> running{false};
  bool got_new = false;
  int fetched = 0;
  uint64_t reopened = 0;
  auto exit_when_done = [&]() {
    if (got_new && reopened > 0) watching.Exit();
  };
  watching.MakeWatcher("/test", [&](const TestMessage& message) {
    if (message.value() != 42 || got_new) return;
    got_new = true;
    if (fetcher.Fetch()) fetched = fetcher->value();
    auto builder = answer.MakeBuilder();
    TestMessage::Builder reply = builder.MakeBuilder<TestMessage>();
    reply.add_value(43);
    builder.CheckOk(builder.Send(reply.Finish()));
    exit_when_done();
  });
  watching.MakeWatcher("/aos", [&](const timing::Report& report) {
    if (report.name()->string_view() == "watching") {
      reopened += report.reopened_queue_files();
      exit_when_done();
    }
  });
  // Failing allocates, which this realtime loop's callbacks may not.
  bool gave_up = false;
  TimerHandler* give_up = watching.AddTimer([&]() {
    gave_up = true;
    watching.Exit();
  });
  watching.OnRun([&]() {
    give_up->Schedule(watching.monotonic_now() + std::chrono::seconds(60));
    running = true;
  });
  std::thread thread([&]() { watching.Run(); });
  ASSERT_TRUE(WaitUntil([&]() { return running.load(); },
                        std::chrono::seconds(60), "the watching loop to run"));

  const std::string path = ShmEventLoop::ShmPath(answer.channel());
  ASSERT_EQ(unlink(path.c_str()), 0) << path;
  // A process started after the rm: it makes a new file.
  ShmEventLoop late(factory_.configuration(), "late");
  Sender<TestMessage> sender = late.MakeSender<TestMessage>("/test");
  Fetcher<TestMessage> replies = late.MakeFetcher<TestMessage>("/test");
  bool answered = false;
  // Asks until answered; the running loop's watcher gives up after 60 s too
  // (gave_up, below).
  WaitUntil(
      [&]() {
        auto builder = sender.MakeBuilder();
        TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
        message.add_value(42);
        builder.CheckOk(builder.Send(message.Finish()));
        // Paced: a question every few ms, well under the channel's rate.
        std::this_thread::sleep_for(milliseconds(5));
        while (replies.FetchNext()) answered |= replies->value() == 43;
        return answered;
      },
      std::chrono::seconds(60), "an answer from the running loop");
  thread.join();
  EXPECT_FALSE(gave_up) << "after 60 s: new message seen " << got_new
                        << ", re-opened files reported " << reopened;
  EXPECT_TRUE(got_new) << "the running watcher never saw the new file";
  EXPECT_EQ(fetched, 42) << "the fetcher did not move to the new file";
  EXPECT_TRUE(answered) << "the running sender did not move to the new file";
  EXPECT_EQ(reopened, 1u);
  EXPECT_EQ(watching.realtime_allocations(), 0u);
}

// A full --shm_base (here a private tmpfs) is one line naming the file and
// the bytes, exit 1, and no file left to poison the channel. Before, the
// file was made sparse and the first touch killed the process (SIGBUS).
TEST_F(ShmEventLoopTest, FullShmBaseIsOneLineAndExitOne) {
  const std::string small = TestTempDir() + "/small";
  const absl::Status mounted = MountSmallTmpfs(small, 256 * 1024);
  if (!mounted.ok()) GTEST_SKIP() << mounted.message();
  FillFilesystem(small, 0);
  FLAGS_shm_base = small + "/shm";
  EXPECT_EXIT(
      {
        ShmEventLoop loop(factory_.configuration(), "full");
        Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
      },
      ::testing::ExitedWithCode(1),
      "event loop full: /test \\(aos.testing.TestMessage\\): cannot reserve "
      "[0-9]+ bytes for .*/shm/test/aos.testing.TestMessage.v[0-9]+: No "
      "space left on device \\([0-9]+ bytes free in ");
  EXPECT_FALSE(std::filesystem::exists(small + "/shm/test/"
                                               "aos.testing.TestMessage.v4"));
  RemoveFiller(small);
}

// One heap allocation the compiler cannot elide.
[[gnu::noinline]] void AllocateOnce() {
  static void* volatile kept;
  kept = malloc(24);
  free(kept);
}

class AllocationGuardTest : public ShmEventLoopTest {
 protected:
  void SetUp() override {
    if (!AllocationGuardAvailable()) {
      GTEST_SKIP() << "a sanitizer build owns malloc: the allocation guard "
                      "cannot see allocations here";
    }
  }
};

TEST_F(AllocationGuardTest, RealtimeTimerThatAllocatesAbortsNamingIt) {
  EXPECT_DEATH(
      {
        ShmEventLoop loop(factory_.configuration(), "loop");
        loop.SkipTimingReport();
        loop.SetRuntimeRealtimePriority(1);
        TimerHandler* timer = loop.AddTimer([]() { AllocateOnce(); });
        timer->set_name("alloc");
        loop.OnRun([&]() { timer->Schedule(loop.monotonic_now()); });
        loop.Run();
      },
      "event loop loop: timer \"alloc\" allocated 24 bytes while running at "
      "realtime priority; allocate during setup instead \\(or run with "
      "--die_on_malloc=false to only count it\\)");
}

TEST_F(AllocationGuardTest, RealtimeWatcherThatAllocatesAbortsNamingIt) {
  EXPECT_DEATH(
      {
        ShmEventLoop loop(factory_.configuration(), "loop");
        loop.SkipTimingReport();
        loop.SetRuntimeRealtimePriority(1);
        Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
        loop.MakeWatcher("/test", [](const TestMessage&) { AllocateOnce(); });
        loop.OnRun([&]() {
          auto builder = sender.MakeBuilder();
          builder.CheckOk(
              builder.Send(builder.MakeBuilder<TestMessage>().Finish()));
        });
        loop.Run();
      },
      "event loop loop: watcher \"/test\" \\(aos.testing.TestMessage\\) "
      "allocated 24 bytes");
}

TEST_F(AllocationGuardTest, CountedAllocationsWarnOnceAndTheLoopRunsOn) {
  gflags::FlagSaver saver;
  FLAGS_die_on_malloc = false;
  ShmEventLoop loop(factory_.configuration(), "loop");
  loop.SkipTimingReport();
  loop.SetRuntimeRealtimePriority(1);
  int calls = 0;
  TimerHandler* timer = loop.AddTimer([&]() {
    AllocateOnce();
    AllocateOnce();
    if (++calls == 3) loop.Exit();
  });
  timer->set_name("alloc");
  loop.OnRun([&]() {
    timer->Schedule(loop.monotonic_now(), std::chrono::milliseconds(1));
  });
  loop.Run();
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(loop.realtime_allocations(), 6u);
}

// Setup (OnRun) and loops at normal priority may allocate.
TEST_F(AllocationGuardTest, OnRunAndNormalPriorityLoopsMayAllocate) {
  {
    ShmEventLoop loop(factory_.configuration(), "realtime");
    loop.SkipTimingReport();
    loop.SetRuntimeRealtimePriority(1);
    loop.OnRun([&]() {
      AllocateOnce();
      loop.Exit();
    });
    loop.Run();
    EXPECT_EQ(loop.realtime_allocations(), 0u);
  }
  ShmEventLoop loop(factory_.configuration(), "normal");
  loop.SkipTimingReport();
  TimerHandler* timer = loop.AddTimer([&]() {
    AllocateOnce();
    loop.Exit();
  });
  loop.OnRun([&]() { timer->Schedule(loop.monotonic_now()); });
  loop.Run();
  EXPECT_EQ(loop.realtime_allocations(), 0u);
}

// A sender that allows sends from another thread refuses what is built in
// its buffer (the loop may replace the buffer under the builder), naming
// the channel, and refuses to be made so once the loop runs.
TEST_F(ShmEventLoopTest, SendsFromAnotherThreadOnlyCopyAndOnlyBeforeRun) {
  ShmEventLoop loop(factory_.configuration(), "loop");
  Sender<TestMessage> sender = loop.MakeSender<TestMessage>("/test");
  sender.raw()->AllowSendsFromAnotherThread();
  auto send_built = [&]() {
    auto builder = sender.MakeBuilder();
    TestMessage::Builder message = builder.MakeBuilder<TestMessage>();
    message.add_value(1);
    (void)builder.Send(message.Finish());
  };
  EXPECT_DEATH(
      send_built(),
      "sender on /test \\(type aos.testing.TestMessage\\).*Send\\(length\\) "
      ".*sends with Send\\(message, length\\)");
  Sender<TestMessage> later = loop.MakeSender<TestMessage>("/test");
  loop.OnRun([&]() {
    later.raw()->AllowSendsFromAnotherThread();
    loop.Exit();
  });
  EXPECT_DEATH(loop.Run(),
               "AllowSendsFromAnotherThread\\(\\) while the loop runs");
}

}  // namespace
}  // namespace aos::testing
