// The multi-node ping/pong as `./tools/aos.sh run --multinode` runs it, on
// loopback: pi1's and pi2's message bridges with DDS Security (a test CA made
// for the run, as aos.sh makes one), pong on pi2, ping on pi1, each node with
// its own shared memory, and aos_timing_report_streamer on pi1.
// pi1's streamer shows pong's reports (forwarded from pi2) beside ping's,
// each with its node, and for --node=pi2 what pi2's bridge measures of the
// network into pi2; ping checks each Pong's path origin against the timer
// call that sent its Ping, across both bridges' clock translations. No
// timing is asserted, and waits are bounded so that a broken bridge fails
// the test instead of hanging it.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include "aos/configuration.h"
#include "aos/configuration_lookup.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/streamed_report_generated.h"
#include "aos/network/client_statistics_generated.h"
#include "aos/network/test_certificates.h"
#include "aos/network/test_dds_domain.h"
#include "aos/starter/launcher.h"
#include "aos/testing/path.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "examples/streamer_json_lines.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

DECLARE_bool(timing_reports);

namespace aos::testing {
namespace {

using ::testing::HasSubstr;

class MultinodePingPongTest : public ::testing::Test {
 protected:
  MultinodePingPongTest()
      : dir_(TestTempDir() + "/" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()),
        domain_(message_bridge::TestDdsDomain(
            message_bridge::DdsTestBinary::kMultinodeEndToEnd)),
        config_(*configuration::ReadConfig(
            ArtifactPath("examples/multinode_pingpong_config.json"))) {
    for (const char* node : {"pi1", "pi2"}) {
      std::filesystem::create_directories(ShmBase(node));
      // Each node's launcher watches that node's /aos for the first
      // reports of what it started.
      FLAGS_shm_base = ShmBase(node);
      const Node* on = configuration::GetNode(config_.message(), node);
      report_loops_.push_back(
          std::make_unique<ShmEventLoop>(&config_.message(), "e2e_test", on));
      launchers_.push_back(std::make_unique<starter::Launcher>(
          report_loops_.back().get(), StrCat(dir_, "/", node)));
    }
  }

  // The bridges with DDS Security (a CA made for the test), then pong on
  // pi2; each has sent a timing report when this returns.
  void SetUp() override {
    const std::string ca = message_bridge::MakeTestCa({"pi1", "pi2"});
    for (const char* node : {"pi1", "pi2"}) {
      const absl::Status started = Launcher(node).Start(
          App("message_bridge", "aos/network/message_bridge", node,
              {StrCat("--dds_domain=", domain_), "--dds_interface=lo",
               StrCat("--dds_security=", ca)}));
      ASSERT_TRUE(started.ok()) << started;
    }
    const absl::Status started = Launcher("pi2").Start(
        App("pong", "examples/pong", "pi2", {"--priority=0"}));
    ASSERT_TRUE(started.ok()) << started;
    for (const char* node : {"pi1", "pi2"}) {
      const absl::Status up =
          Launcher(node).WaitUntilReporting(std::chrono::seconds(90));
      ASSERT_TRUE(up.ok()) << up << "\n" << Said();
    }
  }

  starter::Launcher& Launcher(std::string_view node) {
    return *launchers_[node == "pi1" ? 0 : 1];
  }

  // Application `name`, the program `binary`, on `node`.
  starter::LaunchSpec App(std::string name, std::string_view binary,
                          std::string_view node,
                          std::vector<std::string> extra) {
    std::vector<std::string> args{
        "--config=" + ArtifactPath("examples/multinode_pingpong_config.json"),
        StrCat("--shm_base=", ShmBase(node)), StrCat("--node=", node)};
    args.insert(args.end(), extra.begin(), extra.end());
    return {.name = std::move(name),
            .binary = ArtifactPath(binary),
            .args = std::move(args),
            .network_namespace = "",
            .reports = true};
  }

  void StartPing(std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), "--priority=0");
    ping_ = Start("examples/ping", "pi1", std::move(extra));
  }

  std::string ShmBase(std::string_view node) const {
    return StrCat(dir_, "/", node, "/shm");
  }

  // `binary` on `node`: the multi-node config, that node's shared memory.
  std::unique_ptr<Subprocess> Start(std::string_view binary,
                                    std::string_view node,
                                    std::vector<std::string> extra = {}) {
    std::vector<std::string> args{
        "--config=" + ArtifactPath("examples/multinode_pingpong_config.json"),
        StrCat("--shm_base=", ShmBase(node))};
    if (!binary.ends_with("aos_timing_report_streamer")) {
      args.push_back(StrCat("--node=", node));
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<Subprocess>(ArtifactPath(binary), std::move(args),
                                        StrCat(dir_, "/", node));
  }

  // What every process said, for a failure's message.
  std::string Said() {
    return StrCat("bridge pi1:\n", Launcher("pi1").Stderr("message_bridge"),
                  "\nbridge pi2:\n", Launcher("pi2").Stderr("message_bridge"),
                  "\npong:\n", Launcher("pi2").Stderr("pong"), "\nping:\n",
                  ping_ != nullptr ? ping_->Stderr() : "(not started)");
  }

  const std::string dir_;
  const uint32_t domain_;
  const FlatbufferDetachedBuffer<Configuration> config_;
  std::vector<std::unique_ptr<ShmEventLoop>> report_loops_;
  // pi1's, pi2's; stopped (in reverse order of their starts) before the
  // loops they watch go.
  std::vector<std::unique_ptr<starter::Launcher>> launchers_;
  std::unique_ptr<Subprocess> ping_;
};

// Every application's reports reach pi1's streamer, each with its node:
// ping and pi1's bridge from pi1 itself, pong and pi2's bridge forwarded
// from pi2.
TEST_F(MultinodePingPongTest, StreamerOnPi1ShowsEveryNodesReportsByNode) {
  StartPing();
  std::set<std::pair<std::string, std::string>> seen;
  // Until both of pi2's applications were seen, or the deadline: each
  // streamer run takes the next reports (four applications, one report a
  // second each).
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto streamer = Start("aos/tools/aos_timing_report_streamer", "pi1",
                          {"--count=8", "--format=json", "--accumulate=false"});
    ASSERT_EQ(streamer->Wait(), 0) << streamer->Stderr() << Said();
    for (const auto& line : ParseStreamerJsonLines(streamer->Stdout())) {
      const timing::Report& report =
          *flatbuffers::GetRoot<timing::StreamedReport>(line.data())->report();
      seen.emplace(report.name()->str(), report.node()->str());
    }
    if (seen.contains({"pong", "pi2"}) &&
        seen.contains({"message_bridge", "pi2"})) {
      break;
    }
  }
  EXPECT_TRUE(seen.contains({"ping", "pi1"}));
  EXPECT_TRUE(seen.contains({"message_bridge", "pi1"}));
  EXPECT_TRUE(seen.contains({"pong", "pi2"})) << Said();
  EXPECT_TRUE(seen.contains({"message_bridge", "pi2"})) << Said();
  // Nothing else, and no application on the wrong node.
  EXPECT_EQ(seen.size(), 4u);
  // Forwarded with peers authenticated, as the run does it.
  for (const char* node : {"pi1", "pi2"}) {
    const std::string said = Launcher(node).Stderr("message_bridge");
    EXPECT_THAT(said, HasSubstr("DDS Security on"));
    EXPECT_THAT(said, ::testing::Not(HasSubstr("Security off")));
  }
}

// `--node=pi2 --application=pong` on pi1: only pong's reports, forwarded
// from pi2; the table heads them with the node, and shows what pi2's bridge
// measures of the network into pi2 (its statistics, forwarded too).
TEST_F(MultinodePingPongTest, StreamerOnPi1ShowsPongOfPi2) {
  StartPing();
  auto json = Start("aos/tools/aos_timing_report_streamer", "pi1",
                    {"--node=pi2", "--application=pong", "--count=2",
                     "--duration=30", "--format=json"});
  ASSERT_EQ(json->Wait(), 0) << json->Stderr() << Said();
  const auto lines = ParseStreamerJsonLines(json->Stdout());
  ASSERT_EQ(lines.size(), 3u) << json->Stdout();  // Two and the summary.
  for (const auto& line : lines) {
    const timing::Report& report =
        *flatbuffers::GetRoot<timing::StreamedReport>(line.data())->report();
    EXPECT_EQ(report.name()->str(), "pong");
    EXPECT_EQ(report.node()->str(), "pi2");
  }

  // pi2's bridge sends its ClientStatistics once a second, best effort, and
  // pi1's bridge forwards them: a run of two reports may see none. Run again
  // (bounded, as above) until one shows them.
  std::string text;
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto table = Start(
        "aos/tools/aos_timing_report_streamer", "pi1",
        {"--node=pi2", "--application=pong", "--count=2", "--duration=30"});
    ASSERT_EQ(table->Wait(), 0) << table->Stderr() << Said();
    text = table->Stdout();
    EXPECT_THAT(text, HasSubstr("] on node pi2: window of "));
    EXPECT_THAT(text, HasSubstr("watcher /test aos.examples.Ping"));
    EXPECT_THAT(text, ::testing::Not(HasSubstr("on node pi1")));
    EXPECT_THAT(text, ::testing::Not(HasSubstr("network into pi1")));
    if (text.find("network into pi2 (message_bridge)") != std::string::npos) {
      break;
    }
  }
  EXPECT_THAT(text, HasSubstr("network into pi2 (message_bridge)")) << Said();
}

// Path origins across two bridges: each Ping carries ping's timer call
// (translated into pi2's clock by pi2's bridge), pong's answer carries it on
// with one more hop, and pi1's bridge translates it back. ping checks every
// Pong's origin against the time that timer call was scheduled for, within
// the uncertainty the origin states: none wrong, every pong checked. Ping
// starts once both bridges have an estimate of the other's clock (before
// that, origins are dropped, not made up: docs/network.md).
TEST_F(MultinodePingPongTest, PingFindsEveryPongsOriginAcrossBothBridges) {
  {
    auto config = configuration::ReadConfig(
        ArtifactPath("examples/multinode_pingpong_config.json"));
    ASSERT_TRUE(config.ok()) << config.status();
    FLAGS_timing_reports = false;
    FLAGS_shm_base = ShmBase("pi1");
    ShmEventLoop pi1(&config->message(), "estimates",
                     configuration::GetNode(config->message(), "pi1"));
    // pi1's bridge's estimate of pi2, and pi2's of pi1 (forwarded).
    bool estimated[2] = {false, false};
    for (int i = 0; i < 2; ++i) {
      pi1.MakeWatcher(
          i == 0 ? "/aos" : "/pi2/aos",
          [&, i](const message_bridge::ClientStatistics& s) {
            estimated[i] =
                s.connections() != nullptr && s.connections()->size() == 1 &&
                s.connections()->Get(0)->monotonic_offset_uncertainty() >= 0;
            if (estimated[0] && estimated[1]) pi1.Exit();
          });
    }
    TimerHandler* deadline = pi1.AddTimer([&]() {
      ADD_FAILURE() << "no clock offset estimates (pi1's: " << estimated[0]
                    << ", pi2's: " << estimated[1] << ")\n"
                    << Said();
      pi1.Exit();
    });
    pi1.OnRun([&]() {
      deadline->Schedule(pi1.monotonic_now() + std::chrono::seconds(30));
    });
    pi1.Run();
    ASSERT_TRUE(estimated[0] && estimated[1]);
  }
  StartPing({"--count=300", "--duration=60"});
  ASSERT_EQ(ping_->Wait(), 0) << Said();
  const std::string out = ping_->Stdout();
  std::smatch match;
  ASSERT_TRUE(std::regex_search(
      out, match,
      std::regex(R"(([0-9]+) pongs, .*; origins ([0-9]+) checked, )"
                 R"(([0-9]+) wrong)")))
      << out;
  const int pongs = std::stoi(match[1]);
  EXPECT_GT(pongs, 0) << out << Said();
  EXPECT_EQ(std::stoi(match[2]), pongs) << out;
  EXPECT_EQ(std::stoi(match[3]), 0) << out;
  std::cout << out;
}

// The starter across nodes, as a robot's operator uses it from one
// machine: pi2's starterd is commanded by aos_starter on pi1, through the
// bridges (StarterRpc forwarded pi1 -> pi2, aos.starter.Status pi2 -> pi1).
TEST_F(MultinodePingPongTest,
       AosStarterOnPi1CommandsPi2sStarterThroughTheBridge) {
  // pi2's applications for its starter: a second pong, started only on
  // command (the test started pi2's pong and bridge itself).
  const std::string config = StrCat(dir_, "/starter.json");
  std::ofstream(config)
      << "{\"imports\": [\""
      << ArtifactPath("examples/multinode_pingpong_config.json")
      << "\"], \"applications\": [{\"name\": "
         "\"second_pong\", \"nodes\": [\"pi2\"], "
         "\"autostart\": false, \"executable_name\": \""
      << ArtifactPath("examples/pong")
      << "\", \"args\": [\"--application_name=second_pong\", "
         "\"--priority=0\", \"--node=pi2\", \"--config="
      << ArtifactPath("examples/multinode_pingpong_config.json")
      << "\"]}, {\"name\": \"pong\", \"autostart\": false}, "
         "{\"name\": \"message_bridge\", \"autostart\": "
         "false}]}\n";
  const absl::Status started = Launcher("pi2").Start(App(
      "starter", "aos/starter/starterd", "pi2", {StrCat("--config=", config)}));
  ASSERT_TRUE(started.ok()) << started;
  const absl::Status up =
      Launcher("pi2").WaitUntilReporting(std::chrono::seconds(90));
  ASSERT_TRUE(up.ok()) << up << "\n" << Launcher("pi2").Stderr("starter");
  // aos_starter on pi1 (its shared memory), asking pi2's starter.
  auto aos_starter = [&](std::vector<std::string> command) {
    std::vector<std::string> args{StrCat("--config=", config), "--node=pi2",
                                  "--this_node=pi1", "--timeout_s=60"};
    args.insert(args.end(), command.begin(), command.end());
    auto run = Start("aos/starter/aos_starter", "pi1", std::move(args));
    const int status = run->Wait();
    return std::pair(status, run->Stdout() + run->Stderr());
  };
  auto [status, said] = aos_starter({"status"});
  ASSERT_EQ(status, 0) << said;
  EXPECT_TRUE(std::regex_search(said, std::regex(R"(second_pong +STOPPED )")))
      << said;
  std::tie(status, said) =
      aos_starter({"--until_reporting", "start", "second_pong"});
  ASSERT_EQ(status, 0) << said << Launcher("pi2").Stderr("starter");
  EXPECT_TRUE(std::regex_search(
      said, std::regex(R"(^second_pong: RUNNING, reporting \(pid [0-9]+\))")))
      << said;
  std::tie(status, said) = aos_starter({"stop", "second_pong"});
  ASSERT_EQ(status, 0) << said;
  EXPECT_THAT(said, HasSubstr("second_pong: STOPPED"));
  // An application pi2 does not have: one line, exit 1.
  std::tie(status, said) = aos_starter({"start", "ping"});
  EXPECT_EQ(status, 1);
  EXPECT_THAT(said, HasSubstr("no application 'ping' on node pi2"));
}

// The flight recorder across nodes: every wakeup of ping over 1 us is a
// trigger on pi1; pi1's recorder writes a snapshot of pi1's rings and asks
// pi2's, through the bridges, for the same window; pi2's writes one of
// pong's ring, "asked by pi1", at pi1's trigger translated to pi2's clock
// by the offset it records. Nothing about timing is asserted.
TEST_F(MultinodePingPongTest, ATriggerOnPi1SnapshotsBothNodes) {
  const std::string out = StrCat(dir_, "/traces");
  std::filesystem::create_directories(out);
  for (const char* node : {"pi2", "pi1"}) {
    const absl::Status started = Launcher(node).Start(
        App("aos_trace", "aos/tracing/aos_trace", node,
            {StrCat("--out=", out), "--min_interval_ms=60000", "record"}));
    ASSERT_TRUE(started.ok()) << started;
    const absl::Status up =
        Launcher(node).WaitUntilReporting(std::chrono::seconds(90));
    ASSERT_TRUE(up.ok()) << up << "\n" << Launcher(node).Stderr("aos_trace");
  }
  // A request from pi1 for a window far from its send time (hostile, or
  // a broken clock) is refused by pi2's recorder, which goes on working.
  auto bad =
      Start("aos/tools/aos_send", "pi1",
            {"/aos", "aos.tracing.SnapshotRequest",
             R"({"node": "pi1", "trigger_monotonic_ns": 4000000000000000000,)"
             R"( "before_ns": 1, "after_ns": 1, "reason": "hostile"})"});
  ASSERT_EQ(bad->Wait(), 0) << bad->Stderr();
  for (int tries = 0; tries < 600; ++tries) {
    if (Launcher("pi2")
            .Stderr("aos_trace")
            .find("refused a snapshot request") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(Launcher("pi2").Stderr("aos_trace"),
              HasSubstr("is not within an hour of the request's send time"));
  StartPing({"--trace_wakeup_threshold_us=1"});
  // One snapshot of each node, or the deadline.
  std::map<std::string, std::string> snapshots;
  for (int tries = 0; tries < 600 && snapshots.size() < 2; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const auto& entry : std::filesystem::directory_iterator(out)) {
      const std::string name = entry.path().filename();
      for (const char* node : {"pi1", "pi2"}) {
        if (name.ends_with(StrCat(".", node, ".json"))) {
          std::ifstream file(entry.path());
          snapshots[node] = std::string(std::istreambuf_iterator<char>(file),
                                        std::istreambuf_iterator<char>());
        }
      }
    }
  }
  ASSERT_EQ(snapshots.size(), 2u)
      << "pi1 recorder:\n"
      << Launcher("pi1").Stderr("aos_trace") << "\npi2 recorder:\n"
      << Launcher("pi2").Stderr("aos_trace") << Said();
  auto number = [](const std::string& json, std::string_view key) {
    std::smatch match;
    const std::string pattern = StrCat("\"", key, "\": (-?[0-9]+)");
    EXPECT_TRUE(std::regex_search(json, match, std::regex(pattern)))
        << key << " not in " << json.substr(json.find("otherData"));
    return match.empty() ? int64_t{0} : std::stoll(match[1].str());
  };
  const std::string& pi1 = snapshots["pi1"];
  const std::string& pi2 = snapshots["pi2"];
  EXPECT_THAT(pi1, HasSubstr("\"node\": \"pi1\""));
  EXPECT_THAT(pi1, HasSubstr("pi1 ping (pid "));
  EXPECT_THAT(pi1, HasSubstr("\"reason\": \"ping: wakeup latency\""));
  EXPECT_THAT(pi2, HasSubstr("\"node\": \"pi2\""));
  EXPECT_THAT(pi2, HasSubstr("pi2 pong (pid "));
  EXPECT_THAT(pi2, HasSubstr("\"requested_by\": \"pi1\""));
  EXPECT_THAT(pi2,
              HasSubstr("\"reason\": \"asked by pi1: ping: wakeup latency\""));
  // pi1's trigger, carried over, and translated by the recorded offset.
  EXPECT_EQ(number(pi2, "requester_trigger_ns"), number(pi1, "trigger_ns"));
  EXPECT_EQ(number(pi2, "trigger_ns"), number(pi2, "requester_trigger_ns") -
                                           number(pi2, "clock_offset_ns"));
  // The same window on both.
  EXPECT_EQ(number(pi2, "window_end_ns") - number(pi2, "window_begin_ns"),
            number(pi1, "window_end_ns") - number(pi1, "window_begin_ns"));
  // Merged on pi1's clock: flows from ping's sends on pi1 to pong's
  // watcher on pi2, through both bridges.
  std::vector<std::string> merge_args{"merge", StrCat("--out=", out)};
  for (const char* node : {"pi1", "pi2"}) {
    for (const auto& entry : std::filesystem::directory_iterator(out)) {
      if (entry.path().string().ends_with(StrCat(".", node, ".json"))) {
        merge_args.push_back(entry.path().string());
        break;
      }
    }
  }
  Subprocess merge(ArtifactPath("aos/tracing/aos_trace"), merge_args, dir_);
  ASSERT_EQ(merge.Wait(), 0) << merge.Stderr();
  EXPECT_THAT(merge.Stdout(), HasSubstr("pi2: clock offset")) << merge.Stdout();
  std::string merged;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    if (entry.path().string().ends_with(".merged.json")) {
      std::ifstream file(entry.path());
      merged = std::string(std::istreambuf_iterator<char>(file),
                           std::istreambuf_iterator<char>());
    }
  }
  EXPECT_GT(number(merged, "cross_node_flows"), 0) << merge.Stdout();
}

}  // namespace
}  // namespace aos::testing
