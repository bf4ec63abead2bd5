// ping, pong and aos_timing_report_streamer as a user runs them: real
// processes on a private --shm_base, the streamer's JSON lines read back.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>
#include <vector>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/events/streamed_report_generated.h"
#include "aos/testing/path.h"
#include "aos/testing/processes.h"
#include "aos/testing/wait_until.h"
#include "aos/tools/http_test_client.h"
#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "examples/streamer_json_lines.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::testing {
namespace {

using ::testing::HasSubstr;

using Process = ::aos::Subprocess;

class PingPongTest : public ::testing::Test {
 protected:
  PingPongTest() {
    char base[] = "/dev/shm/aos_e2e_XXXXXX";
    CHECK(mkdtemp(base) != nullptr);
    shm_base_ = base;
  }
  ~PingPongTest() override { std::filesystem::remove_all(shm_base_); }

  std::vector<std::string> Common() const {
    return {"--config=" + ArtifactPath("examples/pingpong_config.json"),
            "--shm_base=" + shm_base_};
  }
  std::unique_ptr<Process> Start(std::string_view binary,
                                 std::vector<std::string> extra = {}) {
    std::vector<std::string> args = Common();
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<Process>(ArtifactPath(binary), args, output_dir_);
  }
  std::unique_ptr<Process> StartPingPong() {
    pong_ = Start("examples/pong");
    return Start("examples/ping");
  }

  std::string shm_base_;
  std::string output_dir_ = TestTempDir();
  std::unique_ptr<Process> pong_;
};

const timing::Timer* TimerNamed(const timing::Report& report,
                                std::string_view name) {
  for (const timing::Timer* timer : *report.timers()) {
    if (timer->name()->string_view() == name) return timer;
  }
  return nullptr;
}

// The counts at the start of ping's summary line.
struct PingCounts {
  bool parsed = false;
  int pings = -1;
  int not_sent = -1;
  int pongs = -1;
};
PingCounts ParsePingLine(const std::string& out) {
  PingCounts counts;
  counts.parsed = sscanf(out.c_str(), "ping: %d pings, %d not sent, %d pongs",
                         &counts.pings, &counts.not_sent, &counts.pongs) == 3;
  return counts;
}

// How far a window's calls plus missed cycles of ping's 10 ms timer may be
// from the periods the window spans, however late the loop runs. A call
// counts its own slot and, when it ends, the slots that passed meanwhile
// (TimerHandler::NextScheduledTime). So a window counts the slots scheduled
// in it (the periods, give or take one), plus those still uncounted when it
// began, minus those still uncounted when it ended. The slots uncounted at
// a report are at most 1 + (latency of ping's next call) / 10 ms, and that
// call falls in the next window: `timer` is this window's ping timer and
// `next` the next window's.
// A window without calls (a stall of over a second) has no latency, and
// no bound: infinity, which any count meets.
double CountTolerance(const timing::Timer& timer, const timing::Timer& next) {
  if (timer.count() == 0 || next.count() == 0) {
    return std::numeric_limits<double>::infinity();
  }
  const double latency_s =
      std::max(timer.wakeup_latency()->max(), next.wakeup_latency()->max());
  return 2 + std::ceil(latency_s / 10e-3);
}

TEST_F(PingPongTest, StreamedReportsAddUpAndMatchWhatPingAndPongDid) {
  auto ping = StartPingPong();
  // Four reports: the fourth bounds the third's count.
  auto streamer = Start("aos/tools/aos_timing_report_streamer",
                        {"--count=4", "--format=json", "--application=ping"});
  ASSERT_EQ(streamer->Wait(), 0) << streamer->Stderr();
  EXPECT_EQ(ping->Terminate(), 0) << ping->Stderr();
  EXPECT_EQ(pong_->Terminate(), 0) << pong_->Stderr();

  const auto lines = ParseStreamerJsonLines(streamer->Stdout());
  uint64_t streamed_ping_calls = 0;
  std::vector<const timing::Report*> reports;
  const timing::Report* accumulated = nullptr;
  for (const auto& line : lines) {
    const auto* streamed =
        flatbuffers::GetRoot<timing::StreamedReport>(line.data());
    const timing::Report& report = *streamed->report();
    ASSERT_EQ(report.name()->str(), "ping");
    if (streamed->accumulated()) {
      accumulated = &report;
      continue;
    }
    reports.push_back(&report);
    const timing::Timer* timer = TimerNamed(report, "ping");
    ASSERT_NE(timer, nullptr);
    ASSERT_NE(TimerNamed(report, "timing_reports"), nullptr);
    // No --count or --duration: no timer to stop ping, which would never
    // run; and no placeholder version.
    EXPECT_EQ(report.timers()->size(), 2u);
    EXPECT_TRUE(report.version() == nullptr || report.version()->size() == 0)
        << report.version()->string_view();
    streamed_ping_calls += timer->count();
    // Ping's /test sender (every ping the same size) and its Pong watcher.
    ASSERT_EQ(report.watchers()->size(), 1u);
    const timing::Sender* ping_sender = report.senders()->Get(0);
    EXPECT_EQ(ping_sender->size()->min(), ping_sender->size()->max());
    EXPECT_GT(streamed->percentiles()->size(), 0u);
  }
  ASSERT_EQ(reports.size(), 4u);
  // Every scheduled time of the 10 ms timer in a window got a call or was
  // counted missed (CountTolerance says how many may move to a neighbour).
  for (size_t i = 0; i + 1 < reports.size(); ++i) {
    const timing::Report& report = *reports[i];
    const timing::Timer& timer = *TimerNamed(report, "ping");
    const double periods =
        (report.monotonic_end_time() - report.monotonic_start_time()) / 1e7;
    EXPECT_NEAR(timer.count() + timer.missed_cycles(), periods,
                CountTolerance(timer, *TimerNamed(*reports[i + 1], "ping")))
        << "window " << i << ": count " << timer.count() << ", missed "
        << timer.missed_cycles() << ", max latency "
        << timer.wakeup_latency()->max() << " s";
  }
  // Pong answers pings only: however many are still in flight when ping
  // stops, ping never got more pongs than it sent pings.
  const PingCounts counts = ParsePingLine(ping->Stdout());
  ASSERT_TRUE(counts.parsed) << ping->Stdout();
  const int pongs = counts.pongs;
  EXPECT_GT(pongs, 0);
  EXPECT_LE(pongs, counts.pings - counts.not_sent);
  // Answers after the next ping are late, not "out of order"; the timer's
  // own wakeup latency is in the line too.
  EXPECT_THAT(ping->Stdout(), HasSubstr(" answered late (after the next ping); "
                                        "round trip avg "));
  EXPECT_THAT(ping->Stdout(), HasSubstr("; timer wakeup p50 "));
  EXPECT_THAT(ping->Stdout(), ::testing::Not(HasSubstr("another ping")));
  // Path latency's truth on shared memory: every Pong's origin was exactly
  // the timer call that sent the Ping it answers.
  int checked = -1;
  int wrong = -1;
  const size_t origins = ping->Stdout().find("origins ");
  ASSERT_NE(origins, std::string::npos) << ping->Stdout();
  ASSERT_EQ(sscanf(ping->Stdout().c_str() + origins,
                   "origins %d checked, %d wrong", &checked, &wrong),
            2)
      << ping->Stdout();
  EXPECT_EQ(checked, pongs);
  EXPECT_EQ(wrong, 0);
  ASSERT_NE(accumulated, nullptr) << "no accumulated summary";
  EXPECT_EQ(TimerNamed(*accumulated, "ping")->count(), streamed_ping_calls);
  EXPECT_LT(accumulated->monotonic_start_time(),
            accumulated->monotonic_end_time());
}

// Like cyclictest -l: ping stops by itself after --count pings (once the
// last is answered) or --duration, with its summary.
TEST_F(PingPongTest, PingStopsAfterCountOrDuration) {
  pong_ = Start("examples/pong");
  auto counted = Start("examples/ping", {"--count=5", "--sleep_ms=2"});
  ASSERT_EQ(counted->Wait(), 0) << counted->Stderr();
  // How many were answered depends on when pong started watching.
  EXPECT_THAT(counted->Stdout(), HasSubstr("ping: 5 pings, 0 not sent, "));
  auto timed = Start("examples/ping", {"--duration=0.2"});
  ASSERT_EQ(timed->Wait(), 0) << timed->Stderr();
  EXPECT_THAT(timed->Stdout(), HasSubstr(" pings, 0 not sent, "));
}

// Without pong, ping says where it looked instead of printing NaNs; pong
// without ping does too.
TEST_F(PingPongTest, PingAndPongAloneNameTheShmBase) {
  const std::string summary = output_dir_ + "/alone.json";
  auto ping = Start("examples/ping", {"--duration=2.5", "--sleep_ms=5",
                                      "--summary_json=" + summary});
  ASSERT_EQ(ping->Wait(), 0) << ping->Stderr();
  EXPECT_THAT(ping->Stdout(),
              HasSubstr(" not sent, 0 pongs: is pong running on --shm_base=" +
                        shm_base_ + "?; timer wakeup p50 "));
  EXPECT_THAT(ping->Stdout(), ::testing::Not(HasSubstr("nan")));
  // Said while it ran too, once.
  EXPECT_THAT(ping->Stderr(),
              HasSubstr("ping: no pong in 2 s: is pong running on --shm_base=" +
                        shm_base_ + "?\n"));
  std::ifstream json(summary);
  const std::string text((std::istreambuf_iterator<char>(json)),
                         std::istreambuf_iterator<char>());
  // The round trip's four figures are null; the wakeup's are not.
  EXPECT_THAT(text, HasSubstr("\"timer_wakeup_us\": {"));
  size_t nulls = 0;
  for (size_t at = text.find("null"); at != std::string::npos;
       at = text.find("null", at + 1)) {
    ++nulls;
  }
  EXPECT_EQ(nulls, 4u) << text;

  auto pong = Start("examples/pong");
  // Once pong has published a timing report its loop runs, and takes
  // SIGTERM as a request to stop.
  auto streamer = Start("aos/tools/aos_timing_report_streamer",
                        {"--count=1", "--stream=false", "--application=pong"});
  ASSERT_EQ(streamer->Wait(), 0) << streamer->Stderr();
  EXPECT_EQ(pong->Terminate(), 0) << pong->Stderr();
  EXPECT_THAT(pong->Stderr(),
              HasSubstr("pong: no ping arrived: is ping running on "
                        "--shm_base=" +
                        shm_base_ + "?"));
}

// A streamer that sees nothing says where it looked.
TEST_F(PingPongTest, StreamerSeeingNothingNamesTheShmBaseAndConfig) {
  auto streamer = Start("aos/tools/aos_timing_report_streamer",
                        {"--duration=1", "--no_match_warning_s=0.2"});
  EXPECT_EQ(streamer->Wait(), 0) << streamer->Stderr();
  EXPECT_THAT(streamer->Stderr(),
              HasSubstr("reports seen from: nobody (reading --shm_base=" +
                        shm_base_ + " with --config=" +
                        ArtifactPath("examples/pingpong_config.json") + ")"));
}

// Two pings on one --shm_base each get the other's pongs: each says so
// once, and counts only its own.
TEST_F(PingPongTest, TwoPingsOnOneShmBaseSaySo) {
  pong_ = Start("examples/pong");
  auto first = Start("examples/ping", {"--duration=1.5"});
  auto second = Start("examples/ping", {"--duration=1.5"});
  ASSERT_EQ(first->Wait(), 0) << first->Stderr();
  ASSERT_EQ(second->Wait(), 0) << second->Stderr();
  for (Process* ping : {first.get(), second.get()}) {
    const PingCounts counts = ParsePingLine(ping->Stdout());
    ASSERT_TRUE(counts.parsed) << ping->Stdout();
    EXPECT_LE(counts.pongs, counts.pings) << ping->Stdout();
    EXPECT_THAT(ping->Stdout(),
                HasSubstr(" pongs of another ping on this --shm_base, not "
                          "counted"));
    const std::string said =
        "ping: a pong answered a ping this ping did not send: another ping "
        "runs on --shm_base=" +
        shm_base_;
    const std::string err = ping->Stderr();
    EXPECT_THAT(err, HasSubstr(said));
    EXPECT_EQ(err.find(said), err.rfind(said)) << "said more than once";
  }
}

// --top redraws one screen per report (the callbacks of every
// application), and ends with the summary. Into a pipe, as here, the
// screens follow one another without ANSI codes.
TEST_F(PingPongTest, TopRedrawsAScreenPerReportAndEndsWithTheSummary) {
  auto ping = StartPingPong();
  auto streamer = Start("aos/tools/aos_timing_report_streamer",
                        {"--top", "--count=3", "--max_wakeup_latency_us=1e9"});
  ASSERT_EQ(streamer->Wait(), 0) << streamer->Stderr();
  const std::string out = streamer->Stdout();
  size_t screens = 0;
  for (size_t at = out.find("aos top: "); at != std::string::npos;
       at = out.find("aos top: ", at + 1)) {
    ++screens;
  }
  EXPECT_EQ(screens, 3u);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_THAT(out, HasSubstr("slowest p99 first"));
  EXPECT_THAT(out, HasSubstr("every callback within it"));
  EXPECT_THAT(out, HasSubstr("timer timing_reports"));
  EXPECT_THAT(out, HasSubstr("Summary: every report of each application"));
}

// A free TCP port on 127.0.0.1 (the kernel's choice). Another program may
// take it before the streamer binds it: the metrics test then starts
// another streamer on another port.
int FreePort() {
  const ScopedFd fd(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK_EQ(
      bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)),
      0);
  socklen_t length = sizeof(address);
  CHECK_EQ(
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
  return ntohs(address.sin_port);
}

// Grafana's way in: /metrics over HTTP while the streamer runs.
TEST_F(PingPongTest, StreamerServesPrometheusMetrics) {
  auto ping = StartPingPong();
  const std::string wanted =
      "aos_wakeup_latency_seconds_count{node=\"\",application=\"ping\","
      "kind=\"timer\",name=\"ping\"}";
  // --duration only ends a streamer the test failed to stop.
  std::unique_ptr<Process> streamer;
  int port = 0;
  std::string body;
  // Until ping's first report has arrived.
  const bool served = WaitUntil(
      [&]() {
        if (streamer == nullptr) {
          port = FreePort();
          streamer =
              Start("aos/tools/aos_timing_report_streamer",
                    // No --metrics_address: the default is this machine only.
                    {"--duration=120", "--stream=false", "--accumulate=false",
                     StrCat("--metrics_port=", port)});
        }
        // Paced: a request every 50 ms is plenty while ping starts.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (streamer->Stderr().find("cannot serve metrics on") !=
            std::string::npos) {
          // The port was taken meanwhile: it exits at once; another port.
          EXPECT_EQ(streamer->Wait(), 1) << streamer->Stderr();
          streamer.reset();
          return false;
        }
        if (absl::StatusOr<HttpResponse> response =
                HttpGet(port, "/metrics", std::chrono::seconds(30));
            response.ok()) {
          body = response->body;
        }
        return body.find(wanted) != std::string::npos;
      },
      std::chrono::seconds(60), "a report of ping's timer in /metrics");
  ASSERT_NE(streamer, nullptr);
  ASSERT_TRUE(served) << "streamer said: " << streamer->Stderr();
  EXPECT_THAT(body, HasSubstr("# TYPE aos_missed_cycles_total counter"));
  // Ping's report in /metrics means the streamer's loop runs, and takes
  // SIGTERM as a request to stop.
  EXPECT_EQ(streamer->Terminate(), 0) << streamer->Stderr();
  EXPECT_THAT(streamer->Stderr(),
              HasSubstr(StrCat("serving metrics on http://127.0.0.1:", port,
                               "/metrics")));
}

TEST_F(PingPongTest, LatencyGateFailsNamingTheWorstAndPassesAGenerousLimit) {
  auto ping = StartPingPong();
  auto strict =
      Start("aos/tools/aos_timing_report_streamer",
            {"--count=1", "--stream=false", "--max_wakeup_latency_us=0.001"});
  EXPECT_EQ(strict->Wait(), 1);
  EXPECT_THAT(strict->Stderr(), HasSubstr("FAILED: "));
  EXPECT_THAT(strict->Stderr(),
              HasSubstr("us late, more than --max_wakeup_latency_us=0.001"));
  auto generous =
      Start("aos/tools/aos_timing_report_streamer",
            {"--count=1", "--stream=false", "--max_wakeup_latency_us=1e9"});
  EXPECT_EQ(generous->Wait(), 0) << generous->Stderr();
}

TEST_F(PingPongTest, ApplicationFilterShowsOnlyThatApplication) {
  auto ping = StartPingPong();
  auto streamer = Start("aos/tools/aos_timing_report_streamer",
                        {"--count=2", "--format=json", "--application=pong"});
  ASSERT_EQ(streamer->Wait(), 0) << streamer->Stderr();
  const auto lines = ParseStreamerJsonLines(streamer->Stdout());
  ASSERT_EQ(lines.size(), 3u);  // Two reports and the summary.
  for (const auto& line : lines) {
    EXPECT_EQ(flatbuffers::GetRoot<timing::StreamedReport>(line.data())
                  ->report()
                  ->name()
                  ->str(),
              "pong");
  }
}

TEST_F(PingPongTest, AosDumpPrintsMessagesAsJson) {
  auto ping = StartPingPong();
  auto dump =
      Start("aos/tools/aos_dump", {"--count=3", "/test", "aos.examples.Ping"});
  ASSERT_EQ(dump->Wait(), 0) << dump->Stderr();
  const std::string output = dump->Stdout();
  EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 3) << output;
  EXPECT_THAT(output, HasSubstr(") /test aos.examples.Ping: { \"value\": "));
  EXPECT_THAT(output, HasSubstr("\"send_time\": "));
}

TEST_F(PingPongTest, AosDumpNamesWhatItCannotFind) {
  auto run = [&](std::vector<std::string> args) {
    auto dump = Start("aos/tools/aos_dump", std::move(args));
    EXPECT_EQ(dump->Wait(), 1);
    return dump->Stderr();
  };
  EXPECT_THAT(
      run({"/tset"}),
      HasSubstr("no channel /tset in the config; no channel has that name"));
  // (Without a type, every channel of the name is printed, as in AOS.)
  EXPECT_THAT(run({"/test", "examples"}),
              HasSubstr("several channels named /test have a type containing "
                        "examples; give more of the type: /test "
                        "aos.examples.Ping, /test aos.examples.Pong"));
  EXPECT_THAT(run({"/test", "aos.examples.Nope"}),
              HasSubstr("no channel /test of type aos.examples.Nope in the "
                        "config; named /test: "
                        "/test aos.examples.Ping, /test aos.examples.Pong; no "
                        "channel has that "
                        "type"));
}

// pong runs at SCHED_FIFO 5 by default, so it holds the CPU latency limit
// (0 us, all CPUs: it is not pinned) while it runs, and says so in its
// reports.
TEST_F(PingPongTest, RealtimePongHoldsTheCpuLatencyLimitAndReportsIt) {
  const bool writable = access("/dev/cpu_dma_latency", W_OK) == 0;
  auto ping = StartPingPong();
  auto streamer = Start("aos/tools/aos_timing_report_streamer",
                        {"--count=1", "--format=json", "--application=pong"});
  ASSERT_EQ(streamer->Wait(), 0) << streamer->Stderr();
  const bool pong_holds_the_file =
      HasOpenFile(pong_->pid(), "/dev/cpu_dma_latency");
  EXPECT_EQ(ping->Terminate(), 0);
  EXPECT_EQ(pong_->Terminate(), 0);
  const auto lines = ParseStreamerJsonLines(streamer->Stdout());
  ASSERT_GE(lines.size(), 1u);
  const timing::Report& report =
      *flatbuffers::GetRoot<timing::StreamedReport>(lines[0].data())->report();
  if (writable) {
    EXPECT_TRUE(pong_holds_the_file);
    EXPECT_EQ(report.cpu_latency_limit_us(), 0);
    EXPECT_EQ(report.cpu_latency_limit_cpus()->string_view(), "all");
  } else {
    std::cerr << "/dev/cpu_dma_latency is not writable here: checking the "
                 "refusal instead of the hold\n";
    EXPECT_FALSE(pong_holds_the_file);
    EXPECT_EQ(report.cpu_latency_limit_us(), -1);
    EXPECT_THAT(pong_->Stderr(), HasSubstr("cannot open /dev/cpu_dma_latency"));
  }
}

}  // namespace
}  // namespace aos::testing
