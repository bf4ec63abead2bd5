#include "aos/starter/launcher.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/testing/path.h"
#include "aos/util/exit_code.h"
#include "aos/util/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::starter {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Generous: a loaded machine may take long to start a program, and
// nothing here waits for it unless it is slow.
constexpr auto kDeadline = seconds(60);

class LauncherTest : public ::testing::Test {
 protected:
  LauncherTest()
      : config_path_(testing::ArtifactPath("aos/testing/test_config.json")),
        config_(*configuration::ReadConfig(config_path_)),
        dir_(testing::TestTempDir()),
        shm_base_(dir_ + "/shm") {
    FLAGS_shm_base = shm_base_;
    reports_loop_ =
        std::make_unique<ShmEventLoop>(&config_.message(), "launcher_test");
  }

  // The test app as `name`, behaving as `behaviour`.
  LaunchSpec App(std::string name, std::string behaviour = "run") {
    return {
        .name = name,
        .binary = testing::ArtifactPath("aos/starter/launcher_test_app"),
        .args = {StrCat("--config=", config_path_),
                 StrCat("--shm_base=", shm_base_), StrCat("--name=", name),
                 StrCat("--behaviour=", behaviour), "--timing_report_ms=50"},
        .network_namespace = "",
        .reports = true};
  }

  std::vector<std::string> Names(const std::vector<Launcher::Stopped>& all) {
    std::vector<std::string> names;
    for (const Launcher::Stopped& stopped : all) names.push_back(stopped.name);
    return names;
  }

  const std::string config_path_;
  const FlatbufferDetachedBuffer<Configuration> config_;
  const std::string dir_;
  const std::string shm_base_;
  std::unique_ptr<ShmEventLoop> reports_loop_;
};

// Both report, so both are ready; they stop in reverse order, each by its
// SIGTERM (exit 0), in groups of their own.
TEST_F(LauncherTest, StartsWaitsForReportsAndStopsInReverse) {
  Launcher launcher(reports_loop_.get(), dir_);
  ASSERT_TRUE(launcher.Start(App("first")).ok());
  ASSERT_TRUE(launcher.Start(App("second")).ok());
  const absl::Status up = launcher.WaitUntilReporting(kDeadline);
  ASSERT_TRUE(up.ok()) << up;
  EXPECT_TRUE(launcher.Running("first"));
  EXPECT_TRUE(launcher.Running("second"));
  EXPECT_FALSE(launcher.Running("third"));
  EXPECT_EQ(getpgid(launcher.Pid("first")), launcher.Pid("first"));
  const std::vector<Launcher::Stopped> stopped = launcher.StopAll(kDeadline);
  EXPECT_THAT(Names(stopped), ElementsAre("second", "first"));
  for (const Launcher::Stopped& fate : stopped) {
    EXPECT_EQ(fate.status, 0)
        << fate.name << " " << DescribeExit(fate.status) << "\n"
        << launcher.Stderr(fate.name);
    EXPECT_FALSE(fate.killed) << fate.name;
  }
  EXPECT_FALSE(launcher.Running("first"));
  // Stopping again finds nothing to stop.
  EXPECT_TRUE(launcher.StopAll(kDeadline).empty());
}

// One that exits as it starts is named, with its status and what it said,
// however long the deadline.
TEST_F(LauncherTest, OneThatDiesStartingIsNamedWithWhatItSaid) {
  Launcher launcher(reports_loop_.get(), dir_);
  ASSERT_TRUE(launcher.Start(App("good")).ok());
  ASSERT_TRUE(launcher.Start(App("bad", "exit3")).ok());
  const absl::Status up = launcher.WaitUntilReporting(seconds(3600));
  ASSERT_FALSE(up.ok());
  EXPECT_THAT(std::string(up.message()),
              HasSubstr("bad exited with status 3 before its "
                        "first timing report"));
  EXPECT_THAT(std::string(up.message()),
              HasSubstr("launcher_test_app: told to fail"));
}

// One that sends no reports is waited for by nobody, but one that exited
// as it started is still named.
TEST_F(LauncherTest, OneWithoutReportsThatExitsAsItStartsIsNamed) {
  Launcher launcher(reports_loop_.get(), dir_);
  LaunchSpec recorder = App("recorder", "exit3");
  recorder.reports = false;
  ASSERT_TRUE(launcher.Start(recorder).ok());
  ASSERT_TRUE(launcher.Start(App("good")).ok());
  const absl::Status up = launcher.WaitUntilReporting(seconds(3600));
  ASSERT_FALSE(up.ok());
  EXPECT_THAT(std::string(up.message()),
              HasSubstr("recorder exited with status 3 as it started"));
}

// One that runs and never reports is named at the deadline.
TEST_F(LauncherTest, OneThatNeverReportsIsNamedAtTheDeadline) {
  Launcher launcher(reports_loop_.get(), dir_);
  ASSERT_TRUE(launcher.Start(App("mute", "silent")).ok());
  const absl::Status up = launcher.WaitUntilReporting(milliseconds(200));
  ASSERT_FALSE(up.ok());
  EXPECT_THAT(std::string(up.message()),
              HasSubstr("no timing report within 0.2 s from "
                        "mute"));
  // A program that sends no reports is ready as soon as it started.
  LaunchSpec quiet = App("quiet", "silent");
  quiet.reports = false;
  Launcher without_reports(reports_loop_.get(), dir_);
  ASSERT_TRUE(without_reports.Start(quiet).ok());
  EXPECT_TRUE(without_reports.WaitUntilReporting(milliseconds(1)).ok());
  // `silent` never set up its stop signals: SIGTERM's default ends it.
  const std::vector<Launcher::Stopped> stopped =
      without_reports.StopAll(kDeadline);
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped[0].status, -SIGTERM);
}

// One that ignores SIGTERM is killed after the stop time, and says so.
TEST_F(LauncherTest, OneThatIgnoresSigtermIsKilledAfterTheStopTime) {
  Launcher launcher(reports_loop_.get(), dir_);
  ASSERT_TRUE(launcher.Start(App("deaf", "deaf")).ok());
  ASSERT_TRUE(launcher.WaitUntilReporting(kDeadline).ok());
  const std::vector<Launcher::Stopped> stopped =
      launcher.StopAll(milliseconds(100));
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_TRUE(stopped[0].killed);
  EXPECT_EQ(stopped[0].status, -SIGKILL);
}

// What cannot be started is one error naming the application and why, and
// nothing runs.
TEST_F(LauncherTest, WhatCannotStartIsNamed) {
  Launcher launcher(reports_loop_.get(), dir_);
  LaunchSpec missing = App("ghost");
  missing.binary = dir_ + "/no_such_program";
  const absl::Status no_binary = launcher.Start(missing);
  EXPECT_THAT(std::string(no_binary.message()),
              HasSubstr("ghost: cannot run " + dir_ + "/no_such_program"));
  LaunchSpec elsewhere = App("abroad");
  elsewhere.network_namespace = "aos_no_such_namespace";
  const absl::Status no_namespace = launcher.Start(elsewhere);
  EXPECT_THAT(std::string(no_namespace.message()),
              HasSubstr("abroad: network namespace aos_no_such_namespace"));
  ASSERT_TRUE(launcher.Start(App("twice")).ok());
  EXPECT_THAT(std::string(launcher.Start(App("twice")).message()),
              HasSubstr("twice: already started"));
  EXPECT_THAT(Names(launcher.StopAll(kDeadline)), ElementsAre("twice"));
}

// A launcher that goes away stops what it started.
TEST_F(LauncherTest, DestroyingTheLauncherStopsItsApplications) {
  pid_t pid = -1;
  {
    Launcher launcher(reports_loop_.get(), dir_);
    ASSERT_TRUE(launcher.Start(App("brief")).ok());
    ASSERT_TRUE(launcher.WaitUntilReporting(kDeadline).ok());
    pid = launcher.Pid("brief");
    ASSERT_EQ(kill(pid, 0), 0);
  }
  // Reaped, so the pid names nothing of ours any more.
  EXPECT_NE(getpgid(pid), pid);
}

}  // namespace
}  // namespace aos::starter
