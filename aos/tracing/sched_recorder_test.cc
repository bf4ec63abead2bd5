#include "aos/tracing/sched_recorder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "aos/tracing/sched_text.h"
#include "aos/util/str_cat.h"
#include "gtest/gtest.h"

namespace aos::tracing {
namespace {

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::string Slurp(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Where this test can't make a tracefs instance, it says why and skips.
class SchedRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tracefs_ = FindTracefs();
    if (geteuid() != 0) GTEST_SKIP() << "not root: no tracefs instances";
    if (!Exists(StrCat(tracefs_, "/instances"))) {
      GTEST_SKIP() << "no tracefs at " << tracefs_;
    }
  }

  std::string tracefs_;
};

TEST_F(SchedRecorderTest, RecordsThisThreadsSwitchesOnTheMonoClock) {
  absl::StatusOr<std::unique_ptr<SchedRecorder>> recorder =
      SchedRecorder::Start(tracefs_, 256);
  ASSERT_TRUE(recorder.ok()) << recorder.status();
  const std::string directory = (*recorder)->directory();
  EXPECT_EQ(directory, StrCat(tracefs_, "/instances/aos_trace.", getpid()));
  EXPECT_NE(Slurp(StrCat(directory, "/trace_clock")).find("[mono]"),
            std::string::npos);
  timespec before;
  clock_gettime(CLOCK_MONOTONIC, &before);
  // Sleeping switches this thread out and wakes it again.
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  absl::StatusOr<std::string> text = (*recorder)->ReadText();
  ASSERT_TRUE(text.ok()) << text.status();
  const SchedText sched = ParseSchedText(*text);
  EXPECT_EQ(sched.unparsed, 0) << *text;
  int out = 0;
  int woken = 0;
  const int64_t before_ns =
      int64_t{before.tv_sec} * 1'000'000'000 + before.tv_nsec;
  for (const SchedEvent& event : sched.events) {
    if (event.kind == SchedKind::kSwitch && event.prev.pid == gettid() &&
        event.prev_state == "S") {
      ++out;
      // The same clock as CLOCK_MONOTONIC: after the time read before.
      EXPECT_GE(event.monotonic_ns, before_ns);
    }
    if (event.kind == SchedKind::kWakeup && event.next.pid == gettid()) ++woken;
  }
  EXPECT_GE(out, 5);
  EXPECT_GE(woken, 5);
  recorder->reset();
  EXPECT_FALSE(Exists(directory)) << "the instance was left behind";
}

TEST_F(SchedRecorderTest, RemovesTheInstanceOfAKilledRecorder) {
  // Above any pid_max: no process has it.
  const std::string orphan = StrCat(tracefs_, "/instances/aos_trace.999999999");
  ASSERT_EQ(mkdir(orphan.c_str(), 0700), 0) << orphan;
  absl::StatusOr<std::unique_ptr<SchedRecorder>> recorder =
      SchedRecorder::Start(tracefs_, 64);
  ASSERT_TRUE(recorder.ok()) << recorder.status();
  EXPECT_FALSE(Exists(orphan));
}

TEST(SchedRecorderErrorTest, NamesThePathItCannotMake) {
  absl::StatusOr<std::unique_ptr<SchedRecorder>> recorder =
      SchedRecorder::Start("/nonexistent/tracefs", 64);
  ASSERT_FALSE(recorder.ok());
  EXPECT_NE(recorder.status().message().find(
                "/nonexistent/tracefs/instances/aos_trace."),
            std::string::npos)
      << recorder.status();
  EXPECT_NE(recorder.status().message().find("is tracefs mounted?"),
            std::string::npos)
      << recorder.status();
}

}  // namespace
}  // namespace aos::tracing
