// The starter with real processes (launcher_test_app) on a test shared
// memory base: what starterd does, from its status and its commands.

#include "aos/starter/starter.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "aos/configuration.h"
#include "aos/events/shm_event_loop.h"
#include "aos/starter/memory_limit.h"
#include "aos/testing/path.h"
#include "aos/testing/wait_until.h"
#include "aos/util/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::starter {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// Generous: only a wait that would hang ends at it.
constexpr auto kDeadline = seconds(60);

// One application of the test config: the test app called `name`,
// changed by the setters.
struct App {
  explicit App(std::string app_name) : name(std::move(app_name)) {}
  App& Behaving(std::string how) {
    behaviour = std::move(how);
    return *this;
  }
  App& NoAutostart() {
    autostart = false;
    return *this;
  }
  App& As(std::string user_name) {
    user = std::move(user_name);
    return *this;
  }
  App& Running(std::string binary) {
    executable = std::move(binary);
    return *this;
  }
  App& Limited(uint64_t bytes) {
    memory_limit = bytes;
    return *this;
  }
  App& With(std::vector<std::string> args) {
    extra_args = std::move(args);
    return *this;
  }

  std::string name;
  std::string behaviour = "run";
  bool autostart = true;
  std::string user;
  std::string executable;
  std::vector<std::string> extra_args;
  uint64_t memory_limit = 0;
};

class StarterTest : public ::testing::Test {
 protected:
  StarterTest()
      : dir_(testing::TestTempDir()),
        shm_base_(dir_ + "/shm"),
        config_path_(dir_ + "/starter_test.json") {
    FLAGS_shm_base = shm_base_;
    options_.supervisor.lock_dir = dir_ + "/locks";
    options_.supervisor.backoff = {.initial = milliseconds(1),
                                   .max = milliseconds(2),
                                   .healthy_after = seconds(1)};
    options_.config_path = config_path_;
    options_.status_period = milliseconds(50);
  }

  ~StarterTest() override { StopStarter(); }

  std::string Json(const std::vector<App>& apps) {
    std::string applications;
    for (const App& app : apps) {
      std::string args =
          StrCat("\"--config=", config_path_, "\", \"--shm_base=", shm_base_,
                 "\", \"--name=", app.name, "\", \"--behaviour=", app.behaviour,
                 "\", \"--timing_report_ms=50\"");
      for (const std::string& arg : app.extra_args) {
        StrAppend(&args, ", \"", arg, "\"");
      }
      StrAppend(
          &applications, applications.empty() ? "" : ",\n", "{\"name\": \"",
          app.name, "\", \"executable_name\": \"",
          app.executable.empty()
              ? testing::ArtifactPath("aos/starter/launcher_test_app")
              : app.executable,
          "\", \"autostart\": ", app.autostart ? "true" : "false",
          app.user.empty() ? "" : StrCat(", \"user\": \"", app.user, "\""),
          app.memory_limit == 0
              ? ""
              : StrCat(", \"memory_limit\": ", app.memory_limit),
          ", \"stop_time\": 2000000000, \"args\": [", args, "]}");
    }
    return StrCat("{\"imports\": [\"",
                  testing::ArtifactPath("aos/testing/test_config.json"),
                  "\"],\n\"applications\": [", applications, "]}\n");
  }

  void WriteConfig(const std::vector<App>& apps) {
    // Written aside and renamed, so the starter never reads half a file.
    const std::string staged = config_path_ + ".new";
    std::ofstream(staged) << Json(apps);
    ASSERT_EQ(rename(staged.c_str(), config_path_.c_str()), 0);
  }

  // Runs a Starter over the config written last, in a thread of its own
  // (which also stops it: children die with the thread that forked them).
  void StartStarter() {
    absl::StatusOr<FlatbufferDetachedBuffer<Configuration>> config =
        configuration::ReadConfig(config_path_);
    ASSERT_TRUE(config.ok()) << config.status();
    config_.emplace(std::move(config).value());
    std::promise<ShmEventLoop*> running;
    std::future<ShmEventLoop*> loop = running.get_future();
    starter_thread_ = std::thread([this, &running]() {
      ShmEventLoop starter_loop(&config_->message(), "starter");
      Starter starter(&starter_loop, &config_->message(), nullptr, options_);
      starter_ = &starter;
      running.set_value(&starter_loop);
      starter_loop.Run();
      starter.StopAll();
      starter_ = nullptr;
    });
    starter_loop_ = loop.get();
    observer_.emplace(&config_->message(), "starter_test");
    statuses_.emplace(observer_->MakeFetcher<Status>("/aos"));
    commands_.emplace(observer_->MakeSender<StarterRpc>("/aos"));
  }

  void StopStarter() {
    if (!starter_thread_.joinable()) return;
    starter_loop_->Exit();
    starter_thread_.join();
  }

  // Waits for a status in which `name`'s entry satisfies `pred`; returns a
  // copy of that entry.
  ApplicationStatusT WaitFor(
      const std::string& name,
      const std::function<bool(const ApplicationStatusT&)>& pred,
      std::string_view what) {
    ApplicationStatusT found;
    EXPECT_TRUE(testing::WaitUntil(
        [&]() {
          while (statuses_->FetchNext()) {
            const Status* status = statuses_->get();
            if (status->statuses() == nullptr) continue;
            for (const ApplicationStatus* application : *status->statuses()) {
              if (application->name()->string_view() != name) continue;
              ApplicationStatusT entry;
              application->UnPackTo(&entry);
              if (pred(entry)) {
                found = std::move(entry);
                return true;
              }
            }
          }
          return false;
        },
        kDeadline, StrCat(name, ": ", what)));
    return found;
  }

  // Whether the newest status lists `name`.
  bool Listed(const std::string& name) {
    statuses_->Fetch();
    if (statuses_->get() == nullptr) return false;
    for (const ApplicationStatus* application : *statuses_->get()->statuses()) {
      if (application->name()->string_view() == name) return true;
    }
    return false;
  }

  void Send(Command command, const std::string& name) {
    Sender<StarterRpc>::Builder builder = commands_->MakeBuilder();
    const auto name_offset = builder.fbb()->CreateString(name);
    StarterRpc::Builder rpc(*builder.fbb());
    rpc.add_command(command);
    rpc.add_name(name_offset);
    ASSERT_EQ(builder.Send(rpc.Finish()), RawSender::Error::kOk);
  }

  static bool Running(const ApplicationStatusT& s) {
    return s.state == State::RUNNING;
  }

  // Whether process `pid` is gone (reaped).
  static bool Gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

  const std::string dir_;
  const std::string shm_base_;
  const std::string config_path_;
  StarterOptions options_;
  std::optional<FlatbufferDetachedBuffer<Configuration>> config_;
  std::thread starter_thread_;
  ShmEventLoop* starter_loop_ = nullptr;
  Starter* starter_ = nullptr;
  std::optional<ShmEventLoop> observer_;
  std::optional<Fetcher<Status>> statuses_;
  std::optional<Sender<StarterRpc>> commands_;
};

TEST_F(StarterTest, StartsAutostartApplicationsAndSaysSo) {
  WriteConfig({App("pong"), App("idle").NoAutostart()});
  StartStarter();
  const ApplicationStatusT pong = WaitFor(
      "pong",
      [](const ApplicationStatusT& s) {
        return s.state == State::RUNNING && s.has_active_timing_report &&
               s.process_info != nullptr;
      },
      "running, reporting, with its process's usage");
  EXPECT_GT(pong.pid, 0u);
  EXPECT_EQ(pong.id, 1u);
  EXPECT_EQ(pong.restarts, 0u);
  EXPECT_EQ(pong.process_info->pid, pong.pid);
  EXPECT_GT(pong.process_info->physical_memory, 0u);
  const ApplicationStatusT idle = WaitFor(
      "idle", [](const ApplicationStatusT&) { return true; }, "listed");
  EXPECT_EQ(idle.state, State::STOPPED);
  EXPECT_EQ(idle.id, 0u);
  EXPECT_EQ(idle.pid, 0u);
}

// The test: kill -9 it 200 times in a row; every time it is
// restarted, and the status counts every restart.
TEST_F(StarterTest, KilledTwoHundredTimesIsRestartedEveryTime) {
  WriteConfig({App("pong")});
  StartStarter();
  std::set<uint32_t> pids;
  for (uint64_t run = 1; run <= 200; ++run) {
    const ApplicationStatusT status = WaitFor(
        "pong",
        [run](const ApplicationStatusT& s) {
          return s.state == State::RUNNING && s.id == run;
        },
        StrCat("run ", run));
    ASSERT_EQ(status.id, run);
    ASSERT_EQ(status.restarts, run - 1);
    pids.insert(status.pid);
    ASSERT_EQ(kill(status.pid, SIGKILL), 0);
  }
  const ApplicationStatusT last = WaitFor(
      "pong",
      [](const ApplicationStatusT& s) {
        return s.state == State::RUNNING && s.id == 201;
      },
      "run 201");
  EXPECT_EQ(last.restarts, 200u);
  EXPECT_EQ(last.last_exit_signal, SIGKILL);
  EXPECT_EQ(last.last_stop_reason, LastStopReason::CRASH);
  EXPECT_EQ(pids.size(), 200u);
}

TEST_F(StarterTest, StopStartAndRestartByCommand) {
  WriteConfig({App("pong")});
  StartStarter();
  const ApplicationStatusT first = WaitFor("pong", Running, "running");
  Send(Command::STOP, "pong");
  const ApplicationStatusT stopped = WaitFor(
      "pong",
      [](const ApplicationStatusT& s) { return s.state == State::STOPPED; },
      "stopped");
  EXPECT_EQ(stopped.last_stop_reason, LastStopReason::STOP_REQUESTED);
  EXPECT_EQ(stopped.pid, 0u);
  EXPECT_TRUE(Gone(first.pid));
  Send(Command::START, "pong");
  const ApplicationStatusT second = WaitFor(
      "pong",
      [](const ApplicationStatusT& s) {
        return s.state == State::RUNNING && s.id == 2;
      },
      "started again");
  Send(Command::RESTART, "pong");
  const ApplicationStatusT third = WaitFor(
      "pong",
      [](const ApplicationStatusT& s) {
        return s.state == State::RUNNING && s.id == 3;
      },
      "restarted");
  EXPECT_EQ(third.last_stop_reason, LastStopReason::RESTART_REQUESTED);
  EXPECT_NE(third.pid, second.pid);
  EXPECT_TRUE(Gone(second.pid));
  // Commands are not restarts.
  EXPECT_EQ(third.restarts, 0u);
}

// A program that exits at once is started less and less often: never a
// fork storm. The bound is what the backoff allows in the time that
// passed (a slow machine starts it fewer times, never more).
TEST_F(StarterTest, AnApplicationThatExitsAtOnceBacksOff) {
  options_.supervisor.backoff = {.initial = milliseconds(20),
                                 .max = milliseconds(160),
                                 .healthy_after = seconds(1)};
  WriteConfig({App("crasher").Behaving("exit3")});
  const auto begin = std::chrono::steady_clock::now();
  StartStarter();
  const ApplicationStatusT status = WaitFor(
      "crasher",
      [](const ApplicationStatusT& s) {
        return s.state == State::WAITING && s.id >= 6;
      },
      "six quick exits");
  const auto elapsed = std::chrono::steady_clock::now() - begin;
  EXPECT_EQ(status.last_exit_code, 3);
  EXPECT_EQ(status.last_stop_reason, LastStopReason::CRASH);
  EXPECT_THAT(status.message,
              HasSubstr("exited with status 3 within 1 s of its start"));
  EXPECT_THAT(status.message, HasSubstr("times in a row: next start in"));
  EXPECT_GT(status.next_start_time, 0);
  // Starts the backoff allows by `elapsed`: the first, then one after each
  // wait of 20, 40, 80, 160, 160, ... ms.
  uint64_t allowed = 1;
  auto waited = std::chrono::steady_clock::duration(0);
  for (auto wait = milliseconds(20); waited + wait <= elapsed;
       wait = std::min(wait * 2, milliseconds(160))) {
    waited += wait;
    ++allowed;
  }
  EXPECT_LE(status.id, allowed);
}

TEST_F(StarterTest, AMissingExecutableIsNamed) {
  WriteConfig({App("ghost").Running("/nonexistent/ghost")});
  StartStarter();
  const ApplicationStatusT status = WaitFor(
      "ghost",
      [](const ApplicationStatusT& s) {
        return s.last_stop_reason == LastStopReason::EXECV_ERR;
      },
      "exec failed");
  EXPECT_NE(status.state, State::RUNNING);
  EXPECT_THAT(status.message,
              HasSubstr("cannot run /nonexistent/ghost: No such file or "
                        "directory"));
}

TEST_F(StarterTest, AUserThatDoesNotExistIsNamedAndTheRestRun) {
  WriteConfig({App("pong"), App("stranger").As("aos_no_such_user")});
  StartStarter();
  const ApplicationStatusT status = WaitFor(
      "stranger",
      [](const ApplicationStatusT& s) {
        return s.last_stop_reason == LastStopReason::ERR_BAD_USER;
      },
      "refused for its user");
  EXPECT_EQ(status.state, State::STOPPED);
  EXPECT_EQ(status.id, 0u);
  EXPECT_THAT(status.message,
              HasSubstr("user 'aos_no_such_user' does not exist"));
  WaitFor("pong", Running, "running");
}

TEST_F(StarterTest, ArgumentsReachTheProgramExactly) {
  const std::string args_file = dir_ + "/args";
  const std::vector<std::string> tricky = {
      "two words", "a \\\"quoted\\\" one", "it's", "$HOME", "*", ""};
  App app = App("pong").With(tricky);
  app.extra_args.push_back(StrCat("--write_args=", args_file));
  WriteConfig({app});
  StartStarter();
  WaitFor("pong", Running, "running");
  std::vector<std::string> got;
  ASSERT_TRUE(testing::WaitUntil(
      [&]() {
        std::ifstream in(args_file);
        got.clear();
        for (std::string line; std::getline(in, line);) got.push_back(line);
        return got.size() >= 6 + 5;
      },
      kDeadline, "the arguments written"));
  const std::vector<std::string> expected = {
      "two words", "a \"quoted\" one", "it's", "$HOME", "*", ""};
  // After the five flags every test app gets.
  EXPECT_EQ(std::vector<std::string>(got.begin() + 5, got.begin() + 11),
            expected);
}

TEST_F(StarterTest, AnApplicationRemovedFromTheConfigIsStopped) {
  WriteConfig({App("pong"), App("ping")});
  StartStarter();
  const ApplicationStatusT ping = WaitFor("ping", Running, "running");
  const ApplicationStatusT pong = WaitFor("pong", Running, "running");
  WriteConfig({App("pong"), App("newcomer")});
  WaitFor("newcomer", Running, "started once added");
  ASSERT_TRUE(testing::WaitUntil([&]() { return !Listed("ping"); }, kDeadline,
                                 "ping gone from the status"));
  EXPECT_TRUE(Gone(ping.pid));
  // Untouched.
  const ApplicationStatusT still = WaitFor("pong", Running, "running");
  EXPECT_EQ(still.id, pong.id);
  EXPECT_EQ(still.pid, pong.pid);
}

// A copy still running (its lock held) is not started a second time: the
// case of a starter restarted while its old child still exits.
TEST_F(StarterTest, ACopyStillRunningIsNotStartedTwice) {
  WriteConfig({App("pong")});
  StartStarter();
  const ApplicationStatusT running = WaitFor("pong", Running, "running");
  std::vector<ApplicationSpec> specs =
      ApplicationsOf(config_->message(), nullptr, "");
  ASSERT_EQ(specs.size(), 1u);
  SupervisedApplication second(specs[0], &options_.supervisor);
  second.Start(monotonic_clock::now());
  EXPECT_EQ(second.state(), State::WAITING);
  EXPECT_EQ(second.pid(), 0);
  EXPECT_THAT(second.message(),
              HasSubstr(StrCat("a copy started earlier (pid ", running.pid)));
  StopStarter();
  // Once the first copy is gone, it starts.
  ASSERT_TRUE(testing::WaitUntil(
      [&]() {
        second.Tick(monotonic_clock::now() + seconds(1));
        return second.state() == State::RUNNING;
      },
      kDeadline, "the second copy starting once the first exited"));
  second.StopNow();
  EXPECT_EQ(second.state(), State::STOPPED);
}

TEST_F(StarterTest, StopAllStopsInReverseStartOrder) {
  const std::string order_file = dir_ + "/stopped";
  const std::string append = StrCat("--on_stop_append=", order_file);
  // Sorted by name in the config, started in that order.
  WriteConfig({App("a").With({append}), App("b").With({append}),
               App("c").With({append})});
  StartStarter();
  const pid_t a = WaitFor("a", Running, "running").pid;
  const pid_t b = WaitFor("b", Running, "running").pid;
  const pid_t c = WaitFor("c", Running, "running").pid;
  StopStarter();
  EXPECT_TRUE(Gone(a));
  EXPECT_TRUE(Gone(b));
  EXPECT_TRUE(Gone(c));
  std::ifstream in(order_file);
  std::stringstream order;
  order << in.rdbuf();
  EXPECT_EQ(order.str(), "c\nb\na\n");
}

// memory_limit, as AOS applies it: a memory cgroup per application. One
// that stays under its limit runs in its cgroup; one that goes over is
// killed by the kernel and restarted as any crash.
TEST_F(StarterTest, AMemoryLimitIsACgroupTheKernelEnforces) {
  if (geteuid() != 0) GTEST_SKIP() << "making memory cgroups needs root";
  absl::StatusOr<MemoryLimit> probe = MemoryLimit::Apply("probe", 1 << 30);
  if (!probe.ok()) {
    GTEST_SKIP() << "no memory cgroup to make here: " << probe.status();
  }
  rmdir(probe->directory().c_str());
  WriteConfig({App("capped").Limited(256 << 20),
               App("hog").Behaving("hog").Limited(64 << 20)});
  StartStarter();
  const ApplicationStatusT capped = WaitFor("capped", Running, "running");
  std::ifstream procs(
      StrCat(std::filesystem::path(probe->directory()).parent_path().string(),
             "/aos_capped/cgroup.procs"));
  std::set<uint32_t> members;
  for (uint32_t pid; procs >> pid;) members.insert(pid);
  EXPECT_TRUE(members.contains(capped.pid)) << "capped's pid " << capped.pid;
  const ApplicationStatusT hog = WaitFor(
      "hog",
      [](const ApplicationStatusT& s) {
        return s.last_stop_reason == LastStopReason::CRASH;
      },
      "killed over its limit");
  EXPECT_EQ(hog.last_exit_signal, SIGKILL);
  StopStarter();
  // Empty once their processes are gone: leave the machine as it was.
  const std::string hierarchy =
      std::filesystem::path(probe->directory()).parent_path().string();
  rmdir(StrCat(hierarchy, "/aos_capped").c_str());
  rmdir(StrCat(hierarchy, "/aos_hog").c_str());
}

}  // namespace
}  // namespace aos::starter
