// aos_launch: starts a node's applications, waits for each one's first
// timing report, runs a command in the foreground (a streamer), then stops
// the applications in reverse order. docs/aos_launch.md.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "aos/config_flag.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/node_flag.h"
#include "aos/starter/launcher.h"
#include "aos/util/exit_code.h"
#include "aos/util/flag_checks.h"
#include "aos/util/printable.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(output_dir, "",
              "Write each application's stdout and stderr to NAME.out and "
              "NAME.err in this directory (default: ours).");
DEFINE_double(ready_timeout_s, 60,
              "How long every application has to send its first timing "
              "report (seconds, > 0).");
DEFINE_double(stop_time_s, 5,
              "How long each application has to exit after SIGTERM before it "
              "is killed (seconds, >= 0).");
DEFINE_string(no_reports, "",
              "Comma-separated NAMEs of applications that send no timing "
              "reports (a recorder): ready once started.");
DEFINE_string(statuses, "",
              "Write each application's exit as 'NAME STATUS' lines to this "
              "file (STATUS: the exit code, or -N for signal N).");

extern char** environ;

namespace aos::starter {
namespace {

// The foreground command while it runs, and whether a stop signal came.
volatile sig_atomic_t foreground_pid = 0;
volatile sig_atomic_t stop_requested = 0;

// SIGTERM and SIGHUP are passed on to the foreground command; SIGINT is not
// (a terminal's Ctrl-C reached it already, as one of our group).
extern "C" void OnStopSignal(int signal) {
  stop_requested = 1;
  if (signal != SIGINT && foreground_pid > 0) kill(foreground_pid, signal);
}

// The applications and the foreground command, from the arguments after
// the flags: NAME[@NAMESPACE] BINARY [ARGS...] [:: ...] [::: COMMAND ...].
struct Plan {
  std::vector<LaunchSpec> applications;
  std::vector<std::string> foreground;
};

Plan ReadPlan(int argc, char** argv) {
  Plan plan;
  const std::vector<std::string> quiet_list =
      absl::StrSplit(FLAGS_no_reports, ',', absl::SkipEmpty());
  std::set<std::string> quiet(quiet_list.begin(), quiet_list.end());
  std::vector<std::string> group;
  auto finish = [&]() {
    if (group.empty()) ExitForUserError("an empty application between '::'s");
    if (group.size() < 2) {
      ExitForUserError(StrCat("application '", InlinePrintable(group[0]),
                              "': give NAME BINARY [ARGS...]"));
    }
    LaunchSpec spec;
    const size_t at = group[0].find('@');
    spec.name = group[0].substr(0, at);
    if (at != std::string::npos)
      spec.network_namespace = group[0].substr(at + 1);
    if (spec.name.empty()) {
      ExitForUserError(StrCat("application '", InlinePrintable(group[0]),
                              "': its NAME is empty"));
    }
    for (const LaunchSpec& earlier : plan.applications) {
      if (earlier.name == spec.name) {
        ExitForUserError(StrCat("application ", InlinePrintable(spec.name),
                                " is given twice"));
      }
    }
    spec.binary = group[1];
    spec.args.assign(group.begin() + 2, group.end());
    spec.reports = quiet.erase(spec.name) == 0;
    plan.applications.push_back(std::move(spec));
    group.clear();
  };
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == ":::") break;
    if (arg == "::") {
      finish();
      continue;
    }
    group.emplace_back(arg);
  }
  if (!group.empty()) finish();
  for (++i; i < argc; ++i) plan.foreground.emplace_back(argv[i]);
  if (plan.applications.empty()) {
    ExitForUserError(
        "give at least one application: NAME BINARY [ARGS...] (see --help)");
  }
  if (!quiet.empty()) {
    ExitForUserError(StrCat("--no_reports: no application is called ",
                            InlinePrintable(*quiet.begin())));
  }
  return plan;
}

// Runs `command` in our process group (a terminal's Ctrl-C reaches it) and
// returns its exit status (-N for signal N), while SIGINT, SIGTERM and
// SIGHUP to us are passed on to it.
int RunForeground(const std::vector<std::string>& command) {
  std::vector<std::string> strings = command;
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int error =
      posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  if (error != 0) {
    fprintf(stderr, "aos_launch: cannot run %s: %s\n",
            InlinePrintable(command[0]).c_str(), strerror(error));
    return 127;
  }
  foreground_pid = pid;
  // A stop signal that came while the applications started.
  if (stop_requested) kill(pid, SIGTERM);
  // The terminal's Ctrl-C goes to the whole group: it stops the command,
  // and we go on to stop the applications after it.
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) break;
  }
  foreground_pid = 0;
  return ExitCodeOf(status);
}

// Until SIGINT, SIGTERM or SIGHUP (at once if one came already).
void WaitForAStopSignal() {
  sigset_t stop, before;
  sigemptyset(&stop);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop, signal);
  sigprocmask(SIG_BLOCK, &stop, &before);
  while (!stop_requested) sigsuspend(&before);
  sigprocmask(SIG_SETMASK, &before, nullptr);
}

int Main(int argc, char** argv) {
  ExitOnFlagError(CheckAtLeast("--ready_timeout_s", FLAGS_ready_timeout_s,
                               0.001, " is too short: give a time > 0"));
  ExitOnFlagError(CheckNotNegative("--stop_time_s", FLAGS_stop_time_s));
  const Plan plan = ReadPlan(argc, argv);
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) ExitForUserError(StrCat(config.status().message()));
  auto node = ReadNodeFlag(config->message());
  if (!node.ok()) ExitForUserError(StrCat(node.status().message()));
  ShmEventLoop reports(&config->message(), "aos_launch", *node);
  // A stop signal never ends us before the applications are stopped.
  struct sigaction on_stop = {};
  on_stop.sa_handler = OnStopSignal;
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    sigaction(signal, &on_stop, nullptr);
  }
  Launcher launcher(&reports, FLAGS_output_dir);
  int status = 0;
  for (const LaunchSpec& spec : plan.applications) {
    const absl::Status started = launcher.Start(spec);
    if (!started.ok()) {
      fprintf(stderr, "aos_launch: %s\n",
              std::string(started.message()).c_str());
      status = 1;
      break;
    }
  }
  if (status == 0) {
    const absl::Status ready = launcher.WaitUntilReporting(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::duration<double>(FLAGS_ready_timeout_s)));
    if (!ready.ok()) {
      fprintf(stderr, "aos_launch: %s; nothing was measured\n",
              std::string(ready.message()).c_str());
      status = 1;
    }
  }
  if (status == 0 && !stop_requested) {
    if (plan.foreground.empty()) {
      std::string names;
      for (const LaunchSpec& spec : plan.applications) {
        StrAppend(&names, names.empty() ? "" : ", ", spec.name);
      }
      fprintf(stderr,
              "aos_launch: %s running; stopped by SIGINT, SIGTERM or "
              "SIGHUP\n",
              names.c_str());
      WaitForAStopSignal();
    } else {
      const int foreground = RunForeground(plan.foreground);
      // Ended by the stop signal it was given: as asked.
      const bool asked =
          stop_requested && (foreground == -SIGINT || foreground == -SIGTERM ||
                             foreground == -SIGHUP);
      if (foreground != 0 && !asked) {
        fprintf(stderr, "aos_launch: %s %s\n",
                InlinePrintable(plan.foreground[0]).c_str(),
                DescribeExit(foreground).c_str());
        status = 1;
      }
    }
  }
  const std::vector<Launcher::Stopped> stopped =
      launcher.StopAll(std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double>(FLAGS_stop_time_s)));
  std::ofstream statuses;
  if (!FLAGS_statuses.empty()) statuses.open(FLAGS_statuses);
  for (const Launcher::Stopped& fate : stopped) {
    if (statuses.is_open()) statuses << fate.name << " " << fate.status << "\n";
    // A stop signal's own exit is a clean one for a program that takes it
    // as the end (the default action of SIGTERM).
    if (fate.status == 0 || fate.status == -SIGTERM) continue;
    fprintf(stderr, "aos_launch: %s %s%s\n", fate.name.c_str(),
            DescribeExit(fate.status).c_str(),
            fate.killed ? " (it ignored SIGTERM for --stop_time_s)" : "");
    status = 1;
  }
  return status;
}

}  // namespace
}  // namespace aos::starter

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: aos_launch [--config=FILE] [--node=NAME] [--shm_base=DIR] --\n"
      "           NAME[@NETNS] BINARY [ARGS...] [:: NAME BINARY ...]...\n"
      "           [::: COMMAND [ARGS...]]\n"
      "Starts each application in order (in its own process group; in\n"
      "network namespace NETNS if given), waits until each has sent a\n"
      "timing report named NAME on /aos, then runs COMMAND in the\n"
      "foreground (or waits for Ctrl-C), then stops the applications in\n"
      "reverse order: SIGTERM, then SIGKILL after --stop_time_s. Exits 1,\n"
      "naming it, if one cannot start, dies or stays silent while\n"
      "starting, or exits with a failure; else 0.\n"
      "  aos_launch --config=bazel-bin/examples/pingpong_config.json -- \\\n"
      "      pong bazel-bin/examples/pong :: ping bazel-bin/examples/ping \\\n"
      "      ::: bazel-bin/aos/tools/aos_timing_report_streamer "
      "--duration=5\n"
      "See docs/aos_launch.md.");
  return aos::starter::Main(argc, argv);
}
