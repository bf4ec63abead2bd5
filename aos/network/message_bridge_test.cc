// The message bridge as it runs: real bridge processes on loopback, each
// node's shared memory in a directory of its own, the test's event loops on
// both nodes. No timing is asserted; waits are bounded so that a broken
// bridge fails the test instead of hanging it.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <thread>

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/events/event_loop_generated.h"
#include "aos/events/queue_layout_for_channel.h"
#include "aos/events/shm_event_loop.h"
#include "aos/network/bridge_test_nodes.h"
#include "aos/network/bridge_topics.h"
#include "aos/network/bridge_wire.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/dds_participant.h"
#include "aos/network/remote_message_generated.h"
#include "aos/network/server_statistics_generated.h"
#include "aos/network/test_dds_domain.h"
#include "aos/testing/path.h"
#include "aos/testing/wait_until.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "examples/ping_generated.h"
#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Generous: a bridge that works connects in well under a second.
constexpr auto kDeadline = seconds(30);

// A copy of the message in `context`, to read after its handler returned.
std::vector<uint8_t> Copy(const Context& context) {
  const auto* data = static_cast<const uint8_t*>(context.data);
  return std::vector<uint8_t>(data, data + context.size);
}

class MessageBridgeTest : public BridgeTestNodes {
 protected:
  MessageBridgeTest() : BridgeTestNodes(DdsTestBinary::kMessageBridge) {}

  // A DDS writer of the test's own on the topic of /test aos.examples.Ping
  // (reliable, as the bridges'): what any peer on the network can make.
  struct PingTopicWriter {
    const Channel* channel = nullptr;
    uint32_t channel_index = 0;
    std::unique_ptr<DdsParticipant> dds;
    dds_entity_t writer = 0;
  };
  void MakePingTopicWriter(PingTopicWriter* out, int32_t depth = 100) {
    out->channel = configuration::GetChannel(config_.message(), "/test",
                                             "aos.examples.Ping", "pong", pi2_);
    ASSERT_NE(out->channel, nullptr);
    out->channel_index = ChannelIndex(out->channel);
    auto dds = DdsParticipant::Make({.domain = domain_, .interface = "lo"});
    ASSERT_TRUE(dds.ok()) << dds.status();
    out->dds = std::move(dds).value();
    auto writer = out->dds->MakeWriter(
        &aos_bridge_Message_desc,
        DdsParticipant::TopicName(out->channel_index, "/test",
                                  "aos.examples.Ping"),
        {.reliable = true, .depth = depth, .lifespan_ns = 0});
    ASSERT_TRUE(writer.ok()) << writer.status();
    out->writer = *writer;
  }

  // Runs `loop` until a handler exits it, or fails the test with `why()`
  // once kDeadline has passed.
  static void RunWithDeadline(ShmEventLoop* loop,
                              std::function<std::string()> why) {
    TimerHandler* deadline = loop->AddTimer([&]() {
      ADD_FAILURE() << why();
      loop->Exit();
    });
    loop->OnRun(
        [&]() { deadline->Schedule(loop->monotonic_now() + kDeadline); });
    loop->Run();
  }

  // Runs `pi2` until `done` is true of a ClientStatistics its bridge
  // published (failing the test with `why()` once kDeadline has passed),
  // and returns a copy of that one: empty if none. Its watcher stays on
  // `pi2` and refers to this call: run `pi2` no more after it.
  static std::vector<uint8_t> RunUntilClientStatistics(
      ShmEventLoop* pi2, std::function<bool(const ClientStatistics&)> done,
      std::function<std::string()> why) {
    std::vector<uint8_t> copy;
    pi2->MakeWatcher("/aos", [&](const ClientStatistics& statistics) {
      if (!done(statistics)) return;
      copy = Copy(pi2->context());
      pi2->Exit();
    });
    RunWithDeadline(pi2, std::move(why));
    return copy;
  }

  // Whether pi2's bridge, by `from_pi1`, has an estimate of the clock of
  // pi1's boot `pi1_boot`, and `writer` matched its reader: a sample written
  // in pi1's name then reaches the bridge, which knows how late it is.
  static bool ReadyForWritesAsPi1(const ClientConnection& from_pi1,
                                  const UUID& pi1_boot, dds_entity_t writer) {
    dds_publication_matched_status_t matched = {};
    return from_pi1.monotonic_offset_uncertainty() >= 0 &&
           from_pi1.boot_uuid()->string_view() == pi1_boot.ToString() &&
           dds_get_publication_matched_status(writer, &matched) == 0 &&
           matched.current_count > 0;
  }

  // The connection from pi1 in a copy of pi2's ClientStatistics.
  static const ClientConnection* FromPi1(const std::vector<uint8_t>& copy) {
    return flatbuffers::GetRoot<ClientStatistics>(copy.data())
        ->connections()
        ->Get(0);
  }

  // A valid aos.examples.Ping.
  static std::vector<uint8_t> PingBytes(int value) {
    flatbuffers::FlatBufferBuilder fbb;
    examples::Ping::Builder ping(fbb);
    ping.add_value(value);
    fbb.Finish(ping.Finish());
    return std::vector<uint8_t>(fbb.GetBufferPointer(),
                                fbb.GetBufferPointer() + fbb.GetSize());
  }

  // A sample as a bridge writes one, of `data` (which must outlive it), with
  // no path origins.
  static aos_bridge_Message Sample(uint32_t channel_index, uint32_t source_node,
                                   uint32_t queue_index,
                                   int64_t monotonic_sent_ns, const UUID& boot,
                                   std::vector<uint8_t>* data) {
    aos_bridge_Message message = {};
    message.channel_index = channel_index;
    message.source_node = source_node;
    message.queue_index = queue_index;
    message.monotonic_sent_ns = monotonic_sent_ns;
    message.realtime_sent_ns = 2000;
    memcpy(message.boot_uuid, boot.bytes().data(), 16);
    message.data._buffer = data->data();
    message.data._length = static_cast<uint32_t>(data->size());
    message.data._maximum = static_cast<uint32_t>(data->size());
    return message;
  }
};

// A ClientStatistics connection's clock offset uncertainty, as published at
// `time` (its send time on the node).
struct PublishedUncertainty {
  monotonic_clock::time_point time;
  int64_t uncertainty_ns;
};

// The uncertainty of the estimate the bridge translated with at `time`, if
// the publications just before and after `time` agree on it (the bridge's
// loop translates and publishes in turn, so the estimate in use between two
// publications that say the same was that one); -1 if they do not, or one
// is missing.
int64_t UncertaintyBetween(
    const std::vector<PublishedUncertainty>& publications,
    monotonic_clock::time_point time) {
  for (size_t i = 1; i < publications.size(); ++i) {
    if (publications[i - 1].time < time && time < publications[i].time) {
      return publications[i - 1].uncertainty_ns ==
                     publications[i].uncertainty_ns
                 ? publications[i].uncertainty_ns
                 : -1;
    }
  }
  return -1;
}

// A ping every 10 ms on pi1 arrives on pi2 in order, none lost after the
// first, with the remote fields filled and its path origin (the timer that
// sent it) translated into pi2's clock; its arrival comes back to pi1 as a
// remote timestamp; both bridges' statistics say what happened.
TEST_F(MessageBridgeTest, PingsCrossInOrderWithTheirOriginAndComeBackTimed) {
  auto bridge1 = StartBridge("pi1");
  auto bridge2 = StartBridge("pi2");

  constexpr int kPings = 2000;
  // Written by pi1's thread, read after both loops stopped.
  std::vector<monotonic_clock::time_point> sent_time(kPings);
  std::vector<uint32_t> sent_queue_index(kPings);
  // When the timer call that sent each was scheduled: its path origin.
  std::vector<monotonic_clock::time_point> scheduled_time(kPings);
  struct Arrival {
    int value;
    Context context;
  };
  std::vector<Arrival> arrivals;
  arrivals.reserve(kPings);
  std::vector<std::pair<uint32_t, int64_t>> remote_timestamps;
  remote_timestamps.reserve(kPings);
  std::atomic<bool> done{false};

  auto pi1 = MakeLoop("ping", pi1_);
  Sender<examples::Ping> ping_sender = pi1->MakeSender<examples::Ping>("/test");
  int next_value = 0;
  TimerHandler* send_timer = pi1->AddTimer([&]() {
    if (next_value >= kPings) return;
    auto builder = ping_sender.MakeBuilder();
    examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
    ping.add_value(next_value);
    ASSERT_EQ(builder.Send(ping.Finish()), RawSender::Error::kOk);
    sent_time[next_value] = ping_sender.raw()->monotonic_sent_time();
    scheduled_time[next_value] = pi1->context().monotonic_event_time;
    sent_queue_index[next_value] = ping_sender.raw()->sent_queue_index();
    ++next_value;
  });
  pi1->MakeWatcher(
      "/aos/remote_timestamps/pi2", [&](const RemoteMessage& message) {
        remote_timestamps.emplace_back(message.remote_queue_index(),
                                       message.monotonic_remote_time());
      });
  const ServerStatistics* last_server = nullptr;
  std::vector<uint8_t> server_copy;
  pi1->MakeWatcher("/aos", [&](const ServerStatistics& statistics) {
    const Context& context = pi1->context();
    server_copy = Copy(context);
    last_server = flatbuffers::GetRoot<ServerStatistics>(server_copy.data());
    // Statistics that say connected: a bridge starved for over a second on
    // a loaded machine may rightly say disconnected for a while.
    if (done && statistics.connections()->size() == 1 &&
        statistics.connections()->Get(0)->state() == State::CONNECTED) {
      pi1->Exit();
    }
  });
  // Stops pi1 if pi2 gave up and no statistics come to stop it.
  TimerHandler* pi1_deadline = pi1->AddTimer([&]() { pi1->Exit(); });
  pi1->OnRun([&]() {
    send_timer->Schedule(pi1->monotonic_now(), milliseconds(10));
    pi1_deadline->Schedule(pi1->monotonic_now() + 2 * kDeadline);
  });

  auto pi2 = MakeLoop("pong", pi2_);
  pi2->MakeWatcher("/test", [&](const examples::Ping& ping) {
    arrivals.push_back({ping.value(), pi2->context()});
  });
  std::vector<uint8_t> client_copy;
  std::vector<PublishedUncertainty> published;
  published.reserve(1000);
  // Whether a ping with an origin arrived between two publications of one
  // estimate: its origin's uncertainty is then known to be that one's.
  auto bracketed = [&]() {
    for (const Arrival& arrival : arrivals) {
      if (!arrival.context.origins.empty() &&
          UncertaintyBetween(published, arrival.context.monotonic_event_time) >=
              0) {
        return true;
      }
    }
    return false;
  };
  pi2->MakeWatcher("/aos", [&](const ClientStatistics& statistics) {
    const Context& context = pi2->context();
    client_copy = Copy(context);
    if (statistics.connections()->size() == 1) {
      published.push_back(
          {context.monotonic_event_time,
           statistics.connections()->Get(0)->monotonic_offset_uncertainty()});
    }
    // Enough pings, one of them known to be translated with a published
    // estimate, and statistics published after them that say connected (see
    // pi1's watcher).
    if (arrivals.size() >= 200 && statistics.connections()->size() == 1 &&
        statistics.connections()->Get(0)->state() == State::CONNECTED &&
        bracketed()) {
      done = true;
      pi2->Exit();
    }
  });
  TimerHandler* deadline = pi2->AddTimer([&]() {
    ADD_FAILURE() << "no 200 pings within the deadline; bridge pi1 said:\n"
                  << bridge1->Stderr() << "\nbridge pi2 said:\n"
                  << bridge2->Stderr();
    done = true;
    pi2->Exit();
  });
  pi2->OnRun([&]() { deadline->Schedule(pi2->monotonic_now() + kDeadline); });

  std::thread pi1_thread([&]() { pi1->Run(); });
  pi2->Run();
  pi1_thread.join();

  ASSERT_GE(arrivals.size(), 200u);
  const int first = arrivals.front().value;
  const uint32_t timer_origin = send_timer->timing().origin_id;
  ASSERT_NE(timer_origin, 0u);
  // Pings re-sent before pi2's bridge had an estimate of pi1's clock carry
  // no origin (none made up); all after do.
  size_t without_origin = 0;
  size_t with_known_uncertainty = 0;
  int64_t max_uncertainty_ns = 0;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const Arrival& arrival = arrivals[i];
    SCOPED_TRACE(StrCat("arrival ", i, " value ", arrival.value));
    const PathOrigins& origins = arrival.context.origins;
    if (origins.empty()) {
      EXPECT_EQ(without_origin, i) << "an origin was left out after the first "
                                      "that crossed";
      ++without_origin;
    } else {
      ASSERT_EQ(origins.size(), 1u);
      const PathOrigin& origin = *origins.begin();
      EXPECT_EQ(origin.id, timer_origin);
      EXPECT_EQ(origin.hops, 1);
      // One machine, one clock: the translated time is the original within
      // the uncertainty it states.
      const int64_t error_ns =
          origin.monotonic_time_ns -
          scheduled_time[arrival.value].time_since_epoch().count();
      EXPECT_LE(std::abs(error_ns), int64_t{origin.uncertainty_us} * 1000);
      // That uncertainty is the bridge's estimate's, rounded up to us.
      const int64_t estimate_ns =
          UncertaintyBetween(published, arrival.context.monotonic_event_time);
      if (estimate_ns >= 0) {
        ++with_known_uncertainty;
        EXPECT_EQ(origin.uncertainty_us, (estimate_ns + 999) / 1000);
      }
      max_uncertainty_ns = std::max<int64_t>(
          max_uncertainty_ns, int64_t{origin.uncertainty_us} * 1000);
    }
    // Reliable: nothing lost or reordered once the first one came.
    ASSERT_EQ(arrival.value, first + static_cast<int>(i));
    EXPECT_EQ(arrival.context.remote_queue_index,
              sent_queue_index[arrival.value]);
    EXPECT_EQ(arrival.context.monotonic_remote_time, sent_time[arrival.value]);
    EXPECT_EQ(arrival.context.source_boot_uuid, pi1->boot_uuid());
    // Re-sent on pi2 after it was sent on pi1 (one machine, one clock).
    EXPECT_GT(arrival.context.monotonic_event_time,
              arrival.context.monotonic_remote_time);
  }
  EXPECT_GT(with_known_uncertainty, 0u);
  EXPECT_LT(without_origin, arrivals.size());
  std::cout << arrivals.size() << " pings, " << without_origin
            << " before an offset estimate (no origin), "
            << with_known_uncertainty
            << " with the uncertainty of a published estimate\n";
  // pi2's watcher measured the path age of each origin it got, with the
  // largest uncertainty among them.
  const WatcherState* ping_watcher = nullptr;
  for (const auto& watcher : pi2->watchers()) {
    if (watcher->channel()->type()->string_view() == "aos.examples.Ping") {
      ping_watcher = watcher.get();
    }
  }
  ASSERT_NE(ping_watcher, nullptr);
  const timing::PathTimings& paths = ping_watcher->timing().paths;
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths.begin()->origin_id, timer_origin);
  EXPECT_EQ(paths.begin()->hops, 1u);
  EXPECT_EQ(paths.begin()->count(), arrivals.size() - without_origin);
  EXPECT_EQ(paths.begin()->max_uncertainty_ns, max_uncertainty_ns);
  EXPECT_EQ(paths.invalid_origins(), 0u);

  // Every remote timestamp names a ping pi1 sent, with its send time.
  ASSERT_FALSE(remote_timestamps.empty());
  for (const auto& [remote_queue_index, monotonic_remote] : remote_timestamps) {
    const auto found = std::find(sent_queue_index.begin(),
                                 sent_queue_index.end(), remote_queue_index);
    ASSERT_NE(found, sent_queue_index.end());
    EXPECT_EQ(
        monotonic_remote,
        sent_time[found - sent_queue_index.begin()].time_since_epoch().count());
  }

  ASSERT_FALSE(client_copy.empty());
  const auto* client =
      flatbuffers::GetRoot<ClientStatistics>(client_copy.data());
  ASSERT_EQ(client->connections()->size(), 1u);
  const ClientConnection* from_pi1 = client->connections()->Get(0);
  EXPECT_EQ(from_pi1->node()->string_view(), "pi1");
  EXPECT_EQ(from_pi1->state(), State::CONNECTED);
  EXPECT_GE(from_pi1->received_packets(), 200u);
  EXPECT_EQ(from_pi1->dropped_invalid(), 0u);
  EXPECT_EQ(from_pi1->dropped_unknown_channel(), 0u);
  EXPECT_GE(from_pi1->connection_count(), 1u);
  EXPECT_EQ(from_pi1->boot_uuid()->string_view(), pi1->boot_uuid().ToString());
  EXPECT_GE(from_pi1->monotonic_offset_uncertainty(), 0);
  // One clock: the true offset is 0, within the stated uncertainty.
  EXPECT_LE(std::abs(from_pi1->monotonic_offset()),
            from_pi1->monotonic_offset_uncertainty());
  ASSERT_NE(from_pi1->one_way_latency_histogram(), nullptr);
  EXPECT_GT(from_pi1->one_way_latency_histogram()->buckets()->size(), 0u);
  EXPECT_EQ(from_pi1->invalid_origins(), 0u);
  // The pings without an origin, and maybe pi1's reports and statistics
  // from before the estimate.
  EXPECT_GE(from_pi1->origins_without_offset(), without_origin);

  ASSERT_NE(last_server, nullptr);
  ASSERT_EQ(last_server->connections()->size(), 1u);
  const ServerConnection* to_pi2 = last_server->connections()->Get(0);
  EXPECT_EQ(to_pi2->node()->string_view(), "pi2");
  EXPECT_EQ(to_pi2->state(), State::CONNECTED);
  EXPECT_GT(to_pi2->sent_packets(), 0u);
  EXPECT_GT(to_pi2->delivered_packets(), 0u);

  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
}

// The bridge packs its DDS writes and sends the packs at the end of each
// wakeup: the last message of a best-effort channel (never retransmitted)
// crosses although no later write follows it. The bridges send no timing
// reports of their own, so the test's are the only writes on /pi1/aos.
TEST_F(MessageBridgeTest, LastMessageOfAQuietChannelCrosses) {
  auto bridge1 = StartBridge("pi1", {"--timing_reports=false"});
  auto bridge2 = StartBridge("pi2", {"--timing_reports=false"});

  // pids of the reports pi1 sent and pi2 received. Once pi2 has one (best
  // effort: those before the match are lost), pi1 sends a "last" report
  // and then nothing for kQuietTicks. /pi1/aos has a 500 ms lifespan: a
  // last that waits for a later flush (the bridge's 64-write one, seconds
  // away with only probes being written) mostly expires; one flushed at the
  // end of its wakeup crosses. A bridge starved over 500 ms on a loaded
  // machine may let a last expire too, which is best effort working, so
  // one more last is sent, and only one: each further try would give a
  // bridge that holds writes back another chance to pass.
  constexpr int kQuietTicks = 50;  // 5 s at the 100 ms tick.
  constexpr int kLasts = 2;
  std::atomic<int> first_received{0};
  std::atomic<int> first_last{0};
  std::atomic<int> lasts_sent{0};
  std::atomic<int> received_last{0};
  auto pi1 = MakeLoop("reporter", pi1_);
  Sender<timing::Report> report_sender =
      pi1->MakeSender<timing::Report>("/aos");
  int next_pid = 1;
  int ticks_since_last = 0;
  TimerHandler* send_timer = pi1->AddTimer([&]() {
    if (received_last != 0) {
      pi1->Exit();
      return;
    }
    if (first_last != 0 &&
        (++ticks_since_last < kQuietTicks || lasts_sent == kLasts)) {
      return;
    }
    const int pid = next_pid++;
    if (first_received != 0) {
      // Said before it is sent: pi2 may receive it before Send returns.
      if (first_last == 0) first_last = pid;
      ++lasts_sent;
      ticks_since_last = 0;
    }
    auto builder = report_sender.MakeBuilder();
    timing::Report::Builder report = builder.MakeBuilder<timing::Report>();
    report.add_pid(pid);
    ASSERT_EQ(builder.Send(report.Finish()), RawSender::Error::kOk);
  });
  pi1->OnRun(
      [&]() { send_timer->Schedule(pi1->monotonic_now(), milliseconds(100)); });

  auto pi2 = MakeLoop("listener", pi2_);
  pi2->MakeWatcher("/pi1/aos", [&](const timing::Report& report) {
    if (first_received == 0) first_received = report.pid();
    if (first_last != 0 && report.pid() >= first_last) {
      received_last = report.pid();
      pi2->Exit();
    }
  });
  TimerHandler* deadline = pi2->AddTimer([&]() {
    ADD_FAILURE() << lasts_sent << " last reports (from " << first_last
                  << ") never crossed (first received " << first_received
                  << "); bridge pi1 said:\n"
                  << bridge1->Stderr() << "\nbridge pi2 said:\n"
                  << bridge2->Stderr();
    pi1->Exit();
    pi2->Exit();
  });
  pi2->OnRun(
      [&]() { deadline->Schedule(pi2->monotonic_now() + 2 * kDeadline); });

  std::thread pi1_thread([&]() { pi1->Run(); });
  pi2->Run();
  pi1_thread.join();

  EXPECT_NE(first_received, 0);
  EXPECT_NE(received_last, 0);
  std::cout << "last reports sent until one crossed: " << lasts_sent << "\n";
  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
}

// A reliable channel's latest message reaches a peer that starts after it
// was sent: one sent before pi1's bridge started, then one its watcher
// forwarded while no peer ran, to the same peer restarted on empty shared
// memory (a rebooted machine).
TEST_F(MessageBridgeTest, LatestReliableMessageReachesEveryPeerThatJoinsLater) {
  auto pi1 = MakeLoop("pinger", pi1_);
  Sender<examples::Ping> ping_sender = pi1->MakeSender<examples::Ping>("/test");
  auto send_ping = [&](int value) {
    auto builder = ping_sender.MakeBuilder();
    examples::Ping::Builder ping = builder.MakeBuilder<examples::Ping>();
    ping.add_value(value);
    ASSERT_EQ(builder.Send(ping.Finish()), RawSender::Error::kOk);
  };
  // Sent before pi1's bridge starts: the newest when it runs.
  send_ping(7);
  auto bridge1 = StartBridge("pi1", {"--timing_reports=false"});
  for (int boot = 0; boot < 2; ++boot) {
    const std::string shm = StrCat(dir_, "/pi2/shm_boot", boot);
    std::filesystem::create_directories(shm);
    auto bridge2 = StartBridge(
        "pi2", {"--timing_reports=false", StrCat("--shm_base=", shm)});
    FLAGS_shm_base = shm;
    ShmEventLoop pi2(&config_.message(), "listener", pi2_);
    Fetcher<examples::Ping> fetcher = pi2.MakeFetcher<examples::Ping>("/test");
    int value = -1;
    TimerHandler* poll = pi2.AddTimer([&]() {
      if (fetcher.Fetch()) {
        value = fetcher->value();
        pi2.Exit();
      }
    });
    TimerHandler* deadline = pi2.AddTimer([&]() {
      ADD_FAILURE() << "boot " << boot << ": the ping never crossed; bridge "
                    << "pi1 said:\n"
                    << bridge1->Stderr() << "\nbridge pi2 said:\n"
                    << bridge2->Stderr();
      pi2.Exit();
    });
    pi2.OnRun([&]() {
      poll->Schedule(pi2.monotonic_now(), milliseconds(10));
      deadline->Schedule(pi2.monotonic_now() + kDeadline);
    });
    pi2.Run();
    EXPECT_EQ(value, boot == 0 ? 7 : 8) << "boot " << boot;
    EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
    // Sent while pi1's bridge runs and no peer does: its watcher forwards
    // it to nobody, and the next peer gets it on its match.
    send_ping(8);
  }
  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
}

// Network data is untrusted: what pi2's bridge gets from a hostile writer on
// the Ping topic is dropped and counted, never re-sent, and the bridge
// lives on. A message from a new boot of pi1 is new; the same again is a
// duplicate; a gap in its queue indices is counted as lost; and after
// another reboot of pi1 its queue indices start over, lower, and are new,
// neither duplicates nor a gap.
TEST_F(MessageBridgeTest, BadNetworkInputIsDroppedAndCounted) {
  auto bridge2 = StartBridge("pi2");
  PingTopicWriter hostile;
  ASSERT_NO_FATAL_FAILURE(MakePingTopicWriter(&hostile));
  const Channel* ping = hostile.channel;
  const uint32_t ping_index = hostile.channel_index;
  const dds_entity_t* writer = &hostile.writer;
  dds_return_t matched_status = 0;
  ASSERT_TRUE(aos::testing::WaitUntil(
      [&]() {
        dds_publication_matched_status_t matched = {};
        matched_status = dds_get_publication_matched_status(*writer, &matched);
        return matched_status != 0 || matched.current_count > 0;
      },
      kDeadline, "the bridge's reader to match the hostile writer"))
      << "the bridge's reader never matched; it said:\n"
      << bridge2->Stderr();
  ASSERT_EQ(matched_status, 0);

  std::vector<uint8_t> valid = PingBytes(42);
  std::vector<uint8_t> garbage(valid.size(), 0xff);
  std::vector<uint8_t> oversize(static_cast<size_t>(ping->max_size()) + 100, 0);
  const UUID new_boot =
      UUID::Parse("0badb007-0000-4000-8000-000000000001").value();
  const UUID next_boot =
      UUID::Parse("0badb007-0000-4000-8000-000000000002").value();
  auto write = [&](uint32_t channel_index, uint32_t source_node,
                   std::vector<uint8_t>* data, uint32_t queue_index = 5,
                   const UUID* boot = nullptr) {
    const aos_bridge_Message message =
        Sample(channel_index, source_node, queue_index, 1000,
               boot != nullptr ? *boot : new_boot, data);
    ASSERT_EQ(dds_write(*writer, &message), 0);
  };
  // Made before the writes: a new fetcher's FetchNext() gets only what is
  // sent after it was made (as in AOS).
  auto pi2 = MakeLoop("pong", pi2_);
  std::unique_ptr<RawFetcher> pings = pi2->MakeRawFetcher(ping);
  const uint32_t pi1 = NodeIndex(pi1_);
  write(ping_index + 1, pi1, &valid);  // another channel
  write(ping_index, 77, &valid);       // no such node
  write(ping_index, pi1, &oversize);
  write(ping_index, pi1, &garbage);
  write(ping_index, pi1, &valid);                 // new boot of pi1: re-sent
  write(ping_index, pi1, &valid);                 // the same again: duplicate
  write(ping_index, pi1, &valid, 9);              // 6, 7 and 8 never came: lost
  write(ping_index, pi1, &valid, 2, &next_boot);  // rebooted: starts over
  write(ping_index, pi1, &valid, 3, &next_boot);

  const std::vector<uint8_t> client_copy = RunUntilClientStatistics(
      pi2.get(),
      [&](const ClientStatistics& statistics) {
        const ClientConnection* from_pi1 = statistics.connections()->Get(0);
        return from_pi1->duplicate_packets() + from_pi1->received_packets() +
                   from_pi1->dropped_invalid() + from_pi1->dropped_oversize() +
                   from_pi1->dropped_unknown_channel() +
                   statistics.dropped_unknown_node() >=
               9;
      },
      [&]() {
        return StrCat("the statistics never counted all nine; bridge said:\n",
                      bridge2->Stderr());
      });

  ASSERT_FALSE(client_copy.empty());
  const auto* client =
      flatbuffers::GetRoot<ClientStatistics>(client_copy.data());
  const ClientConnection* from_pi1 = client->connections()->Get(0);
  EXPECT_EQ(from_pi1->dropped_unknown_channel(), 1u);
  EXPECT_EQ(client->dropped_unknown_node(), 1u);
  EXPECT_EQ(from_pi1->dropped_oversize(), 1u);
  EXPECT_EQ(from_pi1->dropped_invalid(), 1u);
  EXPECT_EQ(from_pi1->received_packets(), 4u);
  EXPECT_EQ(from_pi1->duplicate_packets(), 1u);
  EXPECT_EQ(from_pi1->lost_packets(), 3u);

  // Exactly the valid one was re-sent, with the origin it claimed.
  ASSERT_TRUE(pings->FetchNext());
  EXPECT_EQ(pings->context().source_boot_uuid, new_boot);
  EXPECT_EQ(pings->context().remote_queue_index, 5u);
  EXPECT_EQ(pings->context().monotonic_remote_time.time_since_epoch().count(),
            1000);
  EXPECT_EQ(
      flatbuffers::GetRoot<examples::Ping>(pings->context().data)->value(), 42);
  ASSERT_TRUE(pings->FetchNext());
  EXPECT_EQ(pings->context().remote_queue_index, 9u);
  for (uint32_t queue_index : {2u, 3u}) {
    ASSERT_TRUE(pings->FetchNext());
    EXPECT_EQ(pings->context().source_boot_uuid, next_boot);
    EXPECT_EQ(pings->context().remote_queue_index, queue_index);
  }
  EXPECT_FALSE(pings->FetchNext());

  // And the bridge is still there to stop cleanly.
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
}

// A reliable channel's messages that arrive faster than pi2's channel takes
// them are paced, not dropped: a writer in pi1's name sends /test Ping's
// whole queue (2000 a second for 2 s: 4000) and 40 more at once, as the
// backlog of a stall upstream arrives. pi2's bridge re-sends the queue, and
// holds the 41st until the first is 2 s old; then the rest follow. None is
// dropped or lost, every one is re-sent, in order, and the held ones are
// counted as paced. (No time is asserted: the channel itself refuses any
// re-send too early.)
TEST_F(MessageBridgeTest, ABurstFasterThanTheChannelIsPacedNotDropped) {
  auto bridge2 = StartBridge("pi2", {"--timing_reports=false"});
  constexpr uint32_t kQueue = 4000;
  constexpr uint32_t kBurst = kQueue + 40;
  PingTopicWriter peer;
  ASSERT_NO_FATAL_FAILURE(MakePingTopicWriter(&peer, kBurst));
  ASSERT_EQ(QueueLayoutForChannel(config_.message(), *peer.channel).queue_size,
            kQueue);
  const dds_entity_t writer = peer.writer;
  ASSERT_TRUE(aos::testing::WaitUntil(
      [&]() {
        dds_publication_matched_status_t matched = {};
        return dds_get_publication_matched_status(writer, &matched) == 0 &&
               matched.current_count > 0;
      },
      kDeadline, "the bridge's reader to match the writer"))
      << bridge2->Stderr();

  auto pi2 = MakeLoop("pong", pi2_);
  std::unique_ptr<RawFetcher> pings = pi2->MakeRawFetcher(peer.channel);
  const UUID boot = UUID::Parse("0badb007-0000-4000-8000-000000000003").value();
  std::vector<uint8_t> valid = PingBytes(7);
  for (uint32_t queue_index = 1; queue_index <= kBurst; ++queue_index) {
    const aos_bridge_Message message =
        Sample(peer.channel_index, NodeIndex(pi1_), queue_index,
               monotonic_clock::now().time_since_epoch().count(), boot, &valid);
    ASSERT_EQ(dds_write(writer, &message), 0) << "write " << queue_index;
  }

  const std::vector<uint8_t> client_copy = RunUntilClientStatistics(
      pi2.get(),
      [&](const ClientStatistics& statistics) {
        const ClientConnection* from_pi1 = statistics.connections()->Get(0);
        return from_pi1->received_packets() + from_pi1->dropped_send_failed() +
                   from_pi1->lost_packets() >=
               kBurst;
      },
      [&]() {
        return StrCat("the burst never crossed; bridge said:\n",
                      bridge2->Stderr());
      });

  ASSERT_FALSE(client_copy.empty());
  const ClientConnection* from_pi1 = FromPi1(client_copy);
  EXPECT_EQ(from_pi1->received_packets(), kBurst);
  EXPECT_EQ(from_pi1->dropped_send_failed(), 0u);
  EXPECT_EQ(from_pi1->lost_packets(), 0u);
  EXPECT_GE(from_pi1->paced_packets(), 1u);
  EXPECT_LE(from_pi1->paced_packets(), kBurst - kQueue);
  // The channel holds the last kQueue of them, in order.
  ASSERT_TRUE(pings->Fetch());
  EXPECT_EQ(pings->context().remote_queue_index, kBurst);
  EXPECT_EQ(pings->context().queue_index, kBurst - 1);
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
}

// A burst already later than the channel's storage duration (2 s) is not
// worth holding: a writer in pi1's name and boot, once pi2's bridge has an
// estimate of pi1's clock, sends /test Ping's whole queue and 40 more, all
// sent 3 s ago by their times. The queue is re-sent; the 40 the channel
// refuses are dropped and counted, none paced.
TEST_F(MessageBridgeTest, ABurstLaterThanTheStorageDurationIsDroppedNotHeld) {
  auto bridge1 = StartBridge("pi1", {"--timing_reports=false"});
  auto bridge2 = StartBridge("pi2", {"--timing_reports=false"});
  constexpr uint32_t kQueue = 4000;
  constexpr uint32_t kBurst = kQueue + 40;
  PingTopicWriter peer;
  ASSERT_NO_FATAL_FAILURE(MakePingTopicWriter(&peer, kBurst));
  std::vector<uint8_t> valid = PingBytes(9);
  auto pi1 = MakeLoop("pinger", pi1_);
  const UUID pi1_boot = pi1->boot_uuid();
  auto pi2 = MakeLoop("pong", pi2_);
  std::unique_ptr<RawFetcher> pings = pi2->MakeRawFetcher(peer.channel);
  bool written = false;
  uint64_t received_before = 0;
  const std::vector<uint8_t> client_copy = RunUntilClientStatistics(
      pi2.get(),
      [&](const ClientStatistics& statistics) {
        const ClientConnection* from_pi1 = statistics.connections()->Get(0);
        if (!written) {
          if (!ReadyForWritesAsPi1(*from_pi1, pi1_boot, peer.writer))
            return false;
          written = true;
          received_before = from_pi1->received_packets();
          const int64_t sent_ns =
              monotonic_clock::now().time_since_epoch().count() - 3'000'000'000;
          for (uint32_t i = 0; i < kBurst; ++i) {
            const aos_bridge_Message message =
                Sample(peer.channel_index, NodeIndex(pi1_), 1000 + i, sent_ns,
                       pi1_boot, &valid);
            EXPECT_EQ(dds_write(peer.writer, &message), 0) << "write " << i;
          }
          return false;
        }
        // pi1's bridge forwards its own statistics too: wait for the
        // refusals themselves.
        return from_pi1->received_packets() - received_before >= kQueue &&
               from_pi1->dropped_send_failed() + from_pi1->lost_packets() >=
                   kBurst - kQueue;
      },
      [&]() {
        return StrCat("the burst never crossed (written: ", written,
                      "); bridge pi1 said:\n", bridge1->Stderr(),
                      "\nbridge pi2 said:\n", bridge2->Stderr());
      });

  ASSERT_FALSE(client_copy.empty());
  const ClientConnection* from_pi1 = FromPi1(client_copy);
  // pi1's bridge forwards its own statistics too.
  EXPECT_GE(from_pi1->received_packets() - received_before, kQueue);
  EXPECT_EQ(from_pi1->dropped_send_failed(), kBurst - kQueue);
  EXPECT_EQ(from_pi1->paced_packets(), 0u);
  EXPECT_EQ(from_pi1->lost_packets(), 0u);
  // The first kQueue pings were re-sent; none after.
  ASSERT_TRUE(pings->Fetch());
  EXPECT_EQ(pings->context().remote_queue_index, 1000 + kQueue - 1);
  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
}

// A best-effort channel's re-sends that come faster than pi2's channel
// takes them are dropped and counted, not paced: a writer in pi1's name
// sends /pi1/aos SnapshotRequest's whole queue (10 a second for 2 s: 20)
// and 5 more at once; pi2's bridge re-sends 20 and drops 5. (The first is
// written until it crosses: best effort drops what comes before the
// bridge's reader knows the writer.)
TEST_F(MessageBridgeTest, ABurstOnABestEffortChannelIsDroppedAndCounted) {
  auto bridge2 = StartBridge("pi2", {"--timing_reports=false"});
  const Channel* channel = configuration::GetChannel(
      config_.message(), "/pi1/aos", "aos.tracing.SnapshotRequest", "", pi2_);
  ASSERT_NE(channel, nullptr);
  constexpr uint32_t kQueue = 20;
  constexpr uint32_t kBurst = kQueue + 5;
  ASSERT_EQ(QueueLayoutForChannel(config_.message(), *channel).queue_size,
            kQueue);
  auto dds = DdsParticipant::Make({.domain = domain_, .interface = "lo"});
  ASSERT_TRUE(dds.ok()) << dds.status();
  const ForwardedTopic topic =
      ForwardedChannelTopic(config_.message(), *channel, ChannelIndex(channel));
  ASSERT_FALSE(topic.qos.reliable);
  auto writer = (*dds)->MakeWriter(&aos_bridge_Message_desc, topic.name,
                                   {.reliable = false,
                                    .depth = static_cast<int32_t>(kBurst),
                                    .lifespan_ns = topic.qos.lifespan_ns});
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE(aos::testing::WaitUntil(
      [&]() {
        dds_publication_matched_status_t matched = {};
        return dds_get_publication_matched_status(*writer, &matched) == 0 &&
               matched.current_count > 0;
      },
      kDeadline, "the bridge's reader to match the writer"))
      << bridge2->Stderr();

  auto pi2 = MakeLoop("listener", pi2_);
  // An empty SnapshotRequest: every field is optional.
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(
      flatbuffers::Offset<flatbuffers::Table>(fbb.EndTable(fbb.StartTable())));
  std::vector<uint8_t> empty(fbb.GetBufferPointer(),
                             fbb.GetBufferPointer() + fbb.GetSize());
  const UUID boot = UUID::Parse("0badb007-0000-4000-8000-000000000004").value();
  auto write = [&](uint32_t queue_index) {
    const aos_bridge_Message message =
        Sample(ChannelIndex(channel), NodeIndex(pi1_), queue_index,
               monotonic_clock::now().time_since_epoch().count(), boot, &empty);
    return dds_write(*writer, &message);
  };
  std::unique_ptr<RawFetcher> requests = pi2->MakeRawFetcher(channel);
  bool burst_written = false;
  TimerHandler* prime = pi2->AddTimer([&]() {
    if (burst_written) return;
    if (!requests->Fetch()) {
      EXPECT_EQ(write(1), 0);
      return;
    }
    for (uint32_t queue_index = 2; queue_index <= kBurst; ++queue_index) {
      ASSERT_EQ(write(queue_index), 0) << "write " << queue_index;
    }
    burst_written = true;
  });
  pi2->OnRun(
      [&]() { prime->Schedule(pi2->monotonic_now(), milliseconds(10)); });

  std::string counts;
  const std::vector<uint8_t> client_copy = RunUntilClientStatistics(
      pi2.get(),
      [&](const ClientStatistics& statistics) {
        const ClientConnection* from_pi1 = statistics.connections()->Get(0);
        counts = StrCat("received ", from_pi1->received_packets(), ", refused ",
                        from_pi1->dropped_send_failed(), ", lost ",
                        from_pi1->lost_packets(), ", invalid ",
                        from_pi1->dropped_invalid(), ", unknown channel ",
                        from_pi1->dropped_unknown_channel());
        return from_pi1->received_packets() + from_pi1->dropped_send_failed() +
                   from_pi1->lost_packets() >=
               kBurst;
      },
      [&]() {
        return StrCat("the burst never crossed (", counts, "); bridge said:\n",
                      bridge2->Stderr());
      });

  ASSERT_FALSE(client_copy.empty());
  const ClientConnection* from_pi1 = FromPi1(client_copy);
  EXPECT_EQ(from_pi1->received_packets(), kQueue);
  EXPECT_EQ(from_pi1->dropped_send_failed(), kBurst - kQueue);
  EXPECT_EQ(from_pi1->paced_packets(), 0u);
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
}

// Path origins come from the network too: a hostile writer's well-formed
// Pings in pi1's name and boot, sent once pi2's bridge has an estimate of
// pi1's clock, each with origins no sender could have (a count of 9, id 0,
// an id twice, 0 hops, an hour ahead): none reaches pi2's shared memory as
// given; the possible ones beside them do, translated; the statistics count
// every impossible one.
TEST_F(MessageBridgeTest, ImpossibleOriginsAreDroppedAndCounted) {
  auto bridge1 = StartBridge("pi1", {"--timing_reports=false"});
  auto bridge2 = StartBridge("pi2", {"--timing_reports=false"});
  PingTopicWriter hostile;
  ASSERT_NO_FATAL_FAILURE(MakePingTopicWriter(&hostile));
  const dds_entity_t* writer = &hostile.writer;
  std::vector<uint8_t> valid = PingBytes(42);
  // One machine: pi1's clock is ours.
  auto pi1 = MakeLoop("pinger", pi1_);
  const UUID pi1_boot = pi1->boot_uuid();
  uint32_t queue_index = 1000;
  auto write = [&](uint32_t count, std::vector<PathOrigin> origins) {
    aos_bridge_Message message = Sample(
        hostile.channel_index, NodeIndex(pi1_), queue_index++,
        monotonic_clock::now().time_since_epoch().count(), pi1_boot, &valid);
    message.origin_count = count;
    for (size_t i = 0; i < origins.size() && i < 4; ++i) {
      message.origins[i] = {.id = origins[i].id,
                            .hops = origins[i].hops,
                            .uncertainty_us = origins[i].uncertainty_us,
                            .monotonic_time_ns = origins[i].monotonic_time_ns};
    }
    ASSERT_EQ(dds_write(*writer, &message), 0);
  };

  auto pi2 = MakeLoop("pong", pi2_);
  // Made before the writes: FetchNext() gets what is sent after.
  std::unique_ptr<RawFetcher> pings = pi2->MakeRawFetcher(hostile.channel);
  int64_t sent_ns = 0;
  bool written = false;
  // pi1's bridge forwards its own statistics too: counts from the writes on.
  uint64_t received_before = 0;
  uint64_t without_offset_before = 0;
  const std::vector<uint8_t> client_copy = RunUntilClientStatistics(
      pi2.get(),
      [&](const ClientStatistics& statistics) {
        const ClientConnection* from_pi1 = statistics.connections()->Get(0);
        if (!written) {
          // Once pi2's bridge can translate pi1's times, and the writer
          // matched its reader.
          if (!ReadyForWritesAsPi1(*from_pi1, pi1_boot, *writer)) return false;
          written = true;
          received_before = from_pi1->received_packets();
          without_offset_before = from_pi1->origins_without_offset();
          const int64_t now = monotonic_clock::now().time_since_epoch().count();
          sent_ns = now - 1'000'000;
          const PathOrigin good{
              .id = 5, .hops = 1, .monotonic_time_ns = sent_ns};
          const int64_t hour = int64_t{3600} * 1'000'000'000;
          write(9, {good, good, good, good});  // 4 invalid
          write(2,
                {good, {.id = 0, .hops = 1, .monotonic_time_ns = now}});  // 1
          write(2,
                {good, {.id = 5, .hops = 2, .monotonic_time_ns = now}});  // 1
          write(2,
                {good, {.id = 6, .hops = 0, .monotonic_time_ns = now}});  // 1
          write(2,
                {good, {.id = 6, .hops = 1, .monotonic_time_ns = now + hour}});
          write(1,
                {{.id = 7, .hops = 1, .monotonic_time_ns = INT64_MIN}});  // 1
          return false;
        }
        // The last write brings the ninth (DDS keeps the writer's order).
        return from_pi1->invalid_origins() >= 9;
      },
      [&]() {
        return StrCat("the six pings never crossed (written: ", written,
                      "); bridge pi1 said:\n", bridge1->Stderr(),
                      "\nbridge pi2 said:\n", bridge2->Stderr());
      });

  ASSERT_FALSE(client_copy.empty());
  const ClientConnection* from_pi1 = FromPi1(client_copy);
  EXPECT_GE(from_pi1->received_packets(), received_before + 6);
  EXPECT_EQ(from_pi1->invalid_origins(), 4u + 1 + 1 + 1 + 1 + 1);
  EXPECT_EQ(from_pi1->origins_without_offset(), without_offset_before);
  // What reached shared memory: the good origin beside each impossible one,
  // translated (within its uncertainty of the truth, one clock), nothing
  // else.
  const size_t kept[] = {0, 1, 1, 1, 1, 0};
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(StrCat("ping ", i));
    ASSERT_TRUE(pings->FetchNext());
    const PathOrigins& origins = pings->context().origins;
    ASSERT_EQ(origins.size(), kept[i]);
    for (const PathOrigin& origin : origins) {
      EXPECT_EQ(origin.id, 5u);
      EXPECT_EQ(origin.hops, 1);
      EXPECT_GT(origin.uncertainty_us, 0);
      EXPECT_LE(std::abs(origin.monotonic_time_ns - sent_ns),
                int64_t{origin.uncertainty_us} * 1000);
    }
  }
  EXPECT_FALSE(pings->FetchNext());
  EXPECT_EQ(bridge1->Terminate(), 0) << bridge1->Stderr();
  EXPECT_EQ(bridge2->Terminate(), 0) << bridge2->Stderr();
}

}  // namespace
}  // namespace aos::message_bridge
