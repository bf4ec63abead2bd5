#ifndef AOS_STARTER_SPAWN_H_
#define AOS_STARTER_SPAWN_H_

// Starting one program as a supervised child: in a process group of its
// own, killed when the thread that started it dies (PR_SET_PDEATHSIG),
// optionally in another network namespace and as another user, with no
// shell between (arguments reach it exactly as given). Whether exec itself
// worked is known when Spawn returns: a missing binary or a refused user
// switch is an error, not a child that exits 127 later.
//
//   SpawnOptions options{.binary = "/usr/bin/pong", .args = {"--x=a b"}};
//   absl::StatusOr<pid_t> pid = Spawn(options);
//   if (!pid.ok()) LOG(ERROR) << pid.status();  // "cannot run ...: ..."
//
// The child's signal mask is cleared (a loop's blocked stop signals and a
// starter's blocked SIGCHLD are not the child's). Its parent reaps it.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace aos::starter {

// Who to run a child as: resolved by the caller (ResolveUser) so the
// forked child needs no lookups.
struct RunAs {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  // Its supplementary groups.
  std::vector<gid_t> groups;
};

// The user called `name`, with its groups; an error naming it if there is
// no such user.
absl::StatusOr<RunAs> ResolveUser(const std::string& name);

struct SpawnOptions {
  // The program: a path (with a '/') is run as is, a bare name is looked up
  // in $PATH.
  std::string binary;
  // Its arguments, without argv[0] (which is `binary`).
  std::vector<std::string> args;
  // The child's stdout and stderr: these descriptors (the caller keeps
  // them), or ours where -1.
  int stdout_fd = -1;
  int stderr_fd = -1;
  // An open /run/netns/NAME to enter, or -1 to stay in ours.
  int network_namespace_fd = -1;
  // Another user to run as (needs root), or ours.
  std::optional<RunAs> run_as;
  // A descriptor the child keeps open across exec (a lock it holds for as
  // long as it lives), or -1.
  int inherited_fd = -1;
  // An open cgroup.procs the child joins (writes "0" to) before exec
  // (memory_limit.h), or -1.
  int cgroup_procs_fd = -1;
};

// Forks and execs `options`; the child's pid once exec succeeded. An error
// saying which step failed and why otherwise (nothing runs then).
absl::StatusOr<pid_t> Spawn(const SpawnOptions& options);

// How StopProcessGroup ended a child.
struct StoppedProcess {
  // waitpid's status (aos/util/exit_code.h reads it).
  int wait_status = 0;
  // Whether it ignored SIGTERM for the whole stop time and got SIGKILL.
  bool killed = false;
};

// Stops the child `pid` that Spawn started (not yet reaped), blocking:
// SIGTERM to its process group, up to `stop_time` for it to exit, then
// SIGKILL; reaps it.
StoppedProcess StopProcessGroup(pid_t pid, std::chrono::nanoseconds stop_time);

}  // namespace aos::starter

#endif  // AOS_STARTER_SPAWN_H_
