#ifndef AOS_TESTING_PROCESSES_H_
#define AOS_TESTING_PROCESSES_H_

// Looking at processes from tests: their open files, and code run as an
// unprivileged user.
//
//   EXPECT_TRUE(HasOpenFile(getpid(), "/dev/cpu_dma_latency"));
//   const ChildResult child = RunAsNobody([]() { return TryTheThing(); });
//   if (child.skip_reason != "") GTEST_SKIP() << child.skip_reason;
//   EXPECT_EQ(child.exit_code, 0) << child.output;

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

namespace aos::testing {

// Whether process `pid` has a descriptor open on `path`, as
// /proc/<pid>/fd shows it. False for a process that is gone.
bool HasOpenFile(pid_t pid, std::string_view path);

// What a child run by RunAsNobody did.
struct ChildResult {
  // fn's return value, or -N if a signal N killed the child.
  int exit_code = -1;
  // Everything it wrote to stdout and stderr.
  std::string output;
  // Non-empty when the child could not become unprivileged (root that
  // cannot become uid 65534): the test should skip, printing this.
  std::string skip_reason;
};

// Runs `fn` in a forked child, as user and group nobody (65534) if this
// process is root (so file modes deny it what they deny users), and returns
// its exit code and output. `fn` runs in a copy of this process: what it
// changes stays in the child. Blocks until the child exits.
ChildResult RunAsNobody(const std::function<int()>& fn);

}  // namespace aos::testing

#endif  // AOS_TESTING_PROCESSES_H_
