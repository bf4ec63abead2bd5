#include "aos/ipc_lib/bounded_wait.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "aos/util/scoped_fd.h"
#include "aos/util/str_cat.h"

namespace aos::ipc_lib::testing {
namespace {

// Whether `child` ends (or already has) within kHangLimit. Leaves it to be
// reaped. Errors (no such child) count as ended: waitpid then says what.
bool EndsWithinLimit(pid_t child) {
  // A pidfd becomes readable when the process ends: no polling.
  const ScopedFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, child, 0)));
  if (pidfd.valid()) {
    pollfd poll_fd{pidfd.get(), POLLIN, 0};
    const int timeout_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(kHangLimit)
            .count());
    int ready;
    while ((ready = poll(&poll_fd, 1, timeout_ms)) < 0 && errno == EINTR) {
    }
    return ready != 0;
  }
  // No pidfds (before Linux 5.3): look every millisecond.
  const HangGuard guard;
  while (true) {
    siginfo_t info;
    info.si_pid = 0;
    if (waitid(P_PID, static_cast<id_t>(child), &info,
               WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != 0) {
      return true;
    }
    if (guard.Expired()) return false;
    usleep(1000);
  }
}

}  // namespace

pid_t ForkTestChild() {
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent may have died before the line above.
    if (getppid() != parent) _exit(1);
  }
  return child;
}

std::string WaitForChild(pid_t child, int* status) {
  if (!EndsWithinLimit(child)) {
    kill(child, SIGKILL);
    waitpid(child, status, 0);
    return aos::StrCat("child ", child, " was still running after ",
                       kHangLimit.count(), " s; killed it");
  }
  pid_t done;
  while ((done = waitpid(child, status, 0)) < 0 && errno == EINTR) {
  }
  if (done != child) {
    return aos::StrCat("waitpid(", child, "): ", strerror(errno));
  }
  return "";
}

}  // namespace aos::ipc_lib::testing
