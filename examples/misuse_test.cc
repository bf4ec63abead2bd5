// Every misuse of the programs users run is one line naming the culprit on
// stderr and a non-zero exit (1, or 2 for a gate that saw nothing), never a
// stack trace: bad flags, stray arguments, a config without the channel a
// program needs, an unusable --shm_base, output paths that can't be written.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "aos/testing/path.h"
#include "aos/util/subprocess.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::testing {
namespace {

using ::testing::HasSubstr;

class MisuseTest : public ::testing::Test {
 protected:
  MisuseTest() {
    char base[] = "/dev/shm/aos_misuse_XXXXXX";
    CHECK(mkdtemp(base) != nullptr);
    shm_base_ = base;
  }
  ~MisuseTest() override { std::filesystem::remove_all(shm_base_); }

  // Runs `binary` (a workspace path) with `args` and a private --shm_base.
  struct Result {
    int status;
    std::string out;
    std::string err;
  };
  Result Run(std::string_view binary, std::vector<std::string> args,
             bool with_config = true) {
    if (with_config) {
      args.insert(args.begin(),
                  "--config=" + ArtifactPath("examples/pingpong_config.json"));
    }
    if (binary != "aos/tools/aos_config_check") {
      args.insert(args.begin(), "--shm_base=" + shm_base_);
    }
    Subprocess process(ArtifactPath(binary), args, dir_);
    const int status = process.Wait();
    return {status, process.Stdout(), process.Stderr()};
  }

  // Exactly one line on stderr, starting with the program's name.
  static void ExpectOneLine(const Result& result, std::string_view program,
                            std::string_view contains, int status = 1) {
    EXPECT_EQ(result.status, status) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << result.err;
    EXPECT_TRUE(result.err.starts_with(std::string(program) + ": "))
        << result.err;
    EXPECT_THAT(result.err, HasSubstr(std::string(contains)));
  }

  std::string Write(std::string_view name, std::string_view text) {
    const std::string path = dir_ + "/" + std::string(name);
    std::ofstream(path) << text;
    return path;
  }

  std::string shm_base_;
  std::string dir_ = TestTempDir();
};

TEST_F(MisuseTest, BadFlagsOfPingAndPong) {
  ExpectOneLine(Run("examples/ping", {"--priority=200"}), "ping",
                "--priority=200 is not a SCHED_FIFO priority: give 1-99, or "
                "0 for normal scheduling");
  ExpectOneLine(Run("examples/pong", {"--priority=-1"}), "pong",
                "--priority=-1 is not a SCHED_FIFO priority");
  ExpectOneLine(Run("examples/ping", {"--sleep_us=-5"}), "ping",
                "--sleep_us=-5 is negative: give 0 or more");
  ExpectOneLine(Run("examples/ping", {"--sleep_ms=0"}), "ping",
                "--sleep_ms=0 is not a period");
  ExpectOneLine(Run("examples/ping", {"--count=-1"}), "ping",
                "--count=-1 is negative");
  ExpectOneLine(Run("examples/ping", {"--duration=-2"}), "ping",
                "--duration=-2 is negative");
  ExpectOneLine(Run("examples/ping", {"--affinity=zero"}), "ping",
                "--affinity=zero: 'zero' is not a CPU number");
  ExpectOneLine(Run("examples/pong", {"--cpu_dma_latency_us=-5"}), "pong",
                "--cpu_dma_latency_us=-5 is not a wakeup latency: give 0 to "
                "1000000 microseconds, or -1 for no limit");
  ExpectOneLine(Run("examples/pong", {"--cpu_dma_latency_scope=some"}), "pong",
                "--cpu_dma_latency_scope=some is not a scope: give auto, all "
                "or cpus");
  ExpectOneLine(Run("examples/ping", {"--timer_anticipation_us=fast"}), "ping",
                "--timer_anticipation_us=fast is not a timer anticipation: "
                "give auto, or 0 (none) to 1000 microseconds");
  ExpectOneLine(Run("examples/ping", {"--timer_anticipation_us=1001"}), "ping",
                "--timer_anticipation_us=1001 is not a timer anticipation");
  ExpectOneLine(Run("examples/pong", {"--permissions=rw"}), "pong",
                "--permissions=rw is not an octal file mode like 0600 or "
                "0660");
  ExpectOneLine(Run("examples/pong", {"--timing_report_ms=0"}), "pong",
                "--timing_report_ms=0 is not a report window: give 1 or more");
}

// Faster than the channel's frequency: refused up front, naming the field,
// instead of a flood of failed sends.
TEST_F(MisuseTest, PingFasterThanTheChannelAllowsIsRefused) {
  ExpectOneLine(Run("examples/ping", {"--sleep_us=100"}), "ping",
                "--sleep_us sends 10000 messages a second on /test "
                "aos.examples.Ping, more than its \"frequency\" 2000 in the "
                "config: raise that field");
}

TEST_F(MisuseTest, StrayArgumentsAreNamed) {
  ExpectOneLine(Run("examples/ping", {"fast"}), "ping",
                "unexpected argument 'fast'");
  ExpectOneLine(Run("examples/pong", {"x"}), "pong", "unexpected argument 'x'");
  ExpectOneLine(Run("aos/tools/aos_timing_report_streamer", {"ping"}),
                "aos_timing_report_streamer", "unexpected argument 'ping'");
  ExpectOneLine(
      Run("aos/tools/aos_dump", {"/test", "aos.examples.Ping", "extra"}),
      "aos_dump", "unexpected argument 'extra'");
}

TEST_F(MisuseTest, DashHPrintsHelp) {
  for (std::string_view binary :
       {"examples/ping", "examples/pong", "aos/tools/aos_dump",
        "aos/tools/aos_timing_report_streamer", "aos/tools/aos_config_check"}) {
    const Result result = Run(binary, {"-h"}, false);
    EXPECT_EQ(result.status, 0) << binary << ": " << result.err;
    EXPECT_THAT(result.out, HasSubstr("Usage: ")) << binary;
  }
}

TEST_F(MisuseTest, ConfigsWithoutTheNeededChannel) {
  const std::string no_test =
      Write("no_test.json", R"({ "channels": [ { "name": "/aos",
        "type": "aos.timing.Report", "max_size": 16384 } ] })");
  ExpectOneLine(Run("examples/ping", {"--config=" + no_test}, false), "ping",
                "channel /test of type aos.examples.Ping is not in the config");
  const std::string no_aos = Write(
      "no_aos.json",
      R"({ "channels": [ { "name": "/test", "type": "aos.examples.Ping" } ] })");
  ExpectOneLine(Run("aos/tools/aos_timing_report_streamer",
                    {"--config=" + no_aos}, false),
                "aos_timing_report_streamer",
                "channel /aos of type aos.timing.Report is not in the config");
}

TEST_F(MisuseTest, UnusableShmBase) {
  const std::string file = Write("a_file", "");
  Subprocess pong(ArtifactPath("examples/pong"),
                  {"--config=" + ArtifactPath("examples/pingpong_config.json"),
                   "--shm_base=" + file + "/shm"},
                  dir_);
  Result result{pong.Wait(), pong.Stdout(), pong.Stderr()};
  ExpectOneLine(result, "pong", file);
}

// --boot_id_file names a file that holds no boot UUID.
TEST_F(MisuseTest, UnreadableBootIdFile) {
  const std::string file = Write("not_a_boot", "hello\n");
  for (const std::string& boot : {file, dir_ + "/missing"}) {
    Subprocess pong(
        ArtifactPath("examples/pong"),
        {"--config=" + ArtifactPath("examples/pingpong_config.json"),
         "--shm_base=" + dir_ + "/shm", "--boot_id_file=" + boot},
        dir_);
    Result result{pong.Wait(), pong.Stdout(), pong.Stderr()};
    ExpectOneLine(result, "pong", "--boot_id_file: " + boot + ": ");
  }
}

TEST_F(MisuseTest, AosDumpListsChannelsAndTheClosestOnes) {
  ExpectOneLine(Run("aos/tools/aos_dump", {}), "aos_dump",
                "give the CHANNEL [TYPE] to print; channels of the config: "
                "/aos aos.starter.StarterRpc, /aos aos.starter.Status, /aos "
                "aos.timing.Report, /aos aos.tracing.TraceSnapshot, /test "
                "aos.examples.Ping, /test aos.examples.Pong");
  ExpectOneLine(Run("aos/tools/aos_dump", {"/tset"}), "aos_dump",
                "no channel /tset in the config; no channel has that name; "
                "closest channels in the config: /test (aos.examples.Ping), "
                "/test (aos.examples.Pong)");
  ExpectOneLine(Run("aos/tools/aos_dump", {"--count=-2", "/test"}), "aos_dump",
                "--count=-2 is negative");
}

TEST_F(MisuseTest, StreamerFlagsAndOutputPaths) {
  ExpectOneLine(Run("aos/tools/aos_timing_report_streamer", {"--format=xml"}),
                "aos_timing_report_streamer",
                "--format=xml is not one of table, aos, json");
  ExpectOneLine(Run("aos/tools/aos_timing_report_streamer", {"--units=s"}),
                "aos_timing_report_streamer",
                "--units=s is not one of ns, us, ms");
  ExpectOneLine(Run("aos/tools/aos_timing_report_streamer", {"--count=-1"}),
                "aos_timing_report_streamer", "--count=-1 is negative");
  ExpectOneLine(
      Run("aos/tools/aos_timing_report_streamer", {"--max_path_age_us=-5"}),
      "aos_timing_report_streamer", "--max_path_age_us=-5 is negative");
  ExpectOneLine(Run("aos/tools/aos_timing_report_streamer",
                    {"--histogram_file=/nonexistent/dir/h.dat"}),
                "aos_timing_report_streamer",
                "cannot write --histogram_file=/nonexistent/dir/h.dat: No "
                "such file or directory");
}

// A gate that saw no report must not pass.
TEST_F(MisuseTest, GateWithoutReportsFails) {
  ExpectOneLine(
      Run("aos/tools/aos_timing_report_streamer",
          {"--application=nobody", "--duration=0.5", "--no_match_warning_s=10",
           "--max_wakeup_latency_us=100", "--accumulate=false"}),
      "aos_timing_report_streamer",
      "--max_wakeup_latency_us: no timing report matched the "
      "filters, so nothing was checked",
      2);
}

TEST_F(MisuseTest, PathGateWithoutReportsFails) {
  ExpectOneLine(
      Run("aos/tools/aos_timing_report_streamer",
          {"--application=nobody", "--duration=0.5", "--no_match_warning_s=10",
           "--max_path_age_us=100", "--accumulate=false"}),
      "aos_timing_report_streamer",
      "--max_path_age_us: no timing report matched the filters, so nothing "
      "was checked",
      2);
}

TEST_F(MisuseTest, ConfigPathsAreNamed) {
  ExpectOneLine(Run("aos/tools/aos_timing_report_streamer",
                    {"--config=/nonexistent/config.json"}, false),
                "aos_timing_report_streamer",
                "--config: /nonexistent/config.json: no such file");
}

// A bridge forwards what the system's config says: without --config it
// refuses, naming the flag, instead of forwarding an example's channels.
TEST_F(MisuseTest, BridgeWithoutConfigIsRefused) {
  ExpectOneLine(Run("aos/network/message_bridge", {"--node=pi1"}, false),
                "message_bridge",
                "--config is required: your system's multi-node "
                "configuration");
}

// In a multi-node configuration, every program that runs as a node names the
// nodes when --node is not one of them, or when it is not given and no node
// has this machine's hostname.
TEST_F(MisuseTest, ProgramsOfANodeNameTheNodes) {
  const std::string config =
      "--config=" + ArtifactPath("examples/multinode_pingpong_config.json");
  const std::string log_file = "--log_file=" + dir_ + "/node.mcap";
  const std::vector<std::pair<std::string, std::vector<std::string>>> programs =
      {
          {"examples/ping", {}},
          {"examples/pong", {}},
          {"aos/tools/aos_dump", {"/test", "aos.examples.Ping"}},
          {"aos/network/message_bridge", {}},
          {"aos/events/logging/aos_logger", {log_file}},
      };
  char hostname[256] = {};
  gethostname(hostname, sizeof(hostname) - 1);
  const bool hostname_is_a_node = std::string_view(hostname) == "pi1" ||
                                  std::string_view(hostname) == "pi2";
  if (hostname_is_a_node) {
    std::cout << "this machine's hostname is " << hostname
              << ", a node of the config: only --node=pi3 is checked\n";
  }
  for (const auto& [binary, args] : programs) {
    const std::string program = binary.substr(binary.rfind('/') + 1);
    std::vector<std::string> unknown = args;
    unknown.insert(unknown.begin(), {config, "--node=pi3"});
    ExpectOneLine(Run(binary, unknown, false), program,
                  "--node=pi3 is not a node of the configuration; its nodes: "
                  "pi1, pi2");
    if (hostname_is_a_node) continue;
    std::vector<std::string> none = args;
    none.insert(none.begin(), config);
    ExpectOneLine(Run(binary, none, false), program,
                  "--node: no node of the configuration has this machine's "
                  "hostname \"" +
                      std::string(hostname) +
                      "\"; pass --node=NAME, one of: pi1, pi2");
  }
}

}  // namespace
}  // namespace aos::testing
