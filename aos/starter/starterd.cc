// starterd: a node's starter. Runs the applications the configuration
// gives this node, restarts those that stop by themselves, takes
// aos.starter.StarterRpc commands and publishes aos.starter.Status on /aos;
// on SIGTERM stops them in reverse start order. docs/starter.md.

#include <cstdio>
#include <fstream>

#include "aos/config_flag.h"
#include "aos/configuration_lookup.h"
#include "aos/events/shm_event_loop.h"
#include "aos/init.h"
#include "aos/node_flag.h"
#include "aos/starter/starter.h"
#include "aos/util/flag_checks.h"
#include "aos/util/str_cat.h"
#include "aos/util/user_error.h"
#include "gflags/gflags.h"

DEFINE_string(binary_dir, ".",
              "Where an application's relative executable_name (or its name) "
              "is looked for; a bare name not there is looked up in $PATH.");
DEFINE_string(lock_dir, "",
              "Where the applications' lock files go (default: "
              "--shm_base/starter).");
DEFINE_int32(restart_backoff_initial_ms, 100,
             "The wait before restarting an application that exited soon "
             "after its start; it doubles with each such exit in a row.");
DEFINE_int32(restart_backoff_max_ms, 10000,
             "The longest wait before restarting an application.");
DEFINE_int32(healthy_after_ms, 1000,
             "A run at least this long restarts at once and resets the "
             "backoff.");
DEFINE_int32(status_period_ms, 1000,
             "How often aos.starter.Status is sent (also soon after every "
             "change).");
DEFINE_string(statuses, "",
              "On exit, write how each application's last run ended as "
              "'NAME STATUS' lines to this file (STATUS: the exit code, or -N "
              "for signal N; applications that never ended are left out).");

namespace aos::starter {
namespace {

int Main() {
  ExitOnFlagError(CheckAtLeast("--restart_backoff_initial_ms",
                               FLAGS_restart_backoff_initial_ms, 1));
  ExitOnFlagError(CheckAtLeast("--restart_backoff_max_ms",
                               FLAGS_restart_backoff_max_ms,
                               FLAGS_restart_backoff_initial_ms,
                               " is below --restart_backoff_initial_ms"));
  ExitOnFlagError(
      CheckNotNegative("--healthy_after_ms", FLAGS_healthy_after_ms));
  ExitOnFlagError(
      CheckAtLeast("--status_period_ms", FLAGS_status_period_ms, 10));
  if (!FLAGS_statuses.empty()) {
    ExitOnFlagError(CheckWritableFile("--statuses", FLAGS_statuses));
  }
  auto config = ReadConfigFlag("aos/aos_config.json");
  if (!config.ok()) ExitForUserError(StrCat(config.status().message()));
  auto node = ReadNodeFlag(config->message());
  if (!node.ok()) ExitForUserError(StrCat(node.status().message()));
  // The starter's channels: what it sends on and reads from, named.
  for (const std::string_view type :
       {Status::GetFullyQualifiedName(), StarterRpc::GetFullyQualifiedName()}) {
    std::string why_not;
    if (configuration::GetChannel(
            config->message(), "/aos", type, "starter", *node, &why_not,
            type == Status::GetFullyQualifiedName()
                ? configuration::ChannelAccess::kSend
                : configuration::ChannelAccess::kRead) == nullptr) {
      ExitForUserError(StrCat("--config=", FLAGS_config, ": ", why_not,
                              " (import aos/aos.json, or add the starter's "
                              "channels as docs/starter.md shows)"));
    }
  }
  StarterOptions options;
  options.supervisor.backoff = {
      .initial = std::chrono::milliseconds(FLAGS_restart_backoff_initial_ms),
      .max = std::chrono::milliseconds(FLAGS_restart_backoff_max_ms),
      .healthy_after = std::chrono::milliseconds(FLAGS_healthy_after_ms)};
  options.supervisor.lock_dir =
      FLAGS_lock_dir.empty() ? StrCat(ShmBase(), "/starter") : FLAGS_lock_dir;
  options.binary_dir = FLAGS_binary_dir;
  options.config_path = FLAGS_config;
  options.status_period = std::chrono::milliseconds(FLAGS_status_period_ms);
  // The applications share our shared memory directory (ShmBase).
  setenv("AOS_SHM_BASE", ShmBase().c_str(), /*overwrite=*/1);
  ShmEventLoop loop(&config->message(), "starter", *node);
  Starter starter(&loop, &config->message(), *node, std::move(options));
  loop.Run();
  starter.StopAll();
  if (!FLAGS_statuses.empty()) {
    std::ofstream statuses(FLAGS_statuses);
    for (const std::string& line : starter.ExitLines()) statuses << line;
  }
  return 0;
}

}  // namespace
}  // namespace aos::starter

int main(int argc, char** argv) {
  aos::InitGoogle(
      &argc, &argv,
      "Usage: starterd [--config=FILE] [--node=NAME] [--shm_base=DIR]\n"
      "Runs the applications of this node's configuration (their name,\n"
      "executable_name, args, user, autostart, autorestart, stop_time),\n"
      "restarts those that stop by themselves (waiting longer after each\n"
      "quick exit in a row), takes aos_starter's commands\n"
      "(aos.starter.StarterRpc) and sends aos.starter.Status on /aos. On\n"
      "SIGTERM, SIGINT or SIGHUP it stops them in reverse start order\n"
      "(SIGTERM, then SIGKILL after stop_time); if it is killed, they are\n"
      "too. A changed --config file's applications are applied within\n"
      "--status_period_ms.\n"
      "  starterd --config=bazel-bin/examples/pingpong_config.json\n"
      "See docs/starter.md.");
  aos::RefuseArguments(argc, argv);
  return aos::starter::Main();
}
