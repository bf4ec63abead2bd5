// Shared-memory channel throughput and per-message cost.
//
//   bazel run //tools/bench:shm_throughput_benchmark
//
// BM_SendFetch/N: one sender and one fetcher of the same channel, N-byte
// messages; items_per_second is messages per second (goal >= 2 M for 32 B).
// BM_ManyChannels/C: the same, round-robin over C channels; the time per
// message should stay flat as C grows (no per-channel scanning on send).
// BM_SendWithOrigins/K and BM_SendFetchWithOrigins/K: the same with K path
// origins per message (path latency's cost); BM_SendWithChangingOrigins/K
// with other origins in every message than in the last.
// BM_SendWakingWatcher: 32 B sends to a channel that another thread's loop
// watches, so each send also signals that watcher: the sender's whole path
// (the registration is proven once, docs/ipc.md).
// BM_FirstWakeupOfANewSender: a new QueueWakeUpper's first Wakeup of one
// registered watcher: what a sender pays once per registration it meets
// (proving it, docs/ipc.md "Watcher registrations"), with the signal.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/ipc_lib/lockless_queue.h"
#include "aos/util/str_cat.h"
#include "benchmark/benchmark.h"
#include "examples/ping_generated.h"

namespace aos {
namespace {

// A temporary --shm_base under /dev/shm, removed afterwards.
class ShmBase {
 public:
  ShmBase() {
    char base[] = "/dev/shm/aos_throughput_benchmark_XXXXXX";
    PCHECK(mkdtemp(base) != nullptr);
    path_ = base;
    FLAGS_shm_base = path_;
  }
  ~ShmBase() { std::filesystem::remove_all(path_); }

 private:
  std::string path_;
};

FlatbufferDetachedBuffer<Configuration> ChannelsConfig(int channels,
                                                       int max_size) {
  // 1 ms of storage at 2e7 / channels msgs/s: a tight loop round-robin over
  // the channels (under 20 M msgs/s in all) is never "sent too fast".
  const int frequency = std::max(20000, 20000000 / channels);
  std::string json = R"({ "channels": [)";
  for (int i = 0; i < channels; ++i) {
    StrAppend(&json, i == 0 ? "" : ",", R"({ "name": "/c)", i,
              R"(", "type": "aos.examples.Ping", "frequency": )", frequency,
              R"(, "max_size": )", max_size,
              R"(, "channel_storage_duration": 1000000 })");
  }
  json += "] }";
  auto config = configuration::ReadConfigFromJson(json);
  CHECK(config.ok()) << config.status().message();
  return std::move(config).value();
}

void BM_SendFetch(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0));
  ShmBase base;
  auto config = ChannelsConfig(1, std::max(64, size));
  ShmEventLoop loop(&config.message(), "benchmark");
  RawSender* sender = nullptr;
  auto raw_sender = loop.MakeRawSender(loop.GetChannel<examples::Ping>("/c0"));
  sender = raw_sender.get();
  auto fetcher = loop.MakeRawFetcher(loop.GetChannel<examples::Ping>("/c0"));
  std::vector<uint8_t> message(size, 0x5a);
  for (auto _ : state) {
    CHECK(sender->Send(message.data(), message.size()) ==
          RawSender::Error::kOk);
    CHECK(fetcher->FetchNext());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * size);
}
BENCHMARK(BM_SendFetch)->Arg(32)->Arg(1024);

// The origins `count` timers would give a message (path latency), with ids
// from `first_id` on.
PathOrigins SomeOrigins(int count, uint32_t first_id = 1) {
  PathOrigins origins;
  for (int i = 0; i < count; ++i) {
    origins.Add(PathOrigin{.id = first_id + static_cast<uint32_t>(i),
                           .hops = 1,
                           .monotonic_time_ns = 1000 * (i + 1)});
  }
  return origins;
}

// BM_SendWithOrigins/K: 32 B sends carrying K path origins (as a callback
// that got K origins passes them on); K = 0 is a send with none. The cost
// of path latency on the send path (goal: K = 4 within 15 ns of K = 0).
void BM_SendWithOrigins(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  ShmBase base;
  auto config = ChannelsConfig(1, 64);
  ShmEventLoop loop(&config.message(), "benchmark");
  auto sender = loop.MakeRawSender(loop.GetChannel<examples::Ping>("/c0"));
  const PathOrigins origins = SomeOrigins(count);
  std::vector<uint8_t> message(32, 0x5a);
  for (auto _ : state) {
    if (count > 0) sender->SetOrigins(origins);
    CHECK(sender->Send(message.data(), message.size()) ==
          RawSender::Error::kOk);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SendWithOrigins)->Arg(0)->Arg(1)->Arg(4);

// BM_SendWithChangingOrigins/K: BM_SendWithOrigins/K, but no send carries
// the origin ids its sender's last send did (two sets of K in turn). A
// sender's messages nearly always repeat its last set, which the sender
// counts with one compare per origin (SentOrigins::Record); this is the
// other case, where each origin's count is searched for.
void BM_SendWithChangingOrigins(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  ShmBase base;
  auto config = ChannelsConfig(1, 64);
  ShmEventLoop loop(&config.message(), "benchmark");
  auto sender = loop.MakeRawSender(loop.GetChannel<examples::Ping>("/c0"));
  const PathOrigins sets[2] = {SomeOrigins(count, 1),
                               SomeOrigins(count, 1 + kMaxPathOrigins)};
  std::vector<uint8_t> message(32, 0x5a);
  size_t next = 0;
  for (auto _ : state) {
    sender->SetOrigins(sets[next]);
    next ^= 1;
    CHECK(sender->Send(message.data(), message.size()) ==
          RawSender::Error::kOk);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SendWithChangingOrigins)->Arg(1)->Arg(4);

// BM_SendFetchWithOrigins/K: BM_SendFetch/32 with K origins per message,
// so the fetcher also measures K path ages per message.
void BM_SendFetchWithOrigins(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  ShmBase base;
  auto config = ChannelsConfig(1, 64);
  ShmEventLoop loop(&config.message(), "benchmark");
  auto sender = loop.MakeRawSender(loop.GetChannel<examples::Ping>("/c0"));
  auto fetcher = loop.MakeRawFetcher(loop.GetChannel<examples::Ping>("/c0"));
  const PathOrigins origins = SomeOrigins(count);
  std::vector<uint8_t> message(32, 0x5a);
  for (auto _ : state) {
    if (count > 0) sender->SetOrigins(origins);
    CHECK(sender->Send(message.data(), message.size()) ==
          RawSender::Error::kOk);
    CHECK(fetcher->FetchNext());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SendFetchWithOrigins)->Arg(0)->Arg(4);

void BM_ManyChannels(benchmark::State& state) {
  const int channels = static_cast<int>(state.range(0));
  ShmBase base;
  auto config = ChannelsConfig(channels, 64);
  ShmEventLoop loop(&config.message(), "benchmark");
  std::vector<std::unique_ptr<RawSender>> senders;
  std::vector<std::unique_ptr<RawFetcher>> fetchers;
  for (int i = 0; i < channels; ++i) {
    const Channel* channel = loop.GetChannel<examples::Ping>(StrCat("/c", i));
    senders.push_back(loop.MakeRawSender(channel));
    fetchers.push_back(loop.MakeRawFetcher(channel));
  }
  std::vector<uint8_t> message(32, 0x5a);
  int i = 0;
  for (auto _ : state) {
    CHECK(senders[i]->Send(message.data(), message.size()) ==
          RawSender::Error::kOk);
    CHECK(fetchers[i]->FetchNext());
    if (++i == channels) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ManyChannels)->Arg(1)->Arg(10)->Arg(100)->Arg(1000);

void BM_SendWakingWatcher(benchmark::State& state) {
  ShmBase base;
  auto config = ChannelsConfig(1, 64);
  ShmEventLoop watching(&config.message(), "watching");
  watching.SkipTimingReport();
  const Channel* channel = watching.GetChannel<examples::Ping>("/c0");
  watching.MakeRawWatcher(channel, [](const Context&, const void*) {});
  std::atomic<bool> running{false};
  watching.OnRun([&]() { running = true; });
  std::thread thread([&]() { watching.Run(); });
  while (!running) std::this_thread::yield();
  {
    ShmEventLoop loop(&config.message(), "benchmark");
    loop.SkipTimingReport();
    auto sender = loop.MakeRawSender(channel);
    std::vector<uint8_t> message(32, 0x5a);
    for (auto _ : state) {
      CHECK(sender->Send(message.data(), message.size()) ==
            RawSender::Error::kOk);
    }
    state.SetItemsProcessed(state.iterations());
  }
  watching.Exit();
  thread.join();
}
BENCHMARK(BM_SendWakingWatcher);

void BM_FirstWakeupOfANewSender(benchmark::State& state) {
  ShmBase base;
  ipc_lib::QueueLayout layout;
  layout.message_data_size = 64;
  layout.queue_size = 16;
  layout.num_senders = 1;
  layout.num_watchers = 2;
  auto memory = ipc_lib::QueueMemory::Open(FLAGS_shm_base + "/queue", layout,
                                           0600, "/bench");
  CHECK(memory.ok()) << memory.status();
  sigset_t wakeup;
  sigemptyset(&wakeup);
  sigaddset(&wakeup, ipc_lib::WakeupSignal());
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &wakeup, &old_mask);
  auto watcher =
      ipc_lib::QueueWatcher::Make(memory->get(), getpid(), gettid(), 1);
  CHECK(watcher.ok()) << watcher.status();
  const struct timespec zero = {0, 0};
  for (auto _ : state) {
    ipc_lib::QueueWakeUpper wake_upper(memory->get());
    CHECK_EQ(wake_upper.Wakeup(), 1);
    state.PauseTiming();
    while (sigtimedwait(&wakeup, nullptr, &zero) > 0) {
    }
    state.ResumeTiming();
  }
  watcher->reset();
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}
BENCHMARK(BM_FirstWakeupOfANewSender);

}  // namespace
}  // namespace aos

BENCHMARK_MAIN();
