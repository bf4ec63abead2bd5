// bridge_bench: the message bridge's latency and throughput beside Cyclone
// DDS's own ddsperf on the same link, in the same run. Run through
// tools/bench/bridge.sh, which builds it, makes the network namespaces and
// cleans up; docs/benchmarks.md ("Forwarding between nodes") shows a run.
//
// For each link (lo: both nodes in this namespace on loopback; veth: pi1
// in namespace <netns>1, pi2 in <netns>2, joined by a veth pair), in turn:
//   1. ddsperf ping / pong at the ping rate: DDS's round trip;
//   2. ping and pong on one node (single-node config, no bridge): the
//      round trip through shared memory alone;
//   3. ddsperf pub (32 B, as fast as it can) / sub: DDS's rate;
//   3b. two bare relays (bare_relay.cc) in place of the bridges, pong on
//      pi2 and ping on pi1: the forwarded path's round trip with nothing
//      of a bridge's own work, the floor under any bridge process;
//   4. the bridges of pi1 and pi2, once both say CONNECTED, pong on pi2 and
//      ping on pi1 at the same rate: the forwarded round trip (through both
//      bridges), where ping's messages were on the way (their path ages in
//      every process's timing reports, from aos_timing_report_streamer on
//      each node; in 2 as well), then each bridge's one-way latency
//      histogram (ClientStatistics);
//   5. bridge_flood on pi1 (32 B on /bench, up to the channel's 200 kHz)
//      with the same bridges: what pi2's bridge re-sent a second, from its
//      ClientStatistics, and the CPU each process used;
//   6. (--security=both, the default) 4 and 5 again with both bridges on
//      DDS Security (certificates from make_test_ca.sh), on shared memory
//      of their own: what authentication and encryption cost, in the same
//      run.
//   7. rounds of 1, 2, 3b and 4's round trips, back to back in each round,
//      --latency_rounds in all (3 by default), 1-6 being the first: the
//      latency goal is judged on the median of the rounds' ratios, each of
//      its own round's figures. The first round differs from the rest:
//      streamers run during its local and bridges' round trips, and
//      ddsperf pub/sub (and with --security=both the certificates) come
//      between its hops and its relays.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "aos/config_flag.h"
#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/timing_histogram.h"
#include "aos/events/timing_statistic.h"
#include "aos/init.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/dds_participant.h"
#include "aos/network/server_statistics_generated.h"
#include "aos/starter/launcher.h"
#include "aos/util/cpu_latency_limit.h"
#include "aos/util/flag_checks.h"
#include "aos/util/flag_output_file.h"
#include "aos/util/json_document.h"
#include "aos/util/json_writer.h"
#include "aos/util/plain_table.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "aos/util/user_error.h"
#include "examples/ping_generated.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "tools/bench/bench_figures.h"
#include "tools/bench/bench_harness.h"
#include "tools/bench/ddsperf_output.h"
#include "tools/bench/flood_loss.h"
#include "tools/bench/forwarded_latency_goal.h"
#include "tools/bench/streamed_summaries.h"

DEFINE_string(bin_dir, "bazel-bin", "Where the built programs are.");
DEFINE_string(links, "lo", "Comma-separated links to measure: lo, veth.");
DEFINE_string(netns, "aosbench",
              "For veth: the namespaces <netns>1 and <netns>2 "
              "(tools/netns_pair.sh up <netns>) with interfaces <netns>1v and "
              "<netns>2v.");
DEFINE_double(seconds, 5, "Seconds for each of the five measurements.");
DEFINE_int32(ping_interval_us, 1000,
             "Microseconds between pings, ours and ddsperf's.");
DEFINE_string(work_dir, "",
              "A directory this bench may fill and empty: the nodes' shared "
              "memory and the programs' output (bridge.sh makes one).");
DEFINE_string(json, "", "Also write every figure to this file as JSON.");
DEFINE_string(security, "both",
              "both: measure the bridges without and then with DDS Security "
              "(--dds_security, certificates from --make_test_ca), in the "
              "same run; off: without only.");
DEFINE_int32(latency_rounds, 3,
             "How many rounds of the round trips judge the latency goal: "
             "ddsperf's, the local one, the bare relays' and the bridges', "
             "back to back in each round (the first round is the full "
             "run's; the others measure the round trips only).");
DEFINE_int32(security_rounds, 2,
             "With --security=both: how many times each of the plain and "
             "the secure bridges is measured, in the order plain, secure, "
             "secure, plain, ...");
DEFINE_double(flood_rate, 0,
              "Messages a second bridge_flood offers on /bench; 0: the "
              "channel's frequency (200000 in bridge_bench.json).");
DEFINE_string(make_test_ca, "tools/dds_security/make_test_ca.sh",
              "The script that makes the secure bridges' certificates.");
DEFINE_string(local_config, "",
              "Single-node ping/pong config for the local round trip "
              "(default: <bin_dir>/examples/pingpong_config.json).");

namespace aos::bench {
namespace {

using message_bridge::ClientStatistics;
using message_bridge::ServerStatistics;

// Issue 27's goals: the forwarded round trip's p50 at most this many times
// the hops' sum (RoundTripP50s::HopsSumUs; the median of the rounds'
// ratios), and at least this many 32 B messages forwarded a second.
constexpr double kLatencyGoal = 1.0;
constexpr double kThroughputGoal = 150000;

void Sleep(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How a program is started on one node of one link.
struct Link {
  std::string name;
  // Prefix of every command on node 1 and 2: "ip netns exec NS" or nothing.
  std::vector<std::string> in[2];
  // The network namespace of node 1 and 2 ("" for this one), for a
  // launcher (aos/starter/launcher.h).
  std::string netns[2];
  std::string interface[2];
};

Link MakeLink(std::string_view name) {
  Link link;
  link.name = std::string(name);
  if (name == "lo") {
    link.interface[0] = link.interface[1] = "lo";
    return link;
  }
  for (int i = 0; i < 2; ++i) {
    const std::string ns = StrCat(FLAGS_netns, i + 1);
    link.in[i] = {"netns", "exec", ns};
    link.netns[i] = ns;
    link.interface[i] = StrCat(ns, "v");
  }
  return link;
}

// Starts `program` with `args` on node `node` (0 or 1) of `link`.
std::unique_ptr<Subprocess> Start(const Link& link, int node,
                                  const std::string& program,
                                  std::vector<std::string> args,
                                  const std::string& out_dir) {
  if (link.in[node].empty()) {
    return std::make_unique<Subprocess>(program, std::move(args), out_dir);
  }
  std::vector<std::string> all = link.in[node];
  all.push_back(program);
  for (std::string& arg : args) all.push_back(std::move(arg));
  return std::make_unique<Subprocess>("/usr/sbin/ip", std::move(all), out_dir);
}

// Starts pong (`config`, `shm_base`, `extra` flags) on node `node` of
// `link` through `launcher`, and waits for its first timing report: it
// answers from then on. Ends the bench, with why, if it does not.
void LaunchPong(starter::Launcher& launcher, const Link& link, int node,
                const std::string& config, const std::string& shm_base,
                std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {StrCat("--config=", config),
                                   StrCat("--shm_base=", shm_base)};
  args.insert(args.end(), extra.begin(), extra.end());
  absl::Status status =
      launcher.Start({.name = "pong",
                      .binary = StrCat(FLAGS_bin_dir, "/examples/pong"),
                      .args = std::move(args),
                      .network_namespace = link.netns[node],
                      .reports = true});
  if (status.ok()) {
    status = launcher.WaitUntilReporting(std::chrono::seconds(30));
  }
  if (!status.ok()) FailWithOutput(std::string(status.message()), nullptr);
}

// ddsperf on `link`'s interface, through env(1) so that CYCLONEDDS_URI
// reaches only it.
std::unique_ptr<Subprocess> StartDdsperf(const Link& link, int node, int domain,
                                         std::vector<std::string> mode,
                                         const std::string& out_dir) {
  std::vector<std::string> args = {
      StrCat("CYCLONEDDS_URI=<CycloneDDS><Domain id=\"any\"><General>"
             "<Interfaces><NetworkInterface name=\"",
             link.interface[node],
             "\"/></Interfaces></General>"
             // The receive buffers the bridges' sockets ask for: the same
             // room for both.
             "<Internal>",
             message_bridge::DdsParticipant::SocketReceiveBufferXml(),
             "</Internal></Domain></CycloneDDS>"),
      "/usr/bin/ddsperf", "-i", StrCat(domain)};
  for (std::string& word : mode) args.push_back(std::move(word));
  return Start(link, node, "/usr/bin/env", std::move(args), out_dir);
}

// The bridges' statistics on one node, read from its shared memory.
class NodeStatistics {
 public:
  NodeStatistics(const Configuration* config, const Node* node,
                 const std::string& shm_base) {
    FLAGS_shm_base = shm_base;
    loop_ = std::make_unique<ShmEventLoop>(config, "bridge_bench", node);
    client_ = loop_->MakeFetcher<ClientStatistics>("/aos");
    server_ = loop_->MakeFetcher<ServerStatistics>("/aos");
    // The loop never runs: let SIGINT and SIGTERM end the bench (bridge.sh
    // cleans up), and let the programs it starts inherit them unblocked.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    PCHECK(pthread_sigmask(SIG_UNBLOCK, &signals, nullptr) == 0);
  }

  // The loop the statistics are fetched on: it never runs. A launcher on
  // this node waits on it for first timing reports.
  EventLoop* loop() { return loop_.get(); }

  // The latest ClientStatistics' connection from `peer`, or null.
  const message_bridge::ClientConnection* Client(std::string_view peer) {
    client_.Fetch();
    return FindConnection(client_.get(), peer);
  }
  // The next ClientStatistics not yet seen, with its send time.
  const message_bridge::ClientConnection* NextClient(std::string_view peer,
                                                     double* sent_s) {
    if (!client_.FetchNext()) return nullptr;
    *sent_s = std::chrono::duration<double>(
                  client_.context().monotonic_event_time.time_since_epoch())
                  .count();
    return FindConnection(client_.get(), peer);
  }
  const message_bridge::ServerConnection* Server(std::string_view peer,
                                                 uint64_t* write_failures) {
    server_.Fetch();
    if (server_.get() == nullptr || server_->connections() == nullptr) {
      return nullptr;
    }
    *write_failures = server_->write_failures();
    return FindConnection(server_.get(), peer);
  }

 private:
  // The connection of `statistics` (Client- or ServerStatistics) with
  // `peer`, or null.
  template <typename Statistics>
  static auto FindConnection(const Statistics* statistics,
                             std::string_view peer)
      -> decltype(statistics->connections()->Get(0)) {
    if (statistics == nullptr || statistics->connections() == nullptr) {
      return nullptr;
    }
    for (const auto* connection : *statistics->connections()) {
      if (connection->node() != nullptr &&
          connection->node()->string_view() == peer) {
        return connection;
      }
    }
    return nullptr;
  }

  std::unique_ptr<ShmEventLoop> loop_;
  Fetcher<ClientStatistics> client_;
  Fetcher<ServerStatistics> server_;
};

// A bridge's one-way latency histogram from `peer` since it started, or
// nothing where the statistics have none (left out to fit, or no peer yet).
std::optional<timing::LatencyHistogram> OneWayHistogram(
    const message_bridge::ClientConnection* connection) {
  timing::LatencyHistogram histogram;
  std::string error;
  if (connection == nullptr ||
      connection->one_way_latency_histogram() == nullptr ||
      !timing::LatencyHistogram::Decode(
          *connection->one_way_latency_histogram(), &histogram, &error)) {
    return std::nullopt;
  }
  return histogram;
}

// A bridge's one-way latency from `peer` since it started, in us.
Figures OneWay(std::string name,
               const message_bridge::ClientConnection* connection) {
  Figures none;
  none.name = name;
  if (connection == nullptr || connection->one_way_latency() == nullptr) {
    return none;
  }
  const std::optional<timing::LatencyHistogram> histogram =
      OneWayHistogram(connection);
  if (!histogram.has_value()) return none;
  const timing::RunningStatistic statistic = timing::RunningStatistic::Decode(
      *connection->one_way_latency(), connection->received_packets());
  return FromHistogram(std::move(name), *histogram, statistic);
}

// bridge_flood on pi1 through the bridges to pi2.
struct Throughput {
  int64_t sent = 0, refused = 0, message_bytes = 0;
  double offered_per_s = NAN, sent_per_s = NAN;
  double forwarded_per_s = NAN;
  int64_t forwarded = 0, written = 0, write_failures = 0;
  // Messages of pi1's forwarded channels (/bench, and the few others)
  // that never reached pi2's bridge (ClientStatistics lost_packets, during
  // the flood and its tail).
  int64_t lost = 0;
  // Of what reached pi2's bridge, what pi2's channel refused to take
  // (ClientStatistics dropped_send_failed: more than its queue within its
  // storage duration, as after a stall); lost counts these too.
  int64_t refused_on_pi2 = 0;
  // Of what reached pi2's bridge, what came faster than pi2's channel takes
  // it and waited instead (ClientStatistics paced_packets: /bench is
  // reliable, so its bridge paces such a re-send; its wait is in longest).
  int64_t paced_on_pi2 = 0;
  // The most messages bridge_flood sent in one of its 1 ms ticks (150 at
  // 150 k/s; more after a tick came late).
  int64_t largest_burst = 0;
  // The longest one-way delay (pi1's send to pi2's re-send) of a message
  // forwarded during the flood, in us (NaN: not measured).
  double longest_one_way_us = NAN;
  // What /bench's declared rate leaves at the offered rate
  // (tools/bench/flood_loss.h), in us: the longest stall a catch-up
  // re-send on pi2 stays within, and how far pi1's bridge may fall behind.
  double catch_up_headroom_us = NAN, lag_headroom_us = NAN;
  // CPU used during the flood, in % of one CPU.
  double cpu_flood = NAN, cpu_bridge1 = NAN, cpu_bridge2 = NAN;
};

// Where ping's message was on the forwarded path: its age (from ping's
// timer, the path's origin) when each callback on its way started, from the
// processes' own timing reports (path latency).
struct ForwardedAges {
  CallbackFigures pi1_bridge, pong, pi2_bridge, ping;
  // pi2's bridge's estimate of pi1's clock (pi1 minus pi2) and its
  // uncertainty at the end, in us (NaN without one). Both nodes run on this
  // machine's one clock, so the estimate is the error of the ages on pi2.
  double clock_offset_us = NAN, clock_uncertainty_us = NAN;
};

// What one pair of bridges (with or without DDS Security) measured.
struct BridgeResult {
  Figures forwarded_round_trip;
  ForwardedAges ages;
  Figures one_way_pi1_to_pi2, one_way_pi2_to_pi1;
  int64_t pings = 0, pongs = 0;
  // At the channel's rate (or --flood_rate): as many as they can.
  Throughput throughput;
  // At the goal's rate (kThroughputGoal): whether they lose none there.
  Throughput at_goal_rate;
};

// The p50s of one round of the round trips, in us (NaN: not measured).
struct RoundTripP50s {
  double ddsperf_us = NAN, local_us = NAN, relays_us = NAN, bridges_us = NAN;

  // What the forwarded path's hops cost alone: ddsperf's round trip (DDS
  // twice) plus two local round trips (shared memory four times).
  double HopsSumUs() const { return ddsperf_us + 2 * local_us; }

  LatencyRound ToJudge() const {
    return {.hops_sum_us = HopsSumUs(),
            .relays_us = relays_us,
            .bridges_us = bridges_us};
  }
};

struct LinkResult {
  std::string link;
  Figures dds_round_trip;
  // ping and pong on one node, no bridge: two shared-memory hops.
  Figures local_round_trip;
  // Its path ages at pong's and at ping's watcher.
  CallbackFigures local_pong, local_ping;
  // ping and pong through two bare relays (bare_relay.cc) instead of the
  // bridges: the hops with nothing of a bridge's own work (the first
  // round's).
  Figures relay_round_trip;
  // Every round of the round trips (--latency_rounds), each measured back
  // to back: the first is the figures here, the rest measure the round
  // trips only.
  std::vector<RoundTripP50s> rounds;
  // ddsperf pub/sub.
  DdsperfRate dds_rate;
  // The bridges without DDS Security: the first run, for the tables
  // against ddsperf.
  BridgeResult plain;
  // --security=both: every run, plain and secure, in the order they ran
  // (ABBA: plain, secure, secure, plain, ... so that a machine that drifts
  // during the bench weighs on both alike).
  struct Run {
    bool secure;
    BridgeResult result;
  };
  std::vector<Run> runs;
};

Figures PingRoundTrip(const std::string& path, int64_t* pings, int64_t* pongs) {
  absl::StatusOr<JsonDocument> doc = JsonDocument::ReadFile(path);
  if (!doc.ok()) FailWithOutput(doc.status().ToString(), nullptr);
  Figures f;
  f.name = "forwarded ping/pong";
  const JsonValue round_trip = doc->root()["round_trip_us"];
  const absl::Status numbers = ReadNumbers(round_trip,
                                           {{"avg", &f.avg_us},
                                            {"p50", &f.p50_us},
                                            {"p99", &f.p99_us},
                                            {"max", &f.max_us}},
                                           /*null_is_nan=*/true);
  if (!numbers.ok()) FailWithOutput(numbers.ToString(), nullptr);
  absl::StatusOr<int64_t> sent = doc->root()["pings"].Integer();
  absl::StatusOr<int64_t> answered = doc->root()["pongs"].Integer();
  if (!sent.ok() || !answered.ok())
    FailWithOutput("ping's summary lacks counts", nullptr);
  *pings = *sent;
  *pongs = *answered;
  f.count = *answered;
  return f;
}

// Waits until pi1's bridge says pi2 is CONNECTED and pi2's says pi1 is:
// discovery, and with DDS Security the handshakes, are done.
void WaitConnected(std::unique_ptr<NodeStatistics> (&statistics)[2],
                   std::unique_ptr<Subprocess> (&bridge)[2]) {
  const double deadline = Now() + 60;
  while (true) {
    uint64_t write_failures = 0;
    const auto* to_pi2 = statistics[0]->Server("pi2", &write_failures);
    const auto* from_pi1 = statistics[1]->Client("pi1");
    if (to_pi2 != nullptr && from_pi1 != nullptr &&
        to_pi2->state() == message_bridge::State::CONNECTED &&
        from_pi1->state() == message_bridge::State::CONNECTED) {
      return;
    }
    if (Now() > deadline) {
      std::cerr << "--- bridge pi1 said\n" << bridge[0]->Stderr() << "\n";
      FailWithOutput("the bridges did not say CONNECTED within 60 s",
                     bridge[1].get());
    }
    Sleep(0.05);
  }
}

// The timing reports of one node's processes, accumulated from its start
// by aos_timing_report_streamer --format=json: each callback's own figures,
// the age of the data it got (path latency) included.
class NodeReports {
 public:
  // `node`: the node's name, or empty in a single-node `config`.
  NodeReports(const std::string& config, const std::string& node,
              const std::string& shm_base, const std::string& out)
      : name_(node.empty() ? "the node's" : StrCat(node, "'s")) {
    std::vector<std::string> args = {StrCat("--config=", config),
                                     StrCat("--shm_base=", shm_base),
                                     "--format=json", "--stream=false"};
    if (!node.empty()) args.push_back(StrCat("--node=", node));
    streamer_ = std::make_unique<Subprocess>(
        StrCat(FLAGS_bin_dir, "/aos/tools/aos_timing_report_streamer"),
        std::move(args), out);
  }

  // Stops the streamer, which prints what it accumulated as it exits, and
  // reads that; call it once. A loop sends no report as it stops, so a
  // process that ended before (ping) is in it up to its last report, within
  // a second of its end. Where the streamer failed or read no report, says
  // so on stderr with its output and returns nothing: the figures print as
  // "-", and the bench goes on.
  StreamedSummaries Read() {
    const int status = streamer_->Terminate();
    const std::string what = StrCat(name_, " aos_timing_report_streamer");
    absl::StatusOr<StreamedSummaries> summaries =
        StreamedSummaries::Parse(streamer_->Stdout(), what);
    if (status == 0 && summaries.ok() && summaries->reports() > 0) {
      return *std::move(summaries);
    }
    std::cerr << "bridge_bench: no path ages: " << what << " exited " << status
              << ", "
              << (summaries.ok() ? StrCat(summaries->reports(), " reports")
                                 : std::string(summaries.status().message()))
              << "; its stderr:\n"
              << streamer_->Stderr() << "\n";
    return StreamedSummaries();
  }

 private:
  std::string name_;
  std::unique_ptr<Subprocess> streamer_;
};

// pong on pi2 (started through a launcher on `pi2_loop`, a loop on pi2's
// shared memory) and ping on pi1, each node's messages carried by
// `forwarders` (the bridges or the bare relays) between base[0] and
// base[1]: ping's round trip, from its summary `summary_name` in `out`.
// With `ages`, also where ping's messages were on the way, from both nodes'
// timing reports (forwarders named message_bridge). Ends the bench, showing
// pi2's forwarder's output, if ping fails or no pong came back.
Figures PingPongAcross(const Link& link, EventLoop* pi2_loop,
                       const std::string (&base)[2],
                       const std::string& forwarders, Subprocess* pi2_forwarder,
                       const std::string& summary_name, const std::string& out,
                       int64_t* pings, int64_t* pongs,
                       ForwardedAges* ages = nullptr) {
  const std::string config_path = FLAGS_config;
  // The streamers start first, so that they are up before ping starts
  // (after pong's first report) and none of their start overlaps it.
  std::unique_ptr<NodeReports> reports[2];
  if (ages != nullptr) {
    for (int i = 0; i < 2; ++i) {
      reports[i] = std::make_unique<NodeReports>(
          config_path, StrCat("pi", i + 1), base[i], out);
    }
  }
  starter::Launcher launcher(pi2_loop, out);
  LaunchPong(launcher, link, 1, config_path, base[1], {"--node=pi2"});
  const std::string summary = StrCat(out, "/", summary_name);
  auto ping = Start(link, 0, StrCat(FLAGS_bin_dir, "/examples/ping"),
                    {StrCat("--config=", config_path), "--node=pi1",
                     StrCat("--shm_base=", base[0]),
                     StrCat("--sleep_us=", FLAGS_ping_interval_us),
                     StrCat("--duration=", FLAGS_seconds),
                     StrCat("--summary_json=", summary)},
                    out);
  ExitUnlessSucceeded(*ping, StrCat("ping through the ", forwarders));
  Figures figures = PingRoundTrip(summary, pings, pongs);
  if (*pongs == 0) {
    FailWithOutput(StrCat("no pong came back through the ", forwarders,
                          " (pi2's output above)"),
                   pi2_forwarder);
  }
  if (ages != nullptr) {
    // The reports of the last second (each process sends one a second).
    Sleep(1.2);
    const StreamedSummaries pi1 = reports[0]->Read();
    const StreamedSummaries pi2 = reports[1]->Read();
    ages->pi1_bridge =
        pi1.Watcher("message_bridge", "/test", "aos.examples.Ping");
    ages->pong = pi2.Watcher("pong", "/test", "aos.examples.Ping");
    ages->pi2_bridge =
        pi2.Watcher("message_bridge", "/test", "aos.examples.Pong");
    ages->ping = pi1.Watcher("ping", "/test", "aos.examples.Pong");
  }
  launcher.StopAll(std::chrono::seconds(5));
  return figures;
}

// A test CA with pi1's and pi2's certificates in `work`/certs
// (make_test_ca.sh), for --dds_security.
std::string MakeCertificates(const std::string& work, const std::string& out) {
  const std::string dir = StrCat(work, "/certs");
  Subprocess script("/bin/bash", {FLAGS_make_test_ca, dir, "pi1", "pi2"}, out);
  if (script.Wait() != 0) {
    FailWithOutput(StrCat(FLAGS_make_test_ca, " failed"), &script);
  }
  return dir;
}

// bridge_flood on pi1 offering `rate` 32 B messages a second on /bench (0:
// the channel's frequency) through the running bridges `what`: what pi2's
// bridge re-sent, and the CPU each process used.
Throughput Flood(const Link& link, double rate, const std::string& what,
                 std::unique_ptr<NodeStatistics> (&statistics)[2],
                 std::unique_ptr<Subprocess> (&bridge)[2],
                 const std::string (&base)[2], const std::string& out) {
  const std::string config_path = FLAGS_config;
  const double seconds = FLAGS_seconds;
  std::cerr << "[" << link.name << "] bridge_flood (pi1, /bench, 32 B, "
            << (rate > 0 ? StrCat(rate, "/s")
                         : std::string("the channel's rate"))
            << ") -> " << what << " -> pi2, " << seconds << " s\n";
  Throughput throughput;
  {
    Throughput& t = throughput;
    const auto* before = statistics[1]->Client("pi1");
    const int64_t received_before =
        before == nullptr ? 0
                          : static_cast<int64_t>(before->received_packets());
    const int64_t lost_before =
        before == nullptr ? 0 : static_cast<int64_t>(before->lost_packets());
    const int64_t refused_on_pi2_before =
        before == nullptr ? 0
                          : static_cast<int64_t>(before->dropped_send_failed());
    const int64_t paced_on_pi2_before =
        before == nullptr ? 0 : static_cast<int64_t>(before->paced_packets());
    const std::optional<timing::LatencyHistogram> one_way_before =
        OneWayHistogram(before);
    uint64_t failures_before = 0;
    const auto* server_before = statistics[0]->Server("pi2", &failures_before);
    const int64_t written_before =
        server_before == nullptr
            ? 0
            : static_cast<int64_t>(server_before->sent_packets());
    // Statistics published from now on, with their times.
    double ignored;
    while (statistics[1]->NextClient("pi1", &ignored) != nullptr) {
    }
    const double cpu_before[2] = {bridge[0]->CpuSeconds(),
                                  bridge[1]->CpuSeconds()};
    const std::string summary = StrCat(out, "/flood.json");
    const double start = Now();
    auto flood =
        Start(link, 0, StrCat(FLAGS_bin_dir, "/tools/bench/bridge_flood"),
              {StrCat("--config=", config_path), "--node=pi1",
               StrCat("--shm_base=", base[0]), StrCat("--duration=", seconds),
               StrCat("--rate=", rate), StrCat("--summary_json=", summary)},
              out);
    struct Sample {
      double t;
      int64_t received;
    };
    std::vector<Sample> samples;
    double flood_cpu = 0;
    const double cpu_end_time = start + seconds;
    double cpu_after[2] = {NAN, NAN};
    while (Now() < start + seconds + 0.3) {
      double sent_s;
      while (const auto* connection =
                 statistics[1]->NextClient("pi1", &sent_s)) {
        samples.push_back(
            {sent_s, static_cast<int64_t>(connection->received_packets())});
      }
      if (std::isnan(cpu_after[0]) && Now() >= cpu_end_time - 0.05) {
        flood_cpu = flood->CpuSeconds();
        cpu_after[0] = bridge[0]->CpuSeconds();
        cpu_after[1] = bridge[1]->CpuSeconds();
      }
      Sleep(0.02);
    }
    ExitUnlessSucceeded(*flood, "bridge_flood");
    absl::StatusOr<JsonDocument> doc = JsonDocument::ReadFile(summary);
    if (!doc.ok()) FailWithOutput(doc.status().ToString(), flood.get());
    double sent = NAN, refused = NAN, bytes = NAN, offered = NAN,
           flood_seconds = NAN, start_ns = NAN, end_ns = NAN, burst = NAN;
    const absl::Status numbers =
        ReadNumbers(doc->root(), {{"sent", &sent},
                                  {"refused", &refused},
                                  {"largest_burst", &burst},
                                  {"message_bytes", &bytes},
                                  {"offered_per_s", &offered},
                                  {"seconds", &flood_seconds},
                                  {"start_ns", &start_ns},
                                  {"end_ns", &end_ns}});
    if (!numbers.ok()) FailWithOutput(numbers.ToString(), flood.get());
    t.sent = static_cast<int64_t>(sent);
    t.refused = static_cast<int64_t>(refused);
    t.largest_burst = static_cast<int64_t>(burst);
    t.message_bytes = static_cast<int64_t>(bytes);
    t.offered_per_s = offered;
    t.sent_per_s = sent / flood_seconds;
    if (!std::isnan(cpu_after[0])) {
      const double span = cpu_end_time - start;
      t.cpu_flood = 100 * flood_cpu / span;
      t.cpu_bridge1 = 100 * (cpu_after[0] - cpu_before[0]) / span;
      t.cpu_bridge2 = 100 * (cpu_after[1] - cpu_before[1]) / span;
    }
    // What was left in flight arrives; then the totals.
    Sleep(2.2);
    const auto* after = statistics[1]->Client("pi1");
    t.forwarded =
        (after == nullptr ? 0
                          : static_cast<int64_t>(after->received_packets())) -
        received_before;
    t.lost =
        (after == nullptr ? 0 : static_cast<int64_t>(after->lost_packets())) -
        lost_before;
    t.refused_on_pi2 =
        (after == nullptr
             ? 0
             : static_cast<int64_t>(after->dropped_send_failed())) -
        refused_on_pi2_before;
    t.paced_on_pi2 =
        (after == nullptr ? 0 : static_cast<int64_t>(after->paced_packets())) -
        paced_on_pi2_before;
    // Only from two snapshots: one missing would mix in the ping phase, or
    // show nothing.
    if (const std::optional<timing::LatencyHistogram> one_way_after =
            OneWayHistogram(after);
        one_way_before.has_value() && one_way_after.has_value()) {
      const int64_t longest_ns =
          LargestAddedNs(*one_way_before, *one_way_after);
      if (longest_ns >= 0) t.longest_one_way_us = longest_ns / 1e3;
    }
    const EventLoop& pi1 = *statistics[0]->loop();
    if (const Channel* bench = pi1.GetChannel<examples::Ping>("/bench")) {
      const double storage_s = configuration::ChannelStorageDurationNs(
                                   *pi1.configuration(), *bench) /
                               1e9;
      t.catch_up_headroom_us =
          1e6 * CatchUpHeadroomSeconds(bench->frequency(), storage_s,
                                       t.offered_per_s);
      t.lag_headroom_us =
          1e6 * ReaderLagHeadroomSeconds(bench->frequency(), storage_s,
                                         t.offered_per_s);
    }
    uint64_t failures_after = 0;
    const auto* server_after = statistics[0]->Server("pi2", &failures_after);
    t.written = (server_after == nullptr
                     ? 0
                     : static_cast<int64_t>(server_after->sent_packets())) -
                written_before;
    t.write_failures = static_cast<int64_t>(failures_after - failures_before);
    // The steady rate: between the statistics published while the flood
    // ran, leaving out its first half second.
    const double from = start_ns * 1e-9 + 0.5, to = end_ns * 1e-9;
    const Sample* first = nullptr;
    const Sample* last = nullptr;
    for (const Sample& sample : samples) {
      if (sample.t < from || sample.t > to) continue;
      if (first == nullptr) first = &sample;
      last = &sample;
    }
    if (first != nullptr && last != first && last->t > first->t) {
      t.forwarded_per_s =
          static_cast<double>(last->received - first->received) /
          (last->t - first->t);
    } else {
      t.forwarded_per_s = static_cast<double>(t.forwarded) / flood_seconds;
    }
  }
  return throughput;
}

// Both bridges (with DDS Security if `security_dir` is not empty) on
// shared memory of their own: the forwarded round trip, and unless
// `round_trip_only`, where its messages were on the way, each bridge's
// one-way latency, then bridge_flood's rate through them.
BridgeResult MeasureBridges(const Link& link, const Configuration& config,
                            int domain, const std::string& security_dir,
                            const std::string& work, const std::string& out,
                            bool round_trip_only = false) {
  BridgeResult result;
  const std::string config_path = FLAGS_config;
  const double seconds = FLAGS_seconds;
  const std::string what = security_dir.empty() ? "bridges" : "secure bridges";
  const std::string base[2] = {StrCat(work, "/pi1"), StrCat(work, "/pi2")};
  // The bridges stay up for the throughput run; their statistics are read
  // from each node's shared memory.
  const Node* nodes[2] = {configuration::GetNode(config, "pi1"),
                          configuration::GetNode(config, "pi2")};
  CHECK(nodes[0] != nullptr && nodes[1] != nullptr)
      << config_path << " has no nodes pi1 and pi2";
  std::unique_ptr<Subprocess> bridge[2];
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> args = {
        StrCat("--config=", config_path), StrCat("--node=pi", i + 1),
        StrCat("--shm_base=", base[i]), StrCat("--dds_domain=", domain + 1),
        StrCat("--dds_interface=", link.interface[i])};
    if (!security_dir.empty()) {
      args.push_back(StrCat("--dds_security=", security_dir));
    }
    bridge[i] =
        Start(link, i, StrCat(FLAGS_bin_dir, "/aos/network/message_bridge"),
              std::move(args), out);
  }
  std::unique_ptr<NodeStatistics> statistics[2] = {
      std::make_unique<NodeStatistics>(&config, nodes[0], base[0]),
      std::make_unique<NodeStatistics>(&config, nodes[1], base[1])};
  // The bridges find each other (DDS discovery, and with security the
  // handshakes) before the first ping.
  WaitConnected(statistics, bridge);
  std::cerr << "[" << link.name << "] ping (pi1) -> " << what
            << " -> pong (pi2) -> " << what << " -> ping, every "
            << FLAGS_ping_interval_us << " us, " << seconds << " s\n";
  result.forwarded_round_trip =
      PingPongAcross(link, statistics[1]->loop(), base, what, bridge[1].get(),
                     "ping.json", out, &result.pings, &result.pongs,
                     round_trip_only ? nullptr : &result.ages);
  if (round_trip_only) {
    for (int i = 0; i < 2; ++i) bridge[i]->Terminate();
    return result;
  }
  // The statistics published since (once a second) count the last
  // messages: with `ages`, PingPongAcross waited 1.2 s after ping ended.
  result.one_way_pi1_to_pi2 =
      OneWay("bridge one-way pi1->pi2", statistics[1]->Client("pi1"));
  result.one_way_pi2_to_pi1 =
      OneWay("bridge one-way pi2->pi1", statistics[0]->Client("pi2"));
  if (const auto* from_pi1 = statistics[1]->Client("pi1");
      from_pi1 != nullptr && from_pi1->monotonic_offset_uncertainty() >= 0) {
    result.ages.clock_offset_us = from_pi1->monotonic_offset() / 1e3;
    result.ages.clock_uncertainty_us =
        from_pi1->monotonic_offset_uncertainty() / 1e3;
  }

  result.throughput =
      Flood(link, FLAGS_flood_rate, what, statistics, bridge, base, out);
  result.at_goal_rate =
      Flood(link, kThroughputGoal, what, statistics, bridge, base, out);
  for (int i = 0; i < 2; ++i) bridge[i]->Terminate();
  return result;
}

// Whether process `pid`, a child not yet waited for, has exited (a zombie
// in /proc) or is gone.
bool HasExited(pid_t pid) {
  std::ifstream stat(StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)),
                   std::istreambuf_iterator<char>());
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses.
  const size_t paren = text.rfind(')');
  return paren == std::string::npos || paren + 2 >= text.size() ||
         text[paren + 2] == 'Z';
}

// ping on pi1 and pong on pi2 through two bare relays (tools/bench/
// bare_relay.cc) on shared memory of their own: the round trip of the
// forwarded path's hops with no work of the bridge's own, the floor under
// any bridge process on this machine.
Figures MeasureRelays(const Link& link, const Configuration& config, int domain,
                      const std::string& work, const std::string& out) {
  const std::string config_path = FLAGS_config;
  const std::string base[2] = {StrCat(work, "/relay_pi1"),
                               StrCat(work, "/relay_pi2")};
  std::unique_ptr<Subprocess> relay[2];
  for (int i = 0; i < 2; ++i) {
    relay[i] = Start(
        link, i, StrCat(FLAGS_bin_dir, "/tools/bench/bare_relay"),
        {StrCat("--config=", config_path), StrCat("--node=pi", i + 1),
         StrCat("--shm_base=", base[i]), StrCat("--dds_domain=", domain + 1),
         StrCat("--dds_interface=", link.interface[i])},
        out);
  }
  // Each relay says so once the other's reader of what it sends matched.
  const double deadline = Now() + 60;
  for (int i = 0; i < 2; ++i) {
    while (relay[i]->Stderr().find("reader matched") == std::string::npos) {
      if (HasExited(relay[i]->pid())) {
        FailWithOutput(StrCat("bare relay pi", i + 1, " exited at start"),
                       relay[i].get());
      }
      if (Now() > deadline) {
        FailWithOutput("the bare relays did not find each other within 60 s",
                       relay[i].get());
      }
      Sleep(0.05);
    }
  }
  std::cerr << "[" << link.name << "] ping (pi1) -> bare relays -> pong (pi2) "
            << "-> bare relays -> ping, every " << FLAGS_ping_interval_us
            << " us, " << FLAGS_seconds << " s\n";
  const Node* pi2 = configuration::GetNode(config, "pi2");
  NodeStatistics pi2_loop(&config, pi2, base[1]);
  int64_t pings = 0, pongs = 0;
  Figures figures =
      PingPongAcross(link, pi2_loop.loop(), base, "bare relays", relay[1].get(),
                     "relay_ping.json", out, &pings, &pongs);
  figures.name = "bare relays' ping/pong";
  for (int i = 0; i < 2; ++i) relay[i]->Terminate();
  return figures;
}

// ddsperf ping / pong at the ping rate on `link`: DDS's round trip.
Figures MeasureDdsperfRoundTrip(const Link& link, int domain,
                                const std::string& out) {
  const double seconds = FLAGS_seconds;
  const std::string ping_hz = StrCat(1000000 / FLAGS_ping_interval_us, "Hz");
  std::cerr << "[" << link.name << "] ddsperf ping " << ping_hz << " / pong, "
            << seconds << " s\n";
  auto pong =
      StartDdsperf(link, 1, domain, {"-D", StrCat(seconds + 4), "pong"}, out);
  Sleep(0.5);
  auto ping = StartDdsperf(link, 0, domain,
                           {"-D", StrCat(seconds + 1), "ping", ping_hz}, out);
  const int status = ping->Wait();
  absl::StatusOr<Figures> figures =
      ReadDdsperfPing(ping->Stdout(), "ddsperf ping/pong");
  if (!figures.ok()) {
    FailWithOutput(StrCat("ddsperf ping exited ", status, ": ",
                          figures.status().message()),
                   ping.get());
  }
  pong->Terminate();
  return *figures;
}

// ping and pong on one node of `link` (the single-node config, no bridge),
// on shared memory in `base`: the round trip through shared memory alone.
// With `pong_age` and `ping_age`, also their path ages, from the node's
// timing reports.
Figures MeasureLocalRoundTrip(const Link& link, const std::string& base,
                              const std::string& out,
                              CallbackFigures* pong_age = nullptr,
                              CallbackFigures* ping_age = nullptr) {
  std::cerr << "[" << link.name << "] ping / pong on one node (no bridge), "
            << FLAGS_seconds << " s\n";
  const std::string local_config =
      FLAGS_local_config.empty()
          ? StrCat(FLAGS_bin_dir, "/examples/pingpong_config.json")
          : FLAGS_local_config;
  absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> local =
      configuration::ReadConfig(local_config);
  if (!local.ok()) {
    FailWithOutput(std::string(local.status().message()), nullptr);
  }
  // A loop reads --shm_base once, when it is made.
  FLAGS_shm_base = base;
  ShmEventLoop reports(&local->message(), "bridge_bench");
  starter::Launcher launcher(&reports, out);
  std::unique_ptr<NodeReports> node_reports;
  if (pong_age != nullptr) {
    node_reports = std::make_unique<NodeReports>(local_config, "", base, out);
  }
  LaunchPong(launcher, link, 0, local_config, base);
  const std::string summary = StrCat(out, "/local_ping.json");
  auto ping =
      Start(link, 0, StrCat(FLAGS_bin_dir, "/examples/ping"),
            {StrCat("--config=", local_config), StrCat("--shm_base=", base),
             StrCat("--sleep_us=", FLAGS_ping_interval_us),
             StrCat("--duration=", FLAGS_seconds),
             StrCat("--summary_json=", summary)},
            out);
  ExitUnlessSucceeded(*ping, "local ping");
  int64_t pings = 0, pongs = 0;
  Figures figures = PingRoundTrip(summary, &pings, &pongs);
  figures.name = "local ping/pong";
  if (pongs == 0) {
    std::cerr << "--- pong's stderr\n" << launcher.Stderr("pong") << "\n";
    FailWithOutput("no pong answered on one node (pong's output above)",
                   nullptr);
  }
  if (node_reports != nullptr) {
    // The reports of the last second (each process sends one a second).
    Sleep(1.2);
    const StreamedSummaries ages = node_reports->Read();
    *pong_age = ages.Watcher("pong", "/test", "aos.examples.Ping");
    if (ping_age != nullptr) {
      *ping_age = ages.Watcher("ping", "/test", "aos.examples.Pong");
    }
  }
  launcher.StopAll(std::chrono::seconds(5));
  return figures;
}

void MeasureAllBridges(const Link& link, const Configuration& config,
                       int domain, const std::string& work,
                       const std::string& out, LinkResult* result);

LinkResult MeasureLink(const Link& link, const Configuration& config,
                       int domain) {
  LinkResult result;
  result.link = link.name;
  const std::string work = StrCat(FLAGS_work_dir, "/", link.name);
  const std::string out = StrCat(work, "/out");
  std::filesystem::create_directories(out);
  const double seconds = FLAGS_seconds;
  result.dds_round_trip = MeasureDdsperfRoundTrip(link, domain, out);
  result.local_round_trip =
      MeasureLocalRoundTrip(link, StrCat(work, "/local"), out,
                            &result.local_pong, &result.local_ping);

  std::cerr << "[" << link.name << "] ddsperf pub size 32 / sub, " << seconds
            << " s\n";
  {
    auto sub =
        StartDdsperf(link, 1, domain, {"-D", StrCat(seconds + 3), "sub"}, out);
    Sleep(0.5);
    auto pub = StartDdsperf(
        link, 0, domain, {"-D", StrCat(seconds + 1), "pub", "size", "32"}, out);
    pub->Wait();
    const int status = sub->Wait();
    absl::StatusOr<DdsperfRate> rate = ReadDdsperfSub(sub->Stdout());
    if (!rate.ok()) {
      FailWithOutput(
          StrCat("ddsperf sub exited ", status, ": ", rate.status().message()),
          sub.get());
    }
    result.dds_rate = *rate;
  }

  // The relays right before the bridges: the first round.
  result.relay_round_trip = MeasureRelays(link, config, domain, work, out);
  MeasureAllBridges(link, config, domain, work, out, &result);
  result.rounds.push_back(
      {.ddsperf_us = result.dds_round_trip.p50_us,
       .local_us = result.local_round_trip.p50_us,
       .relays_us = result.relay_round_trip.p50_us,
       .bridges_us = result.plain.forwarded_round_trip.p50_us});
  // The round trips again, each round back to back, so that the goal is
  // judged on more than one sample of a machine that drifts.
  for (int round = 2; round <= FLAGS_latency_rounds; ++round) {
    std::cerr << "[" << link.name << "] round " << round << " of "
              << FLAGS_latency_rounds << ": the round trips again\n";
    const std::string round_work = StrCat(work, "/round", round);
    RoundTripP50s p50s;
    p50s.ddsperf_us = MeasureDdsperfRoundTrip(link, domain, out).p50_us;
    p50s.local_us =
        MeasureLocalRoundTrip(link, StrCat(round_work, "/local"), out).p50_us;
    p50s.relays_us =
        MeasureRelays(link, config, domain, round_work, out).p50_us;
    p50s.bridges_us = MeasureBridges(link, config, domain, "", round_work, out,
                                     /*round_trip_only=*/true)
                          .forwarded_round_trip.p50_us;
    result.rounds.push_back(p50s);
  }
  return result;
}

// The bridges once without DDS Security (--security=off), or plain and
// secure in turn (ABBA), into `result`.
void MeasureAllBridges(const Link& link, const Configuration& config,
                       int domain, const std::string& work,
                       const std::string& out, LinkResult* result) {
  if (FLAGS_security == "off") {
    result->plain = MeasureBridges(link, config, domain, "", work, out);
    return;
  }
  const std::string certificates = MakeCertificates(work, out);
  for (int i = 0; i < 2 * FLAGS_security_rounds; ++i) {
    // plain, secure, secure, plain, plain, secure, ...
    const bool secure = AbbaSecondArm(i);
    result->runs.push_back(
        {secure,
         MeasureBridges(link, config, domain, secure ? certificates : "",
                        StrCat(work, "/run", i), out)});
    if (i == 0) result->plain = result->runs.back().result;
  }
}

// Where the flood `t` lost its messages.
FloodLoss LossOf(const Throughput& t) {
  return SplitFloodLoss(t.sent, t.written, t.write_failures, t.lost,
                        t.refused_on_pi2);
}

// A flood's figures as a JSON object.
void WriteThroughput(const Throughput& t, JsonWriter* json) {
  json->BeginObject();
  json->Key("forwarded_per_s").Number(t.forwarded_per_s);
  json->Key("message_bytes").Number(t.message_bytes);
  json->Key("offered_per_s").Number(t.offered_per_s);
  json->Key("sent_per_s").Number(t.sent_per_s);
  json->Key("sent").Number(t.sent);
  json->Key("refused_by_channel").Number(t.refused);
  json->Key("written_to_dds").Number(t.written);
  json->Key("write_failures").Number(t.write_failures);
  json->Key("forwarded").Number(t.forwarded);
  json->Key("lost").Number(t.lost);
  const FloodLoss loss = LossOf(t);
  json->Key("unread_on_pi1").Number(loss.unread_on_pi1);
  json->Key("lost_in_dds").Number(loss.in_dds);
  json->Key("refused_on_pi2").Number(loss.refused_on_pi2);
  json->Key("paced_on_pi2").Number(t.paced_on_pi2);
  json->Key("longest_one_way_us").Number(t.longest_one_way_us);
  json->Key("flood_largest_burst").Number(t.largest_burst);
  json->Key("catch_up_headroom_us").Number(t.catch_up_headroom_us);
  json->Key("lag_headroom_us").Number(t.lag_headroom_us);
  json->Key("cpu_percent").BeginObject();
  json->Key("flood").Number(t.cpu_flood);
  json->Key("bridge_pi1").Number(t.cpu_bridge1);
  json->Key("bridge_pi2").Number(t.cpu_bridge2);
  json->EndObject();
  json->EndObject();
}

// Where ping's messages were on the forwarded path, as a JSON object of
// path age p50s in us (null where no report had them).
void WriteAges(const ForwardedAges& a, JsonWriter* json) {
  json->BeginObject();
  json->Key("pi1_bridge").Number(a.pi1_bridge.path_age_p50_us);
  json->Key("pong").Number(a.pong.path_age_p50_us);
  json->Key("pong_uncertainty").Number(a.pong.path_uncertainty_us);
  json->Key("pi2_bridge").Number(a.pi2_bridge.path_age_p50_us);
  json->Key("pi2_bridge_uncertainty").Number(a.pi2_bridge.path_uncertainty_us);
  json->Key("clock_offset").Number(a.clock_offset_us);
  json->Key("clock_offset_uncertainty").Number(a.clock_uncertainty_us);
  json->Key("ping").Number(a.ping.path_age_p50_us);
  json->EndObject();
}

// A BridgeResult's figures as keys of the current JSON object.
void WriteBridgeResult(const BridgeResult& b, JsonWriter* json) {
  json->Key("pings").Number(b.pings);
  json->Key("path_age_p50_us");
  WriteAges(b.ages, json);
  json->Key("pongs").Number(b.pongs);
  json->Key("forwarded_round_trip");
  WriteFigures(b.forwarded_round_trip, json);
  json->Key("bridge_one_way_pi1_to_pi2");
  WriteFigures(b.one_way_pi1_to_pi2, json);
  json->Key("bridge_one_way_pi2_to_pi1");
  WriteFigures(b.one_way_pi2_to_pi1, json);
  json->Key("throughput");
  WriteThroughput(b.throughput, json);
  json->Key("at_goal_rate");
  WriteThroughput(b.at_goal_rate, json);
}

// Secure over plain, each figure's mean over the runs of each kind.
struct SecurityCost {
  double round_trip_p50 = NAN, round_trip_p99 = NAN, one_way_p50 = NAN,
         forwarded_per_s = NAN;
};
SecurityCost CostOf(const LinkResult& r) {
  double sum[2][4] = {};
  int count[2] = {};
  for (const LinkResult::Run& run : r.runs) {
    const BridgeResult& b = run.result;
    const int k = run.secure ? 1 : 0;
    sum[k][0] += b.forwarded_round_trip.p50_us;
    sum[k][1] += b.forwarded_round_trip.p99_us;
    sum[k][2] += b.one_way_pi1_to_pi2.p50_us;
    sum[k][3] += b.throughput.forwarded_per_s;
    ++count[k];
  }
  SecurityCost cost;
  if (count[0] == 0 || count[1] == 0) return cost;
  auto ratio = [&](int i) {
    return SafeRatio(sum[1][i] / count[1], sum[0][i] / count[0]);
  };
  cost.round_trip_p50 = ratio(0);
  cost.round_trip_p99 = ratio(1);
  cost.one_way_p50 = ratio(2);
  cost.forwarded_per_s = ratio(3);
  return cost;
}

std::string MachineLine() {
  const MachineInfo m = ReadMachineInfo();
  const std::optional<int64_t> granted =
      message_bridge::DdsParticipant::GrantedSocketReceiveBufferBytes();
  return StrCat(
      m.online_cpus, " CPUs, kernel ", m.kernel, ", cpuidle ",
      m.cpuidle_driver.empty() ? "none" : m.cpuidle_driver, "/",
      m.cpuidle_governor_ro.empty() ? "-" : m.cpuidle_governor_ro,
      "; DDS sockets' receive buffers here ",
      granted.has_value() ? StrCat(*granted / 1024, " KiB") : std::string("?"),
      " of ", message_bridge::DdsParticipant::kSocketReceiveBufferBytes / 1024,
      " KiB asked (net.core.rmem_max)");
}

// The forwarded round trip's goal on one link: the median over the rounds
// of the bridges' and the relays' p50 over the hops' sum.
ForwardedLatencyVerdict LatencyVerdict(const LinkResult& r) {
  std::vector<LatencyRound> rounds;
  for (const RoundTripP50s& round : r.rounds) rounds.push_back(round.ToJudge());
  return JudgeForwardedLatency(rounds, kLatencyGoal);
}

// The throughput goal: at least kThroughputGoal forwarded a second at the
// channel's rate, and at the goal's rate every message of /bench arrived.
bool ThroughputGoalMet(const BridgeResult& b) {
  const Throughput& at_goal = b.at_goal_rate;
  // The goal's rate was sent (bridge_flood kept up within 1 %), and
  // nothing of what it sent was lost. A send pi1's channel refused (the
  // flood's own catch-up after a stall of its own: it tries again the next
  // tick) published nothing for the bridges to forward.
  return b.throughput.forwarded_per_s >= kThroughputGoal &&
         at_goal.sent_per_s >= 0.99 * kThroughputGoal && at_goal.lost == 0 &&
         at_goal.forwarded >= at_goal.sent;
}

// Ends the bench, before anything runs, on a flag out of range or a
// program it needs that is missing; returns the links --links names.
std::vector<Link> CheckFlagsAndPrograms() {
  ExitOnFlagError(CheckInRange("--seconds", FLAGS_seconds, 1.0,
                               std::numeric_limits<double>::max(),
                               " is too short: give 1 or more"));
  ExitOnFlagError(CheckInRange("--flood_rate", FLAGS_flood_rate, 0.0, 1e7,
                               " is not a rate: give 0 (the channel's "
                               "frequency) up to 10000000"));
  ExitOnFlagError(CheckInRange("--ping_interval_us", FLAGS_ping_interval_us,
                               100, 1000000, " is outside 100-1000000"));
  if (FLAGS_work_dir.empty()) {
    ExitForUserError("--work_dir: give a directory the bench may fill");
  }
  if (FLAGS_security != "both" && FLAGS_security != "off") {
    ExitOnFlagError(FlagError("--security", FLAGS_security,
                              ": give both (plain and secure bridges) or off"));
  }
  ExitOnFlagError(CheckInRange("--latency_rounds", FLAGS_latency_rounds, 1, 20,
                               " is outside 1-20"));
  ExitOnFlagError(CheckInRange("--security_rounds", FLAGS_security_rounds, 1,
                               10, " is outside 1-10"));
  if (FLAGS_security == "both" &&
      !std::filesystem::exists(FLAGS_make_test_ca)) {
    ExitOnFlagError(FlagError("--make_test_ca", FLAGS_make_test_ca,
                              ": no such file (run from the repository's "
                              "root, or --security=off)"));
  }
  std::vector<Link> links;
  for (std::string_view rest = FLAGS_links; !rest.empty();) {
    const size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    if (name != "lo" && name != "veth") {
      ExitForUserError(StrCat("--links: '", name, "' is not lo or veth"));
    }
    links.push_back(MakeLink(name));
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
  }
  return links;
}

// The round trips against ddsperf's, and what the hops cost alone.
void PrintRoundTrips(const std::vector<LinkResult>& results) {
  std::cout << "\nRound trip at " << 1000000 / FLAGS_ping_interval_us << " Hz, "
            << FLAGS_seconds
            << " s each; latency in us (one-way of ddsperf = RTT/2)\n";
  PlainTable table;
  table.AddRow(
      {"link / what", "count", "p50", "p99", "avg", "max", "p50 / ddsperf"});
  for (const LinkResult& r : results) {
    table.AddRow({r.link});
    const Figures& d = r.dds_round_trip;
    const Figures& f = r.plain.forwarded_round_trip;
    auto row = [&](std::string name, const Figures& x, double scale,
                   double baseline_p50) {
      table.AddRow(
          {"  " + name, StrCat(x.count), Fixed(x.p50_us * scale),
           Fixed(x.p99_us * scale), Fixed(x.avg_us * scale),
           Fixed(x.max_us * scale),
           baseline_p50 > 0
               ? Fixed(SafeRatio(x.p50_us * scale, baseline_p50), 2) + "x"
               : ""});
    };
    row("ddsperf ping/pong round trip", d, 1, 0);
    row("forwarded ping/pong round trip", f, 1, d.p50_us);
    row("ddsperf one-way (RTT/2)", d, 0.5, 0);
    row("bridge one-way pi1->pi2", r.plain.one_way_pi1_to_pi2, 1, d.p50_us / 2);
    row("bridge one-way pi2->pi1", r.plain.one_way_pi2_to_pi1, 1, d.p50_us / 2);
    row("local ping/pong round trip", r.local_round_trip, 1, 0);
    row("bare relays' ping/pong round trip", r.relay_round_trip, 1, d.p50_us);
  }
  table.Print(&std::cout);
  std::cout
      << "\nThe forwarded round trip crosses DDS twice and shared memory "
         "four times (ping -> bridge -> pong -> bridge -> ping, on both "
         "nodes); ddsperf RTT + 2 x local RTT (p50s) is what those hops cost "
         "alone, the hops' sum. Two bare relays (tools/bench/bare_relay: "
         "one dds_write per message out, taken and re-sent in Cyclone's "
         "receive thread, nothing else) make the same round trip with no "
         "work of a bridge's own: what a bridge process costs at the least "
         "on this machine. Each round measures ddsperf's round trip, the "
         "local one, the relays' and the bridges' back to back (the first "
         "is the figures above), and each ratio is of its own round; the "
         "goal is judged on the median of the rounds' ratios.\n";
  PlainTable floors;
  floors.AddRow({"link", "round", "ddsperf", "local", "hops' sum",
                 "bare relays", "of the sum", "bridges", "of the sum",
                 "of the relays"});
  for (const LinkResult& r : results) {
    for (size_t i = 0; i < r.rounds.size(); ++i) {
      const RoundTripP50s& round = r.rounds[i];
      const double sum = round.HopsSumUs();
      floors.AddRow(
          {r.link, StrCat(i + 1), Fixed(round.ddsperf_us) + " us",
           Fixed(round.local_us) + " us", Fixed(sum) + " us",
           Fixed(round.relays_us) + " us",
           Fixed(SafeRatio(round.relays_us, sum), 2) + "x",
           Fixed(round.bridges_us) + " us",
           Fixed(SafeRatio(round.bridges_us, sum), 2) + "x",
           Fixed(SafeRatio(round.bridges_us, round.relays_us), 2) + "x"});
    }
    const ForwardedLatencyVerdict verdict = LatencyVerdict(r);
    floors.AddRow({r.link, "median", "", "", "", "",
                   Fixed(verdict.relay_ratio, 2) + "x", "",
                   Fixed(verdict.ratio, 2) + "x",
                   Fixed(verdict.bridges_over_relays, 2) + "x"});
  }
  floors.Print(&std::cout);
}

// A path age p50, with "±U" after it where it was translated from another
// node's clock with an uncertainty U (us).
std::string WithUncertainty(const CallbackFigures& figures) {
  std::string text = Fixed(figures.path_age_p50_us);
  if (figures.path_uncertainty_us > 0) {
    StrAppend(&text, " ±", Fixed(figures.path_uncertainty_us));
  }
  return text;
}

// Where the forwarded round trip's time goes, by the age of ping's message
// at each callback on its way, beside ping and pong on one node.
void PrintPathAges(const std::vector<LinkResult>& results) {
  std::cout
      << "\nWhere the forwarded round trip goes: the age of ping's message "
         "(from ping's timer, where its path starts) as each callback on its "
         "way started, p50 in us, from the processes' own timing reports "
         "(path latency; aos_timing_report_streamer --format=json on each "
         "node). Pong's age is the way there; back is the way from pong to "
         "ping (the difference of two p50s). Ages on pi2 are of a time on "
         "pi1 translated with pi2's bridge's estimate of pi1's clock: ± is "
         "the most its reports say they may be off; both nodes run on this "
         "machine's one clock, so the estimate itself (below) is what they "
         "are off by. One node: ping and pong without bridges, the same way. "
         "Ping's last second is not in its reports (a loop sends none as it "
         "stops).\n";
  PlainTable ages;
  ages.AddRow({"link", "pi1 bridge", "pong (pi2)", "pi2 bridge", "ping (pi1)",
               "back", "one node: pong", "ping", "back"});
  for (const LinkResult& r : results) {
    const ForwardedAges& a = r.plain.ages;
    const double pong = a.pong.path_age_p50_us;
    const double ping = a.ping.path_age_p50_us;
    const double local_pong = r.local_pong.path_age_p50_us;
    const double local_ping = r.local_ping.path_age_p50_us;
    ages.AddRow({r.link, Fixed(a.pi1_bridge.path_age_p50_us),
                 WithUncertainty(a.pong), WithUncertainty(a.pi2_bridge),
                 Fixed(ping), Fixed(ping - pong), Fixed(local_pong),
                 Fixed(local_ping), Fixed(local_ping - local_pong)});
  }
  ages.Print(&std::cout);
  for (const LinkResult& r : results) {
    const ForwardedAges& a = r.plain.ages;
    std::cout << "  " << r.link << ": pi2's bridge put pi1's clock at "
              << Fixed(a.clock_offset_us) << " us (± "
              << Fixed(a.clock_uncertainty_us) << ") from its own at the end\n";
  }
}

void PrintThroughput(const std::vector<LinkResult>& results) {
  std::cout << "\nThroughput, 32 B messages, " << FLAGS_seconds
            << " s each (messages a second): at "
            << (FLAGS_flood_rate > 0 ? StrCat("--flood_rate=", FLAGS_flood_rate)
                                     : std::string("the channel's rate"))
            << ", then at the goal's; lost: messages of pi1's forwarded "
               "channels that never reached pi2's bridge (its "
               "ClientStatistics lost_packets) or that pi2's channel "
               "refused; where: unread by pi1's bridge (the channel lapped "
               "it) / in DDS / refused on pi2 (re-sent faster than the "
               "channel allows); paced: re-sends on pi2 that came faster "
               "than its channel takes them and waited instead (/bench is "
               "reliable); longest: the longest one-way delay of a "
               "forwarded message, pi1's send to pi2's re-send\n";
  PlainTable rates;
  rates.AddRow({"link", "ddsperf pub/sub", "forwarded", "forwarded / ddsperf",
                "offered", "sent", "lost", "where: pi1/DDS/pi2", "paced",
                "longest", "CPU flood", "bridge pi1", "bridge pi2"});
  for (const LinkResult& r : results) {
    for (const Throughput* t : {&r.plain.throughput, &r.plain.at_goal_rate}) {
      const FloodLoss loss = LossOf(*t);
      rates.AddRow(
          {r.link, Fixed(r.dds_rate.per_s, 0), Fixed(t->forwarded_per_s, 0),
           Fixed(SafeRatio(t->forwarded_per_s, r.dds_rate.per_s), 2) + "x",
           Fixed(t->offered_per_s, 0), Fixed(t->sent_per_s, 0), StrCat(t->lost),
           StrCat(loss.unread_on_pi1, "/", loss.in_dds, "/",
                  loss.refused_on_pi2),
           StrCat(t->paced_on_pi2), Fixed(t->longest_one_way_us / 1e3) + " ms",
           Fixed(t->cpu_flood, 0) + "%", Fixed(t->cpu_bridge1, 0) + "%",
           Fixed(t->cpu_bridge2, 0) + "%"});
    }
  }
  rates.Print(&std::cout);
}

void PrintGoals(const std::vector<LinkResult>& results) {
  std::cout << "\nGoals (issue 27): forwarded round trip p50 <= "
            << Fixed(kLatencyGoal, 1)
            << "x the hops' sum; >= " << Fixed(kThroughputGoal / 1000, 0)
            << " k forwarded 32 B messages/s\n";
  for (const LinkResult& r : results) {
    const double per_s = r.plain.throughput.forwarded_per_s;
    const Throughput& at_goal = r.plain.at_goal_rate;
    const bool throughput_met = ThroughputGoalMet(r.plain);
    // The relays, which do none of a bridge's own work, beside it: a
    // relay above the goal says the goal is out of reach in this run.
    std::cout << "  " << r.link << ": latency "
              << ForwardedLatencyText(LatencyVerdict(r)) << "; throughput "
              << Fixed(per_s / 1000, 1) << " k/s, " << at_goal.lost
              << " lost of " << Fixed(at_goal.sent_per_s / 1000, 1)
              << " k/s sent (" << at_goal.refused
              << " sends refused by pi1's channel: the flood's own catch-up, "
                 "retried the next tick; "
              << at_goal.paced_on_pi2
              << " paced on pi2): " << (throughput_met ? "met" : "MISSED");
    const std::string where = FloodLossText(
        LossOf(at_goal), {.longest_one_way_us = at_goal.longest_one_way_us,
                          .catch_up_headroom_us = at_goal.catch_up_headroom_us,
                          .lag_headroom_us = at_goal.lag_headroom_us,
                          .flood_largest_burst = at_goal.largest_burst});
    if (!where.empty()) std::cout << "; lost: " << where;
    std::cout << "\n";
  }
}

// The plain and the secure bridges' runs, and secure over plain.
void PrintSecurityCost(const std::vector<LinkResult>& results) {
  std::cout << "\nDDS Security's cost (--dds_security: authenticated, every "
               "RTPS message encrypted): the same bridges without and with "
               "it, "
            << FLAGS_security_rounds
            << " runs each, in the order they ran; the ratio is of the "
               "means\n";
  PlainTable cost;
  cost.AddRow({"link", "bridges", "round trip p50", "p99",
               "one-way p50 pi1->pi2", "forwarded/s", "bridge pi1 CPU",
               "bridge pi2 CPU"});
  for (const LinkResult& r : results) {
    for (const LinkResult::Run& run : r.runs) {
      const BridgeResult& b = run.result;
      cost.AddRow({r.link, run.secure ? "secure" : "plain",
                   Fixed(b.forwarded_round_trip.p50_us) + " us",
                   Fixed(b.forwarded_round_trip.p99_us) + " us",
                   Fixed(b.one_way_pi1_to_pi2.p50_us) + " us",
                   Fixed(b.throughput.forwarded_per_s, 0),
                   Fixed(b.throughput.cpu_bridge1, 0) + "%",
                   Fixed(b.throughput.cpu_bridge2, 0) + "%"});
    }
    const SecurityCost c = CostOf(r);
    cost.AddRow({r.link, "secure / plain", Fixed(c.round_trip_p50, 2) + "x",
                 Fixed(c.round_trip_p99, 2) + "x",
                 Fixed(c.one_way_p50, 2) + "x",
                 Fixed(c.forwarded_per_s, 2) + "x", "", ""});
  }
  cost.Print(&std::cout);
}

// Every figure, as the --json file holds it.
std::string ResultsJson(const std::string& machine, const std::string& limit,
                        const std::vector<LinkResult>& results) {
  JsonWriter json(2);
  json.BeginObject();
  json.Key("machine").String(machine);
  json.Key("cpu_wakeup_limit").String(limit);
  json.Key("seconds").Number(FLAGS_seconds);
  json.Key("ping_interval_us").Number(FLAGS_ping_interval_us);
  json.Key("links").BeginArray();
  for (const LinkResult& r : results) {
    json.BeginObject();
    json.Key("link").String(r.link);
    json.Key("ddsperf_round_trip");
    WriteFigures(r.dds_round_trip, &json);
    json.Key("local_round_trip");
    WriteFigures(r.local_round_trip, &json);
    json.Key("local_path_age_p50_us").BeginObject();
    json.Key("pong").Number(r.local_pong.path_age_p50_us);
    json.Key("ping").Number(r.local_ping.path_age_p50_us);
    json.EndObject();
    json.Key("relay_round_trip");
    WriteFigures(r.relay_round_trip, &json);
    json.Key("latency_rounds").BeginArray();
    for (const RoundTripP50s& round : r.rounds) {
      json.BeginObject();
      json.Key("ddsperf_p50_us").Number(round.ddsperf_us);
      json.Key("local_p50_us").Number(round.local_us);
      json.Key("hops_floor_p50_us").Number(round.HopsSumUs());
      json.Key("relay_p50_us").Number(round.relays_us);
      json.Key("forwarded_p50_us").Number(round.bridges_us);
      json.EndObject();
    }
    json.EndArray();
    const ForwardedLatencyVerdict latency = LatencyVerdict(r);
    json.Key("relay_over_hops_floor").Number(latency.relay_ratio);
    json.Key("forwarded_over_hops_floor").Number(latency.ratio);
    json.Key("forwarded_over_relay").Number(latency.bridges_over_relays);
    // The plain bridges' figures at the top level, as before.
    WriteBridgeResult(r.plain, &json);
    json.Key("round_trip_p50_ratio")
        .Number(SafeRatio(r.plain.forwarded_round_trip.p50_us,
                          r.dds_round_trip.p50_us));
    json.Key("latency_goal_met").Bool(latency.met);
    json.Key("latency_below_floor").Bool(latency.below_floor);
    json.Key("throughput_goal_met").Bool(ThroughputGoalMet(r.plain));
    json.Key("ddsperf_rate").BeginObject();
    json.Key("per_s").Number(r.dds_rate.per_s);
    json.Key("total").Number(r.dds_rate.total);
    json.Key("lost").Number(r.dds_rate.lost);
    json.Key("size_bytes").Number(r.dds_rate.size_bytes);
    json.EndObject();
    if (!r.runs.empty()) {
      json.Key("security_runs").BeginArray();
      for (const LinkResult::Run& run : r.runs) {
        json.BeginObject();
        json.Key("secure").Bool(run.secure);
        WriteBridgeResult(run.result, &json);
        json.EndObject();
      }
      json.EndArray();
      const SecurityCost c = CostOf(r);
      json.Key("security_cost").BeginObject();
      json.Key("round_trip_p50_ratio").Number(c.round_trip_p50);
      json.Key("round_trip_p99_ratio").Number(c.round_trip_p99);
      json.Key("one_way_p50_ratio").Number(c.one_way_p50);
      json.Key("forwarded_per_s_ratio").Number(c.forwarded_per_s);
      json.EndObject();
    }
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.Text();
}

int Main() {
  const std::vector<Link> links = CheckFlagsAndPrograms();
  FlagOutputFile json_file("--json", FLAGS_json);
  if (const std::vector<std::string> missing = MissingFiles(
          {StrCat(FLAGS_bin_dir, "/tools/bench/bridge_bench_config.json"),
           "/usr/bin/ddsperf"});
      !missing.empty()) {
    ExitForUserError(StrCat(missing.front(),
                            " is missing (build it, or install "
                            "cyclonedds-tools for ddsperf)"));
  }
  if (FLAGS_config.empty()) {
    FLAGS_config =
        StrCat(FLAGS_bin_dir, "/tools/bench/bridge_bench_config.json");
  }
  auto config = ReadConfigFlag("");
  if (!config.ok()) ExitForUserError(std::string(config.status().message()));

  const std::string machine = MachineLine();
  std::cout << "Machine: " << machine << "\n";
  // ping and pong hold a 0 us CPU wakeup limit while they run, ddsperf
  // does not: held here for every measurement, ours and ddsperf's alike,
  // so that neither pays for waking halted CPUs and the other not.
  auto wakeup_limit = CpuLatencyLimit::HoldForAllCpus(0);
  const std::string limit =
      wakeup_limit.ok()
          ? std::string("0 us, all CPUs")
          : StrCat("none (", wakeup_limit.status().message(), ")");
  std::cout << "CPU wakeup limit (/dev/cpu_dma_latency) for every "
               "measurement: "
            << limit << "\n";
  // DDS domains of our own (ddsperf's, the bridges' next to it), so other
  // runs on this machine stay apart; at most 101, so that DDS's ports
  // (7400 + 250 x domain) stay below Linux's ephemeral ports.
  const int domain = 2 * (1 + getpid() % 50);
  std::vector<LinkResult> results;
  for (const Link& link : links) {
    results.push_back(MeasureLink(link, config.value().message(), domain));
  }

  PrintRoundTrips(results);
  PrintPathAges(results);
  PrintThroughput(results);
  PrintGoals(results);
  if (FLAGS_security == "both") PrintSecurityCost(results);
  if (json_file.enabled()) {
    json_file.WriteAndClose(ResultsJson(machine, limit, results));
  }
  return 0;
}

}  // namespace
}  // namespace aos::bench

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: bridge_bench --work_dir=DIR [--links=lo,veth] [--seconds=N]\n"
      "    [--ping_interval_us=N] [--latency_rounds=N] [--json=FILE]\n"
      "    [--security=both|off] [--bin_dir=bazel-bin]\n"
      "The message bridge's forwarded latency and throughput beside ddsperf\n"
      "on the same link, in the same run. Run it through\n"
      "tools/bench/bridge.sh. docs/benchmarks.md.");
  aos::RefuseArguments(argc, argv);
  return aos::bench::Main();
}
