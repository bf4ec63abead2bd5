#include "aos/starter/spawn.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"

namespace aos::starter {
namespace {

// The step of the child's setup that failed, sent to the parent with its
// errno.
enum class Step : int {
  kNetworkNamespace,
  kCgroup,
  kOutput,
  kGroups,
  kUser,
  kExec,
};

std::string_view StepName(Step step) {
  switch (step) {
    case Step::kNetworkNamespace:
      return "cannot enter its network namespace";
    case Step::kCgroup:
      return "cannot join its memory cgroup";
    case Step::kOutput:
      return "cannot redirect its output";
    case Step::kGroups:
      return "cannot set its groups";
    case Step::kUser:
      return "cannot switch user";
    case Step::kExec:
      return "cannot run";
  }
  return "cannot start";
}

struct Failure {
  Step step;
  int error;
};

// In the forked child: tells the parent which step failed (with errno)
// and exits.
[[noreturn]] void FailStep(int report_fd, Step step) {
  const Failure failure{step, errno};
  // Best effort: the parent reads it, or sees status 127.
  const ssize_t written = write(report_fd, &failure, sizeof(failure));
  (void)written;
  _exit(127);
}

// In the forked child: only async-signal-safe calls; never returns.
[[noreturn]] void ExecChild(const SpawnOptions& options,
                            const std::vector<char*>& argv, int report_fd,
                            pid_t parent) {
  // Its own process group: a signal for the group reaches all of it, a
  // terminal's Ctrl-C does not.
  setpgid(0, 0);
  if (options.network_namespace_fd >= 0 &&
      setns(options.network_namespace_fd, CLONE_NEWNET) != 0) {
    FailStep(report_fd, Step::kNetworkNamespace);
  }
  if (options.cgroup_procs_fd >= 0 &&
      write(options.cgroup_procs_fd, "0", 1) != 1) {
    FailStep(report_fd, Step::kCgroup);
  }
  if ((options.stdout_fd >= 0 && dup2(options.stdout_fd, STDOUT_FILENO) < 0) ||
      (options.stderr_fd >= 0 && dup2(options.stderr_fd, STDERR_FILENO) < 0)) {
    FailStep(report_fd, Step::kOutput);
  }
  if (options.run_as.has_value()) {
    const RunAs& user = *options.run_as;
    if (setgroups(user.groups.size(), user.groups.data()) != 0 ||
        setgid(user.gid) != 0) {
      FailStep(report_fd, Step::kGroups);
    }
    if (setuid(user.uid) != 0) FailStep(report_fd, Step::kUser);
  }
  // After the user switch, which clears it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent died before the prctl took effect.
  if (getppid() != parent) _exit(127);
  if (options.inherited_fd >= 0) {
    const int flags = fcntl(options.inherited_fd, F_GETFD);
    if (flags >= 0) fcntl(options.inherited_fd, F_SETFD, flags & ~FD_CLOEXEC);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execvp(argv[0], argv.data());
  FailStep(report_fd, Step::kExec);
}

}  // namespace

StoppedProcess StopProcessGroup(pid_t pid, std::chrono::nanoseconds stop_time) {
  StoppedProcess stopped;
  kill(-pid, SIGTERM);
  const auto end = std::chrono::steady_clock::now() + stop_time;
  pid_t got;
  while ((got = waitpid(pid, &stopped.wait_status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (got == 0) {
    kill(-pid, SIGKILL);
    stopped.killed = true;
    while (waitpid(pid, &stopped.wait_status, 0) < 0 && errno == EINTR) {
    }
  }
  return stopped;
}

absl::StatusOr<RunAs> ResolveUser(const std::string& name) {
  struct passwd entry;
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  const int error =
      getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (found == nullptr) {
    return absl::NotFoundError(
        StrCat("user '", name, "' does not exist",
               error == 0 ? "" : StrCat(" (", strerror(error), ")")));
  }
  RunAs user;
  user.name = name;
  user.uid = found->pw_uid;
  user.gid = found->pw_gid;
  int count = 64;
  user.groups.resize(count);
  if (getgrouplist(name.c_str(), user.gid, user.groups.data(), &count) < 0) {
    user.groups.resize(count);
    getgrouplist(name.c_str(), user.gid, user.groups.data(), &count);
  }
  user.groups.resize(count);
  return user;
}

absl::StatusOr<pid_t> Spawn(const SpawnOptions& options) {
  std::vector<std::string> strings;
  strings.push_back(options.binary);
  strings.insert(strings.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  int report_pipe[2];
  if (pipe2(report_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(StrCat("pipe: ", strerror(errno)));
  }
  ScopedFd report_read(report_pipe[0]);
  ScopedFd report_write(report_pipe[1]);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    return absl::ResourceExhaustedError(StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) ExecChild(options, argv, report_write.get(), parent);
  // Also here, so that a signal to the group right after Spawn reaches it.
  setpgid(pid, pid);
  // Only the child's copy is left: the read below ends when it execs.
  report_write.reset();
  Failure failure;
  ssize_t got;
  do {
    got = read(report_read.get(), &failure, sizeof(failure));
  } while (got < 0 && errno == EINTR);
  if (got != sizeof(failure)) return pid;
  int ignored;
  while (waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
  }
  std::string what(StepName(failure.step));
  if (failure.step == Step::kExec) StrAppend(&what, " ", options.binary);
  if (failure.step == Step::kUser || failure.step == Step::kGroups) {
    StrAppend(&what, " to '", options.run_as->name, "'");
  }
  return absl::FailedPreconditionError(
      StrCat(what, ": ", strerror(failure.error)));
}

}  // namespace aos::starter
